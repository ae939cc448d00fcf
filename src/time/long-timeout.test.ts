import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SYSTEM_TIMERS } from './timers.ts';
import { MAX_TIMEOUT_MS, setLongTimeout } from './long-timeout.ts';

const HOUR_MS = 3_600_000;

/** The timer sources of src/ (the one system Timers and what it chains through), as `(delayMs, callback) => cancel`. */
const SCHEDULERS: readonly {
  name: string;
  schedule: (ms: number, fn: () => void) => () => void;
}[] = [
  { name: 'setLongTimeout', schedule: (ms, fn) => setLongTimeout(fn, ms) },
  { name: 'SYSTEM_TIMERS', schedule: (ms, fn) => SYSTEM_TIMERS.schedule(ms, fn) },
];

describe('long timers (ADR 0018)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(SCHEDULERS)('$name: a 1000h delay fires once, after 1000h', ({ schedule }) => {
    const fired = vi.fn();
    schedule(1000 * HOUR_MS, fired);
    vi.advanceTimersByTime(1000 * HOUR_MS - 1);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * MAX_TIMEOUT_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it.each(SCHEDULERS)(
    '$name: cancelling between two links of the chain stops it',
    ({ schedule }) => {
      const fired = vi.fn();
      const cancel = schedule(3 * MAX_TIMEOUT_MS, fired);
      vi.advanceTimersByTime(MAX_TIMEOUT_MS + 5);
      cancel();
      cancel();
      vi.advanceTimersByTime(5 * MAX_TIMEOUT_MS);
      expect(fired).not.toHaveBeenCalled();
      expect(vi.getTimerCount()).toBe(0);
    },
  );

  it('keeps one timer pending at a time while chaining', () => {
    setLongTimeout(() => undefined, 5 * MAX_TIMEOUT_MS);
    for (let link = 0; link < 5; link++) {
      expect(vi.getTimerCount()).toBe(1);
      vi.advanceTimersByTime(MAX_TIMEOUT_MS);
    }
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    { delayMs: MAX_TIMEOUT_MS, firesAfterMs: MAX_TIMEOUT_MS },
    { delayMs: MAX_TIMEOUT_MS + 1, firesAfterMs: MAX_TIMEOUT_MS + 1 },
    { delayMs: 0, firesAfterMs: 0 },
    { delayMs: -5, firesAfterMs: 0 },
    { delayMs: Number.NaN, firesAfterMs: 0 },
  ])('a delay of $delayMs ms fires after $firesAfterMs ms', ({ delayMs, firesAfterMs }) => {
    const fired = vi.fn();
    setLongTimeout(fired, delayMs);
    if (firesAfterMs > 0) {
      vi.advanceTimersByTime(firesAfterMs - 1);
      expect(fired).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
    } else {
      vi.advanceTimersByTime(0);
    }
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('an infinite delay never fires', () => {
    const fired = vi.fn();
    setLongTimeout(fired, Number.POSITIVE_INFINITY);
    vi.advanceTimersByTime(20 * MAX_TIMEOUT_MS);
    expect(fired).not.toHaveBeenCalled();
  });
});
