/**
 * The route from a watch event to a PATCH with kreload's real parts, wired by the same function as
 * src/app.ts (src/app/pipeline.ts): the watch server's caches and fan-out, marks, change router,
 * work queue, work runner, reconciler and reporter with real metrics. Only the API server is in memory (src/testing/in-memory-cluster.ts), with a "watch"
 * that delivers each acknowledged patch back to the store, as the real one does. Fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import type { ReconcileOptions } from '../reconcile/reconciler.ts';
import type { ReplicaSetStatusView } from '../rollout/rollout-status.ts';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS, LAST_RELOADED_FROM } from '../core/types.ts';
import { ApiError } from '../core/api-error.ts';
import { aConfigMap, aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import { InMemoryCluster, type SentPatch, startPipeline } from '../testing/in-memory-cluster.ts';

const NS = 'team-a';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const SYNC_DELAY_MS = 2_000;

function hashOf(n: number): string {
  return n.toString(16).padStart(40, '0');
}

function dependent(name: string): WorkloadView {
  return aWorkload('Deployment', NS, name)
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withAnnotation(BASELINE, `{"configmap/app-config":"${H1}","secret/db":"${H2}"}`)
    .withContainer(
      aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db'),
    )
    .build();
}

const API = dependent('api');
const WEB = dependent('web');
const API_KEY = workloadKey(API.ref);
const WEB_KEY = workloadKey(WEB.ref);

function status(code: number, retryAfterMs?: number): ApiError {
  const retryable = code === 409 || code === 429 || code >= 500;
  return new ApiError(`HTTP ${code}`, { status: code, retryable, retryAfterMs });
}

function pipeline(options: {
  readonly workerThreads: number;
  readonly selector?: boolean;
  readonly reconcile?: Partial<ReconcileOptions>;
  /** Deployments the initial list holds besides api and web. */
  readonly listed?: readonly WorkloadView[];
}) {
  const server = new InMemoryCluster();
  const { queue, adoptRollouts, watched, events, sample, histogramSum } = startPipeline(server, {
    sourceTypes: ['CONFIGMAP', 'SECRET'],
    selectorEnabled: options.selector === true,
    reconcile: { ...DEFAULT_RECONCILE_OPTIONS, ...options.reconcile },
    concurrency: options.workerThreads,
    debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
  });
  const { store, byType: caches } = watched;

  const sources = {
    configMap: (hash: string) => aConfigMap(NS, 'app-config').withHash(hash).build(),
    secret: (hash: string) => aSecret(NS, 'db').withHash(hash).build(),
  };
  if (options.selector === true) watched.namespaces.replace([NS]);
  caches.CONFIGMAP?.replace([sources.configMap(H1)]);
  caches.SECRET?.replace([sources.secret(H2)]);
  const listed = [API, WEB, ...(options.listed ?? [])];
  for (const view of listed) server.api.put(view);
  store.replace('Deployment', listed);
  adoptRollouts();
  queue.start();

  return {
    queue,
    server,
    events,
    value: sample,
    histogramSum,
    editConfigMap: (hash: string) => caches.CONFIGMAP?.upsert(sources.configMap(hash)),
    editSecret: (hash: string) => caches.SECRET?.upsert(sources.secret(hash)),
    namespaces: watched.namespaces,
    store,
  };
}

const advance = (ms: number): Promise<void> =>
  vi.advanceTimersByTimeAsync(ms).then(() => undefined);

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

function patchesTo(sent: readonly SentPatch[], key: string): readonly SentPatch[] {
  return sent.filter((write) => write.key === key);
}

describe('the pipeline from source events to PATCHes', () => {
  it('ten edits to two sources inside one debounce window: one PATCH per dependent', async () => {
    const p = pipeline({ workerThreads: 3 });
    for (let i = 1; i <= 10; i += 1) {
      if (i % 2 === 0) p.editSecret(hashOf(100 + i));
      else p.editConfigMap(hashOf(i));
      await advance(100);
    }
    await advance(60_000);
    await p.queue.idle();
    const finalEnv = {
      STAKATER_APP_CONFIG_CONFIGMAP: hashOf(9),
      STAKATER_DB_SECRET: hashOf(110),
    };
    for (const key of [API_KEY, WEB_KEY]) {
      const patches = patchesTo(p.server.sent, key);
      expect(patches).toHaveLength(1);
      // one window: the debounce of the last edit (at +900 ms)
      expect(patches[0]?.at).toBe(1_000_000 + 900 + SYNC_DELAY_MS);
      const env = Object.entries(finalEnv).map(([name, value]) => ({ name, value }));
      expect(patches[0]?.body).toMatchObject({
        metadata: { resourceVersion: '10' },
        spec: { template: { spec: { containers: [{ name: 'app', env }] } } },
      });
    }
    expect(await p.value('reloader_reload_executed_total', { success: 'true' })).toBe(2);
    expect(await p.value('reloader_retries_total')).toBe(0);
  });

  it('a 429 on one workload does not delay another, even with one worker', async () => {
    const p = pipeline({ workerThreads: 1 });
    p.server.failPatchesOf(API_KEY, status(429, 5_000));
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS);
    await advance(100);
    const due = 1_000_000 + SYNC_DELAY_MS;
    // api got the 429; web was written at once, by the one worker api does not hold
    expect(p.server.sent.map((write) => [write.key, write.at])).toEqual([
      [API_KEY, due],
      [WEB_KEY, due],
    ]);
    await advance(4_890);
    expect(p.server.sent).toHaveLength(2);
    await advance(10);
    expect(p.server.sent.map((write) => [write.key, write.at])).toEqual([
      [API_KEY, due],
      [WEB_KEY, due],
      [API_KEY, due + 5_000],
    ]);
    await p.queue.idle();
    expect(await p.value('reloader_retries_total')).toBe(1);
    expect(await p.value('reloader_reload_executed_total', { success: 'true' })).toBe(2);
    expect(await p.value('reloader_reconcile_total', { result: 'success' })).toBe(2);
    expect(await p.value('reloader_reconcile_total', { result: 'error' })).toBe(0);
  });

  it('5xx: the §10 backoff as queue waits (250, 500, 1000, 2000 ms), then success', async () => {
    const p = pipeline({ workerThreads: 1 });
    p.server.failPatchesOf(API_KEY, status(503), status(503), status(503), status(503));
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS);
    await advance(10_000);
    await p.queue.idle();
    const due = 1_000_000 + SYNC_DELAY_MS;
    expect(patchesTo(p.server.sent, API_KEY).map((write) => write.at - due)).toEqual([
      0, 250, 750, 1_750, 3_750,
    ]);
    // web waited for no backoff of api's
    expect(patchesTo(p.server.sent, WEB_KEY).map((write) => write.at - due)).toEqual([0]);
    expect(await p.value('reloader_retries_total')).toBe(4);
    expect(await p.value('reloader_reconcile_total', { result: 'success' })).toBe(2);
    // api's one reconcile spans its five attempts and their waits
    expect(await p.histogramSum('reloader_reconcile_duration_seconds')).toBeGreaterThanOrEqual(
      3.75,
    );
  });

  it('the last attempt is final: ReloadFail, give-up metrics, one failed reconcile', async () => {
    const p = pipeline({ workerThreads: 3 });
    p.server.failPatchesOf(API_KEY, ...Array.from({ length: 5 }, () => status(503)));
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS + 60_000);
    await p.queue.idle();
    expect(patchesTo(p.server.sent, API_KEY)).toHaveLength(5);
    expect(await p.value('reloader_retries_total')).toBe(4);
    expect(await p.value('reloader_errors_total', { type: 'write_gave_up' })).toBe(1);
    expect(await p.value('reloader_reload_executed_total', { success: 'false' })).toBe(1);
    expect(await p.value('reloader_reconcile_total', { result: 'error' })).toBe(1);
    expect(await p.value('reloader_reconcile_total', { result: 'success' })).toBe(1);
    expect(p.events.filter((event) => event.reason === 'ReloadFail')).toHaveLength(1);
  });

  it('409: plans again on the version the watch delivers, no GET, no backoff', async () => {
    const p = pipeline({ workerThreads: 1 });
    // Someone else changed api on the server; its watch event is late (40 ms).
    p.server.api.put({ ...API, resourceVersion: '11', annotations: { ...API.annotations } });
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS);
    p.server.deliver(API.ref, 40);
    await advance(60_000);
    await p.queue.idle();
    const due = 1_000_000 + SYNC_DELAY_MS;
    const api = patchesTo(p.server.sent, API_KEY);
    expect(api.map((write) => [write.at - due, write.resourceVersion])).toEqual([
      [0, '10'],
      [40, '11'],
    ]);
    expect(p.server.api.getCount).toBe(0);
    expect(patchesTo(p.server.sent, WEB_KEY).map((write) => write.at - due)).toEqual([0]);
    expect(await p.value('reloader_retries_total')).toBe(1);
  });

  it("the watch echo of kreload's own PATCH is not planned again; a later edit by another is", async () => {
    const p = pipeline({ workerThreads: 3 });
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS + 60_000);
    await p.queue.idle();
    // one reconcile per dependent: the roll; the echo (10 → 11) reached the store and was not planned
    expect(await p.value('reloader_reconcile_total')).toBe(2);
    expect(p.store.get(API_KEY)?.resourceVersion).toBe('11');
    // another writer edits api after the roll: that change is planned (nothing to roll: unchanged)
    const rolled = p.server.api.server(API.ref);
    if (rolled === undefined) throw new Error('api is gone');
    const edited = {
      ...rolled,
      resourceVersion: '12',
      annotations: { ...rolled.annotations, team: 'b' },
    };
    p.server.api.put(edited);
    p.server.deliver(API.ref, 0);
    await advance(SYNC_DELAY_MS + 1_000);
    await p.queue.idle();
    expect(await p.value('reloader_reconcile_total')).toBe(3);
    expect(await p.value('reloader_reconcile_total', { result: 'skipped' })).toBe(1);
    expect(p.server.sent).toHaveLength(2);
  });

  it("the echo of kreload's own PATCH delivered before its answer is not planned either", async () => {
    const p = pipeline({ workerThreads: 3 });
    p.server.answerLagMs = 50;
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS + 60_000);
    await p.queue.idle();
    expect(p.store.get(API_KEY)?.resourceVersion).toBe('11');
    expect(await p.value('reloader_reconcile_total')).toBe(2);
    expect(p.server.sent).toHaveLength(2);
  });

  it('stop during a retry wait: no further attempt', async () => {
    const p = pipeline({ workerThreads: 1 });
    p.server.failPatchesOf(API_KEY, status(429, 5_000));
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS + 100);
    await expect(p.queue.drain(1_000)).resolves.toBe(true);
    await advance(60_000);
    expect(patchesTo(p.server.sent, API_KEY)).toHaveLength(1);
  });

  it('a namespace leaving the selector set drops its pending work; entering reconciles it', async () => {
    const p = pipeline({ workerThreads: 1, selector: true });
    p.editConfigMap(hashOf(1));
    await advance(SYNC_DELAY_MS / 2);
    expect(p.queue.depth).toBe(2);
    p.namespaces.remove(NS);
    expect(p.queue.depth).toBe(0);
    await advance(60_000);
    expect(p.server.sent).toHaveLength(0);
    p.namespaces.upsert(NS);
    await advance(1_000);
    // both were reconciled at once, not debounced, and rolled to the edited ConfigMap
    expect(p.server.sent.map((write) => write.key).sort()).toEqual([API_KEY, WEB_KEY]);
  });
});

describe('rollouts in progress when the pipeline starts leading', () => {
  const PROGRESSING: ReplicaSetStatusView = {
    model: 'replica-set',
    observedGeneration: 5,
    desired: 3,
    replicas: 4,
    updated: 1,
    available: 3,
    unavailable: 1,
    progressing: { status: 'True', reason: 'ReplicaSetUpdated' },
  };
  const lastReloadedFrom = JSON.stringify({
    type: 'CONFIGMAP',
    name: 'app-config',
    namespace: NS,
    hash: H1,
    containerRefs: ['app'],
    observedAt: 1767225600,
  });
  const rolling = (
    name: string,
    marker: (container: ReturnType<typeof aContainer>) => ReturnType<typeof aContainer>,
    templateAnnotations: Record<string, string> = {},
  ): WorkloadView => ({
    ...aWorkload('Deployment', NS, name)
      .withGeneration(5)
      .withAnnotation(KEYS.auto, 'true')
      .withTemplateAnnotations(templateAnnotations)
      .withContainer(marker(aContainer('app').withEnvFrom('configmap', 'app-config')))
      .build(),
    rolloutStatus: PROGRESSING,
  });
  const byEnvVar = rolling('by-env', (c) => c.withStakaterEnv('STAKATER_APP_CONFIG_CONFIGMAP', H1));
  const byAnnotation = rolling('by-annotation', (c) => c, {
    [LAST_RELOADED_FROM]: lastReloadedFrom,
  });
  const byOther = rolling('by-someone-else', (c) => c);

  it.each([
    ['env-vars', byEnvVar],
    ['annotations', byAnnotation],
  ] as const)(
    '%s strategy: the one whose template carries the roll marker is followed, no write',
    async (strategy, marked) => {
      const p = pipeline({ workerThreads: 1, reconcile: { strategy }, listed: [marked, byOther] });
      expect(await p.value('kreload_rollouts_in_progress')).toBe(1);
      await advance(SYNC_DELAY_MS * 2);
      expect(patchesTo(p.server.sent, workloadKey(marked.ref))).toEqual([]);
      expect(p.events).toEqual([]);
    },
  );

  it('dry-run: nothing is followed, since kreload rolls nothing', async () => {
    const p = pipeline({ workerThreads: 1, reconcile: { dryRun: true }, listed: [byEnvVar] });
    expect(await p.value('kreload_rollouts_in_progress')).toBe(0);
  });
});
