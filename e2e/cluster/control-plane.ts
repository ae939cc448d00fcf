import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PollGiveUpError, PollTimeoutError, pollUntil } from '../harness/poll.ts';
import {
  COMPONENTS,
  DEFAULT_CONTROLLERS,
  type ComponentName,
  type ComponentSpec,
  type ControlPlanePorts,
  type LaunchContext,
} from './components.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { AUDIT_POLICY, RUNS_DIR } from './paths.ts';
import { createPki } from './pki.ts';
import { freeLoopbackPorts } from './ports.ts';
import { componentUsage, type ComponentUsage } from './component-usage.ts';
import { readProcess } from './proc-stat.ts';
import { RunProcesses, tailFile, type ExitInfo, type SpawnedProcess } from './processes.ts';

export interface BootOptions {
  /** Directory holding the components' binaries (see binaries.ts). */
  readonly binDir: string;
  readonly runsDir?: string;
  /** Starts kube-apiserver with e2e/cluster/audit-policy.yaml and a JSON-lines audit log. */
  readonly audit?: boolean;
  readonly controllers?: readonly string[];
  /**
   * Leaves kube-scheduler and kwok out (no pod ever runs): only to measure what they cost, never
   * for a test run that should pass.
   */
  readonly withoutPodLifecycle?: boolean;
  /** Aborting (Ctrl-C during boot) stops what was started and rejects. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (message: string) => void;
}

/** Everything a client needs; no secrets (the admin token is in the kubeconfig file). */
export interface ControlPlaneInfo {
  readonly runDir: string;
  readonly server: string;
  readonly caPath: string;
  readonly kubeconfigPath: string;
  readonly auditLogPath: string | undefined;
  readonly pidsPath: string;
  readonly ports: ControlPlanePorts;
}

export class ComponentStartError extends Error {
  override readonly name = 'ComponentStartError';
  readonly component: string;
  readonly logPath: string;
  readonly addressInUse: boolean;

  constructor(details: {
    component: string;
    problem: string;
    command: string;
    logPath: string;
    cause: unknown;
  }) {
    const tail = tailFile(details.logPath, 50);
    super(
      `${details.component} ${details.problem}\ncommand: ${details.command}\nlog: ${details.logPath}\n` +
        `--- last 50 lines of ${details.component}'s log ---\n${tail}\n--- end of log ---`,
      { cause: details.cause },
    );
    this.component = details.component;
    this.logPath = details.logPath;
    this.addressInUse = /address already in use/i.test(tail);
  }
}

/** When a component's current process was launched and when it was ready (performance.now()). */
interface BootTiming {
  readonly launchedAt: number;
  readonly readyAt: number;
}

const ADMIN_USER = 'kreload-e2e-admin';
const KEPT_ON_FAILURE = /(\.log|pids\.json)$/;

/**
 * A booted etcd + kube-apiserver + kube-controller-manager + kube-scheduler + kwok with its fake
 * nodes; stop() tears it down and deletes the run.
 */
export class ControlPlane {
  readonly info: ControlPlaneInfo;
  readonly #processes: RunProcesses;
  readonly #ctx: LaunchContext;
  readonly #boots: Map<ComponentName, BootTiming>;
  #stopping: Promise<void> | undefined;

  constructor(deps: {
    info: ControlPlaneInfo;
    processes: RunProcesses;
    ctx: LaunchContext;
    boots: Map<ComponentName, BootTiming>;
  }) {
    this.info = deps.info;
    this.#processes = deps.processes;
    this.#ctx = deps.ctx;
    this.#boots = deps.boots;
  }

  /**
   * Boot time, CPU seconds and RSS of each component's current process (after a restart, of the
   * new one), read now: call it before stop().
   */
  async usage(): Promise<ComponentUsage[]> {
    const now = performance.now();
    return Promise.all(
      this.processes.map(async (started) => {
        const boot = this.#boots.get(started.spec.name as ComponentName);
        return componentUsage({
          name: started.spec.name,
          pid: started.pid,
          launchedAt: boot?.launchedAt ?? now,
          readyAt: boot?.readyAt ?? now,
          now,
          reading: started.exitInfo === undefined ? await readProcess(started.pid) : undefined,
        });
      }),
    );
  }

  /**
   * A crash and a restart of one component: SIGKILL to its process group, then the same command
   * line (same data directory, certificates and ports), awaited until it is ready again. Fault
   * tests use it; firstExit() of a handle taken before resolves with the killed process.
   */
  async killAndRestart(name: ComponentName): Promise<void> {
    const component = COMPONENTS.find((c) => c.name === name);
    const running = this.processes.find((p) => p.spec.name === name);
    if (component === undefined || running === undefined) {
      throw new Error(`${name} is not a component of this run`);
    }
    running.signal('SIGKILL');
    await running.exit;
    const launchedAt = performance.now();
    const started = await this.#processes.respawn(name);
    await waitReady({ component, started, ctx: this.#ctx, signal: undefined });
    this.#boots.set(name, { launchedAt, readyAt: performance.now() });
  }

  get processes(): readonly SpawnedProcess[] {
    return this.#processes.list;
  }

  /** Resolves when any component exits on its own (it should not while the run is up). */
  firstExit(): Promise<{ name: string; exit: ExitInfo }> {
    return Promise.race(
      this.processes.map(async (p) => ({ name: p.spec.name, exit: await p.exit })),
    );
  }

  /** Idempotent. Stops in reverse order (SIGTERM, 10 s, SIGKILL), then deletes the run directory. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await this.#processes.stopAll();
      await rm(this.info.runDir, { recursive: true, force: true });
    })();
    return this.#stopping;
  }
}

/** Boots a fresh control plane; on "address already in use" it retries once with new ports. */
export async function bootControlPlane(options: BootOptions): Promise<ControlPlane> {
  try {
    return await bootAttempt(options);
  } catch (error) {
    if (!(error instanceof ComponentStartError && error.addressInUse)) throw error;
    options.onProgress?.(
      `${error.component}: address already in use; retrying once with new ports`,
    );
    return bootAttempt(options);
  }
}

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

async function bootAttempt(options: BootOptions): Promise<ControlPlane> {
  const runDir = path.join(options.runsDir ?? RUNS_DIR, newRunId());
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  const processes = new RunProcesses({ runDir });
  const boots = new Map<ComponentName, BootTiming>();
  try {
    const ctx = await prepareRun(runDir, options);
    const components = COMPONENTS.filter(
      (component) => options.withoutPodLifecycle !== true || !component.podLifecycle,
    );
    for (const component of components) {
      const began = performance.now();
      const started = await processes.spawn({
        name: component.name,
        command: path.join(options.binDir, component.name),
        args: component.args(ctx),
      });
      await waitReady({ component, started, ctx, signal: options.signal });
      const readyAt = performance.now();
      boots.set(component.name, { launchedAt: began, readyAt });
      options.onProgress?.(`${component.name} ready in ${((readyAt - began) / 1000).toFixed(1)} s`);
    }
    const info: ControlPlaneInfo = {
      runDir,
      server: `https://127.0.0.1:${ctx.ports.apiserver}`,
      caPath: ctx.pki.caCert,
      kubeconfigPath: ctx.adminKubeconfig,
      auditLogPath: ctx.audit?.logPath,
      pidsPath: path.join(runDir, 'pids.json'),
      ports: ctx.ports,
    };
    return new ControlPlane({ info, processes, ctx, boots });
  } catch (error) {
    await processes.stopAll().catch((stopError: unknown) => {
      options.onProgress?.(`cleanup after a failed start: ${String(stopError)}`);
    });
    // Keep the logs an error message names, unless the caller gave up on purpose (Ctrl-C).
    if (options.signal?.aborted === true) await rm(runDir, { recursive: true, force: true });
    else await discardAllButLogs(runDir);
    throw error;
  }
}

async function prepareRun(runDir: string, options: BootOptions): Promise<LaunchContext> {
  const pki = await createPki(runDir);
  const adminToken = randomBytes(32).toString('hex');
  const tokenFile = path.join(runDir, 'tokens.csv');
  // CSV: token,user,uid,"groups"; system:masters passes every RBAC check.
  await writeFile(tokenFile, `${adminToken},${ADMIN_USER},${ADMIN_USER},"system:masters"\n`, {
    mode: 0o600,
  });
  const [etcdClient, etcdPeer, apiserver, controllerManager, scheduler, kwok] =
    await freeLoopbackPorts(6);
  if (
    etcdClient === undefined ||
    etcdPeer === undefined ||
    apiserver === undefined ||
    controllerManager === undefined ||
    scheduler === undefined ||
    kwok === undefined
  ) {
    throw new Error('could not allocate six loopback ports');
  }
  const ports = { etcdClient, etcdPeer, apiserver, controllerManager, scheduler, kwok };
  const adminKubeconfig = await writeKubeconfig(path.join(runDir, 'admin.kubeconfig'), {
    server: `https://127.0.0.1:${apiserver}`,
    caPath: pki.caCert,
    userName: ADMIN_USER,
    token: adminToken,
  });
  return {
    runDir,
    binDir: options.binDir,
    ports,
    pki,
    caPem: await readFile(pki.caCert, 'utf8'),
    tokenFile,
    adminKubeconfig,
    adminToken,
    audit:
      options.audit === true
        ? { policyPath: AUDIT_POLICY, logPath: path.join(runDir, 'audit.log') }
        : undefined,
    controllers: options.controllers ?? DEFAULT_CONTROLLERS,
  };
}

async function waitReady(details: {
  component: ComponentSpec;
  started: SpawnedProcess;
  ctx: LaunchContext;
  signal: AbortSignal | undefined;
}): Promise<void> {
  const { component, started, ctx } = details;
  try {
    await pollUntil(
      () => {
        const exit = started.exitInfo;
        if (exit !== undefined) {
          throw new PollGiveUpError(
            `exited (code ${String(exit.code)}, signal ${String(exit.signal)}) before it was ready`,
          );
        }
        return component.isReady(ctx);
      },
      {
        timeoutMs: component.deadlineMs,
        intervalMs: 200,
        describe: component.readyWhen,
        signal: details.signal,
      },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError || error instanceof PollGiveUpError)) throw error;
    const problem =
      error instanceof PollGiveUpError
        ? error.message
        : `was not ready within ${component.deadlineMs / 1000} s (ready when ${component.readyWhen})`;
    throw new ComponentStartError({
      component: component.name,
      problem,
      command: started.commandLine,
      logPath: started.spec.logPath,
      cause: error,
    });
  }
}

/** After a failed start, keep only logs and pids.json (named in the error); drop keys and etcd data. */
async function discardAllButLogs(runDir: string): Promise<void> {
  const entries = await readdir(runDir).catch(() => []);
  await Promise.all(
    entries
      .filter((name) => !KEPT_ON_FAILURE.test(name))
      .map((name) => rm(path.join(runDir, name), { recursive: true, force: true })),
  );
}
