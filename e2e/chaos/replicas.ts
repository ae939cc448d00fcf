// kreload replicas under the fault suite, kept running as a kubelet would: a replica that exits is
// started again at once. A kill the suite injects is counted as injected; any other exit is a crash
// (a kreload restart the fault caused), which the table reports.
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';

/** Between a failed start and the next attempt, as a kubelet's first crash-loop backoff. */
const RESTART_PAUSE_MS = 1000;

export interface ReplicaOptions {
  readonly count: number;
  /** Flags after --kubeconfig and --metrics-port (namespaces, strategy, HA Lease id). */
  readonly args: readonly string[];
  readonly kubeconfig: string;
  /** The HA Lease; undefined without --enable-ha (the one replica leads). */
  readonly leaseName: string | undefined;
  /** Log file stem. */
  readonly name: string;
  /** Admin client, to read the Lease. */
  readonly admin: KubeConfig;
}

interface Slot {
  readonly pod: string;
  current: KreloadProcess | undefined;
  /** Set while the suite kills this slot on purpose. */
  planned: boolean;
  /** Resolves when the slot's process runs again after an exit. */
  restarting: Promise<void> | undefined;
}

export class KreloadReplicas {
  readonly #options: ReplicaOptions;
  readonly #slots: Slot[];
  readonly #coordination: CoordinationV1Api;
  #stopping = false;
  #crashes = 0;
  #injected = 0;

  constructor(options: ReplicaOptions) {
    this.#options = options;
    this.#coordination = options.admin.makeApiClient(CoordinationV1Api);
    this.#slots = Array.from({ length: options.count }, (_unused, index) => ({
      pod: `${options.name}-${String(index)}`,
      current: undefined,
      planned: false,
      restarting: undefined,
    }));
  }

  /** Exits the suite did not cause: each one is a kreload restart caused by the fault. */
  get crashes(): number {
    return this.#crashes;
  }

  get injectedKills(): number {
    return this.#injected;
  }

  /** Starts every replica and waits until each is ready. */
  async start(): Promise<void> {
    await Promise.all(this.#slots.map((slot) => this.#run(slot)));
  }

  async #run(slot: Slot): Promise<void> {
    for (;;) {
      try {
        slot.current = await startKreload({
          name: slot.pod,
          kubeconfig: this.#options.kubeconfig,
          env: { POD_NAME: slot.pod, POD_NAMESPACE: KRELOAD_NAMESPACE },
          args: this.#options.args,
        });
        break;
      } catch (error) {
        if (this.#stopping) throw error;
        // Not ready within a minute, or exited while starting: a crash loop, counted, retried.
        this.#crashes += 1;
        await sleep(RESTART_PAUSE_MS);
      }
    }
    const running = slot.current;
    void running.exit.then(() => {
      if (this.#stopping || slot.current !== running) return;
      if (slot.planned) slot.planned = false;
      else this.#crashes += 1;
      slot.current = undefined;
      slot.restarting = this.#run(slot);
    });
  }

  /** The replica that holds the Lease now, if any. */
  async leader(): Promise<KreloadProcess | undefined> {
    const leaseName = this.#options.leaseName;
    if (leaseName === undefined) return this.anyRunning;
    const lease = await this.#coordination
      .readNamespacedLease({ namespace: KRELOAD_NAMESPACE, name: leaseName })
      .catch(() => undefined);
    const holder = lease?.spec?.holderIdentity;
    return this.#slots.find((slot) => slot.pod === holder)?.current;
  }

  /** Any running replica (the only one, with a single replica). */
  get anyRunning(): KreloadProcess | undefined {
    return this.#slots.find((slot) => slot.current !== undefined)?.current;
  }

  /** SIGKILL to `target` (default: the leader, else the first replica); it is started again. */
  async kill9(target?: KreloadProcess): Promise<void> {
    const victim = target ?? (await this.leader()) ?? this.anyRunning;
    const slot = this.#slots.find((candidate) => candidate.current === victim);
    if (victim === undefined || slot === undefined) return;
    slot.planned = true;
    this.#injected += 1;
    await victim.kill9();
  }

  /** Waits until every replica runs again after kills and crashes (ready on /readyz). */
  async allRunning(): Promise<void> {
    for (;;) {
      const pending = this.#slots
        .filter((slot) => slot.current === undefined || slot.restarting !== undefined)
        .map(async (slot) => {
          await slot.restarting;
          slot.restarting = undefined;
        });
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /** SIGTERM to every replica; no restart after. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        await slot.restarting?.catch(() => undefined);
      }),
    );
    await Promise.all(
      this.#slots.map(async (slot) => {
        await slot.current?.stop().catch(() => slot.current?.kill9());
      }),
    );
  }

  /** For `process.on('exit')`: nothing asynchronous runs there. */
  pids(): number[] {
    return this.#slots.flatMap((slot) => (slot.current === undefined ? [] : [slot.current.pid]));
  }
}
