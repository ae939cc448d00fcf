import { Counter, collectDefaultMetrics } from 'prom-client';
import { METRIC_ROWS, registerMetricRows } from './definitions.ts';
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
  /** Active-active mode: buckets this replica holds and the live members it sees. */
  setShardState(bucketsOwned: number, members: number): void;
  /** Active-active mode: a bucket acquired or given up. */
  recordShardHandover(direction: 'acquired' | 'released'): void;
}

export interface MetricsOptions {
  /** `METRICS_COUNT_BY_NAMESPACE=enabled`: registers `reloader_reload_executed_total_by_namespace`. */
  readonly countByNamespace: boolean;
}

/**
 * Defines every kreload metric on `registry` (never the global one), together with prom-client's
 * default `process_*` and `nodejs_*` collectors, and returns the recording functions.
 */
export function createMetrics(registry: Registry, options: MetricsOptions): Metrics {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const metric = registerMetricRows(METRIC_ROWS, registry);
  // Both values are exported from the start so that rate() and absent() work before any roll.
  metric.reloadExecuted.inc({ success: 'true' }, 0);
  metric.reloadExecuted.inc({ success: 'false' }, 0);

  const reloadExecutedByNamespace = options.countByNamespace
    ? new Counter({
        name: 'reloader_reload_executed_total_by_namespace',
        help: 'Counter of reloads executed by Reloader by namespace.',
        labelNames: ['success', 'namespace'] as const,
        registers,
      })
    : undefined;

  const watchStatusOf = new Map<string, WatchStatus>();

  // Every reason is exported from the start, so that an alert on increase() sees the first one.
  for (const reason of JOURNAL_REFUSAL_REASONS) metric.journalRefusals.inc({ reason }, 0);

  return {
    recordRoll({ kind, namespace, success, latencySeconds }) {
      const successLabel = String(success);
      metric.reloadExecuted.inc({ success: successLabel });
      reloadExecutedByNamespace?.inc({ success: successLabel, namespace });
      metric.actionTotal.inc({ workload_kind: kind, result: success ? 'success' : 'error' });
      metric.actionLatency.observe({ workload_kind: kind }, latencySeconds);
      if (success) metric.matched.inc({ kind });
    },
    recordReloadLatency(kind, seconds) {
      metric.reloadLatency.observe({ workload_kind: kind }, seconds);
    },
    recordReconcile(result, seconds) {
      metric.reconcileTotal.inc({ result });
      metric.reconcileDuration.observe({ result }, seconds);
    },
    recordSkip(reason) {
      metric.skipped.inc({ reason });
    },
    recordEventReceived(eventType, resourceType) {
      metric.eventsReceived.inc({ event_type: eventType, resource_type: resourceType });
    },
    recordEventProcessed(eventType, resourceType, result) {
      metric.eventsProcessed.inc({ event_type: eventType, resource_type: resourceType, result });
    },
    setQueueDepth(depth) {
      metric.queueDepth.set(depth);
    },
    recordQueueAdd() {
      metric.queueAdds.inc();
    },
    recordQueueLatency(seconds) {
      metric.queueLatency.observe(seconds);
    },
    recordCoalesced() {
      metric.coalesced.inc();
    },
    recordError(type) {
      metric.errors.inc({ type });
    },
    recordRetry() {
      metric.retries.inc();
    },
    recordScanned(kind) {
      metric.scanned.inc({ kind });
    },
    setTrackedSources(type, count) {
      metric.trackedSources.set({ type: sourceTypeRow(type).keyPrefix }, count);
    },
    setTrackedWorkloads(kind, count) {
      metric.trackedWorkloads.set({ kind }, count);
    },
    setLeader(leading) {
      metric.leader.set(leading ? 1 : 0);
    },
    recordRestRequest({ code, method, host, verb, seconds }) {
      metric.restRequests.inc({ code, method, host });
      metric.restDuration.observe({ verb, host }, seconds);
    },
    recordWatchRestart(resource, reason) {
      metric.watchRestarts.inc({ resource, reason });
    },
    setWatchStatus(namespace = '', resource, status) {
      const id = `${namespace}/${resource}`;
      const previous = watchStatusOf.get(id);
      if (previous !== undefined && previous !== status) {
        metric.watchStatus.remove({ namespace, resource_type: resource, status: previous });
      }
      watchStatusOf.set(id, status);
      metric.watchStatus.set({ namespace, resource_type: resource, status }, 1);
    },
    setRolloutsInProgress(count) {
      metric.rolloutsInProgress.set(count);
    },
    recordRolloutEnded(kind, result, seconds) {
      metric.rolloutDuration.observe({ kind, result }, seconds);
    },
    recordJournalRefusal(reason) {
      metric.journalRefusals.inc({ reason });
    },
    setConfigRolloutsHalted(count) {
      metric.configRolloutsHalted.set(count);
    },
    recordRolloutHeld(reason) {
      metric.rolloutsHeld.inc({ reason });
    },
    recordSourceFlapping() {
      metric.sourceFlappingEpisodes.inc();
    },
    recordEviction(result) {
      metric.podEvictions.inc({ result });
    },
    setPodsPendingEviction(count) {
      metric.podsPendingEviction.set(count);
    },
    setShardState(bucketsOwned, members) {
      metric.shardBucketsOwned.set(bucketsOwned);
      metric.shardMembers.set(members);
    },
    recordShardHandover(direction) {
      metric.shardHandovers.inc({ direction });
    },
  };
}
