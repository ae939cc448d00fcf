/**
 * The baseline store falling back to baselines on the workloads after a refused write (docs/adr/0046,
 * "RBAC") while records it has read still matter: a change made while kreload was down must still
 * roll each of their workloads exactly once. kreload's real pipeline on the in-memory server; the
 * store's ConfigMaps may be listed, but some or all of its writes are refused (403).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { recordKey, storeObjectName } from '../kube/baseline-records.ts';
import { FLUSH_CONCURRENCY } from '../kube/baseline-store.ts';
import type { KubeRequest } from '../kube/transport.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import {
  annotationsOf,
  InMemoryCluster,
  isRoll,
  startPipeline,
} from '../testing/in-memory-cluster.ts';
import {
  aPipelineBaselineStore,
  InMemoryConfigMaps,
  statusError,
} from '../testing/in-memory-config-maps.ts';

const HOME = 'kreload-system';
const BEFORE = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const NOW = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const OTHER = '5f2b0a6c3d1e4f7a8b9c0d1e2f3a4b5c6d7e8f90';
const SYNC_DELAY_MS = 1_000;

type Recorded = 'never rolled' | 'rolled by Reloader for another source';

/** A Deployment on `app-config`; rolled by Reloader, it also holds A of `other-config`. */
function deployment(namespace: string, name: string, recorded: Recorded): WorkloadView {
  const app = aContainer('app').withEnvFrom('configmap', 'app-config');
  return aWorkload('Deployment', namespace, name)
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(
      recorded === 'never rolled'
        ? app
        : app
            .withEnvFrom('configmap', 'other-config')
            .withStakaterEnv('STAKATER_OTHER_CONFIG_CONFIGMAP', OTHER),
    )
    .build();
}

/** `request` is the `index`-th store write (from 0): whether the Role refuses it. */
type Refuses = (request: KubeRequest, index: number) => boolean;

interface FallbackCase {
  readonly name: string;
  readonly namespaces: readonly string[];
  readonly recorded: Recorded;
  readonly refuses: Refuses;
}

const CASES: readonly FallbackCase[] = [
  {
    name: 'every store write refused (a Role without create and patch)',
    namespaces: ['team-a'],
    recorded: 'never rolled',
    refuses: () => true,
  },
  {
    name: 'every store write refused, the workload rolled by Reloader for another source',
    namespaces: ['team-a'],
    recorded: 'rolled by Reloader for another source',
    refuses: () => true,
  },
  {
    name: "only one namespace's store object refused",
    namespaces: ['team-a', 'team-b', 'team-c'],
    recorded: 'never rolled',
    refuses: (request) => request.path.endsWith(`/${storeObjectName('team-b', 0)}`),
  },
  {
    name: 'the second write of a flush refused, the third sent beside it',
    namespaces: ['team-a', 'team-b', 'team-c'],
    recorded: 'never rolled',
    refuses: (_request, index) => index === 1,
  },
];

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a 403 on a store write while recorded workloads wait for their roll', () => {
  it.each(CASES)('$name: each rolls once, the fresh ones get B in W', async (row) => {
    // In each namespace: `recorded`, whose record an earlier run wrote at BEFORE (app-config
    // changed to NOW while kreload was down), and `fresh`, never seen: its first-sight record
    // goes into the store write that the Role refuses.
    const recorded = row.namespaces.map((ns) => deployment(ns, 'recorded', row.recorded));
    const fresh = row.namespaces.map((ns) => deployment(ns, 'fresh', 'never rolled'));
    const all = [...recorded, ...fresh];
    const keys = all.map((view) => workloadKey(view.ref));
    const cluster = new InMemoryCluster();
    const configMaps = new InMemoryConfigMaps(HOME);
    const requests: { readonly request: KubeRequest; readonly refused: boolean }[] = [];
    const wired: { router?: { triggerAll(keys: readonly string[]): void } } = {};
    const store = aPipelineBaselineStore(
      {
        request: (request) => {
          const refused = row.refuses(request, requests.length);
          requests.push({ request, refused });
          return refused ? Promise.reject(statusError(403)) : configMaps.request(request);
        },
      },
      // As src/app/baseline-store.ts does: every workload again.
      { namespace: HOME, events: { onFellBack: () => wired.router?.triggerAll(keys) } },
    );
    store.consumer.replace(
      recorded.map((view, index) => ({
        name: storeObjectName(view.ref.namespace, 0),
        namespace: view.ref.namespace,
        resourceVersion: String(5 + index),
        data: new Map([[recordKey(view), `{"configmap/app-config":"${BEFORE}"}`]]),
      })),
      '5',
    );
    const process = startPipeline(cluster, {
      sourceTypes: ['CONFIGMAP'],
      debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
      baselines: store,
    });
    wired.router = process.router;
    process.watched.byType.CONFIGMAP?.replace(
      row.namespaces.flatMap((ns) => [
        aConfigMap(ns, 'app-config').withHash(NOW).build(),
        aConfigMap(ns, 'other-config').withHash(OTHER).build(),
      ]),
    );
    for (const view of all) cluster.api.put(view);
    process.watched.store.replace('Deployment', all);
    // The API server is briefly unavailable for the recorded workloads' rolls: they are retried
    // after the store fell back.
    for (const view of recorded) {
      cluster.failPatchesOf(workloadKey(view.ref), ...[1, 2, 3, 4].map(() => statusError(503)));
    }
    process.queue.start();
    process.router.triggerAll(keys);
    await vi.advanceTimersByTimeAsync(30_000);
    await process.queue.idle();

    expect(store.inUse()).toBe(false);
    const refused = requests.findIndex((sent) => sent.refused);
    expect(refused, 'a store write was refused').toBeGreaterThanOrEqual(0);
    // A flush writes its objects side by side: those already out when the 403 came back finish,
    // and no other starts.
    expect(
      requests.length,
      'nothing is sent to the store after the refusal but the writes already out',
    ).toBeLessThanOrEqual(refused + FLUSH_CONCURRENCY);
    /** The PATCHes the server applied to the workload (refused ones excluded). */
    const applied = (view: WorkloadView) =>
      cluster.api.writes.flatMap((write) =>
        write.verb === 'patch' && write.key === workloadKey(view.ref) ? [write.patch.body] : [],
      );
    for (const view of recorded) {
      expect(
        applied(view).map((body) => (body.spec as { template?: unknown } | undefined)?.template),
        `${view.ref.namespace}: the change made while kreload was down rolls it once, alone`,
      ).toEqual([expect.anything()]);
    }
    for (const view of fresh) {
      const sent = cluster.sent.filter((write) => write.key === workloadKey(view.ref));
      expect(sent.filter(isRoll)).toEqual([]);
      expect(
        sent.map((write) => (write.body.metadata as { annotations?: object }).annotations),
        `${view.ref.namespace}: its baseline goes to the workload, once`,
      ).toEqual([{ [BASELINE]: `{"configmap/app-config":"${NOW}"}` }]);
    }
  });
});

type Restarted = 'the Role granted since' | 'writes still refused';

describe('a workload whose baseline was copied from its record after the fall-back', () => {
  it.each<Restarted>(['the Role granted since', 'writes still refused'])(
    'rolls once for the next change, nothing after; kill -9 and restart (%s) writes it nothing',
    async (restarted) => {
      const ns = 'team-a';
      // Recorded at NOW by an earlier run, nothing changed while kreload was down.
      const recorded = deployment(ns, 'recorded', 'never rolled');
      const fresh = deployment(ns, 'fresh', 'never rolled');
      const keys = [recorded, fresh].map((view) => workloadKey(view.ref));
      const object = storeObjectName(ns, 0);
      const configMaps = new InMemoryConfigMaps(HOME);
      configMaps.objects.set(object, {
        metadata: {
          name: object,
          namespace: HOME,
          resourceVersion: '5',
          annotations: { 'kreload.io/baseline-namespace': ns },
        },
        data: { [recordKey(recorded)]: `{"configmap/app-config":"${NOW}"}` },
      });
      const cluster = new InMemoryCluster();
      for (const view of [recorded, fresh]) cluster.api.put(view);
      /** One kreload process listing the server as it is now; its store writes may be refused. */
      const start = (refused: boolean) => {
        const wired: { router?: { triggerAll(keys: readonly string[]): void } } = {};
        const store = aPipelineBaselineStore(
          {
            request: (request) =>
              refused ? Promise.reject(statusError(403)) : configMaps.request(request),
          },
          { namespace: HOME, events: { onFellBack: () => wired.router?.triggerAll(keys) } },
        );
        store.consumer.replace(configMaps.observed(), '5');
        const process = startPipeline(cluster, {
          sourceTypes: ['CONFIGMAP'],
          debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
          baselines: store,
        });
        wired.router = process.router;
        process.watched.store.replace(
          'Deployment',
          [recorded, fresh].flatMap((view) => cluster.api.server(view.ref) ?? []),
        );
        process.queue.start();
        return process;
      };
      const sentTo = (from: number) =>
        cluster.sent
          .slice(from)
          .filter((write) => write.key === keys[0])
          .map((write) => ({ roll: isRoll(write), annotations: annotationsOf(write) }));

      const first = start(true);
      first.watched.byType.CONFIGMAP?.replace([aConfigMap(ns, 'app-config').withHash(NOW).build()]);
      first.router.triggerAll(keys);
      await vi.advanceTimersByTimeAsync(10_000);
      await first.queue.idle();
      expect(sentTo(0), 'its B copied from the record, no roll').toEqual([
        { roll: false, annotations: { [BASELINE]: `{"configmap/app-config":"${NOW}"}` } },
      ]);

      const copied = cluster.sent.length;
      first.watched.byType.CONFIGMAP?.upsert(aConfigMap(ns, 'app-config').withHash(OTHER).build());
      await vi.advanceTimersByTimeAsync(30_000);
      await first.queue.idle();
      // W keeps `{}`: with no B of its own, the record would be read as B again and copied back,
      // a write after the roll (which stalls a roll by eviction, docs/evict-strategy.md).
      expect(sentTo(copied), 'one roll, which keeps an empty B, and nothing after').toEqual([
        {
          roll: true,
          annotations: expect.objectContaining({ [BASELINE]: '{}' }) as unknown,
        },
      ]);

      // kill -9: the record the first process could not remove is still in the store.
      const rolled = cluster.sent.length;
      first.queue.stop();
      expect(configMaps.observed()[0]?.data.has(recordKey(recorded))).toBe(true);
      const second = start(restarted === 'writes still refused');
      second.watched.byType.CONFIGMAP?.replace([
        aConfigMap(ns, 'app-config').withHash(OTHER).build(),
      ]);
      second.router.triggerAll(keys);
      await vi.advanceTimersByTimeAsync(30_000);
      await second.queue.idle();
      expect(sentTo(rolled), 'W holds B: the stale record is not read').toEqual([]);
      expect(
        configMaps.observed()[0]?.data.has(recordKey(recorded)),
        'the record is removed once the store may write',
      ).toBe(restarted === 'writes still refused');
    },
  );
});
