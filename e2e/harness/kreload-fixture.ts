// The per-spec-file setup every reload spec shares: fresh namespaces, kreload's ServiceAccount, one
// kreload process started before the file's tests and stopped (SIGTERM, exit 0) after them.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { tailFile } from '../cluster/processes.ts';
import type { ClusterClient } from './cluster.ts';
import { EventReader } from './kube-events.ts';
import { startKreload, type KreloadProcess } from './kreload-process.ts';
import { installKreloadIdentity } from './rbac.ts';
import { sharedCluster } from './shared-cluster.ts';
import { SourceClient } from './sources.ts';
import { WorkloadClient } from './workloads.ts';

export interface KreloadFixtureOptions {
  /** Log file stem and namespace prefix. */
  readonly name: string;
  /** How many namespaces to create (default 1). */
  readonly namespaces?: number;
  /** Flags for kreload given the created namespaces. */
  readonly args: (namespaces: readonly string[]) => readonly string[];
  /** Environment added to kreload's, e.g. `POD_NAMESPACE`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Start kreload in beforeAll (default true); otherwise call start() from the spec. */
  readonly startInBeforeAll?: boolean;
  /** Who kreload runs as; default: the regular ServiceAccount of rbac.ts. */
  readonly identity?: (cluster: ClusterClient) => Promise<KreloadLogin>;
}

/** What kreload needs to authenticate. */
export interface KreloadLogin {
  readonly kubeconfigPath: string;
}

/** Clients and the running kreload of one spec file; accessors throw before beforeAll ran. */
export class KreloadFixture {
  readonly cluster: ClusterClient;
  readonly workloads: WorkloadClient;
  readonly sources: SourceClient;
  readonly events: EventReader;
  readonly #options: KreloadFixtureOptions;
  #namespaces: readonly string[] = [];
  #identity: KreloadLogin | undefined;
  #kreload: KreloadProcess | undefined;

  constructor(deps: { cluster: ClusterClient; options: KreloadFixtureOptions }) {
    this.cluster = deps.cluster;
    this.#options = deps.options;
    this.workloads = new WorkloadClient({ kc: deps.cluster.kc });
    this.sources = new SourceClient({ kc: deps.cluster.kc });
    this.events = new EventReader({ kc: deps.cluster.kc });
  }

  get namespace(): string {
    const [first] = this.namespaces;
    if (first === undefined) throw new Error('the fixture has no namespace yet (beforeAll)');
    return first;
  }

  get namespaces(): readonly string[] {
    return this.#namespaces;
  }

  get identity(): KreloadLogin {
    if (this.#identity === undefined) throw new Error('no kreload identity yet (beforeAll)');
    return this.#identity;
  }

  get kreload(): KreloadProcess {
    if (this.#kreload === undefined) throw new Error('kreload is not running');
    return this.#kreload;
  }

  async prepare(): Promise<void> {
    const count = this.#options.namespaces ?? 1;
    const namespaces: string[] = [];
    for (let index = 0; index < count; index += 1) {
      namespaces.push(await this.cluster.createNamespace(this.#options.name));
    }
    this.#namespaces = namespaces;
    this.#identity = await (this.#options.identity ?? installKreloadIdentity)(this.cluster);
  }

  /**
   * Starts kreload with the file's flags plus `extraArgs`, and the file's environment plus
   * `extraEnv` (e.g. a test-only failpoint); one process at a time.
   */
  async start(
    extraArgs: readonly string[] = [],
    extraEnv: Readonly<Record<string, string>> = {},
  ): Promise<KreloadProcess> {
    if (this.#kreload !== undefined) throw new Error('kreload is already running');
    this.#kreload = await startKreload({
      name: this.#options.name,
      kubeconfig: this.identity.kubeconfigPath,
      args: [...this.#options.args(this.#namespaces), '--log-level=debug', ...extraArgs],
      env: { ...this.#options.env, ...extraEnv },
    });
    return this.#kreload;
  }

  /** SIGTERM; fails unless kreload exits 0 (spec §13.5). */
  async stop(): Promise<void> {
    const running = this.#kreload;
    if (running === undefined) return;
    this.#kreload = undefined;
    const exit = await running.stop();
    if (exit.code !== 0) {
      throw new Error(
        `kreload exited with ${String(exit.code)} (signal ${String(exit.signal)}) on SIGTERM; ` +
          `log ${running.logPath}:\n${tailFile(running.logPath, 30)}`,
      );
    }
  }

  /** SIGKILL, as a crash: no drain, nothing released. `start()` may follow. */
  async kill9(): Promise<void> {
    const running = this.#kreload;
    this.#kreload = undefined;
    await running?.kill9();
  }

  /** Deletes the namespaces without waiting: the namespace controller finishes in the background. */
  async cleanUp(): Promise<void> {
    const core = this.cluster.kc.makeApiClient(CoreV1Api);
    await Promise.all(
      this.#namespaces.map((name) => core.deleteNamespace({ name }).catch(() => undefined)),
    );
  }
}

/** Registers beforeAll/afterAll for a fixture: namespaces, identity, kreload. */
export function useKreload(options: KreloadFixtureOptions): KreloadFixture {
  const fixture = new KreloadFixture({ cluster: sharedCluster(), options });
  beforeAll(async () => {
    await fixture.prepare();
    if (options.startInBeforeAll ?? true) await fixture.start();
  });
  afterAll(async () => {
    try {
      await fixture.stop();
    } finally {
      await fixture.cleanUp();
    }
  });
  return fixture;
}
