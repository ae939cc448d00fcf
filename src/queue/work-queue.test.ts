import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WorkloadKey } from '../core/types.ts';
import type { PendingEntry } from './debouncer.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import {
  WorkQueue,
  type WorkContext,
  type WorkQueueDeps,
  type WorkQueueObserver,
  type WorkResult,
} from './work-queue.ts';

const A: WorkloadKey = 'Deployment/ns1/a';
const B: WorkloadKey = 'Deployment/ns1/b';
const C: WorkloadKey = 'StatefulSet/ns2/c';

interface Call {
  readonly key: WorkloadKey;
  readonly entry: PendingEntry;
  readonly at: number;
  readonly context: WorkContext<string>;
  readonly finish: (result: WorkResult<string>) => void;
  readonly fail: (error: unknown) => void;
}

/** A queue whose handler records each call and finishes only when the test says so. */
function setup(
  options: Partial<WorkQueueDeps<string>> & { autoFinish?: WorkResult<string> | undefined } = {},
) {
  const calls: Call[] = [];
  const log: string[] = [];
  let running = 0;
  let maxRunningPerKey = 0;
  const runningPerKey = new Map<WorkloadKey, number>();
  const observer: WorkQueueObserver = {
    depthChanged: (depth) => log.push(`depth ${depth}`),
    added: (key) => log.push(`added ${key}`),
    coalesced: (key) => log.push(`coalesced ${key}`),
    started: (key, latencyMs) => log.push(`started ${key} after ${latencyMs}`),
    retryScheduled: (key, retry) => log.push(`retry ${key} #${retry.attempt} in ${retry.delayMs}`),
    gaveUp: (key, attempts) => log.push(`gave up ${key} after ${attempts}`),
    handlerFailed: (key, error) => log.push(`failed ${key}: ${String(error)}`),
  };
  const queue = new WorkQueue<string>({
    concurrency: 3,
    debounce: { syncDelayMs: 2_000, syncMaxDelayMs: 30_000 },
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    observer,
    handler: (key, entry, context) => {
      running += 1;
      const perKey = (runningPerKey.get(key) ?? 0) + 1;
      runningPerKey.set(key, perKey);
      maxRunningPerKey = Math.max(maxRunningPerKey, perKey);
      return new Promise<WorkResult<string>>((resolve, reject) => {
        const settle = (): void => {
          running -= 1;
          runningPerKey.set(key, (runningPerKey.get(key) ?? 1) - 1);
        };
        calls.push({
          key,
          entry,
          at: Date.now(),
          context,
          finish: (result) => {
            settle();
            resolve(result);
          },
          fail: (error) => {
            settle();
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        });
        if (options.autoFinish) calls.at(-1)?.finish(options.autoFinish);
      });
    },
    ...options,
  });
  return {
    queue,
    calls,
    log,
    running: () => running,
    maxRunningPerKey: () => maxRunningPerKey,
  };
}

const advance = (ms: number): Promise<void> =>
  vi.advanceTimersByTimeAsync(ms).then(() => undefined);

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue debounce', () => {
  it('runs ten triggers inside one window as one call carrying every change', async () => {
    const { queue, calls, log } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    for (let i = 0; i < 10; i += 1) {
      queue.trigger(A, {
        debounced: true,
        change: { sourceKey: i % 2 ? 'secret/db' : 'configmap/app', observedAt: Date.now() },
      });
      await advance(100);
    }
    // now 1000; the last trigger was at 900 → due 2900
    await advance(1_899);
    expect(calls).toHaveLength(0);
    await advance(1);
    expect(calls.map((call) => [call.key, call.at])).toEqual([[A, 2_900]]);
    expect(calls[0]?.entry).toEqual({
      firstAt: 0,
      dueAt: 2_900,
      changes: [
        { sourceKey: 'configmap/app', observedAt: 0 },
        { sourceKey: 'secret/db', observedAt: 100 },
      ],
    });
    expect(log.filter((line) => line.startsWith('coalesced'))).toHaveLength(9);
    expect(log.filter((line) => line.startsWith('added'))).toEqual([`added ${A}`]);
    expect(log).toContain(`started ${A} after 2900`);
    await queue.idle();
    expect(queue.depth).toBe(0);
  });

  it('with sync-delay 0 runs as soon as a worker is free, once per change', async () => {
    const { queue, calls } = setup({
      autoFinish: { kind: 'done' },
      debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 },
    });
    queue.start();
    queue.trigger(A, { debounced: true });
    expect(calls).toHaveLength(0); // never inside trigger()
    await advance(0);
    expect(calls.map((call) => call.at)).toEqual([0]);
    await advance(50);
    queue.trigger(A, { debounced: true });
    await advance(0);
    expect(calls.map((call) => call.at)).toEqual([0, 50]);
  });

  it('continuous churn postpones the run by at most sync-max-delay', async () => {
    const { queue, calls } = setup({
      autoFinish: { kind: 'done' },
      debounce: { syncDelayMs: 2_000, syncMaxDelayMs: 5_000 },
    });
    queue.start();
    for (let t = 0; t < 8_000; t += 1_000) {
      queue.trigger(A, { debounced: true });
      await advance(1_000);
    }
    // first run at firstAt + 5000; the triggers at 5000..7000 make a second entry due 9000
    expect(calls.map((call) => call.at)).toEqual([5_000]);
    await advance(1_000);
    expect(calls.map((call) => [call.at, call.entry.firstAt])).toEqual([
      [5_000, 0],
      [9_000, 5_000],
    ]);
  });

  it('an immediate trigger starts a new key at once but never shortens a window', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    queue.trigger(A, { debounced: true });
    queue.trigger(A, { debounced: false });
    queue.trigger(B, { debounced: false });
    await advance(0);
    expect(calls.map((call) => call.key)).toEqual([B]);
    await advance(2_000);
    expect(calls.map((call) => [call.key, call.at])).toEqual([
      [B, 0],
      [A, 2_000],
    ]);
  });

  it('keeps triggers received before start and runs them after', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.trigger(A, { debounced: false });
    await advance(5_000);
    expect(calls).toHaveLength(0);
    queue.start();
    await advance(0);
    expect(calls.map((call) => [call.key, call.at])).toEqual([[A, 5_000]]);
  });
});

describe('WorkQueue workers', () => {
  it('runs at most `concurrency` keys at once, in dueAt order, ties to firstAt', async () => {
    const { queue, calls, running } = setup({ concurrency: 1 });
    queue.start();
    queue.trigger(C, { debounced: true }); // due 2000
    await advance(500);
    queue.trigger(B, { debounced: false }); // due 500
    queue.trigger(A, { debounced: false }); // due 500, same firstAt: FIFO after B
    await advance(0);
    expect(calls.map((call) => call.key)).toEqual([B]);
    await advance(5_000);
    expect(running()).toBe(1);
    calls[0]?.finish({ kind: 'done' });
    await advance(0);
    calls[1]?.finish({ kind: 'done' });
    await advance(0);
    expect(calls.map((call) => [call.key, call.at])).toEqual([
      [B, 500],
      [A, 5_500],
      [C, 5_500],
    ]);
  });

  it('never runs one key on two workers; a trigger in flight runs once more afterwards', async () => {
    const { queue, calls, maxRunningPerKey } = setup({
      concurrency: 3,
      debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 },
    });
    queue.start();
    queue.trigger(A, { debounced: true });
    await advance(0);
    expect(calls).toHaveLength(1);
    queue.trigger(A, { debounced: true, change: { sourceKey: 'secret/db', observedAt: 10 } });
    queue.trigger(A, { debounced: true });
    queue.trigger(B, { debounced: true });
    await advance(1_000);
    expect(calls.map((call) => call.key)).toEqual([A, B]);
    expect(queue.pendingEntry(A)).toBeDefined();
    calls[0]?.finish({ kind: 'done' });
    await advance(0);
    expect(calls.map((call) => [call.key, call.at])).toEqual([
      [A, 0],
      [B, 0],
      [A, 1_000],
    ]);
    expect(calls[2]?.entry.changes).toEqual([{ sourceKey: 'secret/db', observedAt: 10 }]);
    calls[2]?.finish({ kind: 'done' });
    calls[1]?.finish({ kind: 'done' });
    await advance(10_000);
    expect(calls).toHaveLength(3);
    expect(maxRunningPerKey()).toBe(1);
  });

  it('reports depth, including entries waiting behind an in-flight run', async () => {
    const { queue, calls, log } = setup({ debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 } });
    queue.start();
    queue.trigger(A, { debounced: true });
    await advance(0);
    queue.trigger(A, { debounced: true });
    expect(queue.depth).toBe(1);
    expect(queue.inFlight).toEqual([A]);
    calls[0]?.finish({ kind: 'done' });
    await advance(0);
    calls[1]?.finish({ kind: 'done' });
    await queue.idle();
    expect(log.filter((line) => line.startsWith('depth'))).toEqual([
      'depth 1',
      'depth 0',
      'depth 1',
      'depth 0',
    ]);
  });
});

describe('WorkQueue retries', () => {
  it('retries with 1 s doubling backoff and gives up after maxAttempts', async () => {
    const { queue, calls, log } = setup({
      autoFinish: { kind: 'error', retryable: true },
      maxAttempts: 4,
    });
    queue.start();
    queue.trigger(A, {
      debounced: false,
      change: { sourceKey: 'configmap/app', observedAt: 0 },
    });
    await advance(60_000);
    expect(calls.map((call) => [call.at, call.context.attempt])).toEqual([
      [0, 1],
      [1_000, 2],
      [3_000, 3],
      [7_000, 4],
    ]);
    expect(calls.every((call) => call.entry.changes.length === 1)).toBe(true);
    expect(log.filter((line) => /^(retry|gave up)/.test(line))).toEqual([
      `retry ${A} #2 in 1000`,
      `retry ${A} #3 in 2000`,
      `retry ${A} #4 in 4000`,
      `gave up ${A} after 4`,
    ]);
    expect(queue.depth).toBe(0);
    // the next event starts afresh
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls.at(-1)?.context.attempt).toBe(1);
  });

  it('gives up on a terminal error at once, after a requeue kept a continuation', async () => {
    const { queue, calls, log } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 100, resume: 'a' });
    await advance(100);
    expect(calls[1]?.context).toMatchObject({ attempt: 2, resume: 'a' });
    calls[1]?.finish({ kind: 'error', retryable: false });
    await advance(60_000);
    expect(calls).toHaveLength(2);
    expect(log.filter((line) => /^(retry|gave up)/.test(line))).toEqual([
      `retry ${A} #2 in 100`,
      `gave up ${A} after 2`,
    ]);
    expect(queue.depth).toBe(0);
    // the next event starts afresh: no attempt count, no continuation
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls[2]?.context).toMatchObject({ attempt: 1, resume: undefined });
  });

  it('a trigger during the backoff waits for it and resets nothing', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'error', retryable: true }); // retry at 1000
    await advance(0);
    queue.trigger(A, { debounced: false });
    await advance(999);
    expect(calls).toHaveLength(1);
    await advance(1);
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 2]);
    calls[1]?.finish({ kind: 'done' });
    await advance(0);
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 2, 1]);
  });

  it('counts a handler that throws as a failure', async () => {
    const { queue, calls, log } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.fail(new Error('boom'));
    await advance(1_000);
    expect(log).toContain(`failed ${A}: Error: boom`);
    expect(calls.map((call) => call.at)).toEqual([0, 1_000]);
  });
});

describe('WorkQueue retry requests (one attempt per run, docs/adr/0023)', () => {
  it('waits out the requested delay with the worker free: another key runs meanwhile', async () => {
    const { queue, calls, log } = setup({ concurrency: 1 });
    queue.start();
    queue.trigger(A, { debounced: false, change: { sourceKey: 'secret/db', observedAt: 0 } });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 5_000 }); // a 429 with Retry-After: 5
    await advance(0);
    queue.trigger(B, { debounced: false });
    await advance(0);
    expect(calls.map((call) => [call.key, call.at])).toEqual([
      [A, 0],
      [B, 0],
    ]);
    calls[1]?.finish({ kind: 'done' });
    await advance(4_999);
    expect(calls).toHaveLength(2);
    await advance(1);
    expect(calls.map((call) => [call.key, call.at, call.context.attempt])).toEqual([
      [A, 0, 1],
      [B, 0, 1],
      [A, 5_000, 2],
    ]);
    expect(calls[2]?.entry.changes).toEqual([{ sourceKey: 'secret/db', observedAt: 0 }]);
    expect(log).toContain(`retry ${A} #2 in 5000`);
  });

  it('hands the resume state to the next run and forgets it once the key is done', async () => {
    const { queue, calls } = setup({ autoFinish: undefined });
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 250, resume: 'after attempt 1' });
    await advance(250);
    calls[1]?.finish({ kind: 'requeue', afterMs: 500, resume: 'after attempt 2' });
    await advance(500);
    calls[2]?.finish({ kind: 'done' });
    await advance(0);
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls.map((call) => [call.at, call.context.attempt, call.context.resume])).toEqual([
      [0, 1, undefined],
      [250, 2, 'after attempt 1'],
      [750, 3, 'after attempt 2'],
      [750, 1, undefined],
    ]);
  });

  it('a wakeEarly promise ends the wait before the delay', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    let arrive: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    calls[0]?.finish({ kind: 'requeue', afterMs: 1_000, wakeEarly: arrived });
    await advance(30);
    expect(calls).toHaveLength(1);
    arrive();
    await advance(0);
    expect(calls.map((call) => call.at)).toEqual([0, 30]);
    calls[1]?.finish({ kind: 'done' });
    await advance(5_000);
    expect(calls).toHaveLength(2);
  });

  it('wakeOnTrigger: a new trigger ends the wait; without it the wait holds', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 30_000, wakeOnTrigger: true });
    await advance(50);
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls.map((call) => call.at)).toEqual([0, 50]);
    expect(calls[1]?.context.retriggered).toBe(true);
    calls[1]?.finish({ kind: 'requeue', afterMs: 1_000 });
    await advance(10);
    queue.trigger(A, { debounced: false });
    await advance(500);
    expect(calls).toHaveLength(2);
    await advance(500);
    expect(calls.map((call) => call.at)).toEqual([0, 50, 1_050]);
    calls[2]?.finish({ kind: 'done' });
  });

  it('is not bounded by maxAttempts: the handler decides when to stop', async () => {
    const { queue, calls, log } = setup({
      autoFinish: { kind: 'requeue', afterMs: 100 },
      maxAttempts: 2,
    });
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(450);
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(log.filter((line) => line.startsWith('gave up'))).toEqual([]);
    queue.drop(A);
  });

  it('tells a retry run whether triggers arrived since the previous run started', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 100 });
    await advance(100);
    queue.trigger(A, { debounced: false }); // while the second run is in flight
    calls[1]?.finish({ kind: 'requeue', afterMs: 100 });
    await advance(100);
    calls[2]?.finish({ kind: 'requeue', afterMs: 100 });
    await advance(50);
    queue.trigger(A, { debounced: false }); // while the retry waits
    await advance(50);
    expect(calls.map((call) => [call.context.attempt, call.context.retriggered])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, true],
    ]);
  });

  it('reports the start of an entry once, however many attempts it takes', async () => {
    const { queue, calls, log } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 100 });
    await advance(100);
    calls[1]?.finish({ kind: 'error', retryable: true }); // the queue's own backoff: 2 s for a second failure
    await advance(2_000);
    calls[2]?.finish({ kind: 'done' });
    await advance(0);
    expect(calls).toHaveLength(3);
    expect(log.filter((line) => line.startsWith('started'))).toEqual([`started ${A} after 0`]);
  });

  it('again: a fresh entry, run at once with attempt 1 and no resume state', async () => {
    const { queue, calls, log } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 100, resume: 'a' });
    await advance(100);
    calls[1]?.finish({ kind: 'done', rerun: true });
    await advance(0);
    expect(calls.map((call) => [call.at, call.context.attempt, call.context.resume])).toEqual([
      [0, 1, undefined],
      [100, 2, 'a'],
      [100, 1, undefined],
    ]);
    expect(log.filter((line) => line.startsWith('started'))).toHaveLength(2);
    calls[2]?.finish({ kind: 'done' });
    await queue.idle();
  });

  it('stop and drop cancel a requested retry and forget its resume state', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    queue.trigger(B, { debounced: false });
    await advance(0);
    calls[0]?.finish({ kind: 'requeue', afterMs: 1_000, resume: 'a' });
    calls[1]?.finish({ kind: 'requeue', afterMs: 1_000, resume: 'b' });
    await advance(0);
    queue.drop(A);
    queue.stop();
    await advance(10_000);
    expect(calls).toHaveLength(2);
    queue.start();
    queue.trigger(A, { debounced: false });
    queue.trigger(B, { debounced: false });
    await advance(0);
    expect(calls.slice(2).map((call) => [call.context.attempt, call.context.resume])).toEqual([
      [1, undefined],
      [1, undefined],
    ]);
  });
});

describe('WorkQueue drop, stop and drain', () => {
  it('drop forgets a pending key; a run in flight is not retried', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: true });
    queue.drop(A);
    queue.trigger(B, { debounced: false });
    await advance(0);
    queue.drop(B);
    calls[0]?.finish({ kind: 'error', retryable: true });
    await advance(60_000);
    expect(calls.map((call) => call.key)).toEqual([B]);
    await queue.idle();
  });

  it('drop during a retry wait cancels the retry', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'error', retryable: true } });
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(500);
    queue.drop(A);
    await advance(60_000);
    expect(calls).toHaveLength(1);
    queue.trigger(A, { debounced: false });
    await advance(0);
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 1]);
  });

  it('dropNamespace drops only that namespace', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    for (const key of [A, B, C]) queue.trigger(key, { debounced: true });
    queue.dropNamespace('ns1');
    await advance(2_000);
    expect(calls.map((call) => call.key)).toEqual([C]);
  });

  it('stop drops pending entries and ignores later triggers', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    queue.trigger(A, { debounced: true });
    queue.stop();
    expect(queue.depth).toBe(0);
    expect(queue.trigger(B, { debounced: false })).toBe('ignored');
    await advance(60_000);
    expect(calls).toHaveLength(0);
    await queue.idle();
  });

  it('drain waits for in-flight work only, and does not retry it', async () => {
    const { queue, calls } = setup({ debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 } });
    queue.start();
    queue.trigger(A, { debounced: true });
    await advance(0);
    queue.trigger(B, { debounced: true, change: undefined });
    queue.trigger(C, { debounced: false });
    await advance(0);
    expect(calls.map((call) => call.key)).toEqual([A, B, C]);
    calls[1]?.finish({ kind: 'done' });
    calls[2]?.finish({ kind: 'done' });
    queue.trigger(A, { debounced: true }); // pending behind the in-flight run: dropped by drain
    let drained: boolean | undefined;
    const draining = queue.drain(10_000).then((result) => (drained = result));
    await advance(3_000);
    expect(drained).toBeUndefined();
    calls[0]?.finish({ kind: 'error', retryable: true });
    await draining;
    expect(drained).toBe(true);
    await advance(60_000);
    expect(calls).toHaveLength(3);
    expect(calls[0]?.context.signal.aborted).toBe(false);
  });

  it('drain aborts in-flight work at the deadline', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    let drained: boolean | undefined;
    const draining = queue.drain(10_000).then((result) => (drained = result));
    await advance(9_999);
    expect(drained).toBeUndefined();
    await advance(1);
    await draining;
    expect(drained).toBe(false);
    expect(calls[0]?.context.signal.aborted).toBe(true);
    expect(String(calls[0]?.context.signal.reason)).toContain('DrainDeadlineError');
  });

  it('a restart after stop still waits for the old run of a key, and does not retry it', async () => {
    const { queue, calls, maxRunningPerKey } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    queue.stop();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(1_000);
    expect(calls).toHaveLength(1);
    calls[0]?.finish({ kind: 'error', retryable: true });
    await advance(0);
    expect(calls.map((call) => call.context.attempt)).toEqual([1, 1]);
    calls[1]?.finish({ kind: 'done' });
    await advance(60_000);
    expect(calls).toHaveLength(2);
    expect(maxRunningPerKey()).toBe(1);
  });

  it('drain with nothing in flight resolves at once', async () => {
    const { queue } = setup();
    queue.start();
    queue.trigger(A, { debounced: true });
    await expect(queue.drain(10_000)).resolves.toBe(true);
    expect(queue.depth).toBe(0);
  });
});

describe('WorkQueue.whenNoWorkInFlight', () => {
  it('resolves at once when nothing runs', async () => {
    const { queue } = setup();
    queue.start();
    let resolved = false;
    void queue.whenNoWorkInFlight(5_000).then(() => (resolved = true));
    await advance(0);
    expect(resolved).toBe(true);
  });

  it('waits until the last in-flight run finishes, not for pending debounce windows', async () => {
    const { queue, calls } = setup(); // sync delay 2 s
    queue.start();
    queue.trigger(A, { debounced: false });
    queue.trigger(B, { debounced: false });
    await advance(0);
    queue.trigger(C, { debounced: true }); // inside its debounce window until 2 000
    let resolved = false;
    void queue.whenNoWorkInFlight(5_000).then(() => (resolved = true));
    calls[0]?.finish({ kind: 'done' });
    await advance(100);
    expect(resolved).toBe(false);
    calls[1]?.finish({ kind: 'done' });
    await advance(0);
    expect(resolved).toBe(true);
    expect(queue.depth).toBe(1);
  });

  it('gives up waiting after maxWaitMs', async () => {
    const { queue } = setup({ debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 } });
    queue.start();
    queue.trigger(A, { debounced: true });
    await advance(0);
    let resolved = false;
    void queue.whenNoWorkInFlight(2_000).then(() => (resolved = true));
    await advance(1_999);
    expect(resolved).toBe(false);
    await advance(1);
    expect(resolved).toBe(true);
  });
  it('lets many waiters share one timer, each released no later than its own maxWaitMs', async () => {
    const { queue } = setup({ debounce: { syncDelayMs: 0, syncMaxDelayMs: 0 } });
    queue.start();
    queue.trigger(A, { debounced: true });
    await advance(0);
    const timersBefore = vi.getTimerCount();
    const released: string[] = [];
    for (let i = 0; i < 50; i++) {
      void queue.whenNoWorkInFlight(2_000).then(() => released.push(`first-${i}`));
    }
    expect(vi.getTimerCount() - timersBefore).toBe(1);
    await advance(500);
    // Joins the wait that ends at 2 000, before its own limit of 2 500.
    void queue.whenNoWorkInFlight(2_000).then(() => released.push('later'));
    // Its own limit (1 600) comes before the shared one: a wait of its own.
    void queue.whenNoWorkInFlight(1_100).then(() => released.push('shorter'));
    expect(vi.getTimerCount() - timersBefore).toBe(2);
    await advance(1_099);
    expect(released).toEqual([]);
    await advance(1);
    expect(released).toEqual(['shorter']);
    await advance(399);
    expect(released).toHaveLength(1);
    await advance(1);
    expect(released).toHaveLength(52);
    expect(vi.getTimerCount() - timersBefore).toBe(0);
  });

  it('releases every sharing waiter when the last run finishes, and cancels the timer', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    const timersBefore = vi.getTimerCount();
    let released = 0;
    for (let i = 0; i < 10; i++) void queue.whenNoWorkInFlight(5_000).then(() => released++);
    calls[0]?.finish({ kind: 'done' });
    await advance(0);
    expect(released).toBe(10);
    expect(vi.getTimerCount()).toBeLessThan(timersBefore + 1);
    // A new wait after the shared one settled is a fresh one.
    queue.trigger(B, { debounced: false });
    await advance(0);
    let again = false;
    void queue.whenNoWorkInFlight(5_000).then(() => (again = true));
    await advance(4_999);
    expect(again).toBe(false);
    await advance(1);
    expect(again).toBe(true);
  });
});

describe('WorkQueue.triggerAt (timed triggers, e.g. a pause resume)', () => {
  // A fake timer set to 0 ms while the clock ticks fires 1 ms later: the worker's `at` may trail
  // the trigger by 1 ms, so the trigger time is read from the entry (`firstAt`).
  const triggered = (calls: readonly Call[]) => calls.map((call) => [call.key, call.entry.firstAt]);

  it('triggers the key at the given time, a later call for a key replacing the earlier', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    queue.triggerAt(A, 10_000);
    queue.triggerAt(A, 20_000);
    queue.triggerAt(B, 5_000);
    await advance(4_999);
    expect(calls).toHaveLength(0);
    await advance(2);
    expect(triggered(calls)).toEqual([[B, 5_000]]);
    await advance(14_997);
    expect(calls).toHaveLength(1);
    await advance(3);
    expect(triggered(calls)).toEqual([
      [B, 5_000],
      [A, 20_000],
    ]);
  });

  it('keeps working past the 2^31 ms timer limit (a 1000h pause)', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    const at = 1_000 * 3_600_000;
    queue.triggerAt(A, at);
    await advance(2 ** 31);
    expect(calls).toHaveLength(0);
    await advance(at - 2 ** 31 - 1);
    expect(calls).toHaveLength(0);
    await advance(2);
    expect(triggered(calls)).toEqual([[A, at]]);
  });

  it('a time already past triggers at once; stop, drop and dropNamespace cancel', async () => {
    const { queue, calls } = setup({ autoFinish: { kind: 'done' } });
    queue.start();
    await advance(1_000);
    queue.triggerAt(A, 0);
    await advance(1);
    expect(triggered(calls)).toEqual([[A, 1_000]]);
    queue.triggerAt(A, 5_000);
    queue.triggerAt(B, 5_000);
    queue.triggerAt(C, 5_000);
    queue.drop(A);
    queue.dropNamespace('ns2');
    await advance(5_000);
    expect(calls.map((call) => call.key)).toEqual([A, B]);
    queue.triggerAt(B, 9_000);
    queue.stop();
    queue.start();
    await advance(5_000);
    expect(calls.map((call) => call.key)).toEqual([A, B]);
  });

  it('hands the handler a triggerAt for its own key', async () => {
    const { queue, calls } = setup();
    queue.start();
    queue.trigger(A, { debounced: false });
    await advance(0);
    calls[0]?.context.triggerAt(Date.now() + 3_000);
    calls[0]?.finish({ kind: 'done' });
    await advance(2_999);
    expect(calls).toHaveLength(1);
    await advance(2);
    expect(triggered(calls)).toEqual([
      [A, 0],
      [A, 3_000],
    ]);
  });
});
