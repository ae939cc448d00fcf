import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import type { ObservedLease } from '../leader/ports.ts';
import type { LeaseTimings } from '../leader/lease-decision.ts';
import { InMemoryShardLeases, ManualClock } from '../testing/in-memory-shard-leases.ts';
import type { Timers } from '../time/timers.ts';
import { assignBuckets } from './assignment.ts';
import { BucketWrites } from './fenced-writer.ts';
import { bucketLeaseName, memberLeaseName } from './lease-names.ts';
import type { ShardLeaseStore } from './ports.ts';
import { ShardCoordinator, type ShardCache, type ShardLeaseError } from './shard-coordinator.ts';

const NS = 'kreload';
const PREFIX = 'kreload';
const BUCKETS = 8;
const TIMINGS: LeaseTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

const noTimers: Timers = {
  now: () => 0,
  schedule: (_delay, callback) => {
    queueMicrotask(callback);
    return () => undefined;
  },
};

interface Replica {
  readonly identity: string;
  readonly coordinator: ShardCoordinator;
  readonly writes: BucketWrites;
  readonly acquired: number[];
  readonly released: number[];
  readonly errors: ShardLeaseError[];
}

let cluster: InMemoryShardLeases;
let clock: ManualClock;

function replica(identity: string): Replica {
  const writes = new BucketWrites();
  const acquired: number[] = [];
  const released: number[] = [];
  const errors: ShardLeaseError[] = [];
  const coordinator = new ShardCoordinator({
    store: cluster.storeFor(identity),
    settings: { identity, namespace: NS, prefix: PREFIX, bucketCount: BUCKETS, timings: TIMINGS },
    clock,
    timers: noTimers,
    inFlight: (bucket) => writes.inFlight(bucket),
    onAcquired: (bucket) => acquired.push(bucket),
    onReleased: (bucket) => released.push(bucket),
    onError: (error) => errors.push(error),
  });
  return { identity, coordinator, writes, acquired, released, errors };
}

/** One round of every replica given, `ms` apart; asserts the fence after each step. */
async function rounds(replicas: readonly Replica[], count = 1, ms = TIMINGS.retryPeriodMs) {
  for (let round = 0; round < count; round += 1) {
    for (const r of replicas) {
      await r.coordinator.tick();
      expectAtMostOneWriter(replicas);
    }
    clock.advance(ms);
  }
}

/** No namespace bucket is writable by two replicas at any instant. */
function expectAtMostOneWriter(replicas: readonly Replica[]): void {
  for (let bucket = 0; bucket < BUCKETS; bucket += 1) {
    const writers = replicas.filter((r) => r.coordinator.ownedBuckets().includes(bucket));
    expect(writers.length, `bucket ${String(bucket)}`).toBeLessThanOrEqual(1);
  }
}

const owned = (r: Replica): readonly number[] => r.coordinator.ownedBuckets();
/** Every bucket held by `a`, as after `a` ran alone. */
const ALL_HELD_BY_A: readonly string[] = new Array<string>(BUCKETS).fill('a');

beforeEach(() => {
  cluster = new InMemoryShardLeases(PREFIX);
  clock = new ManualClock();
});

describe('ShardCoordinator', () => {
  it('three members: each holds exactly the buckets the assignment gives it, balanced', async () => {
    const replicas = ['a', 'b', 'c'].map(replica);
    await rounds(replicas, 3);
    const holders = Array.from({ length: BUCKETS }, (_, bucket) => cluster.holder(bucket));
    const expected = assignBuckets(['a', 'b', 'c'], BUCKETS, holders);
    const counts = ['a', 'b', 'c'].map((m) => expected.filter((o) => o === m).length);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
    for (const r of replicas) {
      expect(owned(r)).toEqual(expected.flatMap((owner, b) => (owner === r.identity ? [b] : [])));
    }
    for (let bucket = 0; bucket < BUCKETS; bucket += 1)
      expect(cluster.holder(bucket)).toBe(expected[bucket]);
  });

  it('an uneven split: the larger shares go to the most senior members, whatever they hold now', async () => {
    // Balanced by count, but the senior member z holds a smaller share: under a rule that ranks
    // by buckets held, this is a fixed point; a release half way through a handover would then
    // give room to whoever released last, and a bucket would move between old members.
    const joined = { z: 60_000, a: 30_000, b: 10_000 } as const;
    const now = clock.now();
    const lease = (holder: string, acquiredAgoMs: number): ObservedLease => ({
      record: {
        holderIdentity: holder,
        leaseDurationSeconds: TIMINGS.leaseDurationMs / 1000,
        acquireTime: new Date(now - acquiredAgoMs),
        renewTime: new Date(now),
        leaseTransitions: 0,
      },
      resourceVersion: `seed-${holder}-${String(acquiredAgoMs)}`,
    });
    for (const [member, ago] of Object.entries(joined))
      cluster.leases.set(memberLeaseName(PREFIX, member), lease(member, ago));
    ['a', 'a', 'a', 'b', 'b', 'b', 'z', 'z'].forEach((holder, bucket) => {
      cluster.leases.set(bucketLeaseName(PREFIX, bucket), lease(holder, 5_000));
    });
    const replicas = ['z', 'a', 'b'].map(replica);
    await rounds(replicas, 4);
    const held = (member: string): number =>
      Array.from({ length: BUCKETS }, (_, bucket) => cluster.holder(bucket)).filter(
        (holder) => holder === member,
      ).length;
    // 8 over 3: 3, 3, 2, the 3s to z and a (senior), the 2 to b (joined last).
    expect([held('z'), held('a'), held('b')]).toEqual([3, 3, 2]);
  });

  it('a bucket is written under only by its holder within the renew deadline', async () => {
    const a = replica('a');
    await a.coordinator.tick();
    const namespace = 'team-x';
    expect(a.coordinator.mayWrite(namespace)).toBe(true);
    // Renewals fail (a 403 on every Lease): writes stop at the renew deadline, before anyone
    // else may take over at the lease duration.
    for (const name of cluster.leases.keys())
      cluster.faults.set(name, new ApiError('forbidden', { status: 403, retryable: false }));
    clock.advance(TIMINGS.renewDeadlineMs - 1);
    expect(a.coordinator.mayWrite(namespace)).toBe(true);
    clock.advance(1);
    expect(a.coordinator.mayWrite(namespace)).toBe(false);
    const written = new BucketWrites();
    await expect(
      written.admit(a.coordinator, { kind: 'Deployment', namespace, name: 'w' }, () =>
        Promise.resolve(1),
      ),
    ).rejects.toThrow(/lost the lease/);
  });

  /**
   * a holds every bucket; b joins; a has a write, unanswered until `answer` resolves, in the first
   * bucket that moves to b.
   */
  async function aJoinerAndAWriteInFlight() {
    const a = replica('a');
    await rounds([a], 2);
    expect(owned(a)).toHaveLength(BUCKETS);
    const b = replica('b');
    const moving = assignBuckets(['a', 'b'], BUCKETS, ALL_HELD_BY_A).flatMap((o, bucket) =>
      o === 'b' ? [bucket] : [],
    );
    const bucket = moving[0] ?? -1;
    const namespace = namespaceIn(a.coordinator, bucket);
    const answer = Promise.withResolvers<undefined>();
    const inFlight = a.writes.admit(
      a.coordinator,
      { kind: 'Deployment', namespace, name: 'w' },
      () => answer.promise,
    );
    return { a, b, moving, bucket, namespace, answer, inFlight };
  }

  it('a joining member: the old owner drains its in-flight write, releases, then the new one acquires', async () => {
    const { a, b, moving, bucket, namespace, answer, inFlight } = await aJoinerAndAWriteInFlight();
    cluster.writes.length = 0;
    await rounds([b, a], 2);
    // a renews the busy bucket (kept), releases the idle ones; b waits for the busy one.
    expect(a.coordinator.owns(namespace)).toBe(false);
    expect(a.coordinator.mayWrite(namespace)).toBe(false);
    expect(cluster.holder(bucket)).toBe('a');
    expect(b.acquired).not.toContain(bucket);
    await expect(
      a.writes.admit(a.coordinator, { kind: 'Deployment', namespace, name: 'v' }, () =>
        Promise.resolve(1),
      ),
    ).rejects.toThrow(/lost the lease/);
    answer.resolve(undefined);
    await inFlight;
    await rounds([a, b], 1);
    const bucketName = `${PREFIX}-bucket-${String(bucket)}`;
    expect(cluster.writes.filter((w) => w.name === bucketName).slice(-2)).toEqual([
      { op: 'replace', name: bucketName, holder: undefined, by: 'a' },
      { op: 'replace', name: bucketName, holder: 'b', by: 'b' },
    ]);
    expect([...b.acquired].sort()).toEqual(moving);
    expect(b.acquired.at(-1)).toBe(bucket); // the busy one last, after its write answered
    expect(a.released.sort()).toEqual(moving);
  });

  it('a bucket draining with a write in flight and assigned back (the newcomer stalled): held again in that round', async () => {
    const { a, b, bucket, namespace, answer, inFlight } = await aJoinerAndAWriteInFlight();
    await rounds([b, a], 1);
    expect(a.coordinator.owns(namespace)).toBe(false);
    const acquiredBefore = a.acquired.filter((x) => x === bucket).length;
    // b runs no more rounds before it could take the busy bucket: a, a member for a lease duration
    // now, assigns only to members it has seen live that long, and is given the bucket back while
    // its write is still in flight.
    for (let round = 0; round < 10 && !a.coordinator.owns(namespace); round += 1) {
      await rounds([a], 1);
    }
    expect(a.coordinator.owns(namespace)).toBe(true);
    expect(a.coordinator.mayWrite(namespace)).toBe(true);
    expect(a.acquired.filter((x) => x === bucket).length).toBe(acquiredBefore + 1);
    answer.resolve(undefined);
    await inFlight;
  });

  it('a dead member’s buckets are taken over after the lease duration, not before', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map(replica) as [Replica, Replica, Replica];
    await rounds([a, b, c], 2);
    const cBuckets = [...owned(c)];
    expect(cBuckets.length).toBeGreaterThan(0);
    const holdersAtKill = Array.from({ length: BUCKETS }, (_, bucket) => cluster.holder(bucket));
    // c is killed: it writes nothing more. The others go on every retry period.
    const survivors = [a, b];
    const takenAt: number[] = [];
    const start = clock.monotonic;
    for (let round = 0; round < 12 && takenAt.length === 0; round += 1) {
      await rounds(survivors, 1);
      if (cBuckets.every((bucket) => cluster.holder(bucket) !== 'c'))
        takenAt.push(clock.monotonic - start);
    }
    expect(takenAt[0]).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs);
    expect(takenAt[0]).toBeLessThanOrEqual(
      TIMINGS.leaseDurationMs + 2 * TIMINGS.retryPeriodMs + 2_000,
    );
    const expected = assignBuckets(['a', 'b'], BUCKETS, holdersAtKill);
    for (const bucket of cBuckets) expect(cluster.holder(bucket)).toBe(expected[bucket]);
  });

  it('a replacement joining while a dead member’s Leases run out does not hold up their takeover', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map(replica) as [Replica, Replica, Replica];
    // Long-running members: each has seen the others renewing for more than a lease duration.
    await rounds([a, b, c], 9);
    const cBuckets = [...owned(c)];
    expect(cBuckets.length).toBeGreaterThan(0);
    // c is killed; its replacement d (a new pod name) is ready 8 s later, as a Deployment's pod.
    const start = clock.monotonic;
    await rounds([a, b], 4);
    const d = replica('d');
    let takenAfterMs: number | undefined;
    for (let round = 0; round < 12 && takenAfterMs === undefined; round += 1) {
      await rounds([a, b, d], 1);
      const holders = cBuckets.map((bucket) => cluster.holder(bucket));
      if (holders.every((holder) => holder !== undefined && holder !== 'c'))
        takenAfterMs = clock.monotonic - start;
    }
    expect(takenAfterMs).toBeLessThanOrEqual(
      TIMINGS.leaseDurationMs + 2 * TIMINGS.retryPeriodMs + 2_000,
    );
    // Once everyone has seen d renewing for a lease duration, d gets exactly its share.
    await rounds([a, b, d], 12);
    const expected = assignBuckets(['a', 'b', 'd'], BUCKETS);
    for (let bucket = 0; bucket < BUCKETS; bucket += 1)
      expect(cluster.holder(bucket), `bucket ${String(bucket)}`).toBe(expected[bucket]);
  });

  it('kill -9 between the release and the new owner’s acquire: acquired at the next round', async () => {
    const a = replica('a');
    await rounds([a], 2);
    const b = replica('b');
    await rounds([b], 1); // b is a member now, holds nothing yet
    await a.coordinator.tick(); // a releases b's buckets ... and dies
    const moving = assignBuckets(['a', 'b'], BUCKETS, ALL_HELD_BY_A).flatMap((o, bucket) =>
      o === 'b' ? [bucket] : [],
    );
    for (const bucket of moving) expect(cluster.holder(bucket)).toBeUndefined();
    clock.advance(TIMINGS.retryPeriodMs);
    await b.coordinator.tick();
    expect([...owned(b)]).toEqual(moving);
  });

  it('a release applied but its answer lost: dropped at the next round, the new owner acquires', async () => {
    const a = replica('a');
    await rounds([a], 2);
    const b = replica('b');
    const moving = assignBuckets(['a', 'b'], BUCKETS, ALL_HELD_BY_A).flatMap((o, bucket) =>
      o === 'b' ? [bucket] : [],
    );
    const bucket = moving[0] ?? -1;
    cluster.releaseFaults.set(`${PREFIX}-bucket-${String(bucket)}`, 'lost-answer');
    await rounds([b, a], 1);
    expect(cluster.holder(bucket)).toBeUndefined();
    expect(a.errors.map((e) => e.message)).toEqual([
      `cannot release the lease ${NS}/${PREFIX}-bucket-${String(bucket)}`,
    ]);
    await rounds([b, a], 1);
    expect(owned(b)).toContain(bucket);
    expect(owned(a)).not.toContain(bucket);
  });

  it('a claim applied but its answer lost: held (and written under) only after the next renewal', async () => {
    const a = replica('a');
    cluster.faults.set(`${PREFIX}-bucket-0`, 'lost-answer');
    await a.coordinator.tick();
    expect(cluster.holder(0)).toBe('a');
    expect(owned(a)).not.toContain(0);
    clock.advance(TIMINGS.retryPeriodMs);
    await a.coordinator.tick();
    expect(owned(a)).toContain(0);
    expect(a.acquired.filter((b) => b === 0)).toEqual([0]);
  });

  it('a held bucket whose renewals lapsed past the renew deadline is reconciled again once renewed', async () => {
    const a = replica('a');
    await rounds([a], 1);
    const namespace = namespaceIn(a.coordinator, 0);
    expect(a.acquired.filter((b) => b === 0)).toEqual([0]);
    // Renewals fail for longer than the renew deadline: writes refused meanwhile (a roll cut
    // between its DELETE and its POST stays undone), then a renewal goes through again.
    for (let round = 0; round < 6; round += 1) {
      cluster.faults.set(`${PREFIX}-bucket-0`, new ApiError('timeout', { retryable: true }));
      await rounds([a], 1);
    }
    expect(a.coordinator.mayWrite(namespace)).toBe(false);
    await rounds([a], 1);
    expect(a.coordinator.mayWrite(namespace)).toBe(true);
    expect(a.acquired.filter((b) => b === 0)).toEqual([0, 0]);
  });

  it('a renewal sent in time whose answer is read past the renew deadline: reconciled again', async () => {
    const a = replica('a');
    await a.coordinator.tick();
    const namespace = namespaceIn(a.coordinator, 0);
    // A starved process: its next round comes 8 s later, in time, but reads the answer 4 s after.
    clock.advance(8_000);
    cluster.faults.set(`${PREFIX}-bucket-0`, 'late-answer');
    const round = a.coordinator.tick();
    await vi.waitUntil(() => cluster.lateAnswersHeld === 1);
    clock.advance(4_000);
    // Writes were refused meanwhile: the renewal brings the bucket back as if newly acquired.
    expect(a.coordinator.mayWrite(namespace)).toBe(false);
    cluster.deliverLateAnswers();
    await round;
    expect(a.coordinator.mayWrite(namespace)).toBe(true);
    expect(a.acquired.filter((b) => b === 0)).toEqual([0, 0]);
    // Read late but within the renew deadline of the renewal before it, it is not.
    clock.advance(TIMINGS.retryPeriodMs);
    cluster.faults.set(`${PREFIX}-bucket-0`, 'late-answer');
    const next = a.coordinator.tick();
    await vi.waitUntil(() => cluster.lateAnswersHeld === 1);
    clock.advance(3_000);
    cluster.deliverLateAnswers();
    await next;
    expect(a.acquired.filter((b) => b === 0)).toEqual([0, 0]);
  });

  it('a 403 on one bucket Lease: that bucket is not held and reported, the others are', async () => {
    const a = replica('a');
    const forbidden = new ApiError('leases "kreload-bucket-3" is forbidden', {
      status: 403,
      retryable: false,
    });
    cluster.faults.set(`${PREFIX}-bucket-3`, forbidden);
    await a.coordinator.tick();
    expect([...owned(a)]).toEqual([0, 1, 2, 4, 5, 6, 7]);
    expect(a.errors.map((e) => [e.message, e.cause])).toEqual([
      [`cannot acquire the lease ${NS}/${PREFIX}-bucket-3`, forbidden],
    ]);
    clock.advance(TIMINGS.retryPeriodMs);
    await a.coordinator.tick();
    expect(owned(a)).toContain(3);
  });

  it('a wall-clock jump of an hour takes over nothing: liveness is judged on the monotonic clock', async () => {
    const [a, b] = ['a', 'b'].map(replica) as [Replica, Replica];
    await rounds([a, b], 2);
    const before = [owned(a), owned(b)].map((o) => [...o]);
    a.released.length = 0;
    b.released.length = 0;
    clock.wall += 3_600_000;
    await rounds([a, b], 3);
    clock.wall -= 7_200_000;
    await rounds([a, b], 3);
    expect([owned(a), owned(b)]).toEqual(before);
    expect(a.released).toEqual([]);
    expect(b.released).toEqual([]);
  });

  it('shutdown releases the member and every bucket: the survivor acquires them at its next round', async () => {
    const [a, b] = ['a', 'b'].map(replica) as [Replica, Replica];
    await rounds([a, b], 2);
    const aBuckets = [...owned(a)];
    await a.coordinator.release();
    expect(owned(a)).toEqual([]);
    for (const bucket of aBuckets) expect(cluster.holder(bucket)).toBeUndefined();
    await rounds([b], 1);
    expect(owned(b)).toHaveLength(BUCKETS);
  });
});

/** Timers on the ManualClock's monotonic time: callbacks run as the test moves the clock. */
class ManualTimers implements Timers {
  readonly #queue: { atMs: number; callback: () => void; cancelled: boolean }[] = [];
  readonly #clock: ManualClock;

  constructor(clock: ManualClock) {
    this.#clock = clock;
  }

  now(): number {
    return this.#clock.now();
  }

  schedule(delayMs: number, callback: () => void): () => void {
    const entry = { atMs: this.#clock.monotonic + delayMs, callback, cancelled: false };
    this.#queue.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** Runs every callback due up to `atMs` in time order, each round it starts run to its end. */
  async runUntil(atMs: number): Promise<void> {
    for (;;) {
      // Rounds under way finish at the current time first: the in-memory Leases answer at once,
      // so a round is over once the macrotask queue is reached.
      await new Promise((resolve) => setImmediate(resolve));
      const due = this.#queue
        .filter((entry) => !entry.cancelled && entry.atMs <= atMs)
        .sort((a, b) => a.atMs - b.atMs)[0];
      if (due === undefined) break;
      this.#queue.splice(this.#queue.indexOf(due), 1);
      if (due.atMs > this.#clock.monotonic) this.#clock.advance(due.atMs - this.#clock.monotonic);
      due.callback();
    }
    if (atMs > this.#clock.monotonic) this.#clock.advance(atMs - this.#clock.monotonic);
  }
}

/** Caches that take `fillMs` to list a bucket's namespaces once it joins (cache-scope.ts). */
class SlowCache implements ShardCache {
  readonly filled = new Set<number>();
  readonly #filling = new Set<number>();
  readonly #timers: Timers;
  readonly #fillMs: number;
  onFilled: () => void = () => undefined;

  constructor(timers: Timers, fillMs: number) {
    this.#timers = timers;
    this.#fillMs = fillMs;
  }

  update(wanted: ReadonlySet<number>): void {
    for (const bucket of [...this.filled, ...this.#filling]) {
      if (!wanted.has(bucket)) {
        this.filled.delete(bucket);
        this.#filling.delete(bucket);
      }
    }
    const joined = [...wanted].filter((b) => !this.filled.has(b) && !this.#filling.has(b));
    if (joined.length === 0) return;
    for (const bucket of joined) this.#filling.add(bucket);
    this.#timers.schedule(this.#fillMs, () => {
      const done = joined.filter((bucket) => this.#filling.delete(bucket));
      for (const bucket of done) this.filled.add(bucket);
      if (done.length > 0) this.onFilled();
    });
  }

  isFilled(bucket: number): boolean {
    return this.filled.has(bucket);
  }
}

describe('ShardCoordinator timing (fake clock, its own round loop)', () => {
  const FILL_MS = 1_500;

  /**
   * `latencyMs` > 0: a slow API server, each Lease request applied and answered that long after it
   * is sent; `applied` has when each of this member's writes was applied.
   */
  function looped(identity: string, timers: ManualTimers, latencyMs = 0) {
    const cache = new SlowCache(timers, FILL_MS);
    const applied: number[] = [];
    const direct = cluster.storeFor(identity);
    const later = <T>(request: () => Promise<T>): Promise<T> =>
      latencyMs === 0
        ? request()
        : new Promise<T>((resolve, reject) => {
            timers.schedule(latencyMs, () => {
              request().then(resolve, reject);
            });
          });
    const store: ShardLeaseStore = {
      get: (id) => later(() => direct.get(id)),
      list: (namespace, prefix) => later(() => direct.list(namespace, prefix)),
      create: (id, record) =>
        later(() => {
          applied.push(clock.monotonic);
          return direct.create(id, record);
        }),
      replace: (id, record, rv) =>
        later(() => {
          applied.push(clock.monotonic);
          return direct.replace(id, record, rv);
        }),
    };
    /** When each round listed the Leases. */
    const lists: number[] = [];
    const members: { live: readonly string[]; suspected: readonly string[] }[] = [];
    const coordinator = new ShardCoordinator({
      store: {
        ...store,
        list: (namespace, prefix) => {
          lists.push(clock.monotonic);
          return store.list(namespace, prefix);
        },
      },
      settings: { identity, namespace: NS, prefix: PREFIX, bucketCount: BUCKETS, timings: TIMINGS },
      clock,
      timers,
      inFlight: () => 0,
      cache,
      onAcquired: () => undefined,
      onMembersChanged: (live, suspected) => members.push({ live, suspected }),
    });
    cache.onFilled = () => {
      coordinator.nudge();
    };
    return { identity, coordinator, cache, members, lists, applied };
  }

  it('a dead member’s buckets are claimed the moment its Leases run out, their namespaces listed ahead', async () => {
    const timers = new ManualTimers(clock);
    const t0 = clock.monotonic;
    const [a, b] = ['a', 'b'].map((id) => looped(id, timers)) as [
      ReturnType<typeof looped>,
      ReturnType<typeof looped>,
    ];
    a.coordinator.start();
    b.coordinator.start();
    await timers.runUntil(t0 + 1);
    // c starts 1 ms after a and b: each of its renewals is seen by them up to a round later.
    const c = looped('c', timers);
    c.coordinator.start();
    await timers.runUntil(t0 + 20_000);
    const cBuckets = [...c.coordinator.ownedBuckets()];
    expect(cBuckets.length).toBeGreaterThan(0);
    // kill -9: nothing of c runs again. Its last renewal was sent in its last round.
    c.coordinator.stop();
    const lastRenewal = c.lists.at(-1) ?? Number.NaN;
    // a and b see that renewal at their next round; it runs out a lease duration later.
    await timers.runUntil(t0 + 24_000);
    const seenAt = Math.max(
      ...[a, b].map((r) => r.lists.find((at) => at > lastRenewal) ?? Number.NaN),
    );
    expect(seenAt - lastRenewal).toBeGreaterThan(TIMINGS.retryPeriodMs / 2);
    const expiresAt = seenAt + TIMINGS.leaseDurationMs;
    // From the renew deadline on, the namespaces of c's buckets are listed into a's and b's caches.
    await timers.runUntil(seenAt + TIMINGS.renewDeadlineMs + FILL_MS);
    expect(a.members.at(-1)).toEqual({ live: ['a', 'b', 'c'], suspected: ['c'] });
    for (const bucket of cBuckets)
      expect(a.cache.isFilled(bucket) || b.cache.isFilled(bucket), `bucket ${String(bucket)}`).toBe(
        true,
      );
    await timers.runUntil(expiresAt - 1);
    for (const bucket of cBuckets) expect(cluster.holder(bucket)).toBe('c');
    // At that moment: not at the next round of the retry period, nor after a list of the caches.
    await timers.runUntil(expiresAt);
    for (const bucket of cBuckets) expect(['a', 'b']).toContain(cluster.holder(bucket));
    expect(a.members.at(-1)).toEqual({ live: ['a', 'b'], suspected: [] });
    a.coordinator.stop();
    b.coordinator.stop();
  });

  it('a slow API server: lists a retry period apart, a dead member’s buckets held a lease duration after its last renewal, plus at most a retry period and two requests', async () => {
    const LATENCY_MS = 700;
    const timers = new ManualTimers(clock);
    const t0 = clock.monotonic;
    const [a, b, c] = ['a', 'b', 'c'].map((id) => looped(id, timers, LATENCY_MS)) as [
      ReturnType<typeof looped>,
      ReturnType<typeof looped>,
      ReturnType<typeof looped>,
    ];
    for (const r of [a, b]) r.coordinator.start();
    await timers.runUntil(t0 + 300);
    c.coordinator.start();
    await timers.runUntil(t0 + 30_000);
    const cBuckets = [...c.coordinator.ownedBuckets()];
    expect(cBuckets.length).toBeGreaterThan(0);
    // Each round writes for longer than a millisecond (a member renewal, its buckets' renewals, a
    // list, each 700 ms), yet each list goes out a retry period after the one before.
    const gaps = a.lists
      .slice(-5)
      .flatMap((at, i, all) => (i === 0 ? [] : [at - (all[i - 1] ?? 0)]));
    expect(gaps).toEqual(gaps.map(() => TIMINGS.retryPeriodMs));
    // kill -9 of c: its last round's requests land, nothing more is sent.
    c.coordinator.stop();
    await timers.runUntil(clock.monotonic + 2 * LATENCY_MS);
    const lastRenewal = Math.max(...c.applied);
    // Its member and bucket renewals land together: they run out together.
    expect(c.applied.filter((at) => at > lastRenewal - LATENCY_MS).length).toBe(
      1 + cBuckets.length,
    );
    let heldAt: number | undefined;
    while (heldAt === undefined && clock.monotonic < lastRenewal + 30_000) {
      await timers.runUntil(clock.monotonic + 100);
      if (cBuckets.every((bucket) => ['a', 'b'].includes(cluster.holder(bucket) ?? '')))
        heldAt = clock.monotonic;
    }
    expect(heldAt).toBeDefined();
    expect((heldAt ?? 0) - lastRenewal).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs);
    // Seen at the first list read after it (a retry period at most), held once the round at the
    // expiry has read its list and its claim has landed (a request each), within the 100 ms poll.
    expect((heldAt ?? 0) - lastRenewal).toBeLessThanOrEqual(
      TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs + 2 * LATENCY_MS + 100,
    );
    for (const r of [a, b]) r.coordinator.stop();
    await timers.runUntil(clock.monotonic + 2 * LATENCY_MS);
  });

  it('a member renewing again is no longer suspected: the namespaces listed ahead are dropped', async () => {
    const timers = new ManualTimers(clock);
    const t0 = clock.monotonic;
    const a = looped('a', timers);
    const c = looped('c', timers);
    a.coordinator.start();
    c.coordinator.start();
    await timers.runUntil(t0 + 20_000);
    const cBuckets = [...c.coordinator.ownedBuckets()];
    // c stalls (a starved process), then renews again before its Leases run out.
    c.coordinator.stop();
    const lastRenewal = c.lists.at(-1) ?? Number.NaN;
    await timers.runUntil(t0 + 24_000);
    const seenAt = a.lists.find((at) => at > lastRenewal) ?? Number.NaN;
    await timers.runUntil(seenAt + TIMINGS.renewDeadlineMs + FILL_MS);
    expect(a.members.at(-1)?.suspected).toEqual(['c']);
    for (const bucket of cBuckets) expect(a.cache.isFilled(bucket)).toBe(true);
    c.coordinator.start();
    await timers.runUntil(seenAt + TIMINGS.leaseDurationMs + TIMINGS.retryPeriodMs);
    expect(a.members.at(-1)).toEqual({ live: ['a', 'c'], suspected: [] });
    for (const bucket of cBuckets) {
      expect(a.cache.isFilled(bucket)).toBe(false);
      expect(cluster.holder(bucket)).toBe('c');
    }
    a.coordinator.stop();
    c.coordinator.stop();
  });
});

/** A namespace name that falls in `bucket`. */
function namespaceIn(coordinator: ShardCoordinator, bucket: number): string {
  for (let index = 0; ; index += 1) {
    const namespace = `ns-${String(index)}`;
    if (coordinator.bucketOf(namespace) === bucket) return namespace;
  }
}
