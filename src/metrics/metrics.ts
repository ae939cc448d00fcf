import { Counter, Gauge, Histogram, collectDefaultMetrics } from 'prom-client';
import type { Registry } from 'prom-client';
import type { SkipReason, SourceType, WorkloadKindName } from '../core/types.ts';
import type { WatchStatus } from '../http/readiness.ts';
import type { GateReason } from '../rollout/holds.ts';
import type { HoldReason } from '../rollout/waves.ts';
import type { WorkloadPlural } from '../rollout/kinds.ts';
import { sourceTypeRow } from '../core/source-types.ts';
import { JOURNAL_REFUSAL_REASONS, type JournalRefusalReason } from '../reconcile/ports.ts';

/** `result` of `reloader_reconcile_total` and `reloader_reconcile_duration_seconds`. */
export type ReconcileResult = 'success' | 'skipped' | 'error';

/** `type` of `reloader_errors_total`. */
export type ErrorType =
  | 'handler_error'
  | 'write_gave_up'
  | 'watch_error'
  | 'alert_error'
  | 'webhook_error'
  | 'policy_status_error';

/** `event_type` of the event counters: the real notification type (Reloader reports `unknown`). */
export type NotificationType = 'add' | 'update' | 'delete';

/**
 * `resource_type` of the event counters: the plural resource a notification came from. Workload
 * kinds add theirs through the `plural` of their kind-table row, a configured kind's included
 * (`string`: its plural is whatever the configuration names).
 */
export type ResourceType =
  | 'configmaps'
  | 'secrets'
  | 'namespaces'
  | 'secretproviderclasspodstatuses'
  | 'secretproviderclasses'
  | 'reloadpolicies'
  | WorkloadPlural
  | (string & {});

/**
 * `result` of `kreload_rollout_duration_seconds`: how a rollout kreload started ended. `superseded`:
 * a later spec change (kreload's next roll, or anyone's edit) replaced it before it ended.
 */
export type RolloutResult = 'complete' | 'failed' | 'superseded';

/**
 * `result` of `kreload_pod_evictions_total`: one Eviction request of a roll by eviction. `blocked`:
 * a PodDisruptionBudget refused it (429); `failed`: any other refusal or error.
 */
export type EvictionResult = 'evicted' | 'blocked' | 'failed';

/** `result` of `reloader_events_processed_total`: `dropped` = filtered out or malformed. */
export type ProcessedResult = 'success' | 'dropped';

export interface RollRecord {
  readonly kind: WorkloadKindName;
  readonly namespace: string;
  /** True when every write of the roll was acknowledged; false when given up or failed for good. */
  readonly success: boolean;
  /** From the first write attempt to the last acknowledgement (retries and sub-requests included). */
  readonly latencySeconds: number;
}

export interface RestRequestRecord {
  /** HTTP status as a string, or a transport error label such as `<error>`. */
  readonly code: string;
  readonly method: string;
  readonly host: string;
  readonly verb: string;
  readonly seconds: number;
}

/**
 * The only way to record a metric. Each function stands for one occasion of §13.2 and is called
 * exactly once per occasion, so no counter is ever incremented from two places.
 */
export interface Metrics {
  /** One roll (not baselines, resumes or dry runs): executed, action and matched counters. */
  recordRoll(roll: RollRecord): void;
  /** One successful roll: from the earliest carried source change to the last acknowledgement. */
  recordReloadLatency(kind: WorkloadKindName, seconds: number): void;
  /** One workload reconcile, from dequeue to done. */
  recordReconcile(result: ReconcileResult, seconds: number): void;
  recordSkip(reason: SkipReason): void;
  /** Every list or watch notification, initial list included. */
  recordEventReceived(eventType: NotificationType, resourceType: ResourceType): void;
  recordEventProcessed(
    eventType: NotificationType,
    resourceType: ResourceType,
    result: ProcessedResult,
  ): void;
  setQueueDepth(depth: number): void;
  /** A key became pending. */
  recordQueueAdd(): void;
  /** From a key's `firstAt` to the start of its processing, debounce included. */
  recordQueueLatency(seconds: number): void;
  /** A trigger folded into an already-pending key. */
  recordCoalesced(): void;
  recordError(type: ErrorType): void;
  /** One retried write attempt. */
  recordRetry(): void;
  /** One workload evaluated by a reconcile. */
  recordScanned(kind: WorkloadKindName): void;
  setTrackedSources(type: SourceType, count: number): void;
  setTrackedWorkloads(kind: WorkloadKindName, count: number): void;
  /** True while leading, and always with HA off. */
  setLeader(leading: boolean): void;
  /** One API request (a watch is counted when it is opened). */
  recordRestRequest(request: RestRequestRecord): void;
  recordWatchRestart(resource: ResourceType, reason: string): void;
  /**
   * The status of the list-watch of `resource` in `namespace` (`undefined`: cluster-wide) changed;
   * only the current status has a series.
   */
  setWatchStatus(namespace: string | undefined, resource: ResourceType, status: WatchStatus): void;
  /** The rollouts kreload started that have not ended yet (controller/rollout-tracker.ts). */
  setRolloutsInProgress(count: number): void;
  /** One rollout kreload started ended: from its PATCH to complete, failed or superseded. */
  recordRolloutEnded(kind: WorkloadKindName, result: RolloutResult, seconds: number): void;
  /**
   * One refused Job recreation journal entry, first seen: an entry left in place is not counted
   * again at each replay.
   */
  recordJournalRefusal(reason: JournalRefusalReason): void;
  /** Roll admission (docs/safe-rollouts.md): the changes halted now. */
  setConfigRolloutsHalted(count: number): void;
  /** Roll admission: one roll not admitted now, and why (a wave or budget, a window, a breaker). */
  recordRolloutHeld(reason: HoldReason | GateReason): void;
  /** A source's flapping breaker opened: one episode. */
  recordSourceFlapping(): void;
  /** One Eviction request of a roll by eviction (docs/evict-strategy.md), and how it ended. */
  recordEviction(result: EvictionResult): void;
  /** Pods that still run an older config, summed over the rolls by eviction under way. */
  setPodsPendingEviction(count: number): void;
}

export interface MetricsOptions {
  /** `METRICS_COUNT_BY_NAMESPACE=enabled`: registers `reloader_reload_executed_total_by_namespace`. */
  readonly countByNamespace: boolean;
}

const RECONCILE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ACTION_LATENCY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// D36: 10, 30 and 60 cover the debounce window.
const QUEUE_LATENCY_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
const RELOAD_LATENCY_BUCKETS = [0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const REST_DURATION_BUCKETS = [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30];
// Pods starting on a real cluster: seconds to tens of minutes (progressDeadlineSeconds is 600).
const ROLLOUT_DURATION_BUCKETS = [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 3600];

/**
 * Defines every kreload metric on `registry` (never the global one), together with prom-client's
 * default `process_*` and `nodejs_*` collectors, and returns the recording functions.
 */
export function createMetrics(registry: Registry, options: MetricsOptions): Metrics {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const reloadExecuted = new Counter({
    name: 'reloader_reload_executed_total',
    help: 'Counter of reloads executed by Reloader.',
    labelNames: ['success'] as const,
    registers,
  });
  // Both values are exported from the start so that rate() and absent() work before any roll.
  reloadExecuted.inc({ success: 'true' }, 0);
  reloadExecuted.inc({ success: 'false' }, 0);

  const reloadExecutedByNamespace = options.countByNamespace
    ? new Counter({
        name: 'reloader_reload_executed_total_by_namespace',
        help: 'Counter of reloads executed by Reloader by namespace.',
        labelNames: ['success', 'namespace'] as const,
        registers,
      })
    : undefined;

  const reconcileTotal = new Counter({
    name: 'reloader_reconcile_total',
    help: 'Workload reconciles by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const reconcileDuration = new Histogram({
    name: 'reloader_reconcile_duration_seconds',
    help: 'Duration of a workload reconcile, from dequeue to done.',
    labelNames: ['result'] as const,
    buckets: RECONCILE_BUCKETS,
    registers,
  });
  const actionTotal = new Counter({
    name: 'reloader_action_total',
    help: 'Rolls by workload kind and result.',
    labelNames: ['workload_kind', 'result'] as const,
    registers,
  });
  const actionLatency = new Histogram({
    name: 'reloader_action_latency_seconds',
    help: 'Duration of a roll, from the first write attempt to the last acknowledgement.',
    labelNames: ['workload_kind'] as const,
    buckets: ACTION_LATENCY_BUCKETS,
    registers,
  });
  const skipped = new Counter({
    name: 'reloader_skipped_total',
    help: 'Skipped reloads by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const queueDepth = new Gauge({
    name: 'reloader_workqueue_depth',
    help: 'Pending workload keys, including those inside a debounce window.',
    registers,
  });
  const queueAdds = new Counter({
    name: 'reloader_workqueue_adds_total',
    help: 'Times a workload key became pending.',
    registers,
  });
  const queueLatency = new Histogram({
    name: 'reloader_workqueue_latency_seconds',
    help: 'Time from the first trigger of a key to the start of its processing, debounce included.',
    buckets: QUEUE_LATENCY_BUCKETS,
    registers,
  });
  const errors = new Counter({
    name: 'reloader_errors_total',
    help: 'Errors by type.',
    labelNames: ['type'] as const,
    registers,
  });
  const retries = new Counter({
    name: 'reloader_retries_total',
    help: 'Retried write attempts.',
    registers,
  });
  const eventsReceived = new Counter({
    name: 'reloader_events_received_total',
    help: 'Notifications received from lists and watches, initial lists included.',
    labelNames: ['event_type', 'resource_type'] as const,
    registers,
  });
  const eventsProcessed = new Counter({
    name: 'reloader_events_processed_total',
    help: 'Notifications processed, by result.',
    labelNames: ['event_type', 'resource_type', 'result'] as const,
    registers,
  });
  const scanned = new Counter({
    name: 'reloader_workloads_scanned_total',
    help: 'Workloads evaluated by reconciles.',
    labelNames: ['kind'] as const,
    registers,
  });
  const matched = new Counter({
    name: 'reloader_workloads_matched_total',
    help: 'Workloads rolled successfully.',
    labelNames: ['kind'] as const,
    registers,
  });
  const reloadLatency = new Histogram({
    name: 'reloader_reload_latency_seconds',
    help: 'Time from observing the earliest source change a roll carries to its last acknowledgement.',
    labelNames: ['workload_kind'] as const,
    buckets: RELOAD_LATENCY_BUCKETS,
    registers,
  });
  const coalesced = new Counter({
    name: 'reloader_debounce_coalesced_total',
    help: 'Triggers folded into an already-pending key.',
    registers,
  });
  const trackedSources = new Gauge({
    name: 'reloader_tracked_sources',
    help: 'Sources tracked by at least one workload.',
    labelNames: ['type'] as const,
    registers,
  });
  const trackedWorkloads = new Gauge({
    name: 'reloader_tracked_workloads',
    help: 'Workloads tracking at least one source.',
    labelNames: ['kind'] as const,
    registers,
  });
  const leader = new Gauge({
    name: 'reloader_leader',
    help: '1 while leading or with HA off; 0 otherwise.',
    registers,
  });
  const restRequests = new Counter({
    name: 'rest_client_requests_total',
    help: 'API requests by status code, method and host.',
    labelNames: ['code', 'method', 'host'] as const,
    registers,
  });
  const restDuration = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'API request latency by verb and host.',
    labelNames: ['verb', 'host'] as const,
    buckets: REST_DURATION_BUCKETS,
    registers,
  });
  const watchRestarts = new Counter({
    name: 'reloader_watch_restarts_total',
    help: 'List-watch restarts by resource and reason.',
    labelNames: ['resource', 'reason'] as const,
    registers,
  });

  // One series per watch, bounded by --namespaces × kinds (ADR 0021); cluster-wide watches have
  // namespace="".
  const watchStatus = new Gauge({
    name: 'reloader_watch_status',
    help: 'Current status of each list-watch (1), by namespace and resource.',
    labelNames: ['namespace', 'resource_type', 'status'] as const,
    registers,
  });
  const watchStatusOf = new Map<string, WatchStatus>();

  const rolloutsInProgress = new Gauge({
    name: 'kreload_rollouts_in_progress',
    help: 'Rollouts kreload started (by patching a pod template) that are not complete or failed yet.',
    registers,
  });
  const rolloutDuration = new Histogram({
    name: 'kreload_rollout_duration_seconds',
    help: 'Duration of a rollout kreload started, from its PATCH to complete, failed or superseded.',
    labelNames: ['kind', 'result'] as const,
    buckets: ROLLOUT_DURATION_BUCKETS,
    registers,
  });

  const configRolloutsHalted = new Gauge({
    name: 'kreload_config_rollouts_halted',
    help: 'Source changes whose fan-out is halted because a workload of one of its waves failed.',
    registers,
  });
  const rolloutsHeld = new Counter({
    name: 'kreload_rollouts_held_total',
    help:
      'Rolls not admitted when due: budget, namespace_budget, wave (an earlier wave is not complete), ' +
      'halted, window (outside a restart window), window_invalid, windows_off or flapping (a source breaker is open).',
    labelNames: ['reason'] as const,
    registers,
  });

  const sourceFlappingEpisodes = new Counter({
    name: 'kreload_source_flapping_episodes_total',
    help: 'Times a source changed often enough to open its flapping breaker (one per episode).',
    registers,
  });

  const podEvictions = new Counter({
    name: 'kreload_pod_evictions_total',
    help:
      'Eviction requests of rolls by eviction: evicted, blocked (a PodDisruptionBudget refused) ' +
      'or failed (any other refusal).',
    labelNames: ['result'] as const,
    registers,
  });
  const podsPendingEviction = new Gauge({
    name: 'kreload_pods_pending_eviction',
    help: 'Pods that still run an older config, over the rolls by eviction under way.',
    registers,
  });

  const journalRefusals = new Counter({
    name: 'kreload_job_recreations_refused_total',
    help: 'Job recreation journal entries refused (not replayed), each counted once while it stays.',
    labelNames: ['reason'] as const,
    registers,
  });
  // Every reason is exported from the start, so that an alert on increase() sees the first one.
  for (const reason of JOURNAL_REFUSAL_REASONS) journalRefusals.inc({ reason }, 0);

  return {
    recordRoll({ kind, namespace, success, latencySeconds }) {
      const successLabel = String(success);
      reloadExecuted.inc({ success: successLabel });
      reloadExecutedByNamespace?.inc({ success: successLabel, namespace });
      actionTotal.inc({ workload_kind: kind, result: success ? 'success' : 'error' });
      actionLatency.observe({ workload_kind: kind }, latencySeconds);
      if (success) matched.inc({ kind });
    },
    recordReloadLatency(kind, seconds) {
      reloadLatency.observe({ workload_kind: kind }, seconds);
    },
    recordReconcile(result, seconds) {
      reconcileTotal.inc({ result });
      reconcileDuration.observe({ result }, seconds);
    },
    recordSkip(reason) {
      skipped.inc({ reason });
    },
    recordEventReceived(eventType, resourceType) {
      eventsReceived.inc({ event_type: eventType, resource_type: resourceType });
    },
    recordEventProcessed(eventType, resourceType, result) {
      eventsProcessed.inc({ event_type: eventType, resource_type: resourceType, result });
    },
    setQueueDepth(depth) {
      queueDepth.set(depth);
    },
    recordQueueAdd() {
      queueAdds.inc();
    },
    recordQueueLatency(seconds) {
      queueLatency.observe(seconds);
    },
    recordCoalesced() {
      coalesced.inc();
    },
    recordError(type) {
      errors.inc({ type });
    },
    recordRetry() {
      retries.inc();
    },
    recordScanned(kind) {
      scanned.inc({ kind });
    },
    setTrackedSources(type, count) {
      trackedSources.set({ type: sourceTypeRow(type).keyPrefix }, count);
    },
    setTrackedWorkloads(kind, count) {
      trackedWorkloads.set({ kind }, count);
    },
    setLeader(leading) {
      leader.set(leading ? 1 : 0);
    },
    recordRestRequest({ code, method, host, verb, seconds }) {
      restRequests.inc({ code, method, host });
      restDuration.observe({ verb, host }, seconds);
    },
    recordWatchRestart(resource, reason) {
      watchRestarts.inc({ resource, reason });
    },
    setWatchStatus(namespace = '', resource, status) {
      const id = `${namespace}/${resource}`;
      const previous = watchStatusOf.get(id);
      if (previous !== undefined && previous !== status) {
        watchStatus.remove({ namespace, resource_type: resource, status: previous });
      }
      watchStatusOf.set(id, status);
      watchStatus.set({ namespace, resource_type: resource, status }, 1);
    },
    setRolloutsInProgress(count) {
      rolloutsInProgress.set(count);
    },
    recordRolloutEnded(kind, result, seconds) {
      rolloutDuration.observe({ kind, result }, seconds);
    },
    recordJournalRefusal(reason) {
      journalRefusals.inc({ reason });
    },
    setConfigRolloutsHalted(count) {
      configRolloutsHalted.set(count);
    },
    recordRolloutHeld(reason) {
      rolloutsHeld.inc({ reason });
    },
    recordSourceFlapping() {
      sourceFlappingEpisodes.inc();
    },
    recordEviction(result) {
      podEvictions.inc({ result });
    },
    setPodsPendingEviction(count) {
      podsPendingEviction.set(count);
    },
  };
}
