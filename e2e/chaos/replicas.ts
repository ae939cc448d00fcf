// kreload replicas under the fault suite, kept running as a kubelet would: a replica that exits is
// started again at once. A kill the suite injects is counted as injected; any other exit is a crash
// (a kreload restart the fault caused), which the table reports. Rows that scale add replicas and
// retire them (SIGKILL or SIGTERM, not started again), as a Deployment scaled up and down.
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
  /** Log file stem and pod name stem: `<name>-<ordinal>`. */
  readonly name: string;
  /**
   * `same`: a replica started again keeps its pod name (a StatefulSet's pod, or a container
   * restart). `new`: it comes back as a new pod with the next ordinal, as a Deployment's pods do,
   * so a member identity that died stays dead.
   */
  readonly restartAs: 'same' | 'new';
  /** Admin client, to read the Lease. */
  readonly admin: KubeConfig;
}

interface Slot {
  pod: string;
  current: KreloadProcess | undefined;
  /** Set while the suite kills this slot on purpose. */
  planned: boolean;
  /** Scaled away: not started again after its exit. */
  retired: boolean;
  /** Resolves when the slot's process runs again after an exit. */
  restarting: Promise<void> | undefined;
}

export class KreloadReplicas {
  readonly #options: ReplicaOptions;
  readonly #slots: Slot[] = [];
  readonly #coordination: CoordinationV1Api;
  #ordinals = 0;
  #stopping = false;
  #crashes = 0;
  #injected = 0;

  constructor(options: ReplicaOptions) {
    this.#options = options;
    this.#coordination = options.admin.makeApiClient(CoordinationV1Api);
  }

  #newSlot(): Slot {
    const slot: Slot = {
      pod: this.#nextPod(),
      current: undefined,
      planned: false,
      retired: false,
      restarting: undefined,
    };
    this.#slots.push(slot);
    return slot;
  }

  #nextPod(): string {
    const pod = `${this.#options.name}-${String(this.#ordinals)}`;
    this.#ordinals += 1;
    return pod;
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
    await this.add(this.#options.count);
  }

  /** Scales up: `count` more replicas, new pods; resolves with their pod names once ready. */
  async add(count: number): Promise<string[]> {
    const slots = Array.from({ length: count }, () => this.#newSlot());
    await Promise.all(slots.map((slot) => this.#run(slot)));
    return slots.map((slot) => slot.pod);
  }

  /**
   * Scales down by one: SIGKILL (`kill`, counted as injected) or SIGTERM and its graceful
   * shutdown (`stop`); the pod is not started again.
   */
  async retire(pod: string, how: 'kill' | 'stop'): Promise<void> {
    const slot = this.#slots.find((candidate) => candidate.pod === pod && !candidate.retired);
    if (slot === undefined) throw new Error(`no running replica ${pod}`);
    slot.retired = true;
    await slot.restarting?.catch(() => undefined);
    const running = slot.current;
    if (how === 'kill') {
      this.#injected += 1;
      await running?.kill9();
    } else {
      await running?.stop().catch(() => running.kill9());
    }
  }

  /** Pod names of the replicas that run now (the member identities in active-active mode). */
  get pods(): string[] {
    return this.#slots.flatMap((slot) => (slot.current === undefined ? [] : [slot.pod]));
  }

  /** Every running replica. */
  get running(): KreloadProcess[] {
    return this.#slots.flatMap((slot) => (slot.current === undefined ? [] : [slot.current]));
  }

  /** The pod name of a running replica. */
  podOf(replica: KreloadProcess): string | undefined {
    return this.#slots.find((slot) => slot.current === replica)?.pod;
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
      slot.current = undefined;
      if (slot.retired) return;
      if (slot.planned) slot.planned = false;
      else this.#crashes += 1;
      if (this.#options.restartAs === 'new') slot.pod = this.#nextPod();
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
        .filter(
          (slot) => !slot.retired && (slot.current === undefined || slot.restarting !== undefined),
        )
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
