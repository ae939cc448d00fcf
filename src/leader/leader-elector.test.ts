import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaderElector } from './leader-elector.ts';
import type { LeaderElectionError } from './leader-elector.ts';
import { LeaseConflictError } from './ports.ts';
import type { LeaseId, LeaseRecord, LeaseStore, ObservedLease } from './ports.ts';
import type { LeaseTimings } from './lease-decision.ts';
import type { Clock, Timers } from '../time/timers.ts';

const ID: LeaseId = { namespace: 'kreload', name: 'kreload-leader' };

type Write =
  | { op: 'create'; record: LeaseRecord }
  | { op: 'replace'; record: LeaseRecord; resourceVersion: string };

/** One Lease in memory with optimistic concurrency, recording every write. */
class InMemoryLeaseStore implements LeaseStore {
  lease: ObservedLease | undefined;
  readonly writes: Write[] = [];
  reads = 0;
  /** When set, every call rejects with it (or hangs, for 'hang'). */
  failure: Error | 'hang' | undefined;
  /** Like `failure`, for reads only. */
  readFailure: Error | 'hang' | undefined;
  #version = 0;

  seed(record: LeaseRecord): void {
    this.lease = { record, resourceVersion: this.#nextVersion() };
  }

  /** Another replica renews the lease it holds. */
  renewBy(holder: string): void {
    this.seed({
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: new Date(0),
      renewTime: new Date(),
      leaseTransitions: this.lease?.record.leaseTransitions ?? 0,
    });
  }

  get(): Promise<ObservedLease | undefined> {
    this.reads += 1;
    return this.#guard(() => this.lease, this.readFailure);
  }

  create(_id: LeaseId, record: LeaseRecord): Promise<ObservedLease> {
    return this.#guard(() => {
      if (this.lease) throw new LeaseConflictError('exists');
      this.writes.push({ op: 'create', record });
      this.lease = { record, resourceVersion: this.#nextVersion() };
      return this.lease;
    });
  }

  replace(_id: LeaseId, record: LeaseRecord, resourceVersion: string): Promise<ObservedLease> {
    return this.#guard(() => {
      if (this.lease?.resourceVersion !== resourceVersion) throw new LeaseConflictError('stale');
      this.writes.push({ op: 'replace', record, resourceVersion });
      this.lease = { record, resourceVersion: this.#nextVersion() };
      return this.lease;
    });
  }

  #nextVersion(): string {
    this.#version += 1;
    return String(this.#version);
  }

  #guard<T>(run: () => T, failure = this.failure): Promise<T> {
    if (failure === 'hang') return new Promise<T>(() => undefined);
    if (failure) return Promise.reject(failure);
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

const clock: Clock = { monotonicMs: () => Date.now(), now: () => Date.now() };
const timers: Timers = {
  now: () => Date.now(),
  schedule: (delayMs, callback) => {
    const timer = setTimeout(callback, delayMs);
    return () => {
      clearTimeout(timer);
    };
  },
};

function anElector(
  store: LeaseStore,
  identity = 'me',
  options: { timings?: LeaseTimings; releaseOnCancel?: boolean } = {},
) {
  const started = vi.fn<() => void>();
  const lost = vi.fn<(reason: string) => void>();
  const errors: LeaderElectionError[] = [];
  const elector = new LeaderElector({
    store,
    identity,
    name: ID.name,
    namespace: ID.namespace,
    clock,
    timers,
    onStartedLeading: started,
    onLostLeading: lost,
    onError: (error) => errors.push(error),
    ...options,
  });
  return { elector, started, lost, errors };
}

const START = new Date('2026-01-02T03:04:05.000Z');
const at = (ms: number): Date => new Date(START.getTime() + ms);

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeaderElector', () => {
  it('acquires a lease that does not exist, at once', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, started } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(store.writes).toEqual([
      {
        op: 'create',
        record: {
          holderIdentity: 'me',
          leaseDurationSeconds: 15,
          acquireTime: at(0),
          renewTime: at(0),
          leaseTransitions: 0,
        },
      },
    ]);
    expect(started).toHaveBeenCalledTimes(1);
    expect(elector.state()).toBe('leader');
    expect(elector.isLeader()).toBe(true);
    expect(elector.canWrite()).toBe(true);
    elector.stop();
  });

  it('renews every 2 s while leading, keeping acquireTime', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, started } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(6_000);
    expect(store.writes.map((w) => [w.op, w.record.renewTime, w.record.acquireTime])).toEqual([
      ['create', at(0), at(0)],
      ['replace', at(2_000), at(0)],
      ['replace', at(4_000), at(0)],
      ['replace', at(6_000), at(0)],
    ]);
    expect(started).toHaveBeenCalledTimes(1);
    elector.stop();
  });

  it('follows a holder that keeps renewing and never writes', async () => {
    const store = new InMemoryLeaseStore();
    store.renewBy('other');
    const renewing = setInterval(() => {
      store.renewBy('other');
    }, 2_000);
    const { elector, started } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.writes).toEqual([]);
    expect(started).not.toHaveBeenCalled();
    expect(elector.state()).toBe('follower');
    expect(elector.canWrite()).toBe(false);
    expect(elector.lastObservedAt).toBe(at(60_000).getTime());
    clearInterval(renewing);
    elector.stop();
  });

  it('takes over 15 s after the last observed renewal, not before', async () => {
    const store = new InMemoryLeaseStore();
    store.seed({
      holderIdentity: 'other',
      leaseDurationSeconds: 15,
      acquireTime: at(-60_000),
      renewTime: at(-60_000),
      leaseTransitions: 2,
    });
    const { elector, started } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(14_999);
    expect(store.writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(store.writes).toEqual([
      {
        op: 'replace',
        resourceVersion: '1',
        record: {
          holderIdentity: 'me',
          leaseDurationSeconds: 15,
          acquireTime: at(16_000),
          renewTime: at(16_000),
          leaseTransitions: 3,
        },
      },
    ]);
    expect(started).toHaveBeenCalledTimes(1);
    elector.stop();
  });

  it('loses once when renewals fail for 10 s, and stops writing at the deadline', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, lost, errors } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(2_000); // last successful renewal at 2 s
    store.failure = new Error('connection refused');
    await vi.advanceTimersByTimeAsync(9_999);
    expect(elector.canWrite()).toBe(true);
    expect(lost).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(elector.canWrite()).toBe(false);
    expect(elector.state()).toBe('lost');
    expect(lost).toHaveBeenCalledTimes(1);
    expect(lost).toHaveBeenCalledWith('renew deadline exceeded');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]?.message).toBe('cannot read the lease kreload/kreload-leader');
    const readsAfterLoss = store.reads;
    store.failure = undefined;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(store.reads).toBe(readsAfterLoss);
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it('loses at the deadline even while a renewal hangs', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, lost } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    store.failure = 'hang';
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lost).toHaveBeenCalledTimes(1);
    expect(elector.state()).toBe('lost');
  });

  it('loses at once when another holder is observed', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, lost } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    store.renewBy('usurper');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(lost).toHaveBeenCalledExactlyOnceWith('lease held by usurper');
    expect(elector.canWrite()).toBe(false);
  });

  it('treats a lost create race as following, without reporting an error', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, started, errors } = anElector(store);
    const originalGet = store.get.bind(store);
    // Another replica creates the Lease between our read and our create.
    store.get = async () => {
      const seen = await originalGet();
      store.renewBy('other');
      return seen;
    };
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(store.writes).toEqual([]);
    expect(started).not.toHaveBeenCalled();
    expect(errors).toEqual([]);
    expect(elector.state()).toBe('follower');
    elector.stop();
  });

  it('releases by clearing the holder with a 1 s duration, and a successor takes over at once', async () => {
    const store = new InMemoryLeaseStore();
    const first = anElector(store, 'first');
    first.elector.start();
    await vi.advanceTimersByTimeAsync(4_000);
    const second = anElector(store, 'second');
    second.elector.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(second.elector.state()).toBe('follower');

    await first.elector.release();
    expect(store.writes.at(-1)).toEqual({
      op: 'replace',
      resourceVersion: '3',
      record: {
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        acquireTime: at(4_000),
        renewTime: at(4_000),
        leaseTransitions: 0,
      },
    });
    expect(first.elector.state()).toBe('follower');
    expect(first.elector.canWrite()).toBe(false);
    expect(first.lost).not.toHaveBeenCalled();

    await vi.advanceTimersByTimeAsync(2_000);
    expect(second.elector.state()).toBe('leader');
    expect(store.lease?.record).toMatchObject({ holderIdentity: 'second', leaseTransitions: 1 });
    const writesAfterRelease = store.writes.filter(
      (w) => w.record.holderIdentity === 'first',
    ).length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(store.writes.filter((w) => w.record.holderIdentity === 'first').length).toBe(
      writesAfterRelease,
    );
    second.elector.stop();
  });

  it('releases with a fresh read when its resourceVersion is stale', async () => {
    const store = new InMemoryLeaseStore();
    const { elector } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    const current = store.lease!;
    store.lease = { record: current.record, resourceVersion: '99' };
    await elector.release();
    expect(store.lease.record.holderIdentity).toBeUndefined();
    expect(store.writes.at(-1)).toMatchObject({ op: 'replace', resourceVersion: '99' });
  });

  it('releases within a retry period even while an attempt hangs', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, errors } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    store.readFailure = 'hang';
    await vi.advanceTimersByTimeAsync(2_000);
    let released = false;
    const release = elector.release().then(() => {
      released = true;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(released).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await release;
    expect(store.writes.at(-1)).toMatchObject({ op: 'replace', resourceVersion: '1' });
    expect(store.lease?.record.holderIdentity).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('reports a throwing callback instead of leaking a rejection, and keeps running', async () => {
    const store = new InMemoryLeaseStore();
    const errors: LeaderElectionError[] = [];
    const elector = new LeaderElector({
      store,
      identity: 'me',
      name: ID.name,
      namespace: ID.namespace,
      clock,
      timers,
      onStartedLeading: () => {
        throw new Error('listener failed');
      },
      onLostLeading: () => undefined,
      onError: (error) => errors.push(error),
    });
    elector.start();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(errors.map((e) => e.message)).toEqual([
      'election cycle failed on kreload/kreload-leader',
    ]);
    expect(store.writes).toHaveLength(2);
    elector.stop();
  });

  it('does not write on release when it never led', async () => {
    const store = new InMemoryLeaseStore();
    store.renewBy('other');
    const { elector } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(2_000);
    await elector.release();
    expect(store.writes).toEqual([]);
  });

  it('does not touch the lease on stop', async () => {
    const store = new InMemoryLeaseStore();
    const { elector } = anElector(store);
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    elector.stop();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(store.writes).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reports the time of the last successful read for readiness', async () => {
    const store = new InMemoryLeaseStore();
    store.renewBy('other');
    const { elector } = anElector(store);
    expect(elector.lastObservedAt).toBeUndefined();
    elector.start();
    await vi.advanceTimersByTimeAsync(4_000);
    store.failure = new Error('timeout');
    await vi.advanceTimersByTimeAsync(6_000);
    expect(elector.lastObservedAt).toBe(at(4_000).getTime());
    elector.stop();
  });
});

describe('LeaderElector with the --leader-election-* timings', () => {
  const TIMINGS: LeaseTimings = {
    leaseDurationMs: 30_000,
    renewDeadlineMs: 7_000,
    retryPeriodMs: 5_000,
  };

  it('renews every retry period and records the lease duration in whole seconds', async () => {
    const store = new InMemoryLeaseStore();
    const { elector } = anElector(store, 'me', { timings: TIMINGS });
    elector.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(store.writes.map((w) => [w.record.renewTime, w.record.leaseDurationSeconds])).toEqual([
      [at(0), 30],
      [at(5_000), 30],
      [at(10_000), 30],
    ]);
    elector.stop();
  });

  it('takes over a holder that wrote no duration only after its own lease duration', async () => {
    const store = new InMemoryLeaseStore();
    store.seed({
      holderIdentity: 'other',
      leaseDurationSeconds: undefined,
      acquireTime: at(-60_000),
      renewTime: at(-60_000),
      leaseTransitions: 0,
    });
    const { elector } = anElector(store, 'me', { timings: TIMINGS });
    elector.start();
    await vi.advanceTimersByTimeAsync(29_999);
    expect(store.writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_001);
    expect(elector.state()).toBe('leader');
    elector.stop();
  });

  it('stops writing and loses at its renew deadline, not the default 10 s', async () => {
    const store = new InMemoryLeaseStore();
    const { elector, lost } = anElector(store, 'me', { timings: TIMINGS });
    elector.start();
    await vi.advanceTimersByTimeAsync(0);
    store.failure = 'hang';
    await vi.advanceTimersByTimeAsync(6_999);
    expect(elector.canWrite()).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(elector.canWrite()).toBe(false);
    expect(lost).toHaveBeenCalledExactlyOnceWith('renew deadline exceeded');
  });

  it('with releaseOnCancel false, stops without clearing the holder', async () => {
    const store = new InMemoryLeaseStore();
    const { elector } = anElector(store, 'me', { releaseOnCancel: false });
    elector.start();
    await vi.advanceTimersByTimeAsync(2_000);
    const writes = store.writes.length;
    await elector.release();
    expect(store.writes.length).toBe(writes);
    expect(store.lease?.record.holderIdentity).toBe('me');
    expect(elector.state()).toBe('follower');
    expect(elector.canWrite()).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(store.writes.length).toBe(writes);
  });
});
