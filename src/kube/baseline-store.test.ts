/**
 * The baseline store against an in-memory ConfigMap API (docs/adr/0046): the exact writes of a
 * batch, the overlay until the watch catches up, a deleted or corrupted object, the size bound, a
 * namespace of 10,000 workloads, failures and leadership.
 */
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import type { WorkloadView } from '../core/types.ts';
import { LeadershipLostError } from '../reconcile/write-actions.ts';
import { InMemoryConfigMaps, statusError } from '../testing/in-memory-config-maps.ts';
import { ManualTimers } from '../testing/list-watch-testkit.ts';
import type { ObjectBatch, Refused, StoreProblem } from './baseline-records.ts';
import {
  BaselineRecords,
  OBJECT_MAX_BYTES,
  OBJECTS_PER_NAMESPACE,
  recordKey,
  storeObjectName,
} from './baseline-records.ts';
import type { BaselineFence } from './baseline-store.ts';
import {
  BASELINE_NAMESPACE_ANNOTATION,
  BASELINE_STORE_LABELS,
  FLUSH_CONCURRENCY,
  FLUSH_INTERVAL_MS,
  KubeBaselineStore,
  projectStoreObject,
  REMOVAL_FLUSH_INTERVAL_MS,
  storeProblemMessage,
} from './baseline-store.ts';

const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const HOME = 'kreload-system';
const COLLECTION = `/api/v1/namespaces/${HOME}/configmaps`;

function view(name: string, uid = `uid-${name}`, namespace = 'team-a'): WorkloadView {
  return { ref: { kind: 'Deployment', namespace, name }, uid } as unknown as WorkloadView;
}

const record = (hash: string) => `{"configmap/app":"${hash}"}`;

/** The merge PATCH of team-a's first store object: each named workload's record set or removed. */
function teamAPatch(records: Record<string, string | null>) {
  const data = Object.fromEntries(
    Object.entries(records).map(([name, value]) => [recordKey(view(name)), value]),
  );
  return { method: 'PATCH', path: `${COLLECTION}/${storeObjectName('team-a', 0)}`, body: { data } };
}

function harness(
  options: {
    leader?: () => boolean;
    fence?: BaselineFence;
    beforeWrite?: (batch: ObjectBatch) => Promise<void>;
  } = {},
) {
  const api = new InMemoryConfigMaps(HOME);
  const timers = new ManualTimers();
  const refused: Refused[] = [];
  const lost: [string, number][] = [];
  const failed: [ObjectBatch, number | undefined][] = [];
  const fellBack: string[] = [];
  const store = new KubeBaselineStore({
    transport: api,
    namespace: HOME,
    timers,
    random: () => 0.5,
    mayWrite: options.leader ?? (() => true),
    fence: options.fence,
    ...(options.beforeWrite && { beforeWrite: options.beforeWrite }),
    events: {
      onRefused: (r) => refused.push(r),
      onLost: (object, count) => lost.push([object, count]),
      onWriteFailed: (batch, _error, retryInMs) => failed.push([batch, retryInMs]),
      onFellBack: (cause) => fellBack.push(cause),
    },
  });
  return { api, timers, store, refused, lost, failed, fellBack };
}

/** One workload with a record in each of `count` namespaces: one batch (one object) each. */
function recordInNamespaces(store: KubeBaselineStore, count: number): void {
  for (let index = 0; index < count; index += 1) {
    store.record(view('api', `uid-${String(index)}`, `team-${String(index)}`), record(H1));
  }
}

describe('KubeBaselineStore', () => {
  it('batches the records of many workloads into one create, then one patch per object', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    for (let index = 0; index < 50; index += 1) store.record(view(`w${String(index)}`), record(H1));
    expect(store.recordOf(view('w7'))).toBe(record(H1));
    await store.flush();
    const name = storeObjectName('team-a', 0);
    expect(
      api.writes.map((write) => [write.method, write.path]),
      'an object no one has seen is created, with no PATCH (and its 404) first',
    ).toEqual([['POST', COLLECTION]]);
    const created = api.writes[0]?.body as JsonObject;
    expect(created.metadata).toEqual({
      name,
      namespace: HOME,
      labels: BASELINE_STORE_LABELS,
      annotations: { [BASELINE_NAMESPACE_ANNOTATION]: 'team-a' },
    });
    expect(Object.keys(created.data as JsonObject)).toHaveLength(50);
    store.record(view('w1'), record(H2));
    store.record(view('w2'), null);
    await store.flush();
    expect(api.writes.slice(1)).toEqual([
      {
        method: 'PATCH',
        path: `${COLLECTION}/${name}`,
        body: { data: { [recordKey(view('w1'))]: record(H2), [recordKey(view('w2'))]: null } },
      },
    ]);
  });

  it('sends removals alone after the longer interval; a record set meanwhile brings it forward', async () => {
    const { api, store, timers } = harness();
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    store.record(view('b'), record(H1));
    await store.flush();
    for (const object of api.observed()) store.consumer.upsert(object, true);
    const before = api.writes.length;

    store.record(view('a'), null);
    expect(await timers.nextDelay(), 'a removal alone waits').toBe(REMOVAL_FLUSH_INTERVAL_MS);
    store.record(view('b'), null);
    expect(timers.liveCount, 'one flush for the burst').toBe(1);
    store.record(view('c'), record(H2));
    expect(await timers.nextDelay(), 'a record to set is sent sooner').toBe(FLUSH_INTERVAL_MS);
    expect(timers.liveCount).toBe(1);
    timers.fire();
    await store.flush();
    expect(api.writes.slice(before)).toEqual([teamAPatch({ a: null, b: null, c: record(H2) })]);
  });

  it('patches an object it has seen, and creates it again when the patch finds it gone', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    await store.flush();
    for (const object of api.observed()) store.consumer.upsert(object, true);
    api.objects.clear();
    const before = api.writes.length;
    store.record(view('b'), record(H2));
    await store.flush();
    expect(api.writes.slice(before).map((write) => write.method)).toEqual(['PATCH', 'POST']);
  });

  it('sweeps only where the caller answers for the namespace (active-active: its own share)', () => {
    const { store } = harness();
    store.consumer.replace([], '1');
    store.record(view('mine'), record(H1));
    store.record(view('theirs', 'uid-theirs', 'team-b'), record(H1));
    const asked: string[] = [];
    const removed = store.sweep((namespace, uid) => {
      asked.push(`${namespace}/${uid}`);
      return namespace === 'team-a';
    });
    expect(removed).toBe(1);
    expect(asked.sort()).toEqual(['team-a/uid-mine', 'team-b/uid-theirs']);
    expect(store.recordOf(view('theirs', 'uid-theirs', 'team-b'))).toBe(record(H1));
  });

  it('sweeps the records of deleted workloads in one patch, observed or not yet', async () => {
    const { api, store, timers } = harness();
    store.consumer.replace([], '1');
    for (const name of ['kept', 'gone-a', 'gone-b']) store.record(view(name), record(H1));
    await store.flush();
    for (const object of api.observed()) store.consumer.upsert(object, true);
    store.record(view('gone-c'), record(H1));
    const gone = new Set(['uid-gone-a', 'uid-gone-b', 'uid-gone-c']);
    expect(store.sweep((_namespace, uid) => gone.has(uid))).toBe(3);
    expect(
      store.sweep((_namespace, uid) => gone.has(uid)),
      'a removal already pending is not planned twice',
    ).toBe(0);
    expect(store.recordOf(view('gone-a'))).toBeUndefined();
    expect(store.recordOf(view('kept'))).toBe(record(H1));
    const before = api.writes.length;
    expect(timers.liveCount, 'a batch is scheduled').toBe(1);
    await store.flush();
    expect(api.writes.slice(before)).toEqual([
      teamAPatch({ 'gone-a': null, 'gone-b': null, 'gone-c': null }),
    ]);
    for (const object of api.observed()) store.consumer.upsert(object, true);
    expect([...(api.observed()[0]?.data.keys() ?? [])]).toEqual([recordKey(view('kept'))]);
  });

  it('keeps a written record until the watch shows it, then reads the object', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('api'), record(H1));
    await store.flush();
    // The watch has not delivered the object yet: the record is still known.
    expect(store.recordOf(view('api'))).toBe(record(H1));
    for (const object of api.observed()) store.consumer.upsert(object, true);
    expect(store.recordOf(view('api'))).toBe(record(H1));
  });

  it('a re-created workload (same name, new UID) has no record', async () => {
    const { store } = harness();
    store.consumer.replace([], '1');
    store.record(view('api', 'uid-1'), record(H1));
    await store.flush();
    expect(store.recordOf(view('api', 'uid-2'))).toBeUndefined();
  });

  it('a deleted store object loses its records: their workloads have none (no roll)', async () => {
    const { api, store, lost } = harness();
    store.consumer.replace([], '1');
    store.record(view('api'), record(H1));
    await store.flush();
    const [object] = api.observed();
    if (!object) throw new Error('no object');
    store.consumer.upsert(object, true);
    store.consumer.remove({
      ...object,
      resourceVersion: String(Number(object.resourceVersion) + 1),
    });
    expect(store.recordOf(view('api'))).toBeUndefined();
    expect(lost).toEqual([[object.name, 1]]);
  });

  it('a write that comes back without its object (lost before the watch saw it) is dropped too', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('api'), record(H1));
    await store.flush();
    const written = api.observed()[0];
    if (!written) throw new Error('no object');
    store.consumer.remove({ ...written, data: new Map() });
    expect(store.recordOf(view('api'))).toBeUndefined();
  });

  it('a corrupted value is served as is: the planner treats it as absent and rewrites it', () => {
    const { store } = harness();
    const name = storeObjectName('team-a', 0);
    store.consumer.replace(
      [
        {
          name,
          namespace: 'team-a',
          resourceVersion: '5',
          data: new Map([[recordKey(view('api')), 'not json']]),
        },
      ],
      '5',
    );
    expect(store.recordOf(view('api'))).toBe('not json');
  });

  it('refuses a record bigger than an object, with no write at all', async () => {
    const { api, store, refused } = harness();
    store.consumer.replace([], '1');
    store.record(view('huge'), 'x'.repeat(OBJECT_MAX_BYTES));
    await store.flush();
    expect(api.writes).toEqual([]);
    expect(refused).toHaveLength(1);
    expect(store.recordOf(view('huge'))).toBeUndefined();
  });

  it('writes nothing while another replica leads; the leader writes', async () => {
    let leading = false;
    const { api, store } = harness({ leader: () => leading });
    store.consumer.replace([], '1');
    store.record(view('api'), record(H1));
    await store.flush();
    expect(api.writes).toEqual([]);
    leading = true;
    await store.flush();
    expect(api.writes.map((write) => write.method)).toEqual(['POST']);
  });

  describe('active-active: only the namespaces whose bucket this replica holds (docs/adr/0051)', () => {
    /** team-a's bucket held here while `held.team-a`; team-b's always; writes counted in flight. */
    function fenced() {
      const held = new Map([
        ['team-a', true],
        ['team-b', true],
      ]);
      let inFlight = 0;
      const fence: BaselineFence = {
        holds: (namespace) => held.get(namespace) === true,
        admit: async (namespace, write) => {
          if (held.get(namespace) !== true) {
            throw new LeadershipLostError({ kind: 'ConfigMap', namespace, name: 'baseline-store' });
          }
          inFlight += 1;
          try {
            return await write();
          } finally {
            inFlight -= 1;
          }
        },
      };
      return { ...harness({ fence }), held, inFlight: () => inFlight };
    }
    const teamB = (name: string) => view(name, `uid-${name}`, 'team-b');

    it.each([
      { lost: 'before the record is set', loseBeforeRecord: true },
      { lost: 'while the record waits for its batch', loseBeforeRecord: false },
    ])(
      'a bucket lost $lost: the record is not written, the observed one is read',
      async ({ loseBeforeRecord }) => {
        const { api, store, held } = fenced();
        store.consumer.replace([], '1');
        if (loseBeforeRecord) held.set('team-a', false);
        store.record(view('api'), record(H1));
        store.record(teamB('web'), record(H1));
        held.set('team-a', false);
        await store.flush();
        expect(api.writes.map((write) => write.body)).toEqual([
          expect.objectContaining({
            data: { [recordKey(teamB('web'))]: record(H1) },
            metadata: expect.objectContaining({
              annotations: { [BASELINE_NAMESPACE_ANNOTATION]: 'team-b' },
            }) as unknown,
          }),
        ]);
        expect(store.recordOf(view('api'))).toBeUndefined();
        // Back here later: nothing of the old first sight is left to send.
        held.set('team-a', true);
        await store.flush();
        expect(api.writes).toHaveLength(1);
      },
    );

    it('a held bucket: its records are written counted in flight', async () => {
      const { api, store, inFlight } = fenced();
      store.consumer.replace([], '1');
      store.record(view('api'), record(H1));
      let during = -1;
      const request = api.request.bind(api);
      api.request = (r) => {
        during = inFlight();
        return request(r);
      };
      await store.flush();
      expect([api.writes.map((write) => write.method), during, inFlight()]).toEqual([
        ['POST'],
        1,
        0,
      ]);
    });
  });

  it('retries a failed batch after a backoff, and gives up on a non-retryable one', async () => {
    const { api, store, failed, timers } = harness();
    store.consumer.replace([], '1');
    store.record(view('api'), record(H1));
    api.failNext = statusError(503);
    await store.flush();
    expect(failed.map(([, retryInMs]) => retryInMs)).toEqual([1_000]);
    expect(timers.liveCount).toBe(1);
    await store.flush();
    expect(api.objects.size).toBe(1);
    store.record(view('other'), record(H1));
    api.failNext = statusError(422);
    await store.flush();
    expect(failed.at(-1)?.[1]).toBeUndefined();
    const writes = api.writes.length;
    await store.flush();
    expect(api.writes.length).toBe(writes);
  });
});

describe('KubeBaselineStore: the objects of one flush are written side by side', () => {
  it.each([
    { objects: 1, inFlight: 1 },
    { objects: 2, inFlight: 1 },
    { objects: 4, inFlight: 3 },
    { objects: FLUSH_CONCURRENCY + 1, inFlight: FLUSH_CONCURRENCY },
    { objects: 20, inFlight: FLUSH_CONCURRENCY },
  ])('$objects object(s): the first alone, then at most $inFlight at once', async (row) => {
    let inFlight = 0;
    let most = 0;
    const { api, store } = harness({
      beforeWrite: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
      },
    });
    store.consumer.replace([], '1');
    recordInNamespaces(store, row.objects);
    await store.flush();
    expect(most).toBe(row.inFlight);
    expect(api.writes.map((write) => write.method)).toEqual(Array(row.objects).fill('POST'));
    expect(api.objects.size).toBe(row.objects);
  });

  it.each([
    { refused: 'the first write', at: 0, sent: 1 },
    { refused: 'a write beside others', at: 1, sent: 1 + FLUSH_CONCURRENCY },
  ])('$refused refused: falls back once, starts no other write', async (row) => {
    const { api, store, failed, fellBack } = harness({
      beforeWrite: async () => {
        if (api.writes.length === row.at) api.failNext = statusError(403);
        await Promise.resolve();
      },
    });
    store.consumer.replace([], '1');
    recordInNamespaces(store, FLUSH_CONCURRENCY + 3);
    await store.flush();
    expect(fellBack).toEqual(['write-forbidden']);
    expect(failed.map(([, retryInMs]) => retryInMs)).toEqual([undefined]);
    expect(api.writes, 'the writes out before the 403, and no other').toHaveLength(row.sent);
    expect(store.inUse()).toBe(false);
  });
});

describe('KubeBaselineStore: one flush at a time', () => {
  it('flushes asked for while one is out each wait for every write before them', async () => {
    let inFlight = 0;
    let most = 0;
    const release: (() => void)[] = [];
    const { api, store } = harness({
      beforeWrite: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise<void>((resolve) => release.push(resolve));
        inFlight -= 1;
      },
    });
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    const first = store.flush();
    await vi.waitFor(() => {
      expect(release).toHaveLength(1);
    });
    store.record(view('b'), record(H1));
    // The shutdown's flush and the first pass's, both waiting on the one out.
    const writesOutWhenDone: number[] = [];
    const second = store.flush().then(() => writesOutWhenDone.push(inFlight));
    const third = store.flush().then(() => writesOutWhenDone.push(inFlight));
    for (let round = 0; round < 10 && (release.length > 0 || inFlight > 0); round += 1) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([first, second, third]);
    expect(writesOutWhenDone, 'writes still out when each flush returned').toEqual([0, 0]);
    expect(most, 'writes of one store object out at once').toBe(1);
    expect(api.writes.map((write) => write.method)).toEqual(['POST', 'PATCH']);
  });
});

describe('BaselineRecords: placement and bounds', () => {
  it('a namespace of 10,000 workloads fits in a few objects, each under the bound', () => {
    const records = new BaselineRecords();
    // 10 sources per workload: about 620 bytes per record.
    const map = `{${Array.from({ length: 10 }, (_, i) => `"configmap/source-${String(i)}":"${H1}"`).join(',')}}`;
    const refusals = Array.from({ length: 10_000 }, (_, index) =>
      records.set(view(`workload-${String(index)}`, `uid-${String(index)}`), map),
    ).filter((refusal) => refusal !== undefined);
    expect(refusals).toEqual([]);
    const batches = records.takeBatches();
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.length).toBeLessThanOrEqual(16);
    for (const batch of batches) {
      const bytes = JSON.stringify(Object.fromEntries(batch.data)).length;
      expect(bytes).toBeLessThanOrEqual(OBJECT_MAX_BYTES);
    }
    expect(batches.reduce((sum, batch) => sum + batch.data.size, 0)).toBe(10_000);
  });

  it('namespaces never share an object', () => {
    const records = new BaselineRecords();
    records.set(view('api', 'u1', 'team-a'), record(H1));
    records.set(view('api', 'u2', 'team-b'), record(H1));
    const objects = records.takeBatches().map((batch) => [batch.object, batch.namespace]);
    expect(objects).toEqual([
      [storeObjectName('team-a', 0), 'team-a'],
      [storeObjectName('team-b', 0), 'team-b'],
    ]);
  });

  it('a record that outgrows its full object moves, and the old key is removed', () => {
    const records = new BaselineRecords();
    const first = storeObjectName('team-a', 0);
    const filler = 'f'.repeat(OBJECT_MAX_BYTES - 200);
    records.upsert({
      name: first,
      namespace: 'team-a',
      resourceVersion: '7',
      data: new Map([
        ['filler', filler],
        [recordKey(view('api')), record(H1)],
      ]),
    });
    records.set(view('api'), `${record(H1).slice(0, -1)},"secret/big":"${'a'.repeat(300)}"}`);
    const batches = records.takeBatches();
    expect(
      batches.map((batch) => [batch.object, [...batch.data.values()].map((v) => v === null)]),
    ).toEqual([
      [storeObjectName('team-a', 1), [false]],
      [first, [true]],
    ]);
  });

  it('every object of a namespace full: a new record is refused, one in place still updates', () => {
    const records = new BaselineRecords();
    // Each object keeps less room than one record takes; object 5 holds `api`'s record besides.
    const filler = 'f'.repeat(OBJECT_MAX_BYTES - 100);
    for (let index = 0; index < OBJECTS_PER_NAMESPACE; index += 1) {
      const data = new Map([[`filler-${String(index)}`, filler]]);
      if (index === 5) {
        data.set(`filler-${String(index)}`, filler.slice(92));
        data.set(recordKey(view('api')), record(H1));
      }
      records.upsert({
        name: storeObjectName('team-a', index),
        namespace: 'team-a',
        resourceVersion: String(index + 1),
        data,
      });
    }
    const entry = JSON.stringify(recordKey(view('web'))).length + JSON.stringify(record(H1)).length;
    expect(records.set(view('web'), record(H1))).toEqual({
      dataKey: recordKey(view('web')),
      namespace: 'team-a',
      bytes: entry + 2,
    });
    expect(records.recordOf(view('web'))).toBeUndefined();
    expect(records.set(view('api'), record(H2))).toBeUndefined();
    expect(records.takeBatches()).toEqual([
      {
        object: storeObjectName('team-a', 5),
        namespace: 'team-a',
        data: new Map([[recordKey(view('api')), record(H2)]]),
      },
    ]);
    // Another namespace has objects of its own.
    expect(records.set(view('web', 'uid-web', 'team-b'), record(H1))).toBeUndefined();
  });
});

describe('records and objects kreload did not write (docs/adr/0046)', () => {
  const KEY = recordKey(view('api'));
  const OWN = storeObjectName('team-a', 0);
  /** An object as served: `writers` maps each data key to the manager that wrote it last. */
  function served(
    name: string,
    annotated: string | undefined,
    data: Record<string, string>,
    writers: Record<string, string> | undefined,
  ): JsonObject {
    const managers = new Map<string, JsonObject>();
    for (const [key, manager] of Object.entries(writers ?? {})) {
      managers.set(manager, { ...managers.get(manager), [`f:${key}`]: {} });
    }
    return {
      metadata: {
        name,
        namespace: HOME,
        resourceVersion: '5',
        labels: { ...BASELINE_STORE_LABELS },
        ...(annotated !== undefined && {
          annotations: { [BASELINE_NAMESPACE_ANNOTATION]: annotated },
        }),
        ...(writers !== undefined && {
          managedFields: [...managers].map(([manager, fields]) => ({
            manager,
            operation: 'Update',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': fields },
          })),
        }),
      },
      data,
    };
  }

  it.each([
    {
      case: 'kreload wrote it',
      object: served(OWN, 'team-a', { [KEY]: record(H1) }, { [KEY]: 'kreload' }),
      read: record(H1),
      problems: [],
    },
    {
      case: 'no managedFields at all (nothing to tell by)',
      object: served(OWN, 'team-a', { [KEY]: record(H1) }, undefined),
      read: record(H1),
      problems: [],
    },
    {
      case: 'kubectl edit wrote it last',
      object: served(OWN, 'team-a', { [KEY]: record(H1) }, { [KEY]: 'kubectl-edit' }),
      read: undefined,
      problems: [{ reason: 'foreign-writer', object: OWN, dataKey: KEY, writer: 'kubectl-edit' }],
    },
    {
      case: 'no manager owns it (managedFields stripped to one entry)',
      object: served(OWN, 'team-a', { [KEY]: record(H1), other: record(H2) }, { other: 'x' }),
      read: undefined,
      problems: [
        { reason: 'foreign-writer', object: OWN, dataKey: KEY, writer: '(no manager)' },
        { reason: 'foreign-writer', object: OWN, dataKey: 'other', writer: 'x' },
      ],
    },
    {
      case: 'malformed, written by kreload',
      object: served(OWN, 'team-a', { [KEY]: '{"configmap/app":' }, { [KEY]: 'kreload' }),
      read: '{"configmap/app":',
      problems: [{ reason: 'malformed', object: OWN, dataKey: KEY }],
    },
    {
      case: "another namespace's object annotated as team-a's",
      object: served(storeObjectName('team-b', 0), 'team-a', { [KEY]: record(H1) }, undefined),
      read: undefined,
      problems: [{ reason: 'foreign-object', object: storeObjectName('team-b', 0), records: 1 }],
    },
    {
      case: 'an object of any other name',
      object: served('kreload-baselines-copy', 'team-a', { [KEY]: record(H1) }, undefined),
      read: undefined,
      problems: [{ reason: 'foreign-object', object: 'kreload-baselines-copy', records: 1 }],
    },
    {
      case: 'an index past the last object',
      object: served(storeObjectName('team-a', 64), 'team-a', { [KEY]: record(H1) }, undefined),
      read: undefined,
      problems: [{ reason: 'foreign-object', object: storeObjectName('team-a', 64), records: 1 }],
    },
  ])('$case', ({ object, read, problems }) => {
    const reported: StoreProblem[] = [];
    const records = new BaselineRecords();
    const projected = projectStoreObject(object);
    reported.push(...records.replace([projected]).problems);
    expect(records.recordOf(view('api'))).toBe(read);
    expect(reported).toEqual(problems);
    reported.push(...records.upsert({ ...projected, resourceVersion: '6' }));
    expect(reported, 'reported once while it stays as it is').toEqual(problems);
    for (const problem of reported) {
      expect(storeProblemMessage(problem), 'never the value').not.toMatch(
        /[0-9a-f]{40}|configmap/u,
      );
    }
  });

  it('a record goes to its own object, never to one it does not read', async () => {
    const { api, store } = harness();
    const taken = served(OWN, 'team-b', { x: record(H1) }, undefined);
    api.objects.set(OWN, taken);
    store.consumer.replace([projectStoreObject(taken)], '5');
    store.record(view('api'), record(H1));
    await store.flush();
    expect(api.writes.map((write) => [write.method, (write.body as JsonObject).metadata])).toEqual([
      [
        'POST',
        expect.objectContaining({ name: storeObjectName('team-a', 1) }) as unknown as JsonObject,
      ],
    ]);
  });

  it('a record edited by someone else is read again once kreload writes it back', () => {
    const records = new BaselineRecords();
    records.replace([
      projectStoreObject(served(OWN, 'team-a', { [KEY]: record(H2) }, { [KEY]: 'kubectl-edit' })),
    ]);
    expect(records.recordOf(view('api'))).toBeUndefined();
    expect(records.set(view('api'), record(H1))).toBeUndefined();
    const [batch] = records.takeBatches();
    expect(batch?.object, 'in place').toBe(OWN);
    records.written(batch!, '6');
    const back = served(OWN, 'team-a', { [KEY]: record(H1) }, { [KEY]: 'kreload' });
    expect(records.upsert({ ...projectStoreObject(back), resourceVersion: '6' })).toEqual([]);
    expect(records.localCount).toBe(0);
    expect(records.recordOf(view('api'))).toBe(record(H1));
  });
});

describe('a store write applied on the server whose response is lost', () => {
  const lostResponse = () => new ApiError('socket hang up', { status: undefined, retryable: true });
  const KEY_A = recordKey(view('a'));
  const KEY_B = recordKey(view('b'));
  const OWN = `${COLLECTION}/${storeObjectName('team-a', 0)}`;

  it('a lost POST: the retry meets 409 and patches the same records; nothing lost', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    api.loseNextResponse = lostResponse();
    await store.flush();
    store.record(view('b'), record(H2));
    await store.flush();
    expect(api.writes.map((write) => [write.method, write.path, write.body])).toEqual([
      ['POST', COLLECTION, expect.objectContaining({ data: { [KEY_A]: record(H1) } })],
      [
        'POST',
        COLLECTION,
        expect.objectContaining({ data: { [KEY_A]: record(H1), [KEY_B]: record(H2) } }),
      ],
      ['PATCH', OWN, { data: { [KEY_A]: record(H1), [KEY_B]: record(H2) } }],
    ]);
    for (const object of api.observed()) store.consumer.upsert(object, false);
    expect([store.recordOf(view('a')), store.recordOf(view('b'))]).toEqual([
      record(H1),
      record(H2),
    ]);
    expect(store.recordCount).toBe(2);
  });

  it('a lost POST the watch shows before the retry: the retry is a PATCH, no POST', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    api.loseNextResponse = lostResponse();
    await store.flush();
    for (const object of api.observed()) store.consumer.upsert(object, true);
    await store.flush();
    expect(api.writes.map((write) => [write.method, write.path])).toEqual([
      ['POST', COLLECTION],
      ['PATCH', OWN],
    ]);
  });

  it('a lost PATCH (a removal and a record): the same merge patch again, idempotent', async () => {
    const { api, store } = harness();
    store.consumer.replace([], '1');
    store.record(view('a'), record(H1));
    await store.flush();
    for (const object of api.observed()) store.consumer.upsert(object, true);
    store.record(view('a'), null);
    store.record(view('b'), record(H2));
    api.loseNextResponse = lostResponse();
    await store.flush();
    await store.flush();
    const patch = { data: { [KEY_A]: null, [KEY_B]: record(H2) } };
    expect(api.writes.slice(1).map((write) => [write.method, write.path, write.body])).toEqual([
      ['PATCH', OWN, patch],
      ['PATCH', OWN, patch],
    ]);
    for (const object of api.observed()) store.consumer.upsert(object, false);
    expect([store.recordOf(view('a')), store.recordOf(view('b'))]).toEqual([undefined, record(H2)]);
    expect(store.recordCount).toBe(1);
  });
});
