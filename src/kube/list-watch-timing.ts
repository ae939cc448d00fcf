/** Timing rules of the list-watch loop (§9.1). */
import { BACKOFF_POLICIES, watchRetryDelay } from '../queue/backoff.ts';

export const LIST_WATCH_TIMING = {
  pageSize: 500,
  backoffInitialMs: BACKOFF_POLICIES.watch.baseMs,
  backoffMaxMs: BACKOFF_POLICIES.watch.capMs,
  jitter: BACKOFF_POLICIES.watch.jitter,
  /** A failure after this long without one starts the backoff again from the initial delay. */
  healthyResetMs: 60_000,
  /** Re-probe interval of a forbidden (403) or absent (404) resource. */
  probeIntervalMs: 60_000,
  watchTimeoutMinSeconds: 300,
  watchTimeoutMaxSeconds: 600,
  /** An expired `continue` token restarts the list at once this many times, then backs off. */
  maxListRestarts: 2,
} as const;

/** `random` in [0, 1): ±20 % around the nominal delay. */
export function jittered(ms: number, random: () => number): number {
  return Math.round(ms * (1 + LIST_WATCH_TIMING.jitter * (2 * random() - 1)));
}

/** 1 s, 2 s, 4 s … capped at 30 s, each ±20 % (the `watch` policy of ADR 0012). From 0. */
export function backoffDelay(attempt: number, random: () => number): number {
  return watchRetryDelay(attempt, random);
}

/** Server-side watch timeout, spread over 5–10 minutes so watches do not reconnect in step. */
export function watchTimeoutSeconds(random: () => number): number {
  const { watchTimeoutMinSeconds: min, watchTimeoutMaxSeconds: max } = LIST_WATCH_TIMING;
  return min + Math.floor(random() * (max - min + 1));
}
