/**
 * The one Clock and the one Timers of kreload, and their system implementations. Injected everywhere
 * time is read or waited on, so tests drive it with fakes and no module reads the wall clock behind
 * a caller's back. A consumer that needs less takes a `Pick<>` of these, never a look-alike.
 */
import { setLongTimeout } from './long-timeout.ts';

export interface Clock {
  /** Wall-clock milliseconds since the epoch: timestamps written out and §5.4 times. */
  now(): number;
  /** Monotonic milliseconds: elapsed time and deadlines, which must not jump with the wall clock. */
  monotonicMs(): number;
}

export interface Timers {
  /**
   * Milliseconds since the epoch, the time base the delays given to `schedule` are computed in (a
   * due time minus `now()`): a fake Timers advances both together.
   */
  now(): number;
  /** Runs `callback` once after `delayMs`; the returned function cancels it (idempotent). */
  schedule(delayMs: number, callback: () => void): () => void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  monotonicMs: () => performance.now(),
};

/** The process clock and Node's timers, chained past their 24.8-day limit (ADR 0018). */
export const SYSTEM_TIMERS: Timers = {
  now: () => Date.now(),
  schedule: (delayMs, callback) => setLongTimeout(callback, delayMs),
};
