import { setLongTimeout } from '../time/long-timeout.ts';

/**
 * Time as the queue sees it. Injected so that tests drive it with fake timers and so that the
 * debounce arithmetic never reads the wall clock behind a caller's back.
 */
export interface Timers {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` once after `delayMs`; the returned function cancels it (idempotent). */
  schedule(delayMs: number, callback: () => void): () => void;
}

/** The process clock and Node's timers, chained past their 24.8-day limit. */
export const SYSTEM_TIMERS: Timers = {
  now: () => Date.now(),
  schedule: (delayMs, callback) => setLongTimeout(callback, delayMs),
};
