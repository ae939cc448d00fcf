/**
 * `--dry-run` (§13.8) with each place a never-rolled workload's baseline B can live (docs/adr/0046):
 * on the workload (`--baseline-store=workload`) or in the store in kreload's namespace (the
 * default). The same scenario runs through the real pipeline in both modes; a dry run must count
 * the same `skipped{reason="dry_run"}` and report the same Events in both, and send nothing to the
 * API: no workload PATCH and no store ConfigMap request.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import type { KubeRequest, KubeTransport } from '../kube/transport.ts';
import { aConfigMap, aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import { InMemoryCluster, startPipeline } from '../testing/in-memory-cluster.ts';
import { aPipelineBaselineStore } from '../testing/in-memory-config-maps.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import type { WorkloadView } from '../core/types.ts';

const NS = 'team-a';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const H3 = '3333333333333333333333333333333333333333';
const SYNC_DELAY_MS = 2_000;

const API = aWorkload('Deployment', NS, 'api')
  .withResourceVersion('10')
  .withAnnotation(KEYS.auto, 'true')
  .withContainer(
    aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db'),
  )
  .build();
const API_KEY = workloadKey(API.ref);

/** The store's ConfigMap API: it records every request and must receive none in a dry run. */
class RecordingTransport implements KubeTransport {
  readonly requests: KubeRequest[] = [];
  request(request: KubeRequest): Promise<unknown> {
    this.requests.push(request);
    return Promise.resolve({ metadata: { resourceVersion: '1' } });
  }
}

type StoreMode = 'workload' | 'namespace';

interface ProcessSetup {
  /** A follower of a second replica: it holds no lease and may not write (§13.4). */
  readonly leading?: boolean;
  /** `app-config`'s hash when the process starts. */
  readonly configHash?: string;
  /** The Deployments of the initial list. */
  readonly listed?: readonly WorkloadView[];
}

/** One kreload process in dry run on an in-memory cluster, B kept as `mode` says. */
async function dryRun(mode: StoreMode, setup: ProcessSetup = {}) {
  const { leading = true, configHash = H1, listed = [API] } = setup;
  const cluster = new InMemoryCluster();
  const transport = new RecordingTransport();
  const store =
    mode === 'namespace'
      ? aPipelineBaselineStore(transport, { mayWrite: () => leading })
      : undefined;
  store?.consumer.replace([], '1');
  const { queue, router, watched, events, sample } = startPipeline(cluster, {
    sourceTypes: ['CONFIGMAP', 'SECRET'],
    reconcile: { ...DEFAULT_RECONCILE_OPTIONS, dryRun: true },
    debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
    baselines: store,
    gate: { leading, mayWrite: () => leading },
  });
  const caches = watched.byType;
  caches.CONFIGMAP?.replace([aConfigMap(NS, 'app-config').withHash(configHash).build()]);
  caches.SECRET?.replace([aSecret(NS, 'db').withHash(H2).build()]);
  for (const view of listed) cluster.api.put(view);
  queue.start();

  const counters = async () => ({
    dryRun: await sample('reloader_skipped_total', { reason: 'dry_run' }),
    skipped: await sample('reloader_skipped_total'),
    reconciles: await sample('reloader_reconcile_total'),
  });
  let counted = await counters();
  /** What one step counted, once the queue is idle: dry-run skips, all skips, reconciles. */
  const skipsOf = async (step: () => void) => {
    step();
    await vi.advanceTimersByTimeAsync(SYNC_DELAY_MS * 3);
    await queue.idle();
    const now = await counters();
    const delta = {
      dryRun: now.dryRun - counted.dryRun,
      skipped: now.skipped - counted.skipped,
      reconciles: now.reconciles - counted.reconciles,
    };
    counted = now;
    return delta;
  };
  return {
    cluster,
    transport,
    store,
    events,
    firstSight: () =>
      skipsOf(() => {
        // The initial list, then the start's reconcile of every workload (as src/app.ts does).
        watched.store.replace('Deployment', listed);
        router.triggerAll(listed.map((view) => workloadKey(view.ref)));
      }),
    resync: () =>
      skipsOf(() => {
        router.triggerAll([API_KEY]);
      }),
    sourceChange: (hash: string) =>
      skipsOf(() => caches.CONFIGMAP?.upsert(aConfigMap(NS, 'app-config').withHash(hash).build())),
    /** `search: "false"` is a §3.1 key: the workload is reconciled again, no source changed. */
    annotationEdit: () =>
      skipsOf(() => {
        cluster.update(API.ref, (view) => ({
          ...view,
          annotations: { ...view.annotations, [KEYS.search]: 'false' },
        }));
      }),
    /** Deleted, then created again under the same name: another UID, a first sight again. */
    recreate: () =>
      skipsOf(() => {
        const current = cluster.api.server(API.ref) ?? API;
        watched.store.remove(API.ref);
        const again = { ...current, uid: `${current.uid}-again`, resourceVersion: '100' };
        cluster.api.put(again);
        watched.store.upsert(again);
      }),
  };
}

/** The DryRunReload Events a process recorded, as `<kind>/<name>: <message>`. */
function dryRunEventsOf(events: readonly EventRequest[]): string[] {
  return events
    .filter((event) => event.reason === 'DryRunReload')
    .map((event) => `${event.object.kind}/${event.object.name}: ${event.message}`);
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('dry run in both baseline store modes', () => {
  async function scenario(mode: StoreMode) {
    const run = await dryRun(mode);
    const skips = {
      firstSight: await run.firstSight(),
      resync: await run.resync(),
      change: await run.sourceChange(H3),
      annotationEdit: await run.annotationEdit(),
      resyncAfter: await run.resync(),
      recreated: await run.recreate(),
    };
    return { run, skips, dryRunEvents: dryRunEventsOf(run.events) };
  }

  it('counts the same dry-run skips and reports the same Events in both modes', async () => {
    const workload = await scenario('workload');
    const namespace = await scenario('namespace');
    expect(namespace.skips).toEqual(workload.skips);
    // Every reconcile counts: nothing is written, so each one would write again.
    expect(Object.values(workload.skips).map((step) => step.dryRun)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(namespace.dryRunEvents).toEqual(workload.dryRunEvents);
    // The one roll decision is reported once, on the workload and on its source (§13.3).
    const wouldRoll = `Dry run: would roll 'api' of type 'Deployment' for configmap/app-config=${H3.slice(0, 12)}`;
    expect(workload.dryRunEvents).toEqual([
      `Deployment/api: ${wouldRoll}`,
      `ConfigMap/app-config: ${wouldRoll}`,
    ]);
  });

  it.each(['workload', 'namespace'] as const)(
    '%s store: no request reaches the API, nothing is recorded',
    async (mode) => {
      const { run } = await scenario(mode);
      expect(run.cluster.sent).toEqual([]);
      expect(run.cluster.api.writes).toEqual([]);
      expect(run.transport.requests).toEqual([]);
      expect(run.store?.recordCount ?? 0).toBe(0);
    },
  );
});

describe('dry run: restarts, replicas and scale, alike in both modes', () => {
  it('a restart forgets the unrolled change in both modes: no B was kept anywhere', async () => {
    const after = async (mode: StoreMode) => {
      const before = await dryRun(mode);
      await before.firstSight();
      await before.sourceChange(H3);
      // The restarted process lists the workload as the first left it, `app-config` already on H3.
      const restarted = await dryRun(mode, {
        configHash: H3,
        listed: [before.cluster.api.server(API.ref) ?? API],
      });
      const skips = await restarted.firstSight();
      return {
        skips,
        events: dryRunEventsOf(restarted.events),
        sent: restarted.transport.requests,
      };
    };
    const workload = await after('workload');
    const namespace = await after('namespace');
    expect(namespace).toEqual(workload);
    // A first sight again: its baseline suppressed and counted, no roll reported for H3.
    expect(workload).toEqual({
      skips: { dryRun: 1, skipped: 1, reconciles: 1 },
      events: [],
      sent: [],
    });
  });

  it.each(['workload', 'namespace'] as const)(
    '%s store: a follower replica counts nothing and sends nothing',
    async (mode) => {
      const follower = await dryRun(mode, { leading: false });
      expect(await follower.firstSight()).toEqual({ dryRun: 0, skipped: 0, reconciles: 0 });
      expect(await follower.sourceChange(H3)).toEqual({ dryRun: 0, skipped: 0, reconciles: 0 });
      expect(follower.cluster.sent).toEqual([]);
      expect(follower.transport.requests).toEqual([]);
    },
  );

  it('2,000 never-rolled workloads: each counted once, nothing kept, nothing sent', async () => {
    const listed = Array.from({ length: 2_000 }, (_, i) =>
      aWorkload('Deployment', NS, `api-${String(i)}`)
        .withResourceVersion('10')
        .withAnnotation(KEYS.auto, 'true')
        .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
        .build(),
    );
    const run = await dryRun('namespace', { listed });
    expect(await run.firstSight()).toEqual({ dryRun: 2_000, skipped: 2_000, reconciles: 2_000 });
    expect(run.store?.recordCount).toBe(0);
    expect(run.transport.requests).toEqual([]);
    expect(run.cluster.sent).toEqual([]);
  });
});
