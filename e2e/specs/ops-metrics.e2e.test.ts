// Spec §13.1 (HTTP endpoints) and §13.2 (metrics): the listener's paths and the /readyz JSON shape,
// then a scenario whose every counter delta is predicted from the contract and read back over
// HTTP from /metrics, exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { AUTO, IGNORE } from '../harness/annotations.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import {
  scrapeMetrics,
  waitUntilSettled,
  type ExpectedEvents,
  type MetricsSnapshot,
} from '../harness/metrics.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, envVarName, SourceClient } from '../harness/sources.ts';
import { podSpec, WorkloadClient } from '../harness/workloads.ts';

const cluster = sharedCluster();
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });

const APP_CONFIG = 'app-config';
const IGNORED_CONFIG = 'ignored-config';
const OTHER_CONFIG = 'other-config';
const AUTO_DEPLOYMENTS = ['auto-a', 'auto-b', 'auto-c'];
/** References OTHER_CONFIG without opting in: it must never be written. */
const PLAIN = 'plain';
/** Opts in, but its only source carries `ignore: "true"`. */
const IGNORED_USER = 'ignored-user';

let namespace: string;
let kreload: KreloadProcess;

function envFrom(configMap: string) {
  return podSpec({ app: { envFrom: [{ configMapRef: { name: configMap } }] } });
}

beforeAll(async () => {
  const identity = await installKreloadIdentity(cluster);
  namespace = await cluster.createNamespace('ops-metrics');
  await sources.create(namespace, { type: 'CONFIGMAP', name: APP_CONFIG, data: { mode: 'v1' } });
  await sources.create(namespace, {
    type: 'CONFIGMAP',
    name: IGNORED_CONFIG,
    annotations: { [IGNORE]: 'true' },
    data: { mode: 'v1' },
  });
  await sources.create(namespace, { type: 'CONFIGMAP', name: OTHER_CONFIG, data: { mode: 'v1' } });
  for (const name of AUTO_DEPLOYMENTS) {
    await workloads.create('Deployment', {
      namespace,
      name,
      annotations: { [AUTO]: 'true' },
      podSpec: envFrom(APP_CONFIG),
    });
  }
  await workloads.create('Deployment', { namespace, name: PLAIN, podSpec: envFrom(OTHER_CONFIG) });
  await workloads.create('Deployment', {
    namespace,
    name: IGNORED_USER,
    annotations: { [AUTO]: 'true' },
    podSpec: envFrom(IGNORED_CONFIG),
  });
  kreload = await startKreload({
    name: 'ops-metrics',
    kubeconfig: identity.kubeconfigPath,
    // No periodic resync: it would add reconciles the deltas below do not predict.
    args: [`--namespaces=${namespace}`, '--sync-delay=0', '--resync-period=0'],
  });
});

afterAll(async () => {
  await kreload.stop();
});

describe('HTTP endpoints (§13.1)', () => {
  it('/readyz answers 200 with the JSON body of §13.1', async () => {
    const response = await probe({ url: kreload.url('/readyz') });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.body) as { checks: { kinds: Record<string, string> } };
    const { kinds, ...rest } = body.checks;
    expect({ ...body, checks: rest }).toEqual({
      ready: true,
      checks: { cachesSynced: true, apiServer: 'ok', leaderElection: 'disabled', permitted: true },
    });
    // The built-in kinds are served and synced; an optional API this cluster does not serve
    // (DeploymentConfig) may be listed, but only as `absent`.
    const builtIn = [
      'configmaps',
      'secrets',
      'deployments',
      'daemonsets',
      'statefulsets',
      'cronjobs',
      'jobs',
    ];
    expect(Object.fromEntries(builtIn.map((kind) => [kind, kinds[kind]]))).toEqual(
      Object.fromEntries(builtIn.map((kind) => [kind, 'ok'])),
    );
    // The baseline store's own watch of kreload's namespace (the default store) reports beside them.
    expect(kinds['baseline-store']).toBe('ok');
    expect(
      Object.entries(kinds).filter(
        ([kind, status]) =>
          !builtIn.includes(kind) && kind !== 'baseline-store' && status !== 'absent',
      ),
    ).toEqual([]);
    // Field order as in the contract's example, for readers that match on the text.
    expect(response.body).toMatch(
      /^\{"ready":true,"checks":\{"cachesSynced":true,"apiServer":"ok","leaderElection":"disabled","kinds":\{/,
    );
  });

  it.each([
    { path: '/live', status: 200, body: 'alive' },
    { path: '/healthz', status: 200, body: 'ok' },
    { path: '/debug/pprof/', status: 404 },
    { path: '/metricsx', status: 404 },
    { path: '/', status: 404 },
  ])('$path → $status', async ({ path, status, body }) => {
    const response = await probe({ url: kreload.url(path) });
    expect(response.status).toBe(status);
    if (body !== undefined) expect(response.body.trim()).toBe(body);
  });

  it('/metrics has both reload outcomes from the start, the leader gauge and Node collectors only', async () => {
    const metrics = await scrapeMetrics(kreload);
    const executed = metrics.samples.filter((s) => s.name === 'reloader_reload_executed_total');
    expect(executed.map((s) => s.labels.success).sort()).toEqual(['false', 'true']);
    expect(metrics.value('reloader_leader')).toBe(1);
    expect(metrics.has('process_cpu_user_seconds_total')).toBe(true);
    expect(metrics.samples.some((s) => s.name.startsWith('nodejs_'))).toBe(true);
    expect(metrics.samples.filter((s) => s.name.startsWith('go_'))).toEqual([]);
  });
});

/** The counters of §13.2 this scenario moves, with the labels it moves them under. */
const WATCHED_SERIES: readonly { name: string; labels?: Record<string, string> }[] = [
  { name: 'reloader_reload_executed_total', labels: { success: 'true' } },
  { name: 'reloader_reload_executed_total', labels: { success: 'false' } },
  { name: 'reloader_action_total', labels: { workload_kind: 'Deployment', result: 'success' } },
  { name: 'reloader_action_total', labels: { workload_kind: 'Deployment', result: 'error' } },
  { name: 'reloader_action_latency_seconds_count', labels: { workload_kind: 'Deployment' } },
  { name: 'reloader_reload_latency_seconds_count', labels: { workload_kind: 'Deployment' } },
  { name: 'reloader_workloads_matched_total', labels: { kind: 'Deployment' } },
  { name: 'reloader_reconcile_total', labels: { result: 'success' } },
  { name: 'reloader_reconcile_total', labels: { result: 'skipped' } },
  { name: 'reloader_reconcile_total', labels: { result: 'error' } },
  { name: 'reloader_reconcile_duration_seconds_count' },
  { name: 'reloader_workqueue_latency_seconds_count' },
  { name: 'reloader_skipped_total', labels: { reason: 'no_data_change' } },
  { name: 'reloader_skipped_total', labels: { reason: 'ignored_or_not_selected' } },
  { name: 'reloader_skipped_total', labels: { reason: 'strategy_not_updated' } },
  { name: 'reloader_errors_total' },
  { name: 'reloader_retries_total' },
  { name: 'reloader_events_received_total', labels: { resource_type: 'configmaps' } },
  {
    name: 'reloader_events_processed_total',
    labels: { resource_type: 'configmaps', event_type: 'update', result: 'success' },
  },
  {
    name: 'reloader_events_processed_total',
    labels: { resource_type: 'configmaps', event_type: 'update', result: 'dropped' },
  },
];

function seriesId(series: { name: string; labels?: Record<string, string> }): string {
  const labels = Object.entries(series.labels ?? {})
    .map(([key, value]) => `${key}="${value}"`)
    .join(',');
  return labels === '' ? series.name : `${series.name}{${labels}}`;
}

/** Every watched series' growth, by `name{labels}`. */
function deltas(after: MetricsSnapshot, before: MetricsSnapshot): Record<string, number> {
  return Object.fromEntries(
    WATCHED_SERIES.map((series) => [
      seriesId(series),
      after.delta(before, series.name, series.labels),
    ]),
  );
}

/** Expected growth: every watched series not named here must not move. */
function expected(moved: Record<string, number>): Record<string, number> {
  return Object.fromEntries(WATCHED_SERIES.map((s) => [seriesId(s), moved[seriesId(s)] ?? 0]));
}

/**
 * What a kreload write would change. Not resourceVersion: kube-controller-manager writes status.
 * A Deployment's generation moves with any spec or annotation change, kreload's metadata patches
 * included.
 */
async function writableParts(name: string) {
  const view = await workloads.read({ kind: 'Deployment', namespace, name });
  return {
    generation: view.generation,
    annotations: view.annotations,
    containers: view.containers,
  };
}

async function settleAfter(
  before: MetricsSnapshot,
  events: readonly ExpectedEvents[],
): Promise<MetricsSnapshot> {
  return waitUntilSettled(kreload, { since: before, events });
}

describe('metrics after a scenario (§13.2): exact deltas', () => {
  it('after the initial sync every opted-in workload has a baseline and the queue is idle', async () => {
    // First-sight baselines go to the store's records, not onto the workloads (§5.7).
    await waitForBaselines(
      workloads,
      AUTO_DEPLOYMENTS.map((name) => ({ kind: 'Deployment', namespace, name })),
    );
    const settled = await pollUntil(
      async () => {
        const metrics = await scrapeMetrics(kreload);
        return metrics.value('reloader_reconcile_total') >= 3 ? metrics : undefined;
      },
      { timeoutMs: 30_000, describe: 'three first-sight reconciles' },
    );
    const idle = await waitUntilSettled(kreload, { since: settled });
    expect(idle.value('reloader_workqueue_depth')).toBe(0);
    // A baseline is a write but never a roll.
    expect(idle.value('reloader_reload_executed_total')).toBe(0);
    expect(idle.value('reloader_action_total')).toBe(0);
    expect(idle.value('reloader_tracked_workloads', { kind: 'Deployment' })).toBe(3);
    expect(idle.value('reloader_tracked_sources', { type: 'configmap' })).toBe(1);
    // The initial list is counted as add events: 3 ConfigMaps plus kube-root-ca.crt (which
    // kube-controller-manager puts in every namespace), and 5 Deployments.
    expect(
      idle.value('reloader_events_received_total', {
        resource_type: 'configmaps',
        event_type: 'add',
      }),
    ).toBe(4);
    expect(
      idle.value('reloader_events_received_total', {
        resource_type: 'deployments',
        event_type: 'add',
      }),
    ).toBe(5);
  });

  it('one ConfigMap change fanned out to three Deployments: three rolls, counted once each', async () => {
    const before = await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    await sources.replace(namespace, { type: 'CONFIGMAP', name: APP_CONFIG, data: { mode: 'v2' } });
    const after = await settleAfter(before, [
      { resource: 'configmaps', event: 'update', atLeast: 1 },
      // kreload's own patches come back as workload updates: all three are received (not planned).
      { resource: 'deployments', event: 'update', atLeast: 3 },
    ]);

    const hash = configMapHash({ data: { mode: 'v2' } });
    for (const name of AUTO_DEPLOYMENTS) {
      const view = await workloads.read({ kind: 'Deployment', namespace, name });
      expect(view.containers[0]?.env).toEqual({
        [envVarName({ type: 'CONFIGMAP', name: APP_CONFIG })]: hash,
      });
    }
    expect(deltas(after, before)).toEqual(
      expected({
        'reloader_reload_executed_total{success="true"}': 3,
        'reloader_action_total{workload_kind="Deployment",result="success"}': 3,
        'reloader_action_latency_seconds_count{workload_kind="Deployment"}': 3,
        'reloader_reload_latency_seconds_count{workload_kind="Deployment"}': 3,
        'reloader_workloads_matched_total{kind="Deployment"}': 3,
        // Three rolls, and no reconcile of their echoes: an update from exactly the version a
        // roll's PATCH was planned on to exactly the one it returned is that PATCH alone (§9.2.4).
        'reloader_reconcile_total{result="success"}': 3,
        reloader_reconcile_duration_seconds_count: 3,
        reloader_workqueue_latency_seconds_count: 3,
        'reloader_events_received_total{resource_type="configmaps"}': 1,
        'reloader_events_processed_total{resource_type="configmaps",event_type="update",result="success"}': 1,
      }),
    );
    expect(after.value('reloader_workqueue_depth')).toBe(0);
  });

  it('an update of an ignored source is dropped and counted as ignored_or_not_selected', async () => {
    const before = await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    const untouched = await writableParts(IGNORED_USER);
    await sources.replace(namespace, {
      type: 'CONFIGMAP',
      name: IGNORED_CONFIG,
      annotations: { [IGNORE]: 'true' },
      data: { mode: 'v2' },
    });
    const after = await settleAfter(before, [
      { resource: 'configmaps', event: 'update', atLeast: 1 },
    ]);

    expect(deltas(after, before)).toEqual(
      expected({
        'reloader_skipped_total{reason="ignored_or_not_selected"}': 1,
        'reloader_events_received_total{resource_type="configmaps"}': 1,
        'reloader_events_processed_total{resource_type="configmaps",event_type="update",result="dropped"}': 1,
      }),
    );
    expect(await writableParts(IGNORED_USER)).toEqual(untouched);
  });

  it('a label-only update keeps the hash: no_data_change, no reconcile', async () => {
    const before = await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    await sources.patchMetadata(namespace, {
      type: 'CONFIGMAP',
      name: APP_CONFIG,
      labels: { team: 'ops' },
    });
    const after = await settleAfter(before, [
      { resource: 'configmaps', event: 'update', atLeast: 1 },
    ]);

    expect(deltas(after, before)).toEqual(
      expected({
        'reloader_skipped_total{reason="no_data_change"}': 1,
        'reloader_events_received_total{resource_type="configmaps"}': 1,
        'reloader_events_processed_total{resource_type="configmaps",event_type="update",result="success"}': 1,
      }),
    );
  });

  it('a change to a source only a non-opted-in workload references writes nothing', async () => {
    const before = await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    const untouched = await writableParts(PLAIN);
    await sources.replace(namespace, {
      type: 'CONFIGMAP',
      name: OTHER_CONFIG,
      data: { mode: 'v2' },
    });
    const after = await settleAfter(before, [
      { resource: 'configmaps', event: 'update', atLeast: 1 },
    ]);

    const moved = deltas(after, before);
    expect(moved['reloader_reload_executed_total{success="true"}']).toBe(0);
    expect(moved['reloader_reconcile_total{result="success"}']).toBe(0);
    expect(moved['reloader_reconcile_total{result="error"}']).toBe(0);
    expect(moved['reloader_events_received_total{resource_type="configmaps"}']).toBe(1);
    expect(await writableParts(PLAIN)).toEqual(untouched);
  });
});
