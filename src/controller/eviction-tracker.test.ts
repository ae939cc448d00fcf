import { WatchedWorkloads } from '../testing/watched-workloads.ts';
import { Registry } from 'prom-client';
import { beforeEach, describe, expect, it } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import { EVICT_BEFORE } from '../core/types.ts';
import { createMetrics } from '../metrics/metrics.ts';
import type { EvictionEvent } from '../reconcile/ports.ts';
import { aWorkload } from '../testing/builders.ts';
import { EvictionTracker } from './eviction-tracker.ts';

const MARKED = aWorkload('Deployment', 'team-a', 'api')
  .withAnnotation(EVICT_BEFORE, '2026-12-06T10:00:02Z')
  .build();
const OTHER = aWorkload('StatefulSet', 'team-b', 'db')
  .withAnnotation(EVICT_BEFORE, '2026-12-06T10:00:02Z')
  .build();
const KEY = workloadKey(MARKED.ref);
const NOW = 1_767_225_600_000;

let registry: Registry;
let workloads: WatchedWorkloads;
let tracker: EvictionTracker;

beforeEach(() => {
  registry = new Registry();
  workloads = new WatchedWorkloads();
  workloads.put(MARKED);
  workloads.put(OTHER);
  tracker = new EvictionTracker({
    workloads,
    now: () => NOW,
    metrics: createMetrics(registry, { countByNamespace: false }),
  });
});

async function series(name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return Object.fromEntries(
    (metric?.values ?? []).map((v) => [Object.values(v.labels).join(',') || '-', v.value]),
  );
}

const progress = (old: number, current: number) => ({ old, current, desired: 3 });

describe('EvictionTracker', () => {
  it('counts each Eviction request by result, never a pod name', async () => {
    const steps: EvictionEvent[] = [
      { view: MARKED, result: 'evicted', pod: 'api-a', progress: progress(3, 0) },
      {
        view: MARKED,
        result: 'held',
        pod: 'api-b',
        reason: 'disruption budget',
        retryInMs: 1_000,
        progress: progress(2, 1),
      },
      { view: MARKED, result: 'failed', pod: 'api-b', progress: progress(2, 1) },
      { view: MARKED, result: 'blocked', reason: 'forbidden', retryInMs: 2_000 },
      { view: MARKED, result: 'done', progress: progress(0, 3) },
    ];
    for (const step of steps) tracker.observe(step);
    expect(await series('kreload_pod_evictions_total')).toEqual({
      evicted: 1,
      blocked: 1,
      failed: 1,
    });
    expect(await registry.metrics()).not.toMatch(/api-a|api-b/);
  });

  it('keeps the progress and the hold for explain, and drops them when the roll ends', () => {
    tracker.observe({ view: MARKED, result: 'evicted', pod: 'api-a', progress: progress(3, 0) });
    expect(tracker.of(KEY)).toEqual({ progress: progress(3, 0), held: undefined });
    tracker.observe({
      view: MARKED,
      result: 'held',
      pod: 'api-b',
      reason: 'disruption budget',
      retryInMs: 4_000,
      progress: progress(2, 1),
    });
    expect(tracker.of(KEY)).toEqual({
      progress: progress(2, 1),
      held: { reason: 'disruption budget', retryAt: NOW + 4_000 },
    });
    // A hold without counts (forbidden) keeps the last progress.
    tracker.observe({ view: MARKED, result: 'blocked', reason: 'forbidden', retryInMs: 1_000 });
    expect(tracker.of(KEY)?.progress).toEqual(progress(2, 1));
    tracker.observe({ view: MARKED, result: 'done', progress: progress(0, 3) });
    expect(tracker.of(KEY)).toBeUndefined();
  });

  it('the gauge sums the old pods of every roll under way', async () => {
    tracker.observe({ view: MARKED, result: 'evicted', pod: 'api-a', progress: progress(3, 0) });
    tracker.observe({ view: OTHER, result: 'evicted', pod: 'db-0', progress: progress(2, 1) });
    expect(await series('kreload_pods_pending_eviction')).toEqual({ '-': 5 });
    tracker.observe({ view: MARKED, result: 'done', progress: progress(0, 3) });
    expect(await series('kreload_pods_pending_eviction')).toEqual({ '-': 2 });
  });

  it.each([
    [
      'deleted',
      () => {
        workloads.remove(OTHER);
      },
    ],
    [
      'stripped of its marker',
      () => {
        workloads.put(aWorkload('StatefulSet', 'team-b', 'db').build());
      },
    ],
  ])('a workload %s leaves the gauge', async (_name, change) => {
    tracker.observe({ view: OTHER, result: 'evicted', pod: 'db-0', progress: progress(2, 1) });
    change();
    expect(tracker.of(workloadKey(OTHER.ref))).toBeUndefined();
    expect(await series('kreload_pods_pending_eviction')).toEqual({ '-': 0 });
  });
});
