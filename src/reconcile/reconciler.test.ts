import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { workloadKey } from '../core/keys.ts';
import type { SourceKey, WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { aConfigMap, aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { aDeleteMark } from '../testing/marks.ts';
import { MarkStore } from '../watch/marks.ts';
import { RecordingObserver } from '../testing/recording-observer.ts';
import { RecordingWriter } from '../testing/recording-writer.ts';
import { ApiError } from '../core/api-error.ts';
import type { ReconcileOptions } from './reconciler.ts';
import type { ReconcilerDeps } from './reconciler.ts';
import { Reconciler } from './reconciler.ts';
import type { DrivenReconciler } from '../testing/attempt-driver.ts';
import { driven } from '../testing/attempt-driver.ts';

function drivenWithSleeps(deps: ReconcilerDeps, onWait?: (ms: number) => void): DrivenReconciler {
  return driven(new Reconciler(deps), {
    onWait: (ms) => {
      sleeps.push(ms);
      onWait?.(ms);
    },
  });
}

const NS = 'team-a';
const H0 = '0000000000000000000000000000000000000000';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const H3 = '3333333333333333333333333333333333333333';
const CM: SourceKey = 'configmap/app-config';
const SECRET: SourceKey = 'secret/db';
const NOW = 1_767_225_600_000;

const API = aWorkload('Deployment', NS, 'api')
  .withResourceVersion('10')
  .withAnnotation(KEYS.auto, 'true')
  .withContainer(
    aContainer('app').withEnvFrom('configmap', 'app-config').withEnvFrom('secret', 'db'),
  );
const KEY = workloadKey(API.build().ref);
const BASELINED = API.withAnnotation(BASELINE, `{"${CM}":"${H1}","${SECRET}":"${H2}"}`).build();

const OPTIONS: ReconcileOptions = DEFAULT_RECONCILE_OPTIONS;

function serverError(status: number, extra: { retryAfterMs?: number } = {}): ApiError {
  const retryable = status === 409 || status === 429 || status >= 500;
  return new ApiError(`HTTP ${status}`, { status, retryable, ...extra });
}

let workloads: InMemoryWorkloads;
let sources: InMemorySources;
let marks: MarkStore;
let writer: RecordingWriter;
let observer: RecordingObserver;
let sleeps: number[];

/** Every attempt of one reconcile, as the queue would run them; the waits go to `sleeps`. */
function reconciler(
  options: Partial<ReconcileOptions> = {},
  clock: { now: () => number; onWait?: (ms: number) => void } = { now: () => NOW },
): DrivenReconciler {
  return drivenWithSleeps(
    {
      workloads,
      sources,
      marks,
      writer,
      observer,
      options: { ...OPTIONS, ...options },
      now: clock.now,
      random: () => 0.5,
    },
    clock.onWait,
  );
}

/** The same view in the cache and on the server. */
function given(view: WorkloadView): void {
  workloads.put(view);
  writer.put(view);
}

function bodies(): string[] {
  return writer.writes.map((write) =>
    write.verb === 'patch' ? JSON.stringify(write.patch.body) : write.verb,
  );
}

function envPatch(
  rv: string,
  env: Record<string, string>,
  annotations?: Record<string, string | null>,
): string {
  const metadata = annotations ? { resourceVersion: rv, annotations } : { resourceVersion: rv };
  const entries = Object.entries(env).map(([name, value]) => ({ name, value }));
  return JSON.stringify({
    metadata,
    spec: { template: { spec: { containers: [{ name: 'app', env: entries }] } } },
  });
}

beforeEach(() => {
  workloads = new InMemoryWorkloads();
  sources = new InMemorySources();
  marks = new MarkStore();
  writer = new RecordingWriter();
  observer = new RecordingObserver();
  sleeps = [];
  sources.put(aConfigMap(NS, 'app-config').withHash(H1).build());
  sources.put(aSecret(NS, 'db').withHash(H2).build());
});

describe('Reconciler', () => {
  it('first sight: one metadata-only baseline patch, no template change', async () => {
    given(API.build());
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'baselined', attempts: 1 });
    expect(bodies()).toEqual([
      JSON.stringify({
        metadata: {
          resourceVersion: '10',
          annotations: { [BASELINE]: `{"${CM}":"${H1}","${SECRET}":"${H2}"}` },
        },
      }),
    ]);
    expect(writer.server(API.build().ref)?.generation).toBe(1);
    expect(observer.hooks()).toEqual(['onBaselined']);
  });

  it('a change: one patch with the env var', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    const result = await reconciler().reconcile(KEY, { observedAt: new Map([[CM, NOW - 500]]) });
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(bodies()).toEqual([
      envPatch(
        '10',
        { STAKATER_APP_CONFIG_CONFIGMAP: H3 },
        { [BASELINE]: `{"${SECRET}":"${H2}"}` },
      ),
    ]);
    expect(observer.hooks()).toEqual(['onRolled']);
  });

  it('a roll reports the generation its PATCH produced: the rollout it started', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    await reconciler().reconcile(KEY);
    const served = writer.server(API.build().ref)?.generation;
    expect(served).toBeGreaterThan(API.build().generation ?? 0);
    expect(observer.calls).toMatchObject([{ hook: 'onRolled', event: { generation: served } }]);
  });

  it('two changed sources: one patch carrying both', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    sources.put(aSecret(NS, 'db').withHash(H0).build());
    await reconciler().reconcile(KEY);
    expect(bodies()).toEqual([
      envPatch(
        '10',
        { STAKATER_APP_CONFIG_CONFIGMAP: H3, STAKATER_DB_SECRET: H0 },
        { [BASELINE]: null },
      ),
    ]);
  });

  it('a repeat reconcile writes nothing', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    await reconciler().reconcile(KEY);
    const server = writer.server(API.build().ref);
    if (!server) throw new Error('missing server copy');
    workloads.put(server);
    const again = await reconciler().reconcile(KEY);
    expect(again).toMatchObject({ outcome: 'unchanged', attempts: 0 });
    expect(writer.writes).toHaveLength(1);
  });

  it('409: GETs the object when the watch has no newer version, plans again, no backoff', async () => {
    given(BASELINED);
    // Someone else changed the workload: the cache still holds resourceVersion 10.
    writer.put({ ...BASELINED, resourceVersion: '11', generation: 2 });
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    const expected = (rv: string) =>
      envPatch(rv, { STAKATER_APP_CONFIG_CONFIGMAP: H3 }, { [BASELINE]: `{"${SECRET}":"${H2}"}` });
    expect(bodies()).toEqual([expected('10'), expected('11')]);
    expect(writer.getCount).toBe(1);
    expect(sleeps).toEqual([]);
    expect(observer.hooks()).toEqual(['onRetry', 'onRolled']);
  });

  it('409: plans again on the newer version the watch delivered, without a GET', async () => {
    // The watch delivers the server's version while the stale patch is being rejected.
    workloads = new (class extends InMemoryWorkloads {
      override newerThan(key: typeof KEY, resourceVersion: string) {
        const server = writer.server(API.build().ref);
        if (server) this.put(server);
        return super.newerThan(key, resourceVersion);
      }
    })();
    given(BASELINED);
    writer.put({ ...BASELINED, resourceVersion: '11', generation: 2 });
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(bodies().map((body) => body.includes('"resourceVersion":"11"'))).toEqual([false, true]);
    expect(writer.getCount).toBe(0);
    expect(sleeps).toEqual([]);
  });

  it('409: nothing is left to do when the fresh object is already rolled', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    // Another writer already rolled it (resourceVersion 11).
    const rolled = aWorkload('Deployment', NS, 'api')
      .withResourceVersion('11')
      .withAnnotations({ [KEYS.auto]: 'true', [BASELINE]: `{"${SECRET}":"${H2}"}` })
      .withContainer(
        aContainer('app')
          .withEnvFrom('configmap', 'app-config')
          .withEnvFrom('secret', 'db')
          .withStakaterEnv('STAKATER_APP_CONFIG_CONFIGMAP', H3),
      )
      .build();
    writer.put(rolled);
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged', attempts: 1 });
    expect(writer.writes).toHaveLength(1);
    expect(observer.hooks()).toEqual(['onRetry']);
  });

  it('409: a failed re-read is retried before patching again', async () => {
    given(BASELINED);
    writer.put({ ...BASELINED, resourceVersion: '11' });
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNextGet(serverError(503));
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 3 });
    expect(bodies().map((body) => body.includes('"11"'))).toEqual([false, true]);
    expect(writer.getCount).toBe(2);
    // Only the failed GET backs off, as the first failure of the write budget (a 409 spends none).
    expect(sleeps).toEqual([250]);
  });

  describe('409 while the status keeps moving (a Deployment whose pods are starting)', () => {
    /**
     * The deployment controller updates the status between every read and every patch: each patch
     * is one version behind, and the watch delivers the newer one right after the 409.
     */
    function statusChurn(updates: number): void {
      let left = updates;
      writer = new (class extends RecordingWriter {
        override patch(...args: Parameters<RecordingWriter['patch']>) {
          const current = this.server(args[0]);
          if (left > 0 && current) {
            left -= 1;
            this.put({ ...current, resourceVersion: String(Number(current.resourceVersion) + 1) });
          }
          return super.patch(...args);
        }
      })();
      workloads = new (class extends InMemoryWorkloads {
        override newerThan(key: typeof KEY, resourceVersion: string) {
          const served = writer.server(API.build().ref);
          if (served) this.put(served);
          return super.newerThan(key, resourceVersion);
        }
      })();
    }

    it('a baseline lands within the reconcile after more conflicts than the write budget', async () => {
      statusChurn(8);
      given(API.build());
      const result = await reconciler().reconcile(KEY);
      expect(result).toMatchObject({ outcome: 'baselined', attempts: 9 });
      expect(writer.server(API.build().ref)?.annotations[BASELINE]).toBe(
        `{"${CM}":"${H1}","${SECRET}":"${H2}"}`,
      );
      expect(observer.hooks().filter((hook) => hook !== 'onRetry')).toEqual(['onBaselined']);
    });

    it('repeated conflicts back off instead of re-reading in a tight loop', async () => {
      statusChurn(5);
      given(API.build());
      await reconciler().reconcile(KEY);
      // The first conflict waits for the watch (ADR 0015); the next ones back off, doubling.
      expect(sleeps).toEqual([100, 200, 400, 800]);
    });

    it('a workload that never stops changing ends the write after the conflict budget', async () => {
      statusChurn(1_000);
      given(API.build());
      const result = await reconciler().reconcile(KEY);
      expect(result).toMatchObject({ outcome: 'failed', attempts: 30, error: { status: 409 } });
      expect(sleeps.reduce((sum, ms) => sum + ms, 0)).toBeGreaterThan(100_000);
    });

    it('a 5xx after conflicts still gets the whole write budget', async () => {
      statusChurn(6);
      given(API.build());
      writer.failNext(...[500, 502, 503, 504].map((status) => serverError(status)));
      const result = await reconciler().reconcile(KEY);
      expect(result).toMatchObject({ outcome: 'baselined' });
    });
  });

  it('403: no retry, reported as failed', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNext(serverError(403));
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(writer.writes).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(observer.hooks()).toEqual(['onFailed']);
    expect(observer.calls[0]).toMatchObject({ event: { gaveUp: false, attempts: 1 } });
  });

  describe('403 while the API server comes back (its authorizer not loaded yet)', () => {
    const unreachable = (): ApiError =>
      new ApiError('connect ECONNREFUSED 127.0.0.1:6443', {
        reason: 'ECONNREFUSED',
        retryable: true,
      });
    const OTHER = aWorkload('Deployment', NS, 'other')
      .withResourceVersion('10')
      .withAnnotation(KEYS.auto, 'true')
      .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));

    it('a 403 after a network failure is retried on the reconnect backoff, then rolls once', async () => {
      given(BASELINED);
      sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
      writer.failNext(unreachable(), serverError(403), serverError(403));
      const result = await reconciler().reconcile(KEY);
      expect(result).toMatchObject({ outcome: 'rolled', attempts: 4 });
      expect(new Set(bodies()).size).toBe(1);
      expect(sleeps).toEqual([250, 2000, 4000]);
    });

    it("another workload's network failure makes this one's first 403 transient", async () => {
      const other = OTHER.withAnnotation(BASELINE, `{"${CM}":"${H1}"}`).build();
      given(other);
      given(BASELINED);
      sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
      const r = reconciler();
      writer.failNext(unreachable(), unreachable(), unreachable(), unreachable(), unreachable());
      expect(await r.reconcile(workloadKey(other.ref))).toMatchObject({ outcome: 'failed' });
      sleeps = [];
      writer.failNext(serverError(403));
      expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'rolled', attempts: 2 });
      expect(sleeps).toEqual([1000]);
    });

    it('a 403 more than 60 s after the last network failure is final', async () => {
      given(BASELINED);
      sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
      let now = NOW;
      const r = reconciler(
        {},
        {
          now: () => now,
          onWait: (ms) => {
            now += ms + 60_001;
          },
        },
      );
      writer.failNext(unreachable(), serverError(403));
      expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'failed', attempts: 2 });
    });
  });

  it('5xx: retried with backoff, then given up after 5 attempts', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNext(...[500, 502, 503, 504, 500].map((status) => serverError(status)));
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'failed', attempts: 5 });
    expect(new Set(bodies()).size).toBe(1);
    expect(writer.writes).toHaveLength(5);
    expect(sleeps).toEqual([250, 500, 1000, 2000]);
    expect(observer.hooks()).toEqual(['onRetry', 'onRetry', 'onRetry', 'onRetry', 'onFailed']);
    expect(observer.calls.at(-1)).toMatchObject({ event: { gaveUp: true, attempts: 5 } });
  });

  it('5xx then success: the same patch goes through', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNext(serverError(503));
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(new Set(bodies()).size).toBe(1);
  });

  it.each([
    ['honours Retry-After', 2_000, 2_000],
    ['caps Retry-After at 30 s', 45_000, 30_000],
  ])('429 %s', async (_name, retryAfterMs, slept) => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNext(serverError(429, { retryAfterMs }));
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(sleeps).toEqual([slept]);
  });

  it('404 on the write: the workload is gone', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    writer.failNext(serverError(404));
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'gone', attempts: 1 });
    expect(observer.hooks()).toEqual(['onGone']);
  });

  it('a workload missing from the cache is done without a write', async () => {
    expect(await reconciler().reconcile(KEY)).toEqual({ outcome: 'gone', attempts: 0 });
    expect(writer.writes).toEqual([]);
  });

  it('dry run: nothing is written, the roll is reported', async () => {
    given(BASELINED);
    sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
    const result = await reconciler({ dryRun: true }).reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'dry-run', skip: 'dry_run', attempts: 0 });
    expect(writer.writes).toEqual([]);
    expect(observer.hooks()).toEqual(['onDryRun', 'onSkipped']);
  });

  it.each([
    ['on the workload', undefined],
    ['in the baseline store', new Map<string, string>()],
  ])(
    'dry run, first sight with B %s: the baseline is suppressed and counted alike',
    async (_name, records) => {
      given(API.build());
      const recorded: (string | null)[] = [];
      const baselines = records && {
        inUse: () => true,
        recordOf: (view: WorkloadView) => records.get(view.uid),
        record: (_view: WorkloadView, value: string | null) => recorded.push(value),
      };
      const result = await drivenWithSleeps({
        workloads,
        sources,
        marks,
        writer,
        observer,
        options: { ...OPTIONS, dryRun: true },
        now: () => NOW,
        random: () => 0.5,
        baselines,
      }).reconcile(KEY);
      expect(result).toMatchObject({ outcome: 'dry-run', skip: 'dry_run', attempts: 0 });
      expect(writer.writes).toEqual([]);
      expect(recorded).toEqual([]);
      expect(observer.hooks()).toEqual(['onDryRun', 'onSkipped']);
    },
  );

  it.each([
    ['a source change', { observedAt: new Map([[CM, NOW]]) }, ['onSkipped']],
    ['a resync', {}, []],
  ])('nothing to write after %s', async (_name, trigger, hooks) => {
    given(BASELINED);
    expect(await reconciler().reconcile(KEY, trigger)).toMatchObject({ attempts: 0 });
    expect(writer.writes).toEqual([]);
    expect(observer.hooks()).toEqual(hooks);
  });

  it('a type without a healthy cache is unknown, never a deletion', async () => {
    given(BASELINED);
    sources.setHealthy('CONFIGMAP', false);
    sources.remove(NS, CM);
    expect(await reconciler({ reloadOnDelete: true }).reconcile(KEY)).toMatchObject({
      outcome: 'unchanged',
    });
    expect(writer.writes).toEqual([]);
  });

  it('a type whose watch of another namespace is forbidden stays known here (ADR 0021)', async () => {
    given(BASELINED);
    sources.setHealthyIn('elsewhere', 'CONFIGMAP', false);
    sources.remove(NS, CM);
    marks.add([KEY], aDeleteMark(CM, 'u1'));
    await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(writer.writes).toHaveLength(1);
  });

  it('a type whose watch of this namespace is forbidden is unknown here', async () => {
    given(BASELINED);
    sources.setHealthyIn(NS, 'CONFIGMAP', false);
    sources.remove(NS, CM);
    marks.add([KEY], aDeleteMark(CM, 'u1'));
    await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(writer.writes).toEqual([]);
  });

  it('rolls a deleted source with reload-on-delete and consumes the mark', async () => {
    given(BASELINED);
    sources.remove(NS, CM);
    marks.add([KEY], aDeleteMark(CM, 'u1'));
    await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(bodies()).toEqual([
      envPatch(
        '10',
        { STAKATER_APP_CONFIG_CONFIGMAP: 'aae45badef99284e4dae01d6046154ea9d99532f' },
        {
          [BASELINE]: `{"${SECRET}":"${H2}"}`,
        },
      ),
    ]);
    expect(marks.marksOf(KEY)).toEqual([]);
  });

  it('keeps the marks when the write fails', async () => {
    given(BASELINED);
    sources.remove(NS, CM);
    marks.add([KEY], aDeleteMark(CM, 'u1'));
    writer.failNext(serverError(403));
    await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(marks.marksOf(KEY).filter((mark) => mark.kind === 'delete')).toHaveLength(1);
  });

  it('R7: a change seen after tracking began rolls instead of being absorbed into a baseline', async () => {
    given(API.build());
    workloads.put(API.build(), NOW - 5_000);
    sources.put(aConfigMap(NS, 'app-config').withHash(H1).build(), {
      firstObserved: NOW - 9_000,
      lastChange: NOW - 1_000,
    });
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('rolled');
    expect(bodies()).toEqual([
      envPatch(
        '10',
        { STAKATER_APP_CONFIG_CONFIGMAP: H1 },
        { [BASELINE]: `{"${SECRET}":"${H2}"}` },
      ),
    ]);
  });

  it('offers every source of a listed type to the reload list', async () => {
    const listed = aWorkload('Deployment', NS, 'listed')
      .withAnnotation(KEYS.configmapReload, 'app-.*')
      .withContainer(aContainer('app'))
      .build();
    given(listed);
    sources.put(aConfigMap(NS, 'app-extra').withHash(H3).build());
    sources.put(aConfigMap(NS, 'other').withHash(H3).build());
    sources.put(aConfigMap('elsewhere', 'app-far').withHash(H3).build());
    await reconciler().reconcile(workloadKey(listed.ref));
    expect(bodies()).toEqual([
      JSON.stringify({
        metadata: {
          resourceVersion: '1',
          annotations: { [BASELINE]: `{"${CM}":"${H1}","configmap/app-extra":"${H3}"}` },
        },
      }),
    ]);
  });

  it('skips a tracked workload without regular containers', async () => {
    const ref = aWorkload('Deployment', NS, 'ref')
      .withAnnotation(KEYS.configmapReload, 'app-config')
      .withWorkloadRef()
      .build();
    given(ref);
    const result = await reconciler().reconcile(workloadKey(ref.ref));
    expect(result).toMatchObject({ outcome: 'skipped', skip: 'no_container' });
    expect(writer.writes).toEqual([]);
  });

  it('reports annotation problems and collisions before writing', async () => {
    const view = aWorkload('Deployment', NS, 'c')
      .withAnnotation(KEYS.auto, 'true')
      .withAnnotation(KEYS.configmapReload, 'bad-(')
      .withContainer(
        aContainer('app')
          .withEnvFrom('configmap', 'my-config')
          .withEnvFrom('configmap', 'my.config'),
      )
      .build();
    given(view);
    sources.put(aConfigMap(NS, 'my-config').withHash(H1).build());
    sources.put(aConfigMap(NS, 'my.config').withHash(H2).build());
    await reconciler().reconcile(workloadKey(view.ref));
    expect(observer.hooks()).toEqual(['onProblems', 'onCollision', 'onBaselined']);
  });
});
