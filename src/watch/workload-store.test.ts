import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import {
  BASELINE,
  DEFAULT_ANNOTATION_KEYS as K,
  type WorkloadKey,
  type WorkloadView,
} from '../core/types.ts';
import type { RolloutStatusView } from '../rollout/rollout-status.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { aContainer, aVolume, aWorkload, configMapVolume, csiVolume } from '../testing/builders.ts';
import {
  isRelevantChange,
  trackingChanged,
  WorkloadStore,
  workloadSink,
  type WorkloadStoreEvent,
} from './workload-store.ts';

const HASH = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';

function setup() {
  let now = 1_000;
  const events: WorkloadStoreEvent[] = [];
  const writeBasis = new Map<WorkloadKey, number>();
  const store = new WorkloadStore({
    clock: { now: () => now },
    timers: SYSTEM_TIMERS,
    keys: K,
    notify: (event) => events.push(event),
    writeBasis: (key) => writeBasis.get(key),
  });
  return {
    store,
    events,
    writeBasis,
    summary: () => events.map((event) => `${event.kind} ${event.key}`),
    at: (t: number) => {
      now = t;
    },
  };
}

const api = aWorkload('Deployment', 'ns', 'api')
  .withAnnotation(K.auto, 'true')
  .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
const worker = aWorkload('StatefulSet', 'ns', 'worker')
  .withContainer(aContainer('w').withVolumeMount('cfg'))
  .withVolume(aVolume('cfg').withConfigMap('app-config').withSecret('db'))
  .withInitContainer(aContainer('init').withEnvFrom('secret', 'init-secret'));
const listed = aWorkload('Deployment', 'ns', 'listed')
  .withTemplateAnnotation(K.configmapReload, 'app-.*')
  .withContainer(aContainer('app'));
const elsewhere = aWorkload('Deployment', 'other', 'api').withContainer(
  aContainer('app').withEnvFrom('configmap', 'app-config'),
);

const always = (): boolean => true;
const never = (): boolean => false;

describe('WorkloadStore index (§9.2 item 5)', () => {
  it('(a) maps each referenced source key to its workloads, per namespace', () => {
    const { store } = setup();
    store.replace('Deployment', [api.build(), listed.build(), elsewhere.build()]);
    store.replace('StatefulSet', [worker.build()]);
    expect(store.referencing('ns', 'configmap/app-config')).toEqual([
      'Deployment/ns/api',
      'StatefulSet/ns/worker',
    ]);
    expect(store.referencing('ns', 'secret/db')).toEqual(['StatefulSet/ns/worker']);
    expect(store.referencing('ns', 'secret/init-secret')).toEqual(['StatefulSet/ns/worker']);
    expect(store.referencing('other', 'configmap/app-config')).toEqual(['Deployment/other/api']);
    expect(store.referencing('nowhere', 'configmap/app-config')).toEqual([]);
  });

  it('fans out to (a)[K] ∪ the (b) workloads whose list matches', () => {
    const { store } = setup();
    store.replace('Deployment', [api.build(), listed.build()]);
    store.replace('StatefulSet', [worker.build()]);
    const asked: string[] = [];
    const matcher = (view: WorkloadView): boolean => {
      asked.push(view.ref.name);
      return true;
    };
    expect(store.fanOut('ns', 'CONFIGMAP', 'app-config', matcher)).toEqual([
      'Deployment/ns/api',
      'StatefulSet/ns/worker',
      'Deployment/ns/listed',
    ]);
    // asked only about the workload that carries a ConfigMap list and is not in (a)
    expect(asked).toEqual(['listed']);
    expect(store.fanOut('ns', 'CONFIGMAP', 'app-config', never)).toEqual([
      'Deployment/ns/api',
      'StatefulSet/ns/worker',
    ]);
    expect(store.fanOut('ns', 'SECRET', 'app-config', always)).toEqual([]);
    expect(store.fanOut('ns', 'CONFIGMAP', 'unrelated', always)).toEqual(['Deployment/ns/listed']);
    expect(store.fanOut('other', 'CONFIGMAP', 'unrelated', always)).toEqual([]);
  });

  it('indexes CSI references and SecretProviderClass lists', () => {
    const { store } = setup();
    const csi = aWorkload('DaemonSet', 'ns', 'csi')
      .withVolume(csiVolume('secrets', 'vault'))
      .withAnnotation(K.secretProviderClassReload, 'other-spc');
    store.replace('DaemonSet', [csi.build()]);
    expect(store.fanOut('ns', 'SECRETPROVIDERCLASS', 'vault', never)).toEqual(['DaemonSet/ns/csi']);
    expect(store.fanOut('ns', 'SECRETPROVIDERCLASS', 'other-spc', always)).toEqual([
      'DaemonSet/ns/csi',
    ]);
  });

  it('follows updates and removals', () => {
    const { store } = setup();
    store.replace('Deployment', [api.build(), listed.build()]);
    store.upsert(
      api
        .withPodSpec(
          aWorkload('Deployment', 'ns', 'x').withVolume(configMapVolume('v', 'new')).build()
            .podSpec,
        )
        .build(),
    );
    expect(store.referencing('ns', 'configmap/app-config')).toEqual([]);
    expect(store.referencing('ns', 'configmap/new')).toEqual(['Deployment/ns/api']);
    store.upsert(listed.withTemplateAnnotation(K.configmapReload, ' , ').build());
    expect(store.fanOut('ns', 'CONFIGMAP', 'app-x', always)).toEqual([]);
    store.remove(api.build().ref);
    expect(store.referencing('ns', 'configmap/new')).toEqual([]);
    expect(store.keysInNamespace('ns')).toEqual(['Deployment/ns/listed']);
    store.remove(listed.build().ref);
    expect(store.keysInNamespace('ns')).toEqual([]);
    expect(store.size).toBe(0);
  });
});

describe('WorkloadStore events and relevantSince', () => {
  it('seeds each kind without events; relevantSince is the time of the list', () => {
    const { store, events, at } = setup();
    at(5_000);
    store.replace('Deployment', [api.build()]);
    expect(events).toEqual([]);
    expect(store.isSynced('Deployment')).toBe(true);
    expect(store.isSynced('StatefulSet')).toBe(false);
    expect(store.entry('Deployment/ns/api')).toEqual({ view: api.build(), relevantSince: 5_000 });
    expect(store.get('Deployment/ns/api')).toEqual(api.build());
    // a kind not yet listed stays silent
    store.upsert(worker.build());
    expect(events).toEqual([]);
    expect(store.keys()).toEqual(['Deployment/ns/api', 'StatefulSet/ns/worker']);
  });

  it.each([
    [
      'resourceVersion and generation only',
      api.withResourceVersion('9').withGeneration(4),
      false,
      false,
    ],
    [
      'kreload env value',
      aWorkload('Deployment', 'ns', 'api')
        .withAnnotation(K.auto, 'true')
        .withContainer(
          aContainer('app')
            .withEnvFrom('configmap', 'app-config')
            .withStakaterEnv('STAKATER_APP_CONFIG_CONFIGMAP', HASH),
        ),
      true,
      false,
    ],
    ['kreload baseline', api.withAnnotation(BASELINE, `{"configmap/a":"${HASH}"}`), true, false],
    ['opt-in annotation', api.withAnnotation(K.search, 'true'), true, true],
    ['PT opt-in annotation', api.withTemplateAnnotation(K.secretReload, 'db'), true, true],
    ['PT exclude (never read)', api.withTemplateAnnotation(K.configmapExclude, 'x'), true, false],
    ['paused', api.paused(), true, false],
  ] as const)('%s', (_name, next, changed, moves) => {
    const { store, events, at } = setup();
    store.replace('Deployment', [api.build()]);
    at(2_000);
    store.upsert(next.build());
    expect(events.map((event) => event.kind)).toEqual(changed ? ['changed'] : []);
    expect(store.entry('Deployment/ns/api')?.relevantSince).toBe(moves ? 2_000 : 1_000);
  });

  it('a changed event carries the previous view', () => {
    const { store, events } = setup();
    store.replace('Deployment', [api.build()]);
    const next = api.withAnnotation(K.search, 'true').build();
    store.upsert(next);
    expect(events).toEqual([
      { kind: 'changed', key: 'Deployment/ns/api', view: next, prev: api.build() },
    ]);
  });

  it('adds, removes and recreations after sync', () => {
    const { store, summary, at } = setup();
    store.replace('Deployment', [api.build()]);
    at(3_000);
    store.upsert(listed.build());
    store.upsert(api.withUid('new-uid').build());
    store.remove(listed.build().ref);
    store.remove(listed.build().ref);
    expect(summary()).toEqual([
      'added Deployment/ns/listed',
      'removed Deployment/ns/api',
      'added Deployment/ns/api',
      'removed Deployment/ns/listed',
    ]);
    expect(store.entry('Deployment/ns/api')?.relevantSince).toBe(3_000);
  });

  it('a relist is diffed by UID within its kind', () => {
    const { store, summary } = setup();
    store.replace('Deployment', [api.build(), listed.build()]);
    store.replace('StatefulSet', [worker.build()]);
    store.replace('Deployment', [
      api.withResourceVersion('2').build(),
      listed.withUid('other').build(),
      elsewhere.build(),
    ]);
    expect(summary()).toEqual([
      'removed Deployment/ns/listed',
      'added Deployment/ns/listed',
      'added Deployment/other/api',
    ]);
    expect(store.get('StatefulSet/ns/worker')).toBeDefined();
    store.replace('Deployment', []);
    expect(store.keys()).toEqual(['StatefulSet/ns/worker']);
  });

  it('a namespace that joins late is seeded without events (ADR 0021)', () => {
    const { store, events, at } = setup();
    store.replace('Deployment', [api.build()]);
    at(9_000);
    workloadSink(store, 'Deployment').seedNamespace?.('other', [elsewhere.build()]);
    expect(events).toEqual([]);
    expect(store.entry('Deployment/other/api')?.relevantSince).toBe(9_000);
    expect(store.entry('Deployment/ns/api')?.relevantSince).toBe(1_000);
    expect(store.referencing('other', 'configmap/app-config')).toEqual(['Deployment/other/api']);
    store.remove(elsewhere.build().ref);
    expect(events.map((event) => `${event.kind} ${event.key}`)).toEqual([
      'removed Deployment/other/api',
    ]);
  });

  it('workloadSink forwards list-watch operations for one kind', () => {
    const { store, summary } = setup();
    const sink = workloadSink(store, 'Deployment');
    sink.replace([api.build()]);
    sink.upsert(listed.build());
    sink.remove(api.build());
    expect(summary()).toEqual(['added Deployment/ns/listed', 'removed Deployment/ns/api']);
    expect(store.isSynced('Deployment')).toBe(true);
  });
});

describe('WorkloadStore updates that change nothing reconciliation reads', () => {
  const rolling: RolloutStatusView = {
    model: 'replica-set',
    observedGeneration: 4,
    desired: 1,
    replicas: 2,
    updated: 1,
    available: 1,
    unavailable: 1,
    progressing: { status: 'True', reason: 'ReplicaSetUpdated' },
  };
  const before = listed.withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
  const labelled = (view: WorkloadView, labels: Record<string, string>): WorkloadView => ({
    ...view,
    labels,
  });
  const teamA = (view: WorkloadView): WorkloadView => labelled(view, { team: 'a' });

  // [name, next view, relevant change, relevantSince moves, membership moves, index after]
  const rows: readonly (readonly [
    string,
    WorkloadView,
    boolean,
    boolean,
    boolean,
    readonly string[],
  ])[] = [
    [
      'a status update',
      { ...teamA(before.withResourceVersion('9').build()), rolloutStatus: rolling },
      false,
      false,
      false,
      ['configmap/app-config'],
    ],
    [
      'a new generation with the same template',
      teamA(before.withResourceVersion('10').withGeneration(7).build()),
      false,
      false,
      false,
      ['configmap/app-config'],
    ],
    [
      'a new reference',
      teamA(before.withContainer(aContainer('side').withEnvFrom('secret', 'db')).build()),
      true,
      true,
      false,
      ['configmap/app-config', 'secret/db'],
    ],
    ['a dropped reference', teamA(listed.build()), true, true, false, []],
    [
      'new labels',
      labelled(before.withResourceVersion('11').build(), { team: 'b' }),
      true,
      false,
      true,
      ['configmap/app-config'],
    ],
  ];

  it.each(rows)('%s', (_name, next, relevant, moves, relabelled, sources) => {
    const { store, events, at } = setup();
    store.replace('Deployment', [teamA(before.build())]);
    const key = 'Deployment/ns/listed' as WorkloadKey;
    const membership = store.membershipVersion('ns');
    const updates = vi.fn();
    store.onUpdate(key, updates);
    at(2_000);
    store.upsert(next);

    expect(store.get(key)).toBe(next);
    expect(updates).toHaveBeenCalledTimes(1);
    expect(events.map((event) => event.kind)).toEqual(relevant ? ['changed'] : []);
    expect(store.entry(key)?.relevantSince).toBe(moves ? 2_000 : 1_000);
    expect(store.membershipVersion('ns') !== membership).toBe(relabelled);
    for (const source of ['configmap/app-config', 'secret/db'] as const) {
      expect(store.referencing('ns', source)).toEqual(sources.includes(source) ? [key] : []);
    }
    // The reload list is on the template annotations of every row: still indexed as (b).
    expect(store.fanOut('ns', 'CONFIGMAP', 'app-x', always)).toEqual([key]);
    expect(store.keysInNamespace('ns')).toEqual([key]);
  });

  it('compares references with those of the view stored last, status updates included', () => {
    const { store, at } = setup();
    const key = 'Deployment/ns/listed' as WorkloadKey;
    const withDb = before.withContainer(aContainer('side').withEnvFrom('secret', 'db'));
    // [time, next view, relevantSince after]
    const steps: readonly (readonly [number, WorkloadView, number])[] = [
      [2_000, withDb.build(), 2_000],
      [3_000, { ...withDb.withResourceVersion('12').build(), rolloutStatus: rolling }, 2_000],
      [4_000, withDb.withAnnotation(BASELINE, `{"secret/db":"${HASH}"}`).build(), 2_000],
      [5_000, before.build(), 5_000],
    ];
    store.replace('Deployment', [before.build()]);
    for (const [time, next, since] of steps) {
      at(time);
      store.upsert(next);
      expect(store.entry(key)?.relevantSince).toBe(since);
    }
    expect(store.referencing('ns', 'secret/db')).toEqual([]);
  });
});

describe("WorkloadStore as the reconciler's WorkloadLookup", () => {
  it("relevantSince moves forward to kreload's last write of the workload (docs/adr/0014)", () => {
    const { store, writeBasis, at } = setup();
    store.replace('Deployment', [api.build(), listed.build()]);
    writeBasis.set('Deployment/ns/api', 4_000);
    writeBasis.set('Deployment/ns/listed', 500); // before relevantSince: no effect
    writeBasis.set('Deployment/ns/gone', 4_000);
    expect(store.relevantSince('Deployment/ns/api')).toBe(4_000);
    expect(store.relevantSince('Deployment/ns/listed')).toBe(1_000);
    expect(store.relevantSince('Deployment/ns/gone')).toBeUndefined();
    at(6_000);
    store.upsert(api.withAnnotation(K.auto, 'false').build()); // opt-in changed after the write
    expect(store.relevantSince('Deployment/ns/api')).toBe(6_000);
  });

  it('finds the workloads of a kind a controller owns, only once the kind is synced', () => {
    const { store } = setup();
    const job = (name: string, uid: string) =>
      aWorkload('Job', 'ns', name)
        .withController({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid })
        .build();
    expect(store.controlledBy('Job', 'ns', 'cj-1')).toBeUndefined();
    store.replace('Job', [job('a', 'cj-1'), job('b', 'cj-2')]);
    store.replace('Deployment', [api.build()]);
    expect(store.controlledBy('Job', 'ns', 'cj-1')?.map((view) => view.ref.name)).toEqual(['a']);
    expect(store.controlledBy('Job', 'other', 'cj-1')).toEqual([]);
    expect(store.controlledBy('CronJob', 'ns', 'cj-1')).toBeUndefined();
  });
});

describe('WorkloadStore.newerThan (docs/adr/0015)', () => {
  const KEY = workloadKey(api.build().ref);

  function waiting() {
    const { store } = setup();
    store.replace('Deployment', [api.withResourceVersion('10').build()]);
    const outcome: { value?: WorkloadView | undefined; settled: boolean } = { settled: false };
    const wait = (resourceVersion: string, timeoutMs = 1_000): void => {
      void store.newerThan(KEY, resourceVersion, timeoutMs).then((value) => {
        outcome.value = value;
        outcome.settled = true;
      });
    };
    return { store, outcome, wait };
  }

  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves at once with the cached view when it already differs', async () => {
    const { outcome, wait } = waiting();
    wait('9');
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toMatchObject({ settled: true, value: { resourceVersion: '10' } });
  });

  it('waits for the watch to deliver another version', async () => {
    const { store, outcome, wait } = waiting();
    wait('10');
    await vi.advanceTimersByTimeAsync(500);
    expect(outcome.settled).toBe(false);
    store.upsert(api.withResourceVersion('10').build()); // the same version again: keeps waiting
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome.settled).toBe(false);
    store.upsert(api.withResourceVersion('11').build());
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toMatchObject({ settled: true, value: { resourceVersion: '11' } });
  });

  it('gives up after the timeout, so the caller GETs', async () => {
    const { outcome, wait } = waiting();
    wait('10', 1_000);
    await vi.advanceTimersByTimeAsync(999);
    expect(outcome.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toEqual({ settled: true, value: undefined });
  });

  it('resolves undefined when the workload leaves the cache', async () => {
    const { store, outcome, wait } = waiting();
    wait('10');
    store.remove(api.build().ref);
    await vi.advanceTimersByTimeAsync(0);
    expect(outcome).toEqual({ settled: true, value: undefined });
  });
});

describe('trackingChanged and isRelevantChange', () => {
  const base = api.build();
  const rows: readonly [string, WorkloadView, boolean, boolean][] = [
    ['identical', base, false, false],
    [
      'reordered references',
      api.withContainer(aContainer('b').withEnvFrom('configmap', 'app-config')).build(),
      false,
      true,
    ],
    ['new reference', api.withVolume(configMapVolume('v', 'other')).build(), true, true],
    ['exclude on W', api.withAnnotation(K.secretExclude, 'db').build(), true, true],
    ['match on W (no effect)', api.withAnnotation(K.match, 'true').build(), false, true],
    ['status-like fields', { ...base, resourceVersion: '77', generation: 12 }, false, false],
    [
      'a step of a rollout',
      {
        ...base,
        rolloutStatus: {
          model: 'daemon-set',
          observedGeneration: 12,
          desired: 3,
          updated: 1,
          available: 2,
          unavailable: 1,
          onDelete: false,
        },
      },
      false,
      false,
    ],
  ];
  it.each(rows)('%s', (_name, next, tracking, relevant) => {
    expect(trackingChanged(base, next, K)).toBe(tracking);
    expect(isRelevantChange(base, next)).toBe(relevant);
  });

  it('counts a relevant field that one side lacks as a change, both ways', () => {
    const withExtra = { ...base, extra: 'x' } as WorkloadView;
    expect(isRelevantChange(base, withExtra)).toBe(true);
    expect(isRelevantChange(withExtra, base)).toBe(true);
    const withIrrelevantOnly = { ...base, resourceVersion: undefined } as unknown as WorkloadView;
    expect(isRelevantChange(base, withIrrelevantOnly)).toBe(false);
  });
});
