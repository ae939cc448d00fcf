/**
 * The reconcile side of kreload, wired once for src/app.ts and for the pipeline test: the change
 * router (the watch server's subscriber) → the work queue → the work runner → the reconciler → the
 * writer, with the reporter on the side. The reconciler's read ports over the watch server's
 * caches are built here and nowhere else.
 */
import type { Options } from '../config/parse-options.ts';
import { ReloadListCache } from '../core/annotation-values.ts';
import { workloadKey } from '../core/keys.ts';
import type { SourceKey } from '../core/types.ts';
import { ChangeRouter } from '../controller/change-router.ts';
import { type WriteLedger, recordingOwnPatches } from '../controller/write-ledger.ts';
import { ReconcileReporter, type ReconcileReporterDeps } from '../controller/reconcile-reporter.ts';
import { EvictionTracker } from '../controller/eviction-tracker.ts';
import { RolloutTracker } from '../controller/rollout-tracker.ts';
import { TrackingTally } from '../controller/tracking-tally.ts';
import type { WebhookMode } from '../controller/webhook-mode.ts';
import { type ReconcileResume, WorkRunner } from '../reconcile/work-runner.ts';
import type { FanoutFinish, FanoutStart } from '../events/fanout-tracker.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RandomSource } from '../queue/backoff.ts';
import type { DebounceSettings } from '../queue/debouncer.ts';
import type { Timers } from '../time/timers.ts';
import { WorkQueue } from '../queue/work-queue.ts';
import type {
  BaselineStore,
  PodApi,
  RecreationJournal,
  SnapshotApi,
  WorkloadWriter,
} from '../reconcile/ports.ts';
import type { AdmissionReport } from '../reconcile/stages/admission.ts';
import type { HoldsReport } from '../reconcile/stages/roll-holds.ts';
import type { FlapLimits } from '../core/flap-breaker.ts';
import { SourceBreakers } from '../controller/source-breakers.ts';
import type { RolloutSettings } from '../rollout/waves.ts';
import { type ReconcileOptions, Reconciler } from '../reconcile/reconciler.ts';
import { MarkStore } from '../watch/marks.ts';
import type { KindTable } from '../rollout/kinds.ts';
import { type PolicyStatusPort, PolicyStatusWriter } from '../controller/policy-status.ts';
import type { WatchCaches, WatchHandler } from '../watch/watch-caches.ts';

/** The watch server as the reconcile side uses it. */
export interface WatchedState {
  readonly caches: WatchCaches;
  subscribe(handler: WatchHandler): void;
}

/** The queue as lower-value API traffic waits on it. */
export interface WorkInFlight {
  whenNoWorkInFlight(maxWaitMs: number): Promise<void>;
}

export interface Notifications {
  readonly events: ReconcileReporterDeps['events'];
  readonly fanouts: {
    begin(start: FanoutStart): void;
    finish(finish: FanoutFinish): void;
  };
}

export interface PipelineDeps {
  readonly watch: WatchedState;
  /** The write ledger the watch server's store also reads (ADR 0014). */
  readonly writes: WriteLedger;
  readonly writer: WorkloadWriter;
  readonly reconcile: ReconcileOptions;
  /** `--worker-threads`. */
  readonly concurrency: number;
  readonly debounce: DebounceSettings;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /**
   * Events and the fan-outs that end in them, built on the queue: an Event waits for the workload
   * writes in flight (ADR 0015).
   */
  readonly notifications: (work: WorkInFlight) => Notifications;
  readonly alerts?: ReconcileReporterDeps['alerts'];
  /** The leadership gate (src/leader/leadership-gate.ts). */
  readonly gate: { readonly leading: boolean; mayWrite(): boolean };
  readonly journal?: RecreationJournal | undefined;
  /** `--enable-config-revisions`: the snapshot API (docs/adr/0036). */
  readonly snapshots?: SnapshotApi | undefined;
  /** Pods, for rolls by eviction (docs/adr/0044). */
  readonly pods?: PodApi | undefined;
  /** `--webhook-url` mode: changes are posted instead of rolled (§13.7). */
  readonly webhook?: WebhookMode | undefined;
  readonly timers: Timers;
  readonly random: RandomSource;
  /** Before each reconcile: lets pending I/O run (the app yields to the event loop). */
  readonly pause?: (() => Promise<void>) | undefined;
  /** With `--enable-reload-policies`: where policy status is written. */
  readonly policyStatus?: PolicyStatusPort | undefined;
  /** Roll admission's budget and waves (docs/safe-rollouts.md); default: none, as Reloader. */
  readonly rollouts?: RolloutSettings | undefined;
  /** Restart windows and the flapping-source breaker (docs/windows-and-breaker.md). */
  readonly holds?: HoldSettings | undefined;
  /** `--baseline-store=namespace`: where first-sight baselines go (docs/adr/0046). */
  readonly baselines?: BaselineStore | undefined;
  /** Active-active mode: changes are routed only in the namespaces this replica owns. */
  readonly owns?: ((namespace: string) => boolean) | undefined;
}

/** `--enable-restart-windows` and the `--flap-*` limits. */
export interface HoldSettings {
  readonly windowsEnabled: boolean;
  readonly flapLimits: FlapLimits;
}

export interface Pipeline {
  readonly queue: WorkQueue<ReconcileResume>;
  readonly router: ChangeRouter;
  readonly reconciler: Reconciler;
  /** The create/delete marks the router records and the reconciler reads (§5.4). */
  readonly marks: MarkStore;
  /** With `--enable-reload-policies` and a served policy API. */
  readonly policyStatus: PolicyStatusWriter | undefined;
  /** The rollouts kreload started, followed to complete or failed. */
  readonly rollouts: RolloutTracker;
  readonly evictions: EvictionTracker;
  /**
   * On taking the lead (a start without HA included): follows again the rollouts kreload started
   * before a restart or before another replica led, still in progress (rollout-tracker.ts). Not in
   * dry-run or webhook mode, where kreload rolls nothing.
   */
  readonly adoptRollouts: () => void;
  /** The flapping-source breakers, when holds are on (`/readyz` detail, explain). */
  readonly breakers: SourceBreakers | undefined;
}

/** The reconciler's options from the configuration. */
export function reconcileOptionsOf(options: Options, kinds: KindTable): ReconcileOptions {
  return {
    strategy: options.reloadStrategy,
    reloadOnCreate: options.reloadOnCreate,
    reloadOnDelete: options.reloadOnDelete,
    keys: options.annotationKeys,
    autoReloadAll: options.autoReloadAll,
    configRevisions: options.enableConfigRevisions,
    dryRun: options.dryRun,
    kinds,
  };
}

function queueObserver(metrics: Metrics, logger: Logger) {
  return {
    depthChanged: (depth: number) => {
      metrics.setQueueDepth(depth);
    },
    added: () => {
      metrics.recordQueueAdd();
    },
    coalesced: () => {
      metrics.recordCoalesced();
    },
    started: (_key: string, latencyMs: number) => {
      metrics.recordQueueLatency(latencyMs / 1000);
    },
    handlerFailed: (key: string, error: unknown) => {
      metrics.recordError('handler_error');
      logger.error('reconcile failed', { workload: key, error: String(error) });
    },
  };
}

function admissionReport(metrics: Metrics, logger: Logger): AdmissionReport {
  return {
    held: (reason) => {
      metrics.recordRolloutHeld(reason);
    },
    haltedChanges: (count) => {
      metrics.setConfigRolloutsHalted(count);
    },
    markerFailed: (view, error) => {
      logger.warn('could not write the rollout halt marker; the change stays held', {
        namespace: view.ref.namespace,
        kind: view.ref.kind,
        workload: view.ref.name,
        status: error.status,
        error: error.message,
      });
    },
    notUndone: (view, why) => {
      logger.warn(`failed rollout not undone: ${why}; the halt holds it`, {
        namespace: view.ref.namespace,
        kind: view.ref.kind,
        workload: view.ref.name,
      });
    },
    priorityProblem: (view, problem) => {
      logger.warn(problem, {
        namespace: view.ref.namespace,
        kind: view.ref.kind,
        workload: view.ref.name,
      });
    },
  };
}

function holdsReport(metrics: Metrics, logger: Logger): HoldsReport {
  return {
    held: (view, holds, begun) => {
      for (const hold of holds) metrics.recordRolloutHeld(hold.reason);
      // Info once when a hold begins or grows; a flapping source re-plans its dependents at each
      // change, and an info line per reconcile would repeat the same hold hundreds of times.
      const fields = {
        namespace: view.ref.namespace,
        kind: view.ref.kind,
        workload: view.ref.name,
        holds: holds.map((hold) => hold.detail),
      };
      if (begun) logger.info('roll held', fields);
      else logger.debug('roll held', fields);
    },
    pendingFailed: (view, error) => {
      logger.warn('could not record the held roll on the workload; it is tried again', {
        namespace: view.ref.namespace,
        kind: view.ref.kind,
        workload: view.ref.name,
        status: error.status,
        error: error.message,
      });
    },
  };
}

function sourceBreakers(
  deps: PipelineDeps,
  events: Notifications['events'],
): SourceBreakers | undefined {
  const holds = deps.holds;
  if (!holds) return undefined;
  const { metrics, logger, timers } = deps;
  return new SourceBreakers({
    limits: holds.flapLimits,
    events,
    now: () => timers.now(),
    opened: (source, changes) => {
      metrics.recordSourceFlapping();
      logger.warn('source is flapping: rolls of its workloads are held', {
        namespace: source.namespace,
        type: source.type,
        name: source.name,
        changes,
      });
    },
  });
}

/** Builds the reconcile side and subscribes its router to the watch server. */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const { caches } = deps.watch;
  const { metrics, gate, timers } = deps;
  // The queue calls the runner only once started, after this function returned.
  const queue = new WorkQueue<ReconcileResume>({
    concurrency: deps.concurrency,
    debounce: deps.debounce,
    handler: (key, entry, context) => runner.handle(key, entry, context),
    timers,
    random: deps.random,
    observer: queueObserver(metrics, deps.logger),
  });
  const { events, fanouts } = deps.notifications(queue);
  const { writes } = deps;
  const marks = new MarkStore();
  const reloadLists = new ReloadListCache();
  const policyStatus =
    caches.policies !== undefined && deps.policyStatus !== undefined
      ? new PolicyStatusWriter({
          policies: caches.policies,
          client: deps.policyStatus,
          isLeading: () => gate.leading && deps.webhook === undefined && !deps.reconcile.dryRun,
          now: () => timers.now(),
          logger: deps.logger,
          onWriteFailed: () => {
            metrics.recordError('policy_status_error');
          },
          events,
          applied: (view): ReadonlyMap<SourceKey, string> =>
            reconciler.appliedHashes(workloadKey(view.ref)),
        })
      : undefined;
  const breakers = sourceBreakers(deps, events);
  const { kinds } = deps.reconcile;
  const rollouts = new RolloutTracker({
    kinds,
    workloads: caches.store,
    now: () => timers.now(),
    metrics,
    events,
    logger: deps.logger,
    carriesRollMarker: (key) => reconciler.appliedHashes(key).size > 0,
  });
  const evictions = new EvictionTracker({
    workloads: caches.store,
    now: () => timers.now(),
    metrics,
  });
  const reconciler: Reconciler = new Reconciler({
    workloads: caches.store,
    sources: caches.sources,
    policies: caches.policies,
    marks,
    writer: recordingOwnPatches(deps.writer, writes),
    observer: new ReconcileReporter({
      logger: deps.logger,
      kinds,
      metrics,
      events,
      alerts: deps.alerts,
      pausePeriodKey: deps.reconcile.keys.pausePeriod,
      sourceUid: (ref) => caches.sources.get(ref.namespace, ref.type, ref.name)?.uid,
      rolled: (event) => {
        policyStatus?.recordRoll(event.view, event.plan);
        rollouts.started(event);
      },
      evicting: (event) => {
        evictions.observe(event);
      },
    }),
    options: deps.reconcile,
    now: () => timers.now(),
    random: deps.random,
    reloadLists,
    mayWrite: () => gate.mayWrite(),
    journal: deps.journal,
    snapshots: deps.snapshots,
    admission: deps.rollouts && {
      settings: deps.rollouts,
      members: caches.store,
      rollouts,
      events,
      sourceUid: (ref) => caches.sources.get(ref.namespace, ref.type, ref.name)?.uid,
      report: admissionReport(metrics, deps.logger),
    },
    pods: deps.pods,
    baselines: deps.baselines,
    holds: deps.holds &&
      breakers && {
        windowsEnabled: deps.holds.windowsEnabled,
        flapLimits: deps.holds.flapLimits,
        breakers,
        report: holdsReport(metrics, deps.logger),
      },
  });
  const runner = new WorkRunner({
    reconcile: (key, trigger, resume) => reconciler.reconcile(key, trigger, resume),
    metrics,
    onFanoutFinish: (finish) => {
      fanouts.finish(finish);
    },
    now: () => timers.now(),
    tally: new TrackingTally({ gauges: metrics }),
    writes,
    pause: deps.pause,
  });
  const router = new ChangeRouter({
    webhook: deps.webhook,
    ownPatches: writes,
    store: caches.store,
    policies: caches.policies,
    marks,
    queue,
    keys: deps.reconcile.keys,
    autoReloadAll: deps.reconcile.autoReloadAll,
    reloadOnDelete: deps.reconcile.reloadOnDelete,
    reloadLists,
    acceptsNamespace: (ns) => caches.namespaces.accepts(ns) && (deps.owns?.(ns) ?? true),
    isLeading: () => gate.leading,
    onSkip: (reason) => {
      metrics.recordSkip(reason);
    },
    onFanout: (start) => {
      fanouts.begin(start);
    },
  });
  // The breakers count a change before the router's reconciles can ask them about it.
  if (breakers) deps.watch.subscribe(breakers);
  deps.watch.subscribe(router);
  if (policyStatus) deps.watch.subscribe(policyStatus);
  const adoptRollouts = (): void => {
    if (deps.webhook !== undefined || deps.reconcile.dryRun) return;
    rollouts.adoptInProgress(caches.store.keys());
  };
  return {
    queue,
    router,
    reconciler,
    marks,
    policyStatus,
    rollouts,
    evictions,
    adoptRollouts,
    breakers,
  };
}
