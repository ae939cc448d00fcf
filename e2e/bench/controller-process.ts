/** A controller under test as a child process in its own process group, logging to a file. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { REPO_ROOT } from '../cluster/paths.ts';
import { freeLoopbackPort } from '../cluster/ports.ts';
import {
  spawnDetached,
  tailFile,
  type ExitInfo,
  type SpawnedProcess,
} from '../cluster/processes.ts';
import { resolvePlaceholders, type ControllerSpec } from './controllers.ts';

/** kreload drains in-flight writes for up to 10 s on SIGTERM (spec §13.5); allow some margin. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * Every controller process the bench has running, so that an `exit` hook (Ctrl-C, a crash) can
 * SIGKILL them synchronously: the suite must never leave a process behind.
 */
export class LiveProcesses {
  readonly #groups = new Set<number>();

  get size(): number {
    return this.#groups.size;
  }

  add(pid: number): void {
    this.#groups.add(pid);
  }

  remove(pid: number): void {
    this.#groups.delete(pid);
  }

  killAllSync(): void {
    for (const pid of this.#groups) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.#groups.clear();
  }
}

function childEnv(kubeconfig: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The controller must reach the bench's cluster through KUBECONFIG, never an in-cluster config.
  for (const name of [
    'KUBERNETES_SERVICE_HOST',
    'KUBERNETES_SERVICE_PORT',
    'KUBERNETES_NAMESPACE',
  ]) {
    Reflect.deleteProperty(env, name);
  }
  return { ...env, KUBECONFIG: kubeconfig };
}

export class ControllerProcess {
  readonly #process: SpawnedProcess;
  readonly #live: LiveProcesses;
  readonly startedAt: number;

  constructor(deps: { process: SpawnedProcess; live: LiveProcesses; startedAt: number }) {
    this.#process = deps.process;
    this.#live = deps.live;
    this.startedAt = deps.startedAt;
  }

  static async start(options: {
    spec: ControllerSpec;
    flags: readonly string[];
    kubeconfig: string;
    logPath: string;
    live: LiveProcesses;
    /** Set in the controller's environment on top of the bench's (a replica's POD_NAME). */
    env?: Readonly<Record<string, string>>;
  }): Promise<ControllerProcess> {
    const [command, ...args] = resolvePlaceholders(options.spec.argv, {
      node: process.execPath,
      port: await freeLoopbackPort(),
    });
    if (command === undefined) throw new Error(`controller ${options.spec.label} has no command`);
    await mkdir(path.dirname(options.logPath), { recursive: true });
    const started = await spawnDetached({
      name: options.spec.label,
      command,
      args: [...args, ...options.flags],
      logPath: options.logPath,
      env: { ...childEnv(options.kubeconfig), ...options.env },
      cwd: REPO_ROOT,
    });
    options.live.add(started.pid);
    void started.exit.then(() => {
      options.live.remove(started.pid);
    });
    return new ControllerProcess({
      process: started,
      live: options.live,
      startedAt: performance.now(),
    });
  }

  get pid(): number {
    return this.#process.pid;
  }

  get commandLine(): string {
    return this.#process.commandLine;
  }

  get logPath(): string {
    return this.#process.spec.logPath;
  }

  /** Resolves when the process has exited, for whatever reason. */
  get exited(): Promise<ExitInfo> {
    return this.#process.exit;
  }

  /** Set once it has exited. */
  get exitInfo(): ExitInfo | undefined {
    return this.#process.exitInfo;
  }

  logTail(lines = 30): string {
    return tailFile(this.logPath, lines);
  }

  /** SIGTERM to the group, SIGKILL after 15 s; resolves when the whole group is gone. */
  async stop(): Promise<ExitInfo> {
    if (this.#process.exitInfo === undefined) {
      this.#process.signal('SIGTERM');
      const exited = await Promise.race([this.#process.exit, sleep(STOP_TIMEOUT_MS, undefined)]);
      if (exited === undefined) this.#process.signal('SIGKILL');
    }
    return this.#finish();
  }

  /** A crash: no drain, no lease release. */
  async kill9(): Promise<ExitInfo> {
    this.#process.signal('SIGKILL');
    return this.#finish();
  }

  async #finish(): Promise<ExitInfo> {
    const exit = await this.#process.exit;
    this.#live.remove(this.pid);
    return exit;
  }
}
