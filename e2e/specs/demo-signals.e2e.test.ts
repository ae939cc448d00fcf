/**
 * `npm run demo` promises "Ctrl-C here stops kreload and the control plane". A terminal's Ctrl-C
 * sends SIGINT to its whole foreground process group (npm, the demo and anything not detached);
 * a supervisor's SIGTERM goes to npm alone, which forwards it. Either way nothing the demo started
 * may outlive it: no control-plane component (etcd, kube-apiserver, …, kwok) or kreload, and no
 * run directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPONENTS } from '../cluster/components.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { pollUntil } from '../harness/poll.ts';

const READY_LINE = 'Ctrl-C here stops kreload and the control plane.';
/** npm run build (tsc) and the control-plane boot, on 2 cores shared with other runs. */
const BOOT_TIMEOUT_MS = 420_000;
/** The demo's own stop budget: kreload drains for up to 10 s, each control-plane process gets 10 s. */
const CLEANUP_TIMEOUT_MS = 60_000;

interface RunningDemo {
  readonly npm: ChildProcess;
  readonly runDir: string;
  /** kreload and every control-plane process the demo started. */
  readonly pids: ReadonlyMap<string, number>;
  readonly output: () => string;
  readonly exited: Promise<void>;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npm run demo` in its own process group, as a terminal runs a foreground job. */
async function startDemo(): Promise<RunningDemo> {
  const npm = spawn('npm', ['run', 'demo'], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => {
    npm.once('exit', () => {
      resolve();
    });
  });
  await pollUntil(async () => Promise.resolve(output.includes(READY_LINE)), {
    timeoutMs: BOOT_TIMEOUT_MS,
    intervalMs: 500,
    describe: `npm run demo prints "${READY_LINE}"`,
  }).catch((error: unknown) => {
    if (npm.pid !== undefined) process.kill(-npm.pid, 'SIGKILL');
    throw new Error(`${String(error)}\n--- demo output ---\n${output}`, { cause: error });
  });
  const kubeconfig = /export KUBECONFIG=(\S+)/.exec(output)?.[1];
  const kreloadPid = /kreload is running \(pid (\d+)/.exec(output)?.[1];
  if (kubeconfig === undefined || kreloadPid === undefined) {
    throw new Error(`the demo printed no kubeconfig or kreload pid:\n${output}`);
  }
  const runDir = path.dirname(kubeconfig);
  const recorded = JSON.parse(readFileSync(path.join(runDir, 'pids.json'), 'utf8')) as {
    processes: { name: string; pid: number }[];
  };
  const pids = new Map<string, number>([['kreload', Number(kreloadPid)]]);
  for (const { name, pid } of recorded.processes) pids.set(name, pid);
  return { npm, runDir, pids, output: () => output, exited };
}

async function expectEverythingGone(demo: RunningDemo): Promise<void> {
  const leftovers = (): string[] => [
    ...[...demo.pids].filter(([, pid]) => isAlive(pid)).map(([name, pid]) => `${name} (${pid})`),
    ...(existsSync(demo.runDir) ? [`run directory ${demo.runDir}`] : []),
  ];
  try {
    await pollUntil(async () => Promise.resolve(leftovers().length === 0), {
      timeoutMs: CLEANUP_TIMEOUT_MS,
      intervalMs: 500,
      describe: 'every process and the run directory of the demo to be gone',
    });
  } catch (error) {
    const left = leftovers();
    // Clean up what the demo left, so that a failure here leaks nothing into later runs.
    for (const pid of demo.pids.values()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(demo.runDir, { recursive: true, force: true });
    throw new Error(`left behind: ${left.join(', ')}\n--- demo output ---\n${demo.output()}`, {
      cause: error,
    });
  }
  expect([...demo.pids.keys()].sort()).toEqual(
    [...COMPONENTS.map((component) => component.name), 'kreload'].sort(),
  );
}

describe('npm run demo stops everything it started', () => {
  it(
    'on Ctrl-C: SIGINT to the foreground process group, npm included',
    async () => {
      const demo = await startDemo();
      process.kill(-(demo.npm.pid ?? 0), 'SIGINT');
      await demo.exited;
      await expectEverythingGone(demo);
    },
    BOOT_TIMEOUT_MS + CLEANUP_TIMEOUT_MS,
  );

  it(
    'on SIGTERM to npm',
    async () => {
      const demo = await startDemo();
      demo.npm.kill('SIGTERM');
      await demo.exited;
      await expectEverythingGone(demo);
    },
    BOOT_TIMEOUT_MS + CLEANUP_TIMEOUT_MS,
  );
});
