// Active-active caches (docs/adr/0053): two replicas, each a real watch server on cluster-wide
// list-watches against a fake API server and a coordinator on shared in-memory Leases. Each
// replica's caches hold only the namespaces of its buckets, and a bucket's objects are in the
// caches before its Lease is acquired (so before its first reconcile).
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import type { LeaseId, LeaseRecord, ObservedLease } from '../leader/ports.ts';
import { LeaseConflictError } from '../leader/ports.ts';
import {
  sendJson,
  sendStatus,
  startTestApiServer,
  type RecordedRequest,
  type TestApiServer,
} from '../testing/test-api-server.ts';
import type { Clock } from '../time/timers.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import type { WatchServer } from '../watch/watch-server.ts';
import { watchServerAgainst } from '../testing/test-watch-server.ts';
import { bucketOf } from './assignment.ts';
import { ShardCacheScope } from './cache-scope.ts';
import type { ShardLeaseStore } from './ports.ts';
import { ShardCoordinator } from './shard-coordinator.ts';

const BUCKETS = 8;
const NAMESPACES = Array.from({ length: 24 }, (_, i) => `team-${String(i)}`);
const TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** One ConfigMap per namespace, listed cluster-wide; every other list is empty, watches silent. */
function answer(request: RecordedRequest, response: ServerResponse): void {
  if (request.query.get('watch') === 'true') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.flushHeaders();
  } else if (request.path === '/api/v1/configmaps') {
    const items = NAMESPACES.map((namespace, i) => ({
      metadata: { name: 'cfg', namespace, uid: `u${String(i)}`, resourceVersion: '5' },
      data: { v: '1' },
    }));
    sendJson(response, 200, { metadata: { resourceVersion: '10' }, items });
  } else if (/^\/(api\/v1|apis\/apps\/v1|apis\/batch\/v1)\/[a-z]+$/.test(request.path)) {
    sendJson(response, 200, { metadata: { resourceVersion: '10' }, items: [] });
  } else {
    sendStatus(response, 404, 'NotFound');
  }
}

function inMemoryLeases(): ShardLeaseStore {
  const leases = new Map<string, ObservedLease>();
  let version = 0;
  const write = (id: LeaseId, record: LeaseRecord, rv: string | undefined) => {
    if (leases.get(id.name)?.resourceVersion !== rv) {
      return Promise.reject(new LeaseConflictError('conflict'));
    }
    version += 1;
    const lease = { record, resourceVersion: String(version) };
    leases.set(id.name, lease);
    return Promise.resolve(lease);
  };
  return {
    get: (id) => Promise.resolve(leases.get(id.name)),
    list: (_namespace, prefix) =>
      Promise.resolve(
        [...leases]
          .filter(([name]) => name.startsWith(prefix))
          .map(([name, lease]) => ({
            name,
            lease,
          })),
      ),
    create: (id, record) => write(id, record, undefined),
    replace: (id, record, rv) => write(id, record, rv),
  };
}

const clock: Clock & { advance(ms: number): void } = {
  wall: Date.parse('2026-12-06T12:00:00Z'),
  mono: 1_000,
  now() {
    return this.wall;
  },
  monotonicMs() {
    return this.mono;
  },
  advance(ms: number) {
    this.mono += ms;
    this.wall += ms;
  },
} as Clock & { advance(ms: number): void; wall: number; mono: number };

interface Replica {
  readonly watch: WatchServer;
  readonly coordinator: ShardCoordinator;
  /** Per acquired bucket: the namespaces of that bucket missing from the cache at that moment. */
  readonly missingAtAcquire: Map<number, string[]>;
}

let api: TestApiServer | undefined;
const servers: WatchServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop();
  await api?.close();
  api = undefined;
});

async function replica(identity: string, leases: ShardLeaseStore): Promise<Replica> {
  if (!api) throw new Error('no API server');
  const options = await parseOptions([], {});
  const cache = new ShardCacheScope({
    bucketCount: BUCKETS,
    bucketOf: (namespace) => bucketOf(namespace, BUCKETS),
    refill: (affected) => watch.relist(affected),
  });
  const watch = watchServerAgainst(api, options, {
    holdsNamespace: (namespace) => cache.holds(namespace),
  });
  servers.push(watch);
  const missingAtAcquire = new Map<number, string[]>();
  const coordinator = new ShardCoordinator({
    store: leases,
    settings: {
      identity,
      namespace: 'kreload',
      prefix: 'kreload',
      bucketCount: BUCKETS,
      timings: TIMINGS,
    },
    clock,
    timers: SYSTEM_TIMERS,
    inFlight: () => 0,
    cache,
    onAcquired: (bucket) => {
      const missing = NAMESPACES.filter(
        (ns) =>
          bucketOf(ns, BUCKETS) === bucket &&
          watch.caches.sources.get(ns, 'CONFIGMAP', 'cfg') === undefined,
      );
      missingAtAcquire.set(bucket, missing);
    },
  });
  await watch.start();
  await watch.initialSync();
  return { watch, coordinator, missingAtAcquire };
}

function cachedNamespaces(r: Replica): string[] {
  return NAMESPACES.filter(
    (ns) => r.watch.caches.sources.get(ns, 'CONFIGMAP', 'cfg') !== undefined,
  );
}

function ownedNamespaces(r: Replica): string[] {
  return NAMESPACES.filter((ns) => r.coordinator.owns(ns));
}

/** Rounds of every replica until nothing changes ownership, the caches' relists given time. */
async function settle(replicas: readonly Replica[]): Promise<void> {
  for (let round = 0; round < 12; round += 1) {
    for (const r of replicas) await r.coordinator.tick();
    await Promise.all(replicas.map((r) => r.watch.relist()));
    clock.advance(TIMINGS.retryPeriodMs);
  }
}

describe('active-active caches', () => {
  it(
    'hold only the namespaces of the buckets owned, filled before each acquire',
    { timeout: 30_000 },
    async () => {
      api = await startTestApiServer(answer);
      const leases = inMemoryLeases();
      const a = await replica('a', leases);
      // Before any bucket is assigned nothing is kept.
      expect(cachedNamespaces(a)).toEqual([]);
      await settle([a]);
      expect(ownedNamespaces(a)).toEqual(NAMESPACES);
      expect(cachedNamespaces(a)).toEqual(NAMESPACES);

      const b = await replica('b', leases);
      await settle([a, b]);
      const ownedByA = ownedNamespaces(a);
      const ownedByB = ownedNamespaces(b);
      expect(ownedByA.length).toBeGreaterThan(0);
      expect(ownedByB.length).toBeGreaterThan(0);
      expect([...ownedByA, ...ownedByB].sort()).toEqual([...NAMESPACES].sort());
      // Each cache holds its own share exactly: B's namespaces left A's cache when B took them.
      expect(cachedNamespaces(a)).toEqual(ownedByA);
      expect(cachedNamespaces(b)).toEqual(ownedByB);
      // Every bucket acquired had all its namespaces cached at that moment.
      for (const r of [a, b]) {
        expect(r.missingAtAcquire.size).toBeGreaterThan(0);
        for (const missing of r.missingAtAcquire.values()) expect(missing).toEqual([]);
      }
    },
  );
});
