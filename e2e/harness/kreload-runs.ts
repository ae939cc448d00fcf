// kreload processes that startKreload cannot give: one that exits at once (configuration errors)
// and one that is expected never to become ready (API server unreachable).
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { E2E_LOGS_DIR, REPO_ROOT } from '../cluster/paths.ts';
import { freeLoopbackPort } from '../cluster/ports.ts';
import { spawnDetached } from '../cluster/processes.ts';
import { KRELOAD_ENTRY, KreloadProcess } from './kreload-process.ts';

export interface FinishedRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cleanEnv(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('KRELOAD_') || name === 'KUBECONFIG' || name.startsWith('KUBERNETES_')) {
      Reflect.deleteProperty(env, name);
    }
  }
  return { ...env, ...extra };
}

/** Runs dist/main.js with `args` to completion; SIGKILLs it after `timeoutMs`. */
export function runKreloadToExit(options: {
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}): Promise<FinishedRun> {
  const child = spawn(process.execPath, [KRELOAD_ENTRY, ...options.args], {
    cwd: REPO_ROOT,
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 20_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Starts kreload without waiting for /readyz: the caller probes what it expects. */
export async function spawnKreload(options: {
  readonly args: readonly string[];
  readonly kubeconfig: string;
  readonly name: string;
}): Promise<KreloadProcess> {
  const metricsPort = await freeLoopbackPort();
  await mkdir(E2E_LOGS_DIR, { recursive: true });
  const started = await spawnDetached({
    name: 'kreload',
    command: process.execPath,
    args: [
      KRELOAD_ENTRY,
      `--kubeconfig=${options.kubeconfig}`,
      `--metrics-port=${metricsPort}`,
      ...options.args,
    ],
    logPath: path.join(E2E_LOGS_DIR, `${options.name}-${metricsPort}.log`),
    env: cleanEnv(undefined),
    cwd: REPO_ROOT,
  });
  return new KreloadProcess({ process: started, metricsPort });
}
