// The roll by eviction (docs/adr/0044) through the reconciler's public API, against in-memory
// ports: the exact requests (one W-only patch, the evictions in order, the marker's removal), no
// pod evicted twice across a restart of the process, and a PodDisruptionBudget's 429 as a hold.
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { workloadKey } from '../core/keys.ts';
import type { SourceKey } from '../core/types.ts';
import {
  BASELINE,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  EVICT_BEFORE,
  POD_ROLLOUT_STRATEGY,
  SOURCE_HASHES,
} from '../core/types.ts';
import { aConfigMap, aContainer, aSecret, aWorkload } from '../testing/builders.ts';
import { InMemoryPods } from '../testing/in-memory-pods.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { RecordingObserver } from '../testing/recording-observer.ts';
import { RecordingWriter } from '../testing/recording-writer.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { MarkStore } from '../watch/marks.ts';
import type { ReconcileResult } from './attempt.ts';
import { Reconciler, type ReconcilerDeps } from './reconciler.ts';
import { kindTable } from '../rollout/kinds.ts';
import { GADGET_ROW } from '../testing/configured-kinds.ts';

const NS = 'team-a';
const CM: SourceKey = 'configmap/app-config';
const H0 = '0000000000000000000000000000000000000000';
const H1 = '1111111111111111111111111111111111111111';
const T0 = Date.parse('2026-12-06T10:00:00Z');
const START = T0 + 60_000;
const DEPLOY_UID = 'deploy-uid';
const RS_UID = 'rs-1';

const API = aWorkload('Deployment', NS, 'api')
  .withUid(DEPLOY_UID)
  .withResourceVersion('10')
  .withAnnotation(KEYS.auto, 'true')
  .withAnnotation(POD_ROLLOUT_STRATEGY, 'evict')
  .withAnnotation(SOURCE_HASHES, JSON.stringify({ [CM]: H0 }))
  .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
const VIEW = API.build();
const KEY = workloadKey(VIEW.ref);

const WIRE = {
  metadata: { name: 'api', namespace: NS, uid: DEPLOY_UID, resourceVersion: '10' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'api' } },
    strategy: { rollingUpdate: { maxUnavailable: '25%' } },
  },
};

let workloads: InMemoryWorkloads;
let sources: InMemorySources;
let writer: RecordingWriter;
let observer: RecordingObserver;
let pods: InMemoryPods;
let now: number;

function reconciler(baselines?: ReconcilerDeps['baselines']): Reconciler {
  return new Reconciler({
    workloads,
    sources,
    marks: new MarkStore(),
    writer,
    observer,
    pods,
    baselines,
    options: DEFAULT_RECONCILE_OPTIONS,
    now: () => now,
    random: () => 0.5,
  });
}

/** The watch delivers the server's version. */
function syncCache(): void {
  const served = writer.server(VIEW.ref);
  if (served) workloads.put(served);
}

/**
 * Reconciles as the queue would: at each result's `resumeAt`, the controllers having moved in
 * between, until nothing is asked for or `stop` says so.
 */
async function runRounds(
  make: () => Reconciler,
  stop: (result: ReconcileResult) => boolean = () => false,
): Promise<ReconcileResult[]> {
  const results: ReconcileResult[] = [];
  const instance = make();
  for (let round = 0; round < 50; round += 1) {
    syncCache();
    const result = await instance.reconcile(KEY);
    results.push(result);
    const at = 'resumeAt' in result ? result.resumeAt : undefined;
    if (at === undefined || stop(result)) return results;
    now = Math.max(now + 1, at);
    pods.tick(now);
  }
  throw new Error('the roll did not end within 50 rounds');
}

function patches(): string[] {
  return writer.writes.map((write) =>
    write.verb === 'patch' ? JSON.stringify(write.patch.body) : write.verb,
  );
}

beforeEach(() => {
  workloads = new InMemoryWorkloads();
  sources = new InMemorySources();
  writer = new RecordingWriter();
  observer = new RecordingObserver();
  pods = new InMemoryPods('api');
  now = START;
  sources.put(aConfigMap(NS, 'app-config').withHash(H1).build());
  workloads.put(VIEW);
  writer.put(VIEW);
  writer.putObject(VIEW.ref, WIRE);
  pods.addReplicaSet(RS_UID, DEPLOY_UID);
  pods.addReplicaSet('rs-other', 'other-deployment');
  pods.addPod('api-a', RS_UID, T0);
  pods.addPod('api-b', RS_UID, T0 + 1_000);
  pods.addPod('api-c', RS_UID, T0 + 2_000);
  pods.addPod('api-foreign', 'rs-other', T0);
});

describe('a roll by eviction', () => {
  it('records W state once, evicts every old pod once, oldest first, then drops the marker', async () => {
    const results = await runRounds(reconciler);

    expect(results[0]).toMatchObject({ outcome: 'rolled' });
    expect(patches()).toEqual([
      JSON.stringify({
        metadata: {
          resourceVersion: '10',
          annotations: {
            [SOURCE_HASHES]: JSON.stringify({ [CM]: H1 }),
            [EVICT_BEFORE]: '2026-12-06T10:00:02Z',
          },
        },
      }),
      JSON.stringify({
        metadata: { resourceVersion: '11', annotations: { [EVICT_BEFORE]: null } },
      }),
    ]);
    expect(pods.evictions()).toEqual(['api-a', 'api-b', 'api-c']);
    expect(pods.names()).toEqual(['api-foreign', 'api-r1', 'api-r2', 'api-r3']);
    expect(writer.server(VIEW.ref)?.annotations[EVICT_BEFORE]).toBeUndefined();
    const steps = observer.calls.flatMap((call) =>
      call.hook === 'onEviction' ? [call.event.result] : [],
    );
    expect(steps).toEqual(['evicted', 'evicted', 'evicted', 'done']);
  });

  it('waits for each replacement to be Ready before the next eviction', async () => {
    await runRounds(reconciler);
    const order = pods.requests.filter((r) => r.verb === 'evict').map((r) => r.name);
    expect(order).toEqual(['api-a', 'api-b', 'api-c']);
    // Between two evictions, a LIST saw the replacement not Ready yet and evicted nothing.
    const verbs = pods.requests.map((r) => r.verb).join(' ');
    expect(verbs).toMatch(/evict list-replicasets list-pods list-replicasets list-pods evict/);
  });

  it('never evicts a pod twice when the process restarts mid-way', async () => {
    // The first process rolls and evicts one pod, then stops (kill -9: its memory is gone).
    await runRounds(reconciler, () => pods.evictions().length === 1);
    expect(pods.evictions()).toEqual(['api-a']);
    // A new process finds the marker on the workload and goes on from there.
    await runRounds(reconciler);
    expect(pods.evictions()).toEqual(['api-a', 'api-b', 'api-c']);
    expect(writer.writes.filter((w) => w.verb === 'patch')).toHaveLength(2);
  });

  it('holds on a PodDisruptionBudget 429 with its reason and retries on a backoff', async () => {
    const pdb = "Cannot evict pod as it would violate the pod's disruption budget.";
    pods.holdNext(pdb, pdb);
    const results = await runRounds(reconciler);

    const held = observer.calls.flatMap((call) =>
      call.hook === 'onEviction' && call.event.result === 'held' ? [call.event] : [],
    );
    expect(held.map((h) => [h.pod, h.reason, h.retryInMs])).toEqual([
      ['api-a', pdb, 1_000],
      ['api-a', pdb, 2_000],
    ]);
    // The queue waits the hold's backoff: no busy loop between the refusals.
    const holdRounds = results.filter((r) => 'resumeAt' in r && r.resumeAt !== undefined);
    expect(holdRounds.length).toBeLessThan(20);
    expect(pods.evictions()).toEqual(['api-a', 'api-a', 'api-a', 'api-b', 'api-c']);
  });

  describe('without the RBAC of the evict strategy (reloader.enableEvictStrategy off)', () => {
    function blocked(): { reason: string; retryInMs: number }[] {
      return observer.calls.flatMap((call) =>
        call.hook === 'onEviction' && call.event.result === 'blocked'
          ? [{ reason: call.event.reason, retryInMs: call.event.retryInMs }]
          : [],
      );
    }

    it.each([
      ['listing pods is forbidden', ['list-pods', 'list-replicasets', 'evict'] as const],
      ['evicting is forbidden', ['evict'] as const],
    ])('%s: the roll is held with the reason and retried on a backoff', async (_name, verbs) => {
      pods.forbid(...verbs);
      const results = await runRounds(reconciler, () => blocked().length >= 4);
      expect(results[0]).toMatchObject({ outcome: 'rolled' });
      expect(observer.hooks()).not.toContain('onFailed');
      expect(blocked().map((hold) => hold.retryInMs)).toEqual([1_000, 2_000, 4_000, 8_000]);
      expect(blocked()[0]?.reason).toMatch(/forbidden.*reloader\.enableEvictStrategy=true/);
      expect(pods.evictions().filter((name) => name !== 'api-a')).toEqual([]);
      // Granted (helm upgrade): the held roll goes on by itself and ends.
      pods.forbid();
      now += 10_000;
      await runRounds(reconciler);
      expect(new Set(pods.evictions())).toEqual(new Set(['api-a', 'api-b', 'api-c']));
      expect(writer.server(VIEW.ref)?.annotations[EVICT_BEFORE]).toBeUndefined();
    });
  });

  it('a refused Eviction request is reported as failed before it holds the roll', async () => {
    pods.forbid('evict');
    await runRounds(reconciler, () => observer.hooks().includes('onEviction'));
    const steps = observer.calls.flatMap((call) =>
      call.hook === 'onEviction' ? [call.event.result] : [],
    );
    expect(steps).toEqual(['failed', 'blocked']);
  });

  it('a pod gone before its eviction (404) is no error', async () => {
    const first = reconciler();
    syncCache();
    await first.reconcile(KEY);
    syncCache();
    now += 3_000;
    pods.requests.length = 0;
    const original = pods.evict.bind(pods);
    let calls = 0;
    pods.evict = (namespace, pod) => {
      calls += 1;
      if (calls === 1)
        return Promise.reject(new ApiError('gone', { status: 404, retryable: false }));
      return original(namespace, pod);
    };
    const result = await first.reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged' });
    expect(observer.hooks()).not.toContain('onFailed');
  });

  it('a workload without a selector is held, not rolled blind', async () => {
    writer.putObject(VIEW.ref, { ...WIRE, spec: { replicas: 3 } });
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(pods.evictions()).toEqual([]);
    expect(writer.writes).toEqual([]);
  });

  it('a write of something else while the roll is under way does not stall it', async () => {
    // The roll was written; then a Secret the workload did not reference before is added to it,
    // so the next reconcile writes that Secret's baseline first. kreload's own write triggers no
    // reconcile: the eviction rounds must go on by themselves.
    const underWay = API.withAnnotation(SOURCE_HASHES, JSON.stringify({ [CM]: H1 }))
      .withAnnotation(EVICT_BEFORE, '2026-12-06T10:00:02Z')
      .withContainer(aContainer('sidecar').withEnvFrom('secret', 'db'))
      .build();
    workloads.put(underWay);
    writer.put(underWay);
    sources.put(aSecret(NS, 'db').withHash(H0).build());
    await runRounds(reconciler);

    expect(patches()).toEqual([
      JSON.stringify({
        metadata: {
          resourceVersion: '10',
          annotations: { [BASELINE]: JSON.stringify({ 'secret/db': H0 }) },
        },
      }),
      JSON.stringify({
        metadata: { resourceVersion: '11', annotations: { [EVICT_BEFORE]: null } },
      }),
    ]);
    expect(pods.evictions()).toEqual(['api-a', 'api-b', 'api-c']);
  });

  it('dry-run evicts nothing', async () => {
    const dry = new Reconciler({
      workloads,
      sources,
      marks: new MarkStore(),
      writer,
      observer,
      pods,
      options: { ...DEFAULT_RECONCILE_OPTIONS, dryRun: true },
      now: () => now,
      random: () => 0.5,
    });
    writer.put({
      ...VIEW,
      annotations: { ...VIEW.annotations, [EVICT_BEFORE]: '2026-12-06T10:00:02Z' },
    });
    syncCache();
    await dry.reconcile(KEY);
    expect(pods.requests).toEqual([]);
    expect(writer.writes).toEqual([]);
  });
});

describe('a roll by eviction after the baseline store fell back (docs/adr/0046)', () => {
  const RECORD = JSON.stringify({ [CM]: H0 });
  /** Never rolled: B only in the store's record (H0), which the store can no longer remove. */
  const NEVER_ROLLED = aWorkload('Deployment', NS, 'api')
    .withUid(DEPLOY_UID)
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withAnnotation(POD_ROLLOUT_STRATEGY, 'evict')
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
  const cases = [
    ['B still in the record alone', NEVER_ROLLED.build()],
    ['B copied from the record into W', NEVER_ROLLED.withAnnotation(BASELINE, RECORD).build()],
  ] as const;

  it.each(cases)('%s: W keeps {} and every old pod is evicted once', async (_name, view) => {
    workloads.put(view);
    writer.put(view);
    const baselines = {
      inUse: () => false,
      recordOf: () => RECORD,
      record: () => expect.unreachable('a store that fell back is not written'),
    };
    await runRounds(() => reconciler(baselines));

    // Never a write between the roll's and the marker's removal: the record is not read as B again.
    expect(patches()).toEqual([
      JSON.stringify({
        metadata: {
          resourceVersion: '10',
          annotations: {
            [BASELINE]: '{}',
            [SOURCE_HASHES]: JSON.stringify({ [CM]: H1 }),
            [EVICT_BEFORE]: '2026-12-06T10:00:02Z',
          },
        },
      }),
      JSON.stringify({
        metadata: { resourceVersion: '11', annotations: { [EVICT_BEFORE]: null } },
      }),
    ]);
    expect(pods.evictions()).toEqual(['api-a', 'api-b', 'api-c']);
  });
});

describe('a configured kind without a pod template (docs/custom-kinds.md)', () => {
  const GADGET = GADGET_ROW;
  const GADGET_VIEW = aWorkload('Gadget', NS, 'api')
    .withUid('gadget-uid')
    .withResourceVersion('10')
    .withAnnotation(KEYS.configmapReload, 'app-config')
    .withAnnotation(SOURCE_HASHES, JSON.stringify({ [CM]: H0 }))
    .build();

  it('rolls once by eviction, from its named source alone', async () => {
    pods = new InMemoryPods('api');
    pods.addPod('api-a', 'gadget-uid', T0);
    pods.addPod('api-b', 'gadget-uid', T0 + 1_000);
    workloads.put(GADGET_VIEW);
    writer.put(GADGET_VIEW);
    writer.putObject(GADGET_VIEW.ref, {
      metadata: { name: 'api', namespace: NS, uid: 'gadget-uid', resourceVersion: '10' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'api' } } },
    });
    const subject = new Reconciler({
      workloads,
      sources,
      marks: new MarkStore(),
      writer,
      observer,
      pods,
      options: { ...DEFAULT_RECONCILE_OPTIONS, kinds: kindTable([GADGET]) },
      now: () => now,
      random: () => 0.5,
    });
    const key = workloadKey(GADGET_VIEW.ref);
    const outcomes: string[] = [];
    for (let round = 0; round < 50; round += 1) {
      const served = writer.server(GADGET_VIEW.ref);
      if (served) workloads.put(served);
      const result = await subject.reconcile(key);
      outcomes.push(result.outcome);
      const at = 'resumeAt' in result ? result.resumeAt : undefined;
      if (at === undefined) break;
      now = Math.max(now + 1, at);
      pods.tick(now);
    }
    expect(outcomes.filter((outcome) => outcome === 'rolled')).toHaveLength(1);
    expect(pods.evictions()).toEqual(['api-a', 'api-b']);
    expect(writer.server(GADGET_VIEW.ref)?.annotations).toMatchObject({
      [SOURCE_HASHES]: JSON.stringify({ [CM]: H1 }),
    });
    expect(writer.writes.map((write) => write.verb === 'patch' && write.patch.type)).toEqual([
      'merge',
      'merge',
    ]);
  });
});
