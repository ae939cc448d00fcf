/**
 * One scenario against one controller: create the objects, start the controller (readiness via the
 * canary), run the load while watching templates, drain, stop, and measure from the outside.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterClient } from '../harness/cluster.ts';
import { installKreloadIdentity, KRELOAD_NAMESPACE, KRELOAD_USER } from '../harness/rbac.ts';
import {
  apiServerFigures,
  readApiServer,
  type ApiServerFigures,
  type ApiServerReading,
} from './api-server.ts';
import { AuditLog } from '../harness/audit.ts';
import { InFlightSampler, type InFlightSeries } from '../harness/rollouts-in-flight.ts';
import {
  readAuditRange,
  splitByPhase,
  type PhaseMark,
  summarisePhase,
  type RequestSummary,
} from './audit-summary.ts';
import type { Canary } from './canary.ts';
import { ControllerProcess, type LiveProcesses } from './controller-process.ts';
import { controllerFlags, replicaIdentities, type ControllerSpec } from './controllers.ts';
import {
  evaluate,
  pauseWindows,
  pendingDeliveries,
  type Correctness,
  type WorkloadHistory,
  type WriteRecord,
} from './evaluate.ts';
import { isStatus, MERGE_PATCH, type KubeRaw } from './kube-raw.ts';
import { isRecord } from './list-watch.ts';
import { TemplateObserver } from './observer.ts';
import { combineReplicaUsage, ProcessSampler, type ResourceUsage } from './process-sampler.ts';
import {
  completedAt,
  expectedRollouts,
  pendingRollouts,
  rolloutCompletion,
  type ExpectedRollout,
  type RolloutCompletion,
} from './rollout-completion.ts';
import {
  collectionPath,
  localSourceKey,
  NAMESPACES,
  objectPath,
  REPLICA_SETS,
  SOURCE_RESOURCES,
  WORKLOAD_RESOURCES,
} from './resources.ts';
import type { Params, ScenarioContext, ScenarioDefinition, ScenarioSetup } from './scenarios.ts';
import { templateSignals, type SignalLookup } from './signals.ts';
import {
  dataPatch,
  keyOfSource,
  noisePatch,
  sourceHash,
  sourceManifest,
  type SourceSpec,
} from './sources.ts';
import { distribution, type Distribution } from './stats.ts';
import { envNamesOf, keyOfWorkload, workloadManifest, type WorkloadSpec } from './workloads.ts';

export const RUN_LABEL = 'bench.kreload.io/run';
const SETUP_CONCURRENCY = 24;
const MAX_IN_FLIGHT = 64;
const DEFAULT_DRAIN_TIMEOUT_MS = 20_000;
const DEFAULT_SETTLE_MS = 2000;
const DEFAULT_READY_TIMEOUT_MS = 120_000;
/**
 * How long the bench waits for a cluster-wide run's emptied namespaces to go: their objects are
 * gone already; kube-controller-manager takes about 2 s per namespace on a loaded 2-core machine.
 */
const NAMESPACE_CLEANUP_TIMEOUT_MS = 120_000;
const PROGRESS_INTERVAL_MS = 5000;
/**
 * How often the waits for rollouts check every Deployment's ReplicaSets: completion times come from
 * the ReplicaSet events' own timestamps, so this only decides when a wait ends, and at 1 000
 * Deployments a check costs the bench (and the 2 cores it shares with the control plane) real CPU.
 */
const COMPLETION_POLL_MS = 1000;
/** How often the Deployments in flight are counted from ReplicaSet state. */
const IN_FLIGHT_SAMPLE_MS = 250;
/** How long the pods of a run whose pods run may take to go away after it. */
const POD_CLEANUP_TIMEOUT_MS = 120_000;
/** S5: a workload created just before a write, or deleted just after, need not roll for it. */
const EXPECTATION_WINDOW = { graceBeforeMs: 1000, graceAfterMs: 1500 };

export interface RunEnvironment {
  readonly cluster: ClusterClient;
  readonly raw: KubeRaw;
  readonly canary: Canary;
  readonly live: LiveProcesses;
  readonly logDir: string;
  readonly signal: AbortSignal | undefined;
  readonly progress: (line: string) => void;
}

export interface RunRequest {
  readonly scenario: ScenarioDefinition;
  readonly params: Params;
  readonly controller: ControllerSpec;
  readonly repeat: number;
  readonly seed: number;
  readonly runId: string;
}

export interface RolloutCheck {
  /** Pause windows the template changes called for (S12): the most rollouts allowed. */
  readonly expected: number;
  /** New ReplicaSets the Deployments got. */
  readonly observed: number;
  /** Rollouts beyond the pause windows. */
  readonly extra: number;
  /** Deployments whose last template was never rolled out (still paused at the end). */
  readonly missed: number;
}

export interface RunResult {
  readonly scenario: string;
  readonly title: string;
  readonly controller: string;
  readonly profile: string;
  readonly command: string;
  /** Processes of the controller side by side (absent from summaries written before: 1). */
  readonly replicas?: number;
  readonly repeat: number;
  readonly runId: string;
  readonly params: Params;
  readonly startedAt: string;
  readonly error: string | null;
  readonly objects: { readonly sources: number; readonly workloads: number };
  readonly timingMs: {
    readonly setup: number;
    /** Controller start → first reaction, per start (S6 and K4 start twice). */
    readonly ready: readonly (number | null)[];
    /** Controller start → its last request before a quiet period (K1), when waited for. */
    readonly settled: number | null;
    readonly load: number;
    readonly drain: number;
  };
  readonly drained: boolean;
  readonly writes: number;
  readonly benchWriteErrors: number;
  readonly latencyMs: Distribution;
  readonly completionMs: Distribution;
  readonly correctness: Correctness & { readonly rollouts: RolloutCheck | null };
  /**
   * Scenarios whose pods run: change → rollout complete, from ReplicaSet state (null otherwise;
   * absent from summaries written before it was measured).
   */
  readonly rolloutCompletion?: RolloutCompletion | null;
  /**
   * Scenarios whose pods run: Deployments in flight counted from ReplicaSet state every 250 ms from
   * the first write to the end of the wait for completion; series times are ms from that write
   * (null otherwise; absent from summaries written before it was measured).
   */
  readonly rolloutsInFlight?: InFlightSeries | null;
  readonly requests: RequestSummary | null;
  /**
   * kube-apiserver's /metrics: watches open, requests per second of every client (null when it
   * could not be read; absent from summaries written before it was measured).
   */
  readonly apiServer?: ApiServerFigures | null;
  /** With several replicas: RSS of the largest one, CPU summed (combineReplicaUsage). */
  readonly resources: ResourceUsage & {
    readonly cpuSecondsStartup: number | null;
    readonly cpuSecondsAfterReady: number | null;
    /** Each replica's own, in the order of their POD_NAMEs (absent from older summaries). */
    readonly replicas?: readonly ResourceUsage[];
  };
  readonly logPath: string;
}

interface TrackedWorkload {
  readonly spec: WorkloadSpec;
  readonly key: string;
  readonly sources: readonly string[];
  readonly lookup: SignalLookup;
  readonly createdAt: number;
  deletedAt: number | undefined;
}

interface ControllerStart {
  readonly startedAt: number;
  readyAt: number | undefined;
  /** Last request before the quiet period awaitQuiet() waited for. */
  settledAt?: number;
}

/** mulberry32: small, seedable, good enough to pick sources identically for every controller. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function forEachBounded<T>(
  items: readonly T[],
  options: { concurrency: number; signal: AbortSignal | undefined },
  action: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      options.signal?.throwIfAborted();
      const item = items[next];
      next += 1;
      if (item !== undefined) await action(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, items.length) }, worker));
}

function toGlobal(localKey: string, namespace: string): string {
  const slash = localKey.indexOf('/');
  return `${localKey.slice(0, slash)}/${namespace}/${localKey.slice(slash + 1)}`;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class ScenarioRun implements ScenarioContext {
  readonly params: Params;
  readonly setup: ScenarioSetup;
  readonly #env: RunEnvironment;
  readonly #request: RunRequest;
  readonly #clock = (): number => performance.now();
  readonly #random: () => number;
  readonly #observer: TemplateObserver;
  /** One per replica, following its restarts. */
  readonly #samplers: ProcessSampler[] = [];
  readonly #inFlight = new InFlightSampler({
    clock: this.#clock,
    intervalMs: IN_FLIGHT_SAMPLE_MS,
  });
  #inFlightSeries: InFlightSeries | undefined;
  readonly #audit: AuditLog | undefined;
  readonly #writes: WriteRecord[] = [];
  readonly #versions = new Map<string, Map<string, number>>();
  readonly #sourceLocks = new Map<string, Promise<void>>();
  readonly #tracked = new Map<string, TrackedWorkload>();
  readonly #starts: ControllerStart[] = [];
  readonly #labels: Readonly<Record<string, string>>;
  #controllers: readonly ControllerProcess[] = [];
  /** Before the first start, once settled (or ready), at the end of the drain. */
  readonly #apiServer: Record<'before' | 'settled' | 'end', ApiServerReading | undefined> = {
    before: undefined,
    settled: undefined,
    end: undefined,
  };
  #kubeconfig: string | undefined;
  #auditFrom = 0;
  /** Where in the audit log each start and each readiness of the controller happened. */
  readonly #phases: PhaseMark[] = [];
  #cpuAtReady: number | undefined;
  #writeErrors = 0;
  #firstWriteError: string | undefined;
  #noise = 0;
  #logPath = '';
  /** Set while the bench itself stops or kills the controller; any other exit is a crash. */
  #stopping = false;
  readonly #crashes: string[] = [];
  /** End of the drain: rollouts still open count as in flight until then. */
  #observedUntil: number | undefined;

  constructor(deps: { env: RunEnvironment; request: RunRequest; setup: ScenarioSetup }) {
    this.#env = deps.env;
    this.#request = deps.request;
    this.params = deps.request.params;
    this.setup = deps.setup;
    this.#random = seededRandom(deps.request.seed);
    this.#labels = { [RUN_LABEL]: deps.request.runId };
    this.#observer = new TemplateObserver({
      raw: deps.env.raw,
      kc: deps.env.cluster.kc,
      labelSelector: `${RUN_LABEL}=${deps.request.runId}`,
      clock: this.#clock,
      onReplicaSetEvent: (event) => {
        this.#inFlight.apply(event.type, event.object);
      },
    });
    const auditPath = deps.env.cluster.auditLogPath;
    this.#audit = auditPath === undefined ? undefined : new AuditLog({ path: auditPath });
  }

  // ---- ScenarioContext -------------------------------------------------------------------

  async startController(options: { waitReady?: boolean } = {}): Promise<void> {
    if (this.#controllers.some((running) => running.exitInfo === undefined)) {
      throw new Error('the controller is already running');
    }
    const { scenario, controller } = this.#request;
    this.#kubeconfig ??= (await installKreloadIdentity(this.#env.cluster)).kubeconfigPath;
    this.#apiServer.before ??= await this.#readApiServer();
    const flags = controllerFlags(controller.profile, {
      namespaces:
        scenario.clusterWide === true
          ? undefined
          : [...this.setup.namespaces, this.#env.canary.namespace],
      strategy: scenario.strategy,
      kreloadDefaults: scenario.kreloadDefaults,
    });
    const startedAt = await this.#audit?.mark();
    if (startedAt !== undefined) this.#phases.push({ offset: startedAt, ready: false });
    // Every replica runs as in a pod of the chart: its own POD_NAME (its member identity) in
    // kreload's namespace, where kreload also keeps its first-sight baselines.
    const identities = replicaIdentities(controller);
    const kubeconfig = this.#kubeconfig;
    const started = await Promise.all(
      identities.map((pod, index) =>
        ControllerProcess.start({
          spec: controller,
          flags,
          kubeconfig,
          logPath: this.#replicaLogPath(index),
          live: this.#env.live,
          env: { POD_NAME: pod, POD_NAMESPACE: KRELOAD_NAMESPACE },
        }),
      ),
    );
    this.#controllers = started;
    started.forEach((replica, index) => {
      const sampler = this.#samplers[index] ?? new ProcessSampler();
      this.#samplers[index] = sampler;
      sampler.follow(replica.pid);
      void replica.exited.then((exit) => {
        if (this.#stopping) return;
        this.#crashes.push(`code ${String(exit.code)}, signal ${String(exit.signal)}`);
        this.#say(
          `the controller exited on its own (code ${String(exit.code)}); log: ${replica.logPath}`,
        );
      });
    });
    const record: ControllerStart = {
      startedAt: Math.min(...started.map((replica) => replica.startedAt)),
      readyAt: undefined,
    };
    this.#starts.push(record);
    const reaction = this.#env.canary
      .awaitReaction({
        timeoutMs: scenario.readyTimeoutMs?.(this.params) ?? DEFAULT_READY_TIMEOUT_MS,
        exitInfo: () => started.find((replica) => replica.exitInfo !== undefined)?.exitInfo,
        ...(this.#env.signal ? { signal: this.#env.signal } : {}),
      })
      .then(async (at) => {
        record.readyAt = at;
        const readyAt = await this.#audit?.mark();
        if (readyAt !== undefined) this.#phases.push({ offset: readyAt, ready: true });
        if (this.#cpuAtReady === undefined) {
          this.#cpuAtReady = await this.#cpuSeconds();
          // The request-rate window starts here, or once settled when the scenario waits for it.
          this.#apiServer.settled ??= await this.#readApiServer();
        }
        this.#say(`ready after ${((at - record.startedAt) / 1000).toFixed(1)} s`);
      });
    if (options.waitReady ?? true) await reaction;
    else
      reaction.catch((error: unknown) => {
        this.#say(`restart: ${errorText(error)}`);
      });
  }

  async awaitQuiet(options: { quietMs: number; timeoutMs: number }): Promise<void> {
    const auditPath = this.#env.cluster.auditLogPath;
    const start = this.#starts.at(-1);
    if (this.#audit === undefined || auditPath === undefined || start === undefined) {
      this.#say('no audit log: not waiting for the controller to settle');
      return;
    }
    let offset = await this.#audit.mark();
    let lastActivity = this.#clock();
    const deadline = lastActivity + options.timeoutMs;
    while (this.#clock() - lastActivity < options.quietMs) {
      if (this.#clock() > deadline)
        throw new Error(`the controller did not settle within ${options.timeoutMs / 1000} s`);
      await this.sleep(250);
      const text = await readAuditRange(auditPath, { from: offset, to: await this.#audit.mark() });
      offset += Buffer.byteLength(text, 'utf8');
      const { startup } = splitByPhase(text, { from: 0, marks: [] });
      // Lease renewals (HA, active-active) go on for ever: they are not work.
      const busy = startup.some(
        (event) =>
          event.user.username === KRELOAD_USER &&
          event.verb !== 'watch' &&
          event.objectRef?.resource !== 'leases',
      );
      if (busy) lastActivity = this.#clock();
    }
    start.settledAt = lastActivity;
    this.#apiServer.settled = await this.#readApiServer();
    this.#say(`settled after ${((lastActivity - start.startedAt) / 1000).toFixed(1)} s`);
  }

  async stopController(): Promise<void> {
    await Promise.all(this.#samplers.map((sampler) => sampler.sample()));
    this.#stopping = true;
    try {
      await Promise.all(this.#controllers.map((replica) => replica.stop()));
    } finally {
      this.#stopping = false;
    }
  }

  async killController(): Promise<void> {
    await Promise.all(this.#samplers.map((sampler) => sampler.sample()));
    this.#stopping = true;
    try {
      await Promise.all(this.#controllers.map((replica) => replica.kill9()));
    } finally {
      this.#stopping = false;
    }
  }

  write(source: SourceSpec, options: { key?: string; window?: string } = {}): Promise<void> {
    const key = options.key ?? source.keys[0]?.key;
    if (key === undefined) throw new Error(`${keyOfSource(source)} has no data key`);
    return this.#serialised(source, async () => {
      const id = keyOfSource(source);
      const versions = this.#versions.get(id) ?? new Map<string, number>();
      this.#versions.set(id, versions);
      const version = (versions.get(key) ?? 0) + 1;
      versions.set(key, version);
      // Rollouts in flight are sampled from the first write on (no-op once started).
      if (this.#request.scenario.podsRunMs !== undefined) this.#inFlight.start();
      const writeId = this.#writes.length;
      this.#writes.push({
        id: writeId,
        at: this.#clock(),
        source: id,
        hash: sourceHash(source, versions),
        window: options.window ?? `write-${writeId}`,
      });
      await this.#env.raw.patch({
        path: objectPath(SOURCE_RESOURCES[source.type], source.namespace, source.name),
        body: dataPatch(source, key, version),
        contentType: MERGE_PATCH,
      });
    });
  }

  touch(source: SourceSpec): Promise<void> {
    return this.#serialised(source, async () => {
      this.#noise += 1;
      const writeId = this.#writes.length;
      this.#writes.push({
        id: writeId,
        at: this.#clock(),
        source: keyOfSource(source),
        hash: undefined,
        window: `write-${writeId}`,
      });
      await this.#env.raw.patch({
        path: objectPath(SOURCE_RESOURCES[source.type], source.namespace, source.name),
        body: noisePatch(this.#noise),
        contentType: MERGE_PATCH,
      });
    });
  }

  async createWorkload(spec: WorkloadSpec): Promise<void> {
    await this.#env.raw.create(
      collectionPath(WORKLOAD_RESOURCES[spec.kind], spec.namespace),
      workloadManifest(spec, this.#labels),
    );
    this.#track(spec, this.#clock());
  }

  async deleteWorkload(spec: WorkloadSpec): Promise<void> {
    const tracked = this.#tracked.get(keyOfWorkload(spec));
    if (tracked !== undefined) tracked.deletedAt = this.#clock();
    await this.#env.raw.delete(
      objectPath(WORKLOAD_RESOURCES[spec.kind], spec.namespace, spec.name),
    );
  }

  async every(
    timing: { intervalMs: number; durationMs: number },
    action: (tick: number) => Promise<void>,
  ): Promise<void> {
    const start = this.#clock();
    const inFlight = new Set<Promise<void>>();
    for (let tick = 0; tick * timing.intervalMs < timing.durationMs; tick += 1) {
      const wait = start + tick * timing.intervalMs - this.#clock();
      if (wait > 0) await this.sleep(wait);
      const running: Promise<void> = action(tick)
        .catch((error: unknown) => {
          this.#writeErrors += 1;
          this.#firstWriteError ??= errorText(error);
        })
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  }

  sleep(ms: number): Promise<void> {
    return sleep(ms, undefined, this.#env.signal ? { signal: this.#env.signal } : {});
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.#random() * items.length)];
    if (item === undefined) throw new Error('pick() from an empty list');
    return item;
  }

  // ---- the run ---------------------------------------------------------------------------

  async execute(): Promise<RunResult> {
    const { scenario, controller, repeat } = this.#request;
    this.#logPath = path.join(this.#env.logDir, `${scenario.id}-${controller.label}-${repeat}.log`);
    const startedAt = new Date().toISOString();
    const timing = { setup: 0, load: 0, drain: 0 };
    let error: string | null = null;
    let drained = false;
    let began = this.#clock();
    let ticker: NodeJS.Timeout | undefined;
    try {
      await this.#observer.start();
      await this.#createObjects();
      timing.setup = this.#clock() - began;
      this.#auditFrom = (await this.#audit?.mark()) ?? 0;
      began = this.#clock();
      const loadStart = began;
      ticker = setInterval(() => {
        this.#reportProgress(loadStart);
      }, PROGRESS_INTERVAL_MS);
      await scenario.run(this);
      timing.load = this.#clock() - began;
      began = this.#clock();
      drained = await this.#drain();
      timing.drain = this.#clock() - began;
      this.#apiServer.end = await this.#readApiServer();
    } catch (caught) {
      error = errorText(caught);
      this.#say(`failed: ${error}`);
    } finally {
      clearInterval(ticker);
      this.#stopInFlight();
      await this.stopController().catch((stopError: unknown) => {
        error ??= `stopping the controller: ${errorText(stopError)}`;
      });
      await this.#observer.stop();
      if (scenario.podsRunMs !== undefined) {
        await this.#removePods().catch((cleanupError: unknown) => {
          this.#say(`cleanup: ${errorText(cleanupError)}`);
        });
      } else if (scenario.clusterWide === true) {
        await this.#removeNamespaces().catch((cleanupError: unknown) => {
          this.#say(`cleanup: ${errorText(cleanupError)}`);
        });
      }
    }
    const replicas = await Promise.all(this.#samplers.map((sampler) => sampler.stop()));
    const resources = { ...combineReplicaUsage(replicas), replicas };
    const requests = await this.#requests();
    if (this.#crashes.length > 0) {
      error ??= `the controller exited on its own (${this.#crashes.join('; ')}); log: ${this.#logPath}`;
    }
    return this.#result({ startedAt, timing, error, drained, resources, requests });
  }

  #say(message: string): void {
    const { scenario, controller, repeat } = this.#request;
    this.#env.progress(
      `[${scenario.id} ${controller.label}${repeat > 0 ? ` #${repeat + 1}` : ''}] ${message}`,
    );
  }

  #reportProgress(since: number): void {
    const rss = this.#samplers
      .map((sampler) => sampler.currentRssMiB())
      .filter((value) => value !== null)
      .join(' / ');
    const sampling = this.#request.scenario.podsRunMs !== undefined;
    this.#say(
      `${((this.#clock() - since) / 1000).toFixed(0)} s: ${this.#writes.length} writes, ` +
        `${this.#observer.rollCount()} rollouts seen` +
        (sampling ? `, ${this.#inFlight.current()} in flight` : '') +
        (rss === '' ? '' : `, controller RSS ${rss} MiB`),
    );
  }

  /** Ends the in-flight sampling once (the end of the wait, or a failure); times from the first write. */
  #stopInFlight(): void {
    if (this.#request.scenario.podsRunMs === undefined || this.#inFlightSeries !== undefined)
      return;
    this.#inFlightSeries = this.#inFlight.stop(this.#writes[0]?.at ?? this.#clock());
  }

  async #serialised(source: SourceSpec, action: () => Promise<void>): Promise<void> {
    // Writes to one source must reach the API server in the order of their versions.
    const id = keyOfSource(source);
    const previous = this.#sourceLocks.get(id) ?? Promise.resolve();
    const current = previous.then(action, action);
    this.#sourceLocks.set(
      id,
      current.catch(() => undefined),
    );
    return current;
  }

  #track(spec: WorkloadSpec, createdAt: number): void {
    const envNames = envNamesOf(spec);
    this.#tracked.set(keyOfWorkload(spec), {
      spec,
      key: keyOfWorkload(spec),
      sources: [...new Set(envNames.values())].map((local) => toGlobal(local, spec.namespace)),
      lookup: { envNames },
      createdAt,
      deletedAt: undefined,
    });
  }

  async #createObjects(): Promise<void> {
    const { setup } = this;
    const raw = this.#env.raw;
    const bounded = { concurrency: SETUP_CONCURRENCY, signal: this.#env.signal };
    this.#say(
      `setup: ${setup.namespaces.length} namespace(s), ${setup.sources.length} sources, ${setup.workloads.length} workloads`,
    );
    await forEachBounded(setup.namespaces, bounded, async (name) => {
      await raw.create(collectionPath(NAMESPACES), { metadata: { name, labels: this.#labels } });
    });
    let created = 0;
    const total = setup.sources.length + setup.workloads.length;
    const report = setInterval(() => {
      this.#say(`setup: ${created}/${total} objects`);
    }, PROGRESS_INTERVAL_MS);
    try {
      await forEachBounded(setup.sources, bounded, async (spec) => {
        await raw.create(
          collectionPath(SOURCE_RESOURCES[spec.type], spec.namespace),
          sourceManifest(spec, { versions: new Map(), labels: this.#labels }),
        );
        created += 1;
      });
      await forEachBounded(setup.workloads, bounded, async (spec) => {
        await raw.create(
          collectionPath(WORKLOAD_RESOURCES[spec.kind], spec.namespace),
          workloadManifest(spec, this.#labels),
        );
        this.#track(spec, -Infinity);
        created += 1;
      });
    } finally {
      clearInterval(report);
    }
    await this.#until(
      () => [...this.#tracked.keys()].every((key) => this.#observer.workload(key) !== undefined),
      { timeoutMs: 120_000, what: 'the bench to see every workload' },
    );
    if (this.#request.scenario.pausePeriodMs !== undefined) await this.#awaitFirstReplicaSets();
    const podsRunMs = this.#request.scenario.podsRunMs?.(this.params);
    if (podsRunMs !== undefined) await this.#awaitInitialRollouts(podsRunMs);
  }

  /** Before the controller starts, every Deployment's first pods must be Ready. */
  async #awaitInitialRollouts(timeoutMs: number): Promise<void> {
    const deployments = this.setup.workloads.filter((spec) => spec.kind === 'Deployment');
    const notReady = (): number =>
      deployments.filter(
        (spec) =>
          completedAt({
            replicaSets: this.#observer.replicaSets(spec.namespace, spec.name),
            carries: () => true,
            desired: spec.replicas ?? 1,
            after: -Infinity,
          }) === undefined,
      ).length;
    const began = this.#clock();
    const ticker = setInterval(() => {
      this.#say(
        `setup: ${deployments.length - notReady()}/${deployments.length} Deployments Ready`,
      );
    }, PROGRESS_INTERVAL_MS);
    const ready = await this.#until(() => notReady() === 0, {
      timeoutMs,
      what: 'every Deployment to have its first pods Ready',
      pollMs: COMPLETION_POLL_MS,
    }).finally(() => {
      clearInterval(ticker);
    });
    if (!ready) {
      throw new Error(
        `${notReady()} of ${deployments.length} Deployments still without Ready pods after ${timeoutMs / 1000} s`,
      );
    }
    this.#say(
      `setup: ${deployments.length} Deployments Ready after ${((this.#clock() - began) / 1000).toFixed(1)} s`,
    );
  }

  /** The run's live Deployments with the ReplicaSets the bench saw, for rollout completion. */
  #expectedRollouts(): ExpectedRollout[] {
    const deployments = [...this.#tracked.values()]
      .filter((tracked) => tracked.spec.kind === 'Deployment' && tracked.deletedAt === undefined)
      .map(({ spec, lookup }) => ({
        sources: new Map(
          spec.uses.map((use) => {
            const local = localSourceKey(use.type, use.name);
            return [toGlobal(local, spec.namespace), local] as const;
          }),
        ),
        lookup,
        desired: spec.replicas ?? 1,
        replicaSets: this.#observer.replicaSets(spec.namespace, spec.name),
      }));
    return expectedRollouts(this.#writes, deployments);
  }

  async #awaitRolloutsComplete(timeoutMs: number): Promise<void> {
    const began = this.#clock();
    const ticker = setInterval(() => {
      const expected = this.#expectedRollouts();
      this.#say(
        `rollouts complete: ${expected.length - pendingRollouts(expected)}/${expected.length}`,
      );
    }, PROGRESS_INTERVAL_MS);
    const complete = await this.#until(() => pendingRollouts(this.#expectedRollouts()) === 0, {
      timeoutMs,
      what: 'every rollout to complete',
      pollMs: COMPLETION_POLL_MS,
    }).finally(() => {
      clearInterval(ticker);
    });
    const pending = pendingRollouts(this.#expectedRollouts());
    this.#say(
      complete
        ? `every rollout complete ${((this.#clock() - began) / 1000).toFixed(1)} s after the drain`
        : `${pending} rollouts still incomplete after ${timeoutMs / 1000} s`,
    );
  }

  /** A replica's log: the run's own with one process, `…-r<i>.log` with several. */
  #replicaLogPath(index: number): string {
    return this.#request.controller.replicas > 1
      ? this.#logPath.replace(/\.log$/, `-r${index}.log`)
      : this.#logPath;
  }

  /** CPU seconds of every replica so far, each sampled now. */
  async #cpuSeconds(): Promise<number> {
    await Promise.all(this.#samplers.map((sampler) => sampler.sample()));
    return this.#samplers.reduce((total, sampler) => total + sampler.cpuSeconds(), 0);
  }

  /** kube-apiserver's /metrics; a failed read loses only these figures. */
  async #readApiServer(): Promise<ApiServerReading | undefined> {
    try {
      return await readApiServer(this.#env.cluster.kubeconfigPath);
    } catch (error) {
      this.#say(`API server metrics: ${errorText(error)}`);
      return undefined;
    }
  }

  #apiServerFigures(): ApiServerFigures | null {
    const { before, settled, end } = this.#apiServer;
    if (before === undefined || settled === undefined || end === undefined) return null;
    return apiServerFigures({ before, settled, end });
  }

  /**
   * A cluster-wide run leaves nothing for the next controller to watch: the run's objects are
   * deleted a collection at a time (kube-controller-manager's namespace deletion alone takes tens
   * of minutes for 600 namespaces here), then its namespaces, waited for a while.
   */
  async #removeNamespaces(): Promise<void> {
    const began = this.#clock();
    const bounded = { concurrency: SETUP_CONCURRENCY, signal: this.#env.signal };
    const resources = [
      ...new Set([
        ...this.setup.sources.map((spec) => SOURCE_RESOURCES[spec.type]),
        ...this.setup.workloads.map((spec) => WORKLOAD_RESOURCES[spec.kind]),
        REPLICA_SETS,
      ]),
    ];
    const collections = this.setup.namespaces.flatMap((namespace) =>
      resources.map((resource) => collectionPath(resource, namespace)),
    );
    await forEachBounded(collections, bounded, async (collection) => {
      await this.#env.raw.delete(collection);
    });
    this.#say(
      `cleanup: ${collections.length} collections deleted after ${((this.#clock() - began) / 1000).toFixed(0)} s`,
    );
    await forEachBounded(this.setup.namespaces, bounded, async (name) => {
      await this.#env.raw.delete(objectPath(NAMESPACES, '', name)).catch((error: unknown) => {
        if (!isStatus(error, 404)) throw error;
      });
    });
    const selector = `${RUN_LABEL}=${this.#request.runId}`;
    const left = async (): Promise<number> => {
      const list = await this.#env.raw.get(collectionPath(NAMESPACES), { labelSelector: selector });
      return isRecord(list) && Array.isArray(list.items) ? list.items.length : 0;
    };
    const deadline = this.#clock() + NAMESPACE_CLEANUP_TIMEOUT_MS;
    let lastSaid = began;
    for (let remaining = await left(); remaining > 0; remaining = await left()) {
      if (this.#clock() > deadline) {
        this.#say(
          `cleanup: ${remaining} emptied namespaces still terminating; the next run starts beside them`,
        );
        return;
      }
      if (this.#clock() - lastSaid > PROGRESS_INTERVAL_MS) {
        lastSaid = this.#clock();
        this.#say(`cleanup: ${remaining} namespaces still terminating`);
      }
      await this.sleep(1000);
    }
    this.#say(`cleanup: namespaces gone after ${((this.#clock() - began) / 1000).toFixed(0)} s`);
  }

  /** Deletes the run's namespaces and waits for its pods to go, so they hold no node capacity. */
  async #removePods(): Promise<void> {
    for (const name of this.setup.namespaces) {
      await this.#env.raw.delete(objectPath(NAMESPACES, '', name)).catch((error: unknown) => {
        if (!isStatus(error, 404)) throw error;
      });
    }
    const selector = `${RUN_LABEL}=${this.#request.runId}`;
    const podsLeft = async (): Promise<number> => {
      const list = await this.#env.raw.get('/api/v1/pods', { labelSelector: selector, limit: 1 });
      const items = isRecord(list) && Array.isArray(list.items) ? list.items.length : 0;
      return items;
    };
    const deadline = this.#clock() + POD_CLEANUP_TIMEOUT_MS;
    while ((await podsLeft()) > 0) {
      if (this.#clock() > deadline) {
        this.#say('cleanup: pods of this run still present; the next run shares their nodes');
        return;
      }
      await this.sleep(500);
    }
  }

  /**
   * S12 counts rollouts as new ReplicaSets, so kube-controller-manager must have caught up before
   * the controller starts (it lags far behind right after K1's thousands of Deployments).
   */
  async #awaitFirstReplicaSets(): Promise<void> {
    const deployments = this.setup.workloads.filter((spec) => spec.kind === 'Deployment');
    const caughtUp = await this.#until(
      () =>
        deployments.every(
          (spec) => this.#observer.replicaSetTimes(spec.namespace, spec.name).length > 0,
        ),
      { timeoutMs: 300_000, what: 'kube-controller-manager to create the first ReplicaSets' },
    );
    if (!caughtUp)
      this.#say('setup: kube-controller-manager is still behind; rollout counts will be low');
  }

  async #until(
    condition: () => boolean,
    options: { timeoutMs: number; what: string; pollMs?: number },
  ): Promise<boolean> {
    const deadline = this.#clock() + options.timeoutMs;
    while (!condition()) {
      if (this.#clock() > deadline) return false;
      await this.sleep(options.pollMs ?? 100);
    }
    return true;
  }

  /** Current signals of a workload: every template it had, folded (last-reloaded-from is sticky). */
  #signalsOf(tracked: TrackedWorkload): {
    baseline: Map<string, string>;
    rolls: { at: number; signals: Map<string, string> }[];
  } {
    const templates = this.#observer.workload(tracked.key)?.templates ?? [];
    const globalise = (local: ReadonlyMap<string, string>): Map<string, string> =>
      new Map([...local].map(([key, hash]) => [toGlobal(key, tracked.spec.namespace), hash]));
    let local = new Map<string, string>();
    const states = templates.map((record) => {
      local = templateSignals(record.template, tracked.lookup, local);
      return { at: record.at, signals: globalise(local) };
    });
    return { baseline: states[0]?.signals ?? new Map<string, string>(), rolls: states.slice(1) };
  }

  #pending(): number {
    const lastWrites = new Map<string, WriteRecord>();
    for (const write of this.#writes)
      if (write.hash !== undefined) lastWrites.set(write.source, write);
    const workloads = [...this.#tracked.values()]
      .filter((tracked) => tracked.deletedAt === undefined)
      .map((tracked) => {
        const { baseline, rolls } = this.#signalsOf(tracked);
        return {
          key: tracked.key,
          sources: tracked.sources,
          createdAt: tracked.createdAt,
          current: rolls.at(-1)?.signals ?? baseline,
        };
      });
    return pendingDeliveries({
      lastWrites: [...lastWrites.values()],
      workloads,
      window: EXPECTATION_WINDOW,
    });
  }

  async #drain(): Promise<boolean> {
    const { scenario } = this.#request;
    const timeoutMs = scenario.drainTimeoutMs?.(this.params) ?? DEFAULT_DRAIN_TIMEOUT_MS;
    const podsRunMs = scenario.podsRunMs?.(this.params);
    const drained = await this.#until(() => this.#pending() === 0, {
      timeoutMs,
      what: 'every dependent to carry its latest hash',
      // Latency comes from the observer's timestamps; with pods running (R3: a whole storm behind
      // a budget) a check of every workload every 100 ms would compete with the control plane.
      ...(podsRunMs === undefined ? {} : { pollMs: COMPLETION_POLL_MS }),
    });
    if (!drained)
      this.#say(`drain: ${this.#pending()} deliveries still missing after ${timeoutMs / 1000} s`);
    if (podsRunMs !== undefined) await this.#awaitRolloutsComplete(podsRunMs);
    this.#observedUntil = this.#clock();
    this.#stopInFlight();
    await this.sleep(scenario.settleMs?.(this.params) ?? DEFAULT_SETTLE_MS);
    return drained;
  }

  async #requests(): Promise<RequestSummary | null> {
    const auditPath = this.#env.cluster.auditLogPath;
    if (this.#audit === undefined || auditPath === undefined) return null;
    // kube-apiserver writes the audit line as the request completes: give the last ones a moment.
    await sleep(1000);
    const to = await this.#audit.mark();
    const text = await readAuditRange(auditPath, { from: this.#auditFrom, to });
    const { startup, ready } = splitByPhase(text, { from: this.#auditFrom, marks: this.#phases });
    return {
      startup: summarisePhase(startup, KRELOAD_USER),
      afterReady: summarisePhase(ready, KRELOAD_USER),
    };
  }

  #settledMs(): number | null {
    const start = this.#starts.find((candidate) => candidate.settledAt !== undefined);
    if (start?.settledAt === undefined) return null;
    return Math.round(start.settledAt - start.startedAt);
  }

  #rollouts(): RolloutCheck | null {
    const periodMs = this.#request.scenario.pausePeriodMs?.(this.params);
    if (periodMs === undefined) return null;
    let expected = 0;
    let observed = 0;
    let extra = 0;
    let missed = 0;
    for (const tracked of this.#tracked.values()) {
      if (tracked.spec.kind !== 'Deployment') continue;
      const changes = (this.#observer.workload(tracked.key)?.templates ?? []).slice(1);
      const windows = pauseWindows(
        changes.map((record) => record.at),
        periodMs,
      );
      const { namespace, name } = tracked.spec;
      const rollouts = Math.max(0, this.#observer.replicaSetTimes(namespace, name).length - 1);
      const last = changes.at(-1);
      expected += windows;
      observed += rollouts;
      extra += Math.max(0, rollouts - windows);
      // Missed: the final template never got its ReplicaSet (left paused, or not resumed in time).
      if (last !== undefined && !this.#observer.hasReplicaSetFor(namespace, name, last.template)) {
        missed += 1;
      }
    }
    return { expected, observed, extra, missed };
  }

  #result(details: {
    startedAt: string;
    timing: { setup: number; load: number; drain: number };
    error: string | null;
    drained: boolean;
    resources: ResourceUsage;
    requests: RequestSummary | null;
  }): RunResult {
    const { scenario, controller, repeat, runId } = this.#request;
    const histories: WorkloadHistory[] = [...this.#tracked.values()].map((tracked) => ({
      key: tracked.key,
      sources: tracked.sources,
      createdAt: tracked.createdAt,
      ...(tracked.deletedAt === undefined ? {} : { deletedAt: tracked.deletedAt }),
      ...this.#signalsOf(tracked),
    }));
    const evaluation = evaluate({
      writes: this.#writes,
      workloads: histories,
      window: EXPECTATION_WINDOW,
    });
    const rollouts = this.#rollouts();
    const completion =
      this.#request.scenario.podsRunMs === undefined
        ? null
        : rolloutCompletion(this.#expectedRollouts(), this.#observedUntil ?? this.#clock());
    const cpuAtReady = this.#cpuAtReady;
    const round = (ms: number): number => Math.round(ms);
    if (this.#firstWriteError !== undefined) {
      this.#say(`${this.#writeErrors} bench write(s) failed; first: ${this.#firstWriteError}`);
    }
    return {
      scenario: scenario.id,
      title: scenario.title,
      controller: controller.label,
      profile: controller.profile,
      command: controller.argv.join(' '),
      replicas: controller.replicas,
      repeat,
      runId,
      params: this.params,
      startedAt: details.startedAt,
      error: details.error,
      objects: { sources: this.setup.sources.length, workloads: this.setup.workloads.length },
      timingMs: {
        setup: round(details.timing.setup),
        ready: this.#starts.map((start) =>
          start.readyAt === undefined ? null : round(start.readyAt - start.startedAt),
        ),
        settled: this.#settledMs(),
        load: round(details.timing.load),
        drain: round(details.timing.drain),
      },
      drained: details.drained,
      writes: this.#writes.length,
      benchWriteErrors: this.#writeErrors,
      latencyMs: distribution(evaluation.latenciesMs),
      completionMs: distribution(evaluation.completionsMs),
      correctness: {
        ...evaluation.correctness,
        missed: evaluation.correctness.missed + (rollouts?.missed ?? 0),
        extra: evaluation.correctness.extra + (rollouts?.extra ?? 0),
        rollouts,
      },
      rolloutCompletion: completion,
      rolloutsInFlight: this.#inFlightSeries ?? null,
      requests: details.requests,
      apiServer: this.#apiServerFigures(),
      resources: {
        ...details.resources,
        cpuSecondsStartup: cpuAtReady === undefined ? null : Math.round(cpuAtReady * 100) / 100,
        cpuSecondsAfterReady:
          cpuAtReady === undefined
            ? null
            : Math.round((details.resources.cpuSeconds - cpuAtReady) * 100) / 100,
      },
      logPath: this.#logPath,
    };
  }
}
