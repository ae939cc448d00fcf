import { Registry, register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.ts';
import type { Metrics } from './metrics.ts';

function setup(countByNamespace = false): { metrics: Metrics; text: () => Promise<string> } {
  const registry = new Registry();
  const metrics = createMetrics(registry, { countByNamespace });
  return { metrics, text: () => registry.metrics() };
}

/** The sample lines of one metric family (HELP and TYPE excluded), in exposition order. */
function samples(text: string, family: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .filter((line) => {
      const name = line.split(/[ {]/, 1)[0] ?? '';
      return (
        name === family || (name.startsWith(`${family}_`) && /_(bucket|sum|count)$/.test(name))
      );
    });
}

function typeOf(text: string, family: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`# TYPE ${family} `));
  return line?.split(' ')[3];
}

function bucketBounds(text: string, family: string): string[] {
  return samples(text, family)
    .filter((l) => l.startsWith(`${family}_bucket`))
    .map((l) => /le="([^"]+)"/.exec(l)?.[1] ?? '?')
    .filter((v, i, all) => all.indexOf(v) === i);
}

describe('createMetrics: registration', () => {
  it('exports both success values of reloader_reload_executed_total at 0', async () => {
    const { text } = setup();
    expect(samples(await text(), 'reloader_reload_executed_total')).toEqual([
      'reloader_reload_executed_total{success="true"} 0',
      'reloader_reload_executed_total{success="false"} 0',
    ]);
  });

  it('registers the by-namespace counter only when counting by namespace', async () => {
    const off = setup(false);
    const on = setup(true);
    expect(await off.text()).not.toContain('reloader_reload_executed_total_by_namespace');
    expect(typeOf(await on.text(), 'reloader_reload_executed_total_by_namespace')).toBe('counter');
  });

  it.each([
    ['reloader_reload_executed_total', 'counter'],
    ['reloader_reconcile_total', 'counter'],
    ['reloader_reconcile_duration_seconds', 'histogram'],
    ['reloader_action_total', 'counter'],
    ['reloader_action_latency_seconds', 'histogram'],
    ['reloader_skipped_total', 'counter'],
    ['reloader_workqueue_depth', 'gauge'],
    ['reloader_workqueue_adds_total', 'counter'],
    ['reloader_workqueue_latency_seconds', 'histogram'],
    ['reloader_errors_total', 'counter'],
    ['reloader_retries_total', 'counter'],
    ['reloader_events_received_total', 'counter'],
    ['reloader_events_processed_total', 'counter'],
    ['reloader_workloads_scanned_total', 'counter'],
    ['reloader_workloads_matched_total', 'counter'],
    ['reloader_reload_latency_seconds', 'histogram'],
    ['reloader_debounce_coalesced_total', 'counter'],
    ['reloader_tracked_sources', 'gauge'],
    ['reloader_tracked_workloads', 'gauge'],
    ['reloader_leader', 'gauge'],
    ['rest_client_requests_total', 'counter'],
    ['rest_client_request_duration_seconds', 'histogram'],
    ['reloader_watch_restarts_total', 'counter'],
  ])('%s is a %s', async (family, type) => {
    const { text } = setup();
    expect(typeOf(await text(), family)).toBe(type);
  });

  it('puts the default process and nodejs collectors on the injected registry only', async () => {
    const globalBefore = await globalRegistry.metrics();
    const { text } = setup();
    const body = await text();
    expect(body).toMatch(/^process_cpu_user_seconds_total /m);
    expect(body).toMatch(/^nodejs_heap_size_total_bytes /m);
    expect(body).not.toMatch(/^go_/m);
    expect(await globalRegistry.metrics()).toBe(globalBefore);
  });

  it('starts unlabelled gauges and counters at 0 and labelled ones without series', async () => {
    const { text } = setup();
    const body = await text();
    expect(samples(body, 'reloader_leader')).toEqual(['reloader_leader 0']);
    expect(samples(body, 'reloader_workqueue_depth')).toEqual(['reloader_workqueue_depth 0']);
    expect(samples(body, 'reloader_retries_total')).toEqual(['reloader_retries_total 0']);
    expect(samples(body, 'reloader_skipped_total')).toEqual([]);
    expect(samples(body, 'reloader_errors_total')).toEqual([]);
  });

  it.each([
    ['reloader_reconcile_duration_seconds', '0.001 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10'],
    ['reloader_action_latency_seconds', '0.01 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60'],
    [
      'reloader_workqueue_latency_seconds',
      '0.001 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 30 60',
    ],
    ['reloader_reload_latency_seconds', '0.25 0.5 1 2.5 5 10 30 60 120 300'],
    ['rest_client_request_duration_seconds', '0.001 0.01 0.05 0.1 0.5 1 5 10 30'],
  ])('%s has buckets %s', async (family, bounds) => {
    const { metrics, text } = setup();
    metrics.recordReconcile('success', 0.2);
    metrics.recordRoll({ kind: 'Deployment', namespace: 'a', success: true, latencySeconds: 1 });
    metrics.recordQueueLatency(1);
    metrics.recordReloadLatency('Deployment', 1);
    metrics.recordRestRequest({ code: '200', method: 'GET', host: 'h', verb: 'GET', seconds: 1 });
    expect(bucketBounds(await text(), family)).toEqual([...bounds.split(' '), '+Inf']);
  });
});

describe('createMetrics: one occasion, exact series', () => {
  it('counts a successful roll once in every roll metric', async () => {
    const { metrics, text } = setup(true);
    metrics.recordRoll({
      kind: 'StatefulSet',
      namespace: 'team-a',
      success: true,
      latencySeconds: 0.3,
    });
    const body = await text();
    expect(samples(body, 'reloader_reload_executed_total')).toEqual([
      'reloader_reload_executed_total{success="true"} 1',
      'reloader_reload_executed_total{success="false"} 0',
    ]);
    expect(samples(body, 'reloader_reload_executed_total_by_namespace')).toEqual([
      'reloader_reload_executed_total_by_namespace{success="true",namespace="team-a"} 1',
    ]);
    expect(samples(body, 'reloader_action_total')).toEqual([
      'reloader_action_total{workload_kind="StatefulSet",result="success"} 1',
    ]);
    expect(samples(body, 'reloader_workloads_matched_total')).toEqual([
      'reloader_workloads_matched_total{kind="StatefulSet"} 1',
    ]);
    const latency = samples(body, 'reloader_action_latency_seconds');
    expect(latency).toContain(
      'reloader_action_latency_seconds_bucket{le="0.25",workload_kind="StatefulSet"} 0',
    );
    expect(latency).toContain(
      'reloader_action_latency_seconds_bucket{le="0.5",workload_kind="StatefulSet"} 1',
    );
    expect(latency).toContain(
      'reloader_action_latency_seconds_sum{workload_kind="StatefulSet"} 0.3',
    );
    expect(latency).toContain(
      'reloader_action_latency_seconds_count{workload_kind="StatefulSet"} 1',
    );
    expect(samples(body, 'reloader_reload_latency_seconds')).toEqual([]);
  });

  it('counts a failed roll as success="false" and result="error", not as matched', async () => {
    const { metrics, text } = setup(false);
    metrics.recordRoll({ kind: 'Job', namespace: 'team-a', success: false, latencySeconds: 2 });
    const body = await text();
    expect(samples(body, 'reloader_reload_executed_total')).toEqual([
      'reloader_reload_executed_total{success="true"} 0',
      'reloader_reload_executed_total{success="false"} 1',
    ]);
    expect(samples(body, 'reloader_action_total')).toEqual([
      'reloader_action_total{workload_kind="Job",result="error"} 1',
    ]);
    expect(samples(body, 'reloader_workloads_matched_total')).toEqual([]);
    expect(samples(body, 'reloader_action_latency_seconds')).toContain(
      'reloader_action_latency_seconds_count{workload_kind="Job"} 1',
    );
  });

  it('records a reconcile in the counter and the histogram under the same result', async () => {
    const { metrics, text } = setup();
    metrics.recordReconcile('skipped', 0.004);
    const body = await text();
    expect(samples(body, 'reloader_reconcile_total')).toEqual([
      'reloader_reconcile_total{result="skipped"} 1',
    ]);
    expect(samples(body, 'reloader_reconcile_duration_seconds')).toContain(
      'reloader_reconcile_duration_seconds_bucket{le="0.005",result="skipped"} 1',
    );
    expect(samples(body, 'reloader_reconcile_duration_seconds')).toContain(
      'reloader_reconcile_duration_seconds_bucket{le="0.001",result="skipped"} 0',
    );
  });

  it.each<[string, (m: Metrics) => void, string, string[]]>([
    [
      'recordSkip',
      (m) => {
        m.recordSkip('no_data_change');
      },
      'reloader_skipped_total',
      ['reloader_skipped_total{reason="no_data_change"} 1'],
    ],
    [
      'recordEventReceived',
      (m) => {
        m.recordEventReceived('update', 'configmaps');
      },
      'reloader_events_received_total',
      ['reloader_events_received_total{event_type="update",resource_type="configmaps"} 1'],
    ],
    [
      'recordEventProcessed',
      (m) => {
        m.recordEventProcessed('delete', 'secrets', 'dropped');
      },
      'reloader_events_processed_total',
      [
        'reloader_events_processed_total{event_type="delete",resource_type="secrets",result="dropped"} 1',
      ],
    ],
    [
      'setQueueDepth',
      (m) => {
        m.setQueueDepth(7);
      },
      'reloader_workqueue_depth',
      ['reloader_workqueue_depth 7'],
    ],
    [
      'recordQueueAdd',
      (m) => {
        m.recordQueueAdd();
      },
      'reloader_workqueue_adds_total',
      ['reloader_workqueue_adds_total 1'],
    ],
    [
      'recordCoalesced',
      (m) => {
        m.recordCoalesced();
      },
      'reloader_debounce_coalesced_total',
      ['reloader_debounce_coalesced_total 1'],
    ],
    [
      'recordError',
      (m) => {
        m.recordError('alert_error');
      },
      'reloader_errors_total',
      ['reloader_errors_total{type="alert_error"} 1'],
    ],
    [
      'recordRetry',
      (m) => {
        m.recordRetry();
      },
      'reloader_retries_total',
      ['reloader_retries_total 1'],
    ],
    [
      'recordScanned',
      (m) => {
        m.recordScanned('CronJob');
      },
      'reloader_workloads_scanned_total',
      ['reloader_workloads_scanned_total{kind="CronJob"} 1'],
    ],
    [
      'setTrackedSources',
      (m) => {
        m.setTrackedSources('SECRETPROVIDERCLASS', 3);
      },
      'reloader_tracked_sources',
      ['reloader_tracked_sources{type="secretproviderclass"} 3'],
    ],
    [
      'setTrackedWorkloads',
      (m) => {
        m.setTrackedWorkloads('Rollout', 4);
      },
      'reloader_tracked_workloads',
      ['reloader_tracked_workloads{kind="Rollout"} 4'],
    ],
    [
      'setLeader',
      (m) => {
        m.setLeader(true);
      },
      'reloader_leader',
      ['reloader_leader 1'],
    ],
    [
      'recordWatchRestart',
      (m) => {
        m.recordWatchRestart('deployments', 'expired');
      },
      'reloader_watch_restarts_total',
      ['reloader_watch_restarts_total{resource="deployments",reason="expired"} 1'],
    ],
    [
      'setWatchStatus',
      (m) => {
        m.setWatchStatus('team-b', 'configmaps', 'forbidden');
        m.setWatchStatus(undefined, 'deployments', 'ok');
      },
      'reloader_watch_status',
      [
        'reloader_watch_status{namespace="team-b",resource_type="configmaps",status="forbidden"} 1',
        'reloader_watch_status{namespace="",resource_type="deployments",status="ok"} 1',
      ],
    ],
    [
      'setRolloutsInProgress',
      (m) => {
        m.setRolloutsInProgress(4);
      },
      'kreload_rollouts_in_progress',
      ['kreload_rollouts_in_progress 4'],
    ],
    [
      'recordRolloutEnded',
      (m) => {
        m.recordRolloutEnded('StatefulSet', 'failed', 42);
      },
      'kreload_rollout_duration_seconds_count',
      ['kreload_rollout_duration_seconds_count{kind="StatefulSet",result="failed"} 1'],
    ],
    [
      'recordJournalRefusal',
      (m) => {
        m.recordJournalRefusal('bad_signature');
      },
      'kreload_job_recreations_refused_total',
      [
        'kreload_job_recreations_refused_total{reason="malformed"} 0',
        'kreload_job_recreations_refused_total{reason="wrong_key"} 0',
        'kreload_job_recreations_refused_total{reason="wrong_manifest"} 0',
        'kreload_job_recreations_refused_total{reason="namespace_refused"} 0',
        'kreload_job_recreations_refused_total{reason="bad_signature"} 1',
      ],
    ],
  ])('%s writes exactly its series', async (_name, record, family, expected) => {
    const { metrics, text } = setup();
    record(metrics);
    expect(samples(await text(), family)).toEqual(expected);
  });

  it('keeps only the current status of a watch, per namespace and resource', async () => {
    const { metrics, text } = setup();
    metrics.setWatchStatus('team-a', 'configmaps', 'syncing');
    metrics.setWatchStatus('team-b', 'configmaps', 'syncing');
    metrics.setWatchStatus('team-a', 'configmaps', 'ok');
    metrics.setWatchStatus('team-b', 'configmaps', 'forbidden');
    metrics.setWatchStatus('team-b', 'configmaps', 'ok');
    expect(samples(await text(), 'reloader_watch_status')).toEqual([
      'reloader_watch_status{namespace="team-a",resource_type="configmaps",status="ok"} 1',
      'reloader_watch_status{namespace="team-b",resource_type="configmaps",status="ok"} 1',
    ]);
  });

  it('sets gauges rather than adding to them', async () => {
    const { metrics, text } = setup();
    metrics.setTrackedSources('CONFIGMAP', 5);
    metrics.setTrackedSources('CONFIGMAP', 2);
    metrics.setLeader(true);
    metrics.setLeader(false);
    const body = await text();
    expect(samples(body, 'reloader_tracked_sources')).toEqual([
      'reloader_tracked_sources{type="configmap"} 2',
    ]);
    expect(samples(body, 'reloader_leader')).toEqual(['reloader_leader 0']);
  });

  it('records a REST request in the counter by code/method/host and the histogram by verb/host', async () => {
    const { metrics, text } = setup();
    metrics.recordRestRequest({
      code: '409',
      method: 'PATCH',
      host: '10.0.0.1:6443',
      verb: 'PATCH',
      seconds: 0.02,
    });
    const body = await text();
    expect(samples(body, 'rest_client_requests_total')).toEqual([
      'rest_client_requests_total{code="409",method="PATCH",host="10.0.0.1:6443"} 1',
    ]);
    expect(samples(body, 'rest_client_request_duration_seconds')).toContain(
      'rest_client_request_duration_seconds_count{verb="PATCH",host="10.0.0.1:6443"} 1',
    );
  });

  it('observes reload latency by workload kind', async () => {
    const { metrics, text } = setup();
    metrics.recordReloadLatency('DaemonSet', 3);
    const body = samples(await text(), 'reloader_reload_latency_seconds');
    expect(body).toContain(
      'reloader_reload_latency_seconds_bucket{le="2.5",workload_kind="DaemonSet"} 0',
    );
    expect(body).toContain(
      'reloader_reload_latency_seconds_bucket{le="5",workload_kind="DaemonSet"} 1',
    );
    expect(body).toContain('reloader_reload_latency_seconds_count{workload_kind="DaemonSet"} 1');
  });
});
