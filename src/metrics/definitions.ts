/**
 * Every kreload metric whose registration depends on nothing but the registry: one row per metric,
 * read by createMetrics (metrics.ts) and by its test. A row's `labelNames` type the labels its
 * recording code may set.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/** One metric: its Prometheus type, name, help and label names (and buckets for a histogram). */
export interface MetricRow {
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly string[];
  readonly buckets?: readonly number[];
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

export const METRIC_ROWS = {
  reloadExecuted: {
    type: 'counter',
    name: 'reloader_reload_executed_total',
    help: 'Counter of reloads executed by Reloader.',
    labelNames: ['success'],
  },
  reconcileTotal: {
    type: 'counter',
    name: 'reloader_reconcile_total',
    help: 'Workload reconciles by result.',
    labelNames: ['result'],
  },
  reconcileDuration: {
    type: 'histogram',
    name: 'reloader_reconcile_duration_seconds',
    help: 'Duration of a workload reconcile, from dequeue to done.',
    labelNames: ['result'],
    buckets: RECONCILE_BUCKETS,
  },
  actionTotal: {
    type: 'counter',
    name: 'reloader_action_total',
    help: 'Rolls by workload kind and result.',
    labelNames: ['workload_kind', 'result'],
  },
  actionLatency: {
    type: 'histogram',
    name: 'reloader_action_latency_seconds',
    help: 'Duration of a roll, from the first write attempt to the last acknowledgement.',
    labelNames: ['workload_kind'],
    buckets: ACTION_LATENCY_BUCKETS,
  },
  skipped: {
    type: 'counter',
    name: 'reloader_skipped_total',
    help: 'Skipped reloads by reason.',
    labelNames: ['reason'],
  },
  queueDepth: {
    type: 'gauge',
    name: 'reloader_workqueue_depth',
    help: 'Pending workload keys, including those inside a debounce window.',
  },
  queueAdds: {
    type: 'counter',
    name: 'reloader_workqueue_adds_total',
    help: 'Times a workload key became pending.',
  },
  queueLatency: {
    type: 'histogram',
    name: 'reloader_workqueue_latency_seconds',
    help: 'Time from the first trigger of a key to the start of its processing, debounce included.',
    buckets: QUEUE_LATENCY_BUCKETS,
  },
  errors: {
    type: 'counter',
    name: 'reloader_errors_total',
    help: 'Errors by type.',
    labelNames: ['type'],
  },
  retries: {
    type: 'counter',
    name: 'reloader_retries_total',
    help: 'Retried write attempts.',
  },
  eventsReceived: {
    type: 'counter',
    name: 'reloader_events_received_total',
    help: 'Notifications received from lists and watches, initial lists included.',
    labelNames: ['event_type', 'resource_type'],
  },
  eventsProcessed: {
    type: 'counter',
    name: 'reloader_events_processed_total',
    help: 'Notifications processed, by result.',
    labelNames: ['event_type', 'resource_type', 'result'],
  },
  scanned: {
    type: 'counter',
    name: 'reloader_workloads_scanned_total',
    help: 'Workloads evaluated by reconciles.',
    labelNames: ['kind'],
  },
  matched: {
    type: 'counter',
    name: 'reloader_workloads_matched_total',
    help: 'Workloads rolled successfully.',
    labelNames: ['kind'],
  },
  reloadLatency: {
    type: 'histogram',
    name: 'reloader_reload_latency_seconds',
    help: 'Time from observing the earliest source change a roll carries to its last acknowledgement.',
    labelNames: ['workload_kind'],
    buckets: RELOAD_LATENCY_BUCKETS,
  },
  coalesced: {
    type: 'counter',
    name: 'reloader_debounce_coalesced_total',
    help: 'Triggers folded into an already-pending key.',
  },
  trackedSources: {
    type: 'gauge',
    name: 'reloader_tracked_sources',
    help: 'Sources tracked by at least one workload.',
    labelNames: ['type'],
  },
  trackedWorkloads: {
    type: 'gauge',
    name: 'reloader_tracked_workloads',
    help: 'Workloads tracking at least one source.',
    labelNames: ['kind'],
  },
  leader: {
    type: 'gauge',
    name: 'reloader_leader',
    help: '1 while leading or with HA off; 0 otherwise.',
  },
  restRequests: {
    type: 'counter',
    name: 'rest_client_requests_total',
    help: 'API requests by status code, method and host.',
    labelNames: ['code', 'method', 'host'],
  },
  restDuration: {
    type: 'histogram',
    name: 'rest_client_request_duration_seconds',
    help: 'API request latency by verb and host.',
    labelNames: ['verb', 'host'],
    buckets: REST_DURATION_BUCKETS,
  },
  watchRestarts: {
    type: 'counter',
    name: 'reloader_watch_restarts_total',
    help: 'List-watch restarts by resource and reason.',
    labelNames: ['resource', 'reason'],
  },
  // One series per watch, bounded by --namespaces × kinds (ADR 0021); cluster-wide watches have
  // namespace="".
  watchStatus: {
    type: 'gauge',
    name: 'reloader_watch_status',
    help: 'Current status of each list-watch (1), by namespace and resource.',
    labelNames: ['namespace', 'resource_type', 'status'],
  },
  rolloutsInProgress: {
    type: 'gauge',
    name: 'kreload_rollouts_in_progress',
    help: 'Rollouts kreload started (by patching a pod template) that are not complete or failed yet.',
  },
  rolloutDuration: {
    type: 'histogram',
    name: 'kreload_rollout_duration_seconds',
    help: 'Duration of a rollout kreload started, from its PATCH to complete, failed or superseded.',
    labelNames: ['kind', 'result'],
    buckets: ROLLOUT_DURATION_BUCKETS,
  },
  configRolloutsHalted: {
    type: 'gauge',
    name: 'kreload_config_rollouts_halted',
    help: 'Source changes whose fan-out is halted because a workload of one of its waves failed.',
  },
  rolloutsHeld: {
    type: 'counter',
    name: 'kreload_rollouts_held_total',
    help:
      'Rolls not admitted when due: budget, namespace_budget, wave (an earlier wave is not complete), ' +
      'halted, window (outside a restart window), window_invalid, windows_off or flapping (a source breaker is open).',
    labelNames: ['reason'],
  },
  sourceFlappingEpisodes: {
    type: 'counter',
    name: 'kreload_source_flapping_episodes_total',
    help: 'Times a source changed often enough to open its flapping breaker (one per episode).',
  },
  podEvictions: {
    type: 'counter',
    name: 'kreload_pod_evictions_total',
    help:
      'Eviction requests of rolls by eviction: evicted, blocked (a PodDisruptionBudget refused) ' +
      'or failed (any other refusal).',
    labelNames: ['result'],
  },
  podsPendingEviction: {
    type: 'gauge',
    name: 'kreload_pods_pending_eviction',
    help: 'Pods that still run an older config, over the rolls by eviction under way.',
  },
  journalRefusals: {
    type: 'counter',
    name: 'kreload_job_recreations_refused_total',
    help: 'Job recreation journal entries refused (not replayed), each counted once while it stays.',
    labelNames: ['reason'],
  },
  shardBucketsOwned: {
    type: 'gauge',
    name: 'kreload_shard_buckets_owned',
    help: 'Namespace buckets this replica holds the Lease of and writes to (active-active mode).',
  },
  shardMembers: {
    type: 'gauge',
    name: 'kreload_shard_members',
    help: 'Live members this replica sees (active-active mode).',
  },
  shardHandovers: {
    type: 'counter',
    name: 'kreload_shard_handovers_total',
    help: 'Buckets this replica acquired or gave up (active-active mode).',
    labelNames: ['direction'],
  },
} as const satisfies Record<string, MetricRow>;

type LabelsOf<Row extends MetricRow> = Row extends { readonly labelNames: readonly (infer Label)[] }
  ? Label & string
  : never;

/** The prom-client metric a row registers, with the row's label names. */
export type MetricOf<Row extends MetricRow> = Row['type'] extends 'counter'
  ? Counter<LabelsOf<Row>>
  : Row['type'] extends 'gauge'
    ? Gauge<LabelsOf<Row>>
    : Histogram<LabelsOf<Row>>;

/** Registers each row on `registry` (never the global one); returns the metrics by row name. */
export function registerMetricRows<Rows extends Record<string, MetricRow>>(
  rows: Rows,
  registry: Registry,
): { readonly [Name in keyof Rows]: MetricOf<Rows[Name]> } {
  const registers = [registry];
  const metrics: Record<string, Counter | Gauge | Histogram> = {};
  for (const [key, row] of Object.entries(rows)) {
    const config = {
      name: row.name,
      help: row.help,
      labelNames: [...(row.labelNames ?? [])],
      registers,
    };
    metrics[key] =
      row.type === 'counter'
        ? new Counter(config)
        : row.type === 'gauge'
          ? new Gauge(config)
          : new Histogram({ ...config, buckets: [...(row.buckets ?? [])] });
  }
  return metrics as { readonly [Name in keyof Rows]: MetricOf<Rows[Name]> };
}
