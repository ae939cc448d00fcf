import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { E2E_LOGS_DIR, REPO_ROOT } from '../cluster/paths.ts';
import { freeLoopbackPort } from '../cluster/ports.ts';
import { probe } from '../cluster/probes.ts';
import {
  spawnDetached,
  tailFile,
  type ExitInfo,
  type SpawnedProcess,
} from '../cluster/processes.ts';
import { PollGiveUpError, PollTimeoutError, pollUntil } from './poll.ts';
import { KRELOAD_NAMESPACE } from './rbac.ts';

export const KRELOAD_ENTRY = path.join(REPO_ROOT, 'dist', 'main.js');
const READY_TIMEOUT_MS = 60_000;
/** kreload drains in-flight writes for up to 10 s on SIGTERM (spec §13.5); allow some margin. */
const STOP_TIMEOUT_MS = 15_000;

interface CommonStartOptions {
  /** Flags after --kubeconfig and --metrics-port, e.g. ['--namespaces=e2e-x', '--sync-delay=0']. */
  readonly args: readonly string[];
  /**
   * Added to a copy of this environment without KUBECONFIG and in-cluster variables, with
   * `POD_NAMESPACE` kreload-system unless given here.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Log file stem, normally the spec's name: logs go to .cache/e2e-logs/<name>-<port>.log. */
  readonly name: string;
  readonly readyTimeoutMs?: number;
}

/** kreload as `node <entry>` on this Node, connecting with a kubeconfig. */
interface NodeStartOptions extends CommonStartOptions {
  readonly kubeconfig: string;
  /** The script Node runs; dist/main.js unless a spec needs another build. */
  readonly entry?: string;
}

/**
 * kreload started by a command that provides its own runtime and identity, e.g. the container
 * image through scripts/image-run.sh with a ServiceAccount token mounted as in a pod: the command
 * gets --metrics-port and `args` appended, no --kubeconfig, and `env` as its whole environment.
 */
interface LauncherStartOptions extends CommonStartOptions {
  readonly launcher: readonly [string, ...string[]];
}

export type StartKreloadOptions = NodeStartOptions | LauncherStartOptions;

export class KreloadStartError extends Error {
  override readonly name = 'KreloadStartError';
}

/** A kreload controller process (dist/main.js on this Node), ready on its metrics port. */
export class KreloadProcess {
  readonly #process: SpawnedProcess;
  readonly metricsPort: number;

  constructor(deps: { process: SpawnedProcess; metricsPort: number }) {
    this.#process = deps.process;
    this.metricsPort = deps.metricsPort;
  }

  get pid(): number {
    return this.#process.pid;
  }

  get logPath(): string {
    return this.#process.spec.logPath;
  }

  get exit(): Promise<ExitInfo> {
    return this.#process.exit;
  }

  url(pathname: string): string {
    return `http://127.0.0.1:${this.metricsPort}${pathname}`;
  }

  readLog(): Promise<string> {
    return readFile(this.logPath, 'utf8');
  }

  /** SIGTERM, then waits for the exit; SIGKILL and a failure if it does not exit within 15 s. */
  async stop(): Promise<ExitInfo> {
    if (this.#process.exitInfo !== undefined) return this.#process.exitInfo;
    this.#process.signal('SIGTERM');
    const exited = await Promise.race([this.#process.exit, sleep(STOP_TIMEOUT_MS, undefined)]);
    if (exited !== undefined) return exited;
    this.#process.signal('SIGKILL');
    await this.#process.exit;
    throw new KreloadStartError(
      `kreload (pid ${this.pid}) ignored SIGTERM for ${STOP_TIMEOUT_MS / 1000} s; log: ${this.logPath}`,
    );
  }

  /** A crash: no drain, no lease release. */
  async kill9(): Promise<ExitInfo> {
    if (this.#process.exitInfo !== undefined) return this.#process.exitInfo;
    this.#process.signal('SIGKILL');
    return this.#process.exit;
  }
}

function childEnv(extra: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // Only the explicit --kubeconfig may decide where kreload connects.
  for (const name of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
    Reflect.deleteProperty(env, name);
  }
  // A developer's KRELOAD_* settings (and the harness's own KRELOAD_E2E_*) must not leak in:
  // a spec's flags alone configure the controller.
  for (const name of Object.keys(env)) {
    if (name.startsWith('KRELOAD_')) Reflect.deleteProperty(env, name);
  }
  // As the chart sets it (the downward API): kreload's own namespace, where its Role lets it keep
  // the Job recreation journal. A spec passes `POD_NAMESPACE: ''` to run kreload as outside a
  // cluster (kreload reads an empty value as unset).
  return { POD_NAMESPACE: KRELOAD_NAMESPACE, ...env, ...extra };
}

function commandOf(
  options: StartKreloadOptions,
  metricsPort: number,
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  if ('launcher' in options) {
    const [command, ...prefix] = options.launcher;
    return {
      command,
      args: [...prefix, `--metrics-port=${metricsPort}`, ...options.args],
      env: { PATH: process.env.PATH, ...options.env },
    };
  }
  return {
    // process.execPath: the Node that runs the tests (24), not whatever `node` is on the PATH.
    command: process.execPath,
    args: [
      options.entry ?? KRELOAD_ENTRY,
      `--kubeconfig=${options.kubeconfig}`,
      `--metrics-port=${metricsPort}`,
      ...options.args,
    ],
    env: childEnv(options.env),
  };
}

async function startOnce(options: StartKreloadOptions): Promise<KreloadProcess> {
  const metricsPort = await freeLoopbackPort();
  await mkdir(E2E_LOGS_DIR, { recursive: true });
  const started = await spawnDetached({
    name: 'kreload',
    ...commandOf(options, metricsPort),
    logPath: path.join(E2E_LOGS_DIR, `${options.name}-${metricsPort}.log`),
    cwd: REPO_ROOT,
  });
  const kreload = new KreloadProcess({ process: started, metricsPort });
  const timeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  try {
    await pollUntil(
      async () => {
        const exit = started.exitInfo;
        if (exit !== undefined)
          throw new PollGiveUpError(
            `exited (code ${String(exit.code)}, signal ${String(exit.signal)})`,
          );
        return (await probe({ url: kreload.url('/readyz'), timeoutMs: 2000 })).status === 200;
      },
      {
        timeoutMs,
        intervalMs: 200,
        describe: `kreload /readyz on port ${metricsPort} to return 200`,
      },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError || error instanceof PollGiveUpError)) throw error;
    await kreload.kill9();
    throw new KreloadStartError(
      `kreload did not become ready: ${error.message}\ncommand: ${started.commandLine}\nlog: ${kreload.logPath}\n` +
        `--- last 50 lines ---\n${tailFile(kreload.logPath, 50)}\n--- end of log ---`,
      { cause: error },
    );
  }
  return kreload;
}

/** Starts kreload on a free metrics port and waits for /readyz 200; retries once on a port clash. */
export async function startKreload(options: StartKreloadOptions): Promise<KreloadProcess> {
  try {
    return await startOnce(options);
  } catch (error) {
    if (!(error instanceof KreloadStartError && error.message.includes('EADDRINUSE'))) throw error;
    return startOnce(options);
  }
}
