/**
 * Active-active with kreload's real parts (docs/adr/0051): two replicas, each a coordinator on
 * shared in-memory Leases and a pipeline (src/app/pipeline.ts) whose workload writes pass the
 * bucket fence, against one in-memory API server whose acknowledged patches reach both replicas'
 * workload stores. The coordinators' clock moves with the fake timers; rounds are run by hand, so
 * a starved replica is one whose rounds are skipped or whose Lease answers come late.
 */
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadRef, WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import type { LeaseTimings } from '../leader/lease-decision.ts';
import { createMetrics } from '../metrics/metrics.ts';
import type { WorkloadWriter } from '../reconcile/ports.ts';
import { BucketWrites, fencedWorkloadWriter } from '../shard/fenced-writer.ts';
import { bucketLeaseName } from '../shard/lease-names.ts';
import { ShardCoordinator } from '../shard/shard-coordinator.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import { InMemoryCluster, isRoll } from '../testing/in-memory-cluster.ts';
import { InMemoryShardLeases, ManualClock } from '../testing/in-memory-shard-leases.ts';
import { inMemoryWatch, silentLogger } from '../testing/in-memory-watch.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import type { KubeBaselineStore } from '../kube/baseline-store.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { InMemoryConfigMaps, aPipelineBaselineStore } from '../testing/in-memory-config-maps.ts';
import { createPipeline } from './pipeline.ts';
import { baselineFence, keysInBucket } from './shard.ts';

const PREFIX = 'kreload';
const BUCKETS = 4;
const TIMINGS: LeaseTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};
const NAMESPACES = ['team-a', 'team-b', 'team-c', 'team-d', 'team-e', 'team-f'];
const H0 = '0'.repeat(40);

function hashOf(n: number): string {
  return n.toString(16).padStart(40, '0');
}

/** One Deployment per namespace, reading `app-config` by env var, baselined at H0. */
function dependent(namespace: string): WorkloadView {
  return aWorkload('Deployment', namespace, 'api')
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withAnnotation(BASELINE, `{"configmap/app-config":"${H0}"}`)
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
    .build();
}

const configMap = (namespace: string, hash: string) =>
  aConfigMap(namespace, 'app-config').withHash(hash).build();

interface Replica {
  readonly identity: string;
  readonly coordinator: ShardCoordinator;
  readonly pipeline: ReturnType<typeof createPipeline>;
  readonly watched: ReturnType<typeof inMemoryWatch>['watched'];
  readonly baselines: KubeBaselineStore | undefined;
  /** The baseline store requests this replica sent (`--baseline-store=namespace`). */
  readonly storeWrites: { method: string; path: string; body: unknown }[];
}

let server: InMemoryCluster;
let leases: InMemoryShardLeases;
let clock: ManualClock;
let replicas: Replica[];
let configMaps: InMemoryConfigMaps;

/** The API server's writes as the replica's fenced writer; an acknowledged PATCH reaches every store. */
function sharedWriter(): WorkloadWriter {
  return {
    patch: async (ref, patch) => {
      const result = await server.patch(ref, patch);
      deliverToAll(ref);
      return result;
    },
    get: (ref) => server.get(ref),
    getObject: (ref) => server.getObject(ref),
    create: (row, namespace, body) => server.create(row, namespace, body),
    delete: (ref, preconditions) => server.delete(ref, preconditions),
    instantiate: (ref, body) => server.instantiate(ref, body),
  };
}

function deliverToAll(ref: WorkloadRef): void {
  const view = server.api.server(ref);
  setTimeout(() => {
    if (view) for (const r of replicas) r.watched.store.upsert(view);
  }, server.watchLagMs);
}

/** The store's ConfigMaps as one replica writes them: each request logged under the replica. */
function storeTransport(log: Replica['storeWrites']): KubeTransport {
  return {
    request: (request) => {
      log.push({ method: request.method, path: request.path, body: request.body });
      return configMaps.request(request);
    },
  };
}

/** The store's watch delivers its objects as they are now to `to` (default: every replica). */
function deliverStore(to: readonly Replica[] = replicas): void {
  for (const r of to) r.baselines?.consumer.replace(configMaps.observed(), '1');
}

function replica(
  identity: string,
  options: { readonly baselines?: boolean; readonly workloads?: readonly WorkloadView[] } = {},
): Replica {
  const writes = new BucketWrites();
  const storeWrites: Replica['storeWrites'] = [];
  const { writes: ledger, watched, watch } = inMemoryWatch({ sourceTypes: ['CONFIGMAP'] });
  const coordinator: ShardCoordinator = new ShardCoordinator({
    store: leases.storeFor(identity),
    settings: {
      identity,
      namespace: 'kreload',
      prefix: PREFIX,
      bucketCount: BUCKETS,
      timings: TIMINGS,
    },
    clock,
    timers: SYSTEM_TIMERS,
    inFlight: (bucket) => writes.inFlight(bucket),
    // As src/app.ts: a bucket acquired has every workload of its namespaces reconciled.
    onAcquired: (bucket) => {
      pipeline.router.triggerAll(keysInBucket(watched.store.keys(), bucket, coordinator));
    },
  });
  const baselines =
    options.baselines === true
      ? aPipelineBaselineStore(storeTransport(storeWrites), {
          namespace: 'kreload',
          // As src/app.ts: the store's records pass the bucket fence.
          fence: baselineFence(coordinator, writes),
        })
      : undefined;
  baselines?.consumer.replace(configMaps.observed(), '1');
  const pipeline = createPipeline({
    watch,
    writes: ledger,
    writer: fencedWorkloadWriter(sharedWriter(), coordinator, writes),
    reconcile: DEFAULT_RECONCILE_OPTIONS,
    concurrency: 2,
    debounce: { syncDelayMs: 0, syncMaxDelayMs: 30_000 },
    metrics: createMetrics(new Registry(), { countByNamespace: false }),
    logger: silentLogger(),
    notifications: () => ({
      events: { record: () => undefined },
      fanouts: { begin: () => undefined, finish: () => undefined },
    }),
    gate: { leading: true, mayWrite: () => true },
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    owns: (namespace) => coordinator.owns(namespace),
    baselines,
  });
  watched.byType.CONFIGMAP?.replace(NAMESPACES.map((ns) => configMap(ns, H0)));
  watched.store.replace(
    'Deployment',
    (options.workloads ?? NAMESPACES.map(dependent)).map(
      (view) => server.api.server(view.ref) ?? view,
    ),
  );
  pipeline.adoptRollouts();
  pipeline.queue.start();
  return { identity, coordinator, pipeline, watched, baselines, storeWrites };
}

/** Time passes for the Lease clock and the pipeline's timers alike. */
async function advance(ms: number): Promise<void> {
  clock.advance(ms);
  await vi.advanceTimersByTimeAsync(ms);
}

/** Rounds of the given replicas, a retry period apart. */
async function rounds(of: readonly Replica[], count: number): Promise<void> {
  for (let round = 0; round < count; round += 1) {
    for (const r of of) await r.coordinator.tick();
    await advance(TIMINGS.retryPeriodMs);
  }
}

/** A ConfigMap written: every replica's cluster-wide watch sees it. */
function edit(namespace: string, hash: string): void {
  for (const r of replicas) r.watched.byType.CONFIGMAP?.upsert(configMap(namespace, hash));
}

/** The env var hash each roll of `namespace`'s Deployment wrote, in order. */
function rollsOf(namespace: string): string[] {
  const key = workloadKey(dependent(namespace).ref);
  return server.sent
    .filter((write) => write.key === key && isRoll(write))
    .map((write) => /"value":"([0-9a-f]{40})"/.exec(JSON.stringify(write.body))?.[1] ?? '?');
}

/** No two replicas may write to `namespace` at the same instant. */
function expectAtMostOneWriter(namespace: string): void {
  expect(replicas.filter((r) => r.coordinator.mayWrite(namespace)).length).toBeLessThanOrEqual(1);
}

function ownerOf(namespace: string): Replica {
  const owners = replicas.filter((r) => r.coordinator.owns(namespace));
  expect(owners).toHaveLength(1);
  const [owner] = owners;
  if (!owner) throw new Error('no owner');
  return owner;
}

/** Two replicas after three rounds: the first namespace, its owner and the other replica. */
async function twoReplicasSettled(): Promise<{
  namespace: string;
  owner: Replica;
  other: Replica;
}> {
  replicas.push(replica('a'), replica('b'));
  await rounds(replicas, 3);
  const namespace = NAMESPACES[0] ?? '';
  const owner = ownerOf(namespace);
  const other = replicas.find((r) => r !== owner);
  if (!other) throw new Error('one replica');
  return { namespace, owner, other };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  server = new InMemoryCluster();
  for (const ns of NAMESPACES) server.api.put(dependent(ns));
  leases = new InMemoryShardLeases(PREFIX);
  clock = new ManualClock();
  replicas = [];
  configMaps = new InMemoryConfigMaps('kreload');
});

afterEach(() => {
  vi.useRealTimers();
});

describe('active-active: a change is never lost to a starved replica', () => {
  it('a write refused while a late renewal answer was on its way is rolled once the answer lands', async () => {
    const { namespace, owner, other } = await twoReplicasSettled();
    // The owner is starved: its rounds come 8 s apart (below the renew deadline, so no lapse is
    // seen when it sends its renewals), and the answers to them take 4 s more to be read.
    for (let elapsed = TIMINGS.retryPeriodMs; elapsed < 8_000; elapsed += TIMINGS.retryPeriodMs) {
      await other.coordinator.tick();
      await advance(TIMINGS.retryPeriodMs);
    }
    const held = Array.from({ length: BUCKETS }, (_, bucket) => bucket).filter(
      (bucket) => leases.holder(bucket) === owner.identity,
    );
    for (const bucket of held) leases.faults.set(bucketLeaseName(PREFIX, bucket), 'late-answer');
    const round = owner.coordinator.tick();
    // The renewals are sent now (their answers held back), before any more time passes.
    await vi.waitUntil(() => leases.lateAnswersHeld === held.length);
    await advance(3_000);
    // 11 s since the last renewal answered: the fence refuses the owner's writes, and nobody else
    // may write there yet (the lease duration, 15 s, has not run out).
    expect(owner.coordinator.mayWrite(namespace)).toBe(false);
    expect(other.coordinator.mayWrite(namespace)).toBe(false);
    edit(namespace, hashOf(1));
    await advance(1_000);
    expect(rollsOf(namespace)).toEqual([]);
    leases.deliverLateAnswers();
    await round;
    expect(owner.coordinator.mayWrite(namespace)).toBe(true);
    await rounds(replicas, 10);
    await Promise.all(replicas.map((r) => r.pipeline.queue.idle()));
    expect(rollsOf(namespace)).toEqual([hashOf(1)]);
  });

  it('a bucket taken over from a starved owner: the change it could not write is rolled once, by the new owner', async () => {
    const { namespace, owner, other } = await twoReplicasSettled();
    // The owner runs no round at all: past its renew deadline its writes are refused, and the
    // change routed to it is not written.
    await rounds([other], 5);
    expect(owner.coordinator.mayWrite(namespace)).toBe(false);
    edit(namespace, hashOf(2));
    await advance(1_000);
    expect(rollsOf(namespace)).toEqual([]);
    // The other member takes its buckets over once not seen renewed for the lease duration.
    for (let round = 0; round < 8 && !other.coordinator.owns(namespace); round += 1) {
      await rounds([other], 1);
      expectAtMostOneWriter(namespace);
    }
    expect(other.coordinator.owns(namespace)).toBe(true);
    // The starved owner comes back: it finds its buckets taken, and later gets its share again.
    for (let round = 0; round < 20; round += 1) {
      await rounds(replicas, 1);
      expectAtMostOneWriter(namespace);
    }
    await Promise.all(replicas.map((r) => r.pipeline.queue.idle()));
    expect(replicas.every((r) => r.coordinator.ownedBuckets().length === BUCKETS / 2)).toBe(true);
    expect(rollsOf(namespace)).toEqual([hashOf(2)]);
  });

  it('a change made while its bucket is released and not yet acquired is rolled by the new owner', async () => {
    replicas.push(replica('a'));
    await rounds(replicas, 3);
    replicas.push(replica('b'));
    const [a, b] = replicas;
    if (!a || !b) throw new Error('two replicas');
    // b is given buckets once a has seen it live for the lease duration: a releases them in its
    // round, and b acquires them in its own.
    const inTransit = (): string[] =>
      NAMESPACES.filter(
        (ns) =>
          a.coordinator.assignedOwner(ns) === 'b' &&
          !a.coordinator.owns(ns) &&
          !b.coordinator.owns(ns),
      );
    for (let round = 0; round < 12; round += 1) {
      await a.coordinator.tick();
      if (inTransit().length > 0) break;
      await b.coordinator.tick();
      await advance(TIMINGS.retryPeriodMs);
    }
    const [namespace] = inTransit();
    if (namespace === undefined) throw new Error('no namespace in transit');
    edit(namespace, hashOf(3));
    await advance(1_000);
    expect(rollsOf(namespace)).toEqual([]);
    await rounds(replicas, 3);
    await Promise.all(replicas.map((r) => r.pipeline.queue.idle()));
    expect(b.coordinator.owns(namespace)).toBe(true);
    expect(rollsOf(namespace)).toEqual([hashOf(3)]);
  });
});

/** A Deployment never rolled (no `kreload.io/baseline`): its B is a first sight, in the store. */
function neverRolled(namespace: string, name: string): WorkloadView {
  return aWorkload('Deployment', namespace, name)
    .withResourceVersion('20')
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
    .build();
}

function rollsOfWorkload(view: WorkloadView): number {
  const key = workloadKey(view.ref);
  return server.sent.filter((write) => write.key === key && isRoll(write)).length;
}

describe('active-active with the baseline store: records are written under the bucket fence', () => {
  it("a replica that lost a bucket writes no record of its namespaces; the new owner's record stands", async () => {
    replicas.push(replica('a', { baselines: true }), replica('b', { baselines: true }));
    await rounds(replicas, 3);
    const namespace = NAMESPACES[0] ?? '';
    const owner = ownerOf(namespace);
    const other = replicas.find((r) => r !== owner);
    if (!other) throw new Error('one replica');
    // The owner is starved: it runs no round, so it still counts the bucket as held (its fence
    // refuses writes past the renew deadline) until the other member has taken it over.
    for (let round = 0; round < 10 && !other.coordinator.owns(namespace); round += 1) {
      await rounds([other], 1);
    }
    expect(other.coordinator.owns(namespace)).toBe(true);
    expect(owner.coordinator.mayWrite(namespace)).toBe(false);
    deliverStore();
    // The source changes, then a workload reading it is created. The new owner sees both; the
    // starved replica reads its ConfigMap watch late and the workload first, from the old hash.
    for (const r of [other]) r.watched.byType.CONFIGMAP?.upsert(configMap(namespace, hashOf(4)));
    await advance(100);
    const worker = neverRolled(namespace, 'worker');
    server.api.put(worker);
    other.watched.store.upsert(worker);
    await advance(200);
    owner.watched.store.upsert(worker);
    const ownerWritesBefore = owner.storeWrites.length;
    await advance(3_000);
    deliverStore();
    expect(other.baselines?.recordOf(worker)).toBe(`{"configmap/app-config":"${hashOf(4)}"}`);
    // Later, a full reconcile on the new owner (a resync): the workload was created with the
    // source at hashOf(4) and nothing has changed since.
    other.pipeline.router.triggerAll([workloadKey(worker.ref)]);
    await advance(3_000);
    await Promise.all(replicas.map((r) => r.pipeline.queue.idle()));
    expect(rollsOfWorkload(worker)).toBe(0);
    expect(owner.storeWrites.slice(ownerWritesBefore)).toEqual([]);
  });
});
