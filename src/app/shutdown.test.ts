import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaderElector } from '../leader/leader-elector.ts';
import type { LeaseId, LeaseRecord, LeaseStore, ObservedLease } from '../leader/ports.ts';
import type { Logger } from '../log/logger.ts';
import { SYSTEM_CLOCK, SYSTEM_TIMERS } from '../time/timers.ts';
import { DrainDeadlineError, WorkQueue, type WorkHandler } from '../queue/work-queue.ts';
import { drainAndRelease, STOP_DEADLINES } from './shutdown.ts';

const NEVER = new Promise<never>(() => undefined);

/** Answers until `hang` is set, then never again: an API server that stopped responding. */
class HangingLeaseStore implements LeaseStore {
  hang = false;
  puts = 0;
  #lease: ObservedLease | undefined;

  get(): Promise<ObservedLease | undefined> {
    return this.hang ? NEVER : Promise.resolve(this.#lease);
  }

  create(_id: LeaseId, record: LeaseRecord): Promise<ObservedLease> {
    this.#lease = { record, resourceVersion: '1' };
    return Promise.resolve(this.#lease);
  }

  replace(_id: LeaseId, record: LeaseRecord, resourceVersion: string): Promise<ObservedLease> {
    this.puts++;
    if (this.hang) return NEVER;
    this.#lease = { record, resourceVersion: String(Number(resourceVersion) + 1) };
    return Promise.resolve(this.#lease);
  }
}

function recordingLogger(): Logger & { readonly warnings: string[] } {
  const warnings: string[] = [];
  const ignore = (): void => undefined;
  return {
    warnings,
    trace: ignore,
    debug: ignore,
    info: ignore,
    warn: (message) => {
      warnings.push(message);
    },
    error: ignore,
    log: ignore,
    isLevelEnabled: () => false,
    child: () => recordingLogger(),
  };
}

function aQueue(handler: WorkHandler): WorkQueue {
  return new WorkQueue({
    concurrency: 1,
    debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 },
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    handler,
  });
}

async function aLeader(store: LeaseStore): Promise<LeaderElector> {
  const elector = new LeaderElector({
    store,
    identity: 'me',
    name: 'kreload',
    namespace: 'ops',
    clock: SYSTEM_CLOCK,
    timers: SYSTEM_TIMERS,
    onStartedLeading: () => undefined,
    onLostLeading: () => undefined,
  });
  elector.start();
  await vi.advanceTimersByTimeAsync(100);
  expect(elector.isLeader()).toBe(true);
  return elector;
}

/** The outcome once settled, and the (fake) time it took. */
function timed<T>(work: Promise<T>): { outcome: () => T | undefined; elapsedMs: () => number } {
  const startedAt = Date.now();
  let outcome: T | undefined;
  let settledAt = Number.NaN;
  void work.then((value) => {
    outcome = value;
    settledAt = Date.now();
  });
  return { outcome: () => outcome, elapsedMs: () => settledAt - startedAt };
}

describe('drainAndRelease (§13.5, ADR 0018)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts a write that never answers at the drain deadline, then releases the Lease', async () => {
    const signals: AbortSignal[] = [];
    // A workload writer that never answers and ignores its abort signal.
    const queue = aQueue((_key, _entry, context) => {
      signals.push(context.signal);
      return NEVER;
    });
    const store = new HangingLeaseStore();
    const elector = await aLeader(store);
    queue.start();
    queue.trigger('Deployment/ops/app', { debounced: false });
    await vi.advanceTimersByTimeAsync(100);
    expect(signals).toHaveLength(1);

    const logger = recordingLogger();
    const stop = timed(drainAndRelease({ queue, elector, logger }));
    await vi.advanceTimersByTimeAsync(STOP_DEADLINES.drainMs - 1);
    expect(signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(signals[0]?.reason).toBeInstanceOf(DrainDeadlineError);
    await vi.advanceTimersByTimeAsync(0);
    expect(stop.outcome()).toEqual({ drained: false, released: true });
    expect(stop.elapsedMs()).toBe(STOP_DEADLINES.drainMs);
    expect(logger.warnings).toEqual(['in-flight work aborted at the drain deadline']);
  });

  it('gives up on a Lease release PUT that never answers after its deadline, and stops renewing', async () => {
    const queue = aQueue(() => Promise.resolve({ kind: 'done' } as const));
    const store = new HangingLeaseStore();
    const elector = await aLeader(store);
    store.hang = true;
    const puts = store.puts;

    const logger = recordingLogger();
    const stop = timed(drainAndRelease({ queue, elector, logger }));
    await vi.advanceTimersByTimeAsync(STOP_DEADLINES.leaseReleaseMs - 1);
    expect(stop.outcome()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(stop.outcome()).toEqual({ drained: true, released: false });
    expect(stop.elapsedMs()).toBe(STOP_DEADLINES.leaseReleaseMs);
    expect(store.puts).toBe(puts + 1);
    expect(logger.warnings).toEqual([
      'lease release did not finish in time; a successor waits for it to expire',
    ]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.puts, 'no renewal after the stop').toBe(puts + 1);
  });

  it('releases at once when nothing is in flight and the API answers', async () => {
    const queue = aQueue(() => Promise.resolve({ kind: 'done' } as const));
    const elector = await aLeader(new HangingLeaseStore());
    const logger = recordingLogger();
    const stop = timed(drainAndRelease({ queue, elector, logger }));
    await vi.advanceTimersByTimeAsync(0);
    expect(stop.outcome()).toEqual({ drained: true, released: true });
    expect(stop.elapsedMs()).toBe(0);
    expect(logger.warnings).toEqual([]);
    expect(elector.isLeader()).toBe(false);
  });
});
