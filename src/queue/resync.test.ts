import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PeriodicResync } from './resync.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

function resync(periodMs: number, random: () => number) {
  const at: number[] = [];
  const subject = new PeriodicResync({
    periodMs,
    timers: SYSTEM_TIMERS,
    random,
    onResync: () => at.push(Date.now()),
  });
  return { subject, at };
}

describe('PeriodicResync', () => {
  it('runs once per jittered period until stopped', async () => {
    const randoms = [0, 1, 0.5];
    const t = resync(10_000, () => randoms.shift() ?? 0.5);
    t.subject.start();
    t.subject.start();
    await vi.advanceTimersByTimeAsync(30_000);
    // 9 000 (−10 %), then 11 000 (+10 %), then 10 000
    expect(t.at).toEqual([9_000, 20_000, 30_000]);
    t.subject.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.at).toHaveLength(3);
  });

  it('is off with a period of 0', async () => {
    const t = resync(0, () => 0.5);
    t.subject.start();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.at).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
