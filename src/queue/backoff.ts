/**
 * Retry delays and attempt budgets (§9.1 item 3, §10, §8 item 6, §13.6, §13.7): the one backoff
 * function of kreload, and the one table of how long and how often each place retries.
 * Pure: randomness is injected so tests are exact. Every policy doubles from a base, is capped, and
 * then spread by ±jitter so that many clients failing together do not retry in lockstep.
 */

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  /** Relative spread: 0.2 means the delay is multiplied by a factor in [0.8, 1.2). */
  readonly jitter: number;
}

/** A backoff that gives up: attempts in all, the first one included. */
interface BoundedBackoff extends BackoffPolicy {
  readonly maxAttempts: number;
}

/** One row per place that retries. */
export const BACKOFF_POLICIES = {
  /** A single write to the API (§10): 250 ms × 2ⁿ, capped at 8 s, ±20 %; 5 attempts. */
  write: { baseMs: 250, capMs: 8_000, jitter: 0.2, maxAttempts: 5 },
  /**
   * A write that met 409 Conflict again (docs/adr/0050): the first conflict re-reads at once (the
   * watch, ADR 0015); each further one waits 100 ms × 2ⁿ, capped at 5 s, ±20 %, so a workload whose
   * status keeps moving is patched between two updates. Conflicts do not spend the write's 5
   * attempts; 30 of them (about 2 minutes of a workload changing without pause) end the write.
   */
  conflict: { baseMs: 100, capMs: 5_000, jitter: 0.2, maxAttempts: 30 },
  /** A list-watch or an unreachable API server (§9.1 item 3, §13.5): 1 s → 30 s, ±20 %. */
  watch: { baseMs: 1_000, capMs: 30_000, jitter: 0.2 },
  /**
   * A failed reconcile of one workload key (§8 item 6): 1 s doubling, capped at 5 min, ±20 %. 1 run
   * + 9 retries: the backoff then spans about 8.5 minutes, just short of the default 10-minute
   * resync that re-evaluates every workload anyway.
   */
  queue: { baseMs: 1_000, capMs: 300_000, jitter: 0.2, maxAttempts: 10 },
  /**
   * An alert or webhook delivery (§13.6, §13.7): 1 s doubling, unjittered (one sender per
   * process); the cap is the wait before the webhook's sixth and last attempt.
   */
  delivery: { baseMs: 1_000, capMs: 16_000, jitter: 0 },
  /**
   * A roll by eviction that a PodDisruptionBudget (or the API's 429) holds (docs/adr/0044): 1 s
   * doubling, capped at 1 min, ±20 %; held as long as the budget says so, never a busy loop.
   */
  evictionHold: { baseMs: 1_000, capMs: 60_000, jitter: 0.2 },
} as const satisfies Record<string, BackoffPolicy | BoundedBackoff>;

/** A `Retry-After` on 429 is honoured up to this long (§10). */
export const RETRY_AFTER_CAP_MS = 30_000;

/** Source of uniform numbers in [0, 1), e.g. `Math.random`. */
export type RandomSource = () => number;

/**
 * Delay before retry number `retry` (0 = the first retry): `base × 2^retry`, capped, then jittered.
 * The jitter is applied after the cap so that capped retries still spread out.
 */
export function backoffDelay(policy: BackoffPolicy, retry: number, random: RandomSource): number {
  const exponent = Math.max(0, Math.floor(retry));
  const capped = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  const factor = 1 + policy.jitter * (2 * random() - 1);
  return Math.round(capped * factor);
}

export interface WriteRetryInput {
  /** 0 for the first retry. */
  readonly retry: number;
  readonly random: RandomSource;
  /** The server's `Retry-After` (429), in milliseconds, when it sent one. */
  readonly retryAfterMs?: number | undefined;
}

/** Delay before retrying a write: the server's `Retry-After` when given (≤ 30 s), else backoff. */
export function writeRetryDelay(input: WriteRetryInput): number {
  const { retryAfterMs } = input;
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, RETRY_AFTER_CAP_MS);
  }
  return backoffDelay(BACKOFF_POLICIES.write, input.retry, input.random);
}

/** Delay before restarting a failed list-watch (or reaching the API server) for the n-th time. */
export function watchRetryDelay(retry: number, random: RandomSource): number {
  return backoffDelay(BACKOFF_POLICIES.watch, retry, random);
}

/** Delay before re-running a failed reconcile of one workload key. */
export function queueRetryDelay(retry: number, random: RandomSource): number {
  return backoffDelay(BACKOFF_POLICIES.queue, retry, random);
}

/** Delay before the next try of an alert or webhook delivery, after `failedAttempts` (from 1). */
export function deliveryRetryDelay(failedAttempts: number): number {
  // Unjittered: the random source is never read.
  return backoffDelay(BACKOFF_POLICIES.delivery, failedAttempts - 1, () => 0.5);
}

/**
 * Delay before the next attempt of a write that failed with `failure` after attempt `attempt`
 * (from 1): a 403 is retried only while the API server comes back, so it waits as for a reconnect;
 * otherwise the server's `Retry-After` on 429, else the write backoff (§10).
 */
export function writeAttemptDelay(
  failure: { readonly status: number | undefined; readonly retryAfterMs: number | undefined },
  attempt: number,
  random: RandomSource,
): number {
  if (failure.status === 403) return backoffDelay(BACKOFF_POLICIES.watch, attempt - 1, random);
  return writeRetryDelay({
    retry: attempt - 1,
    random,
    retryAfterMs: failure.status === 429 ? failure.retryAfterMs : undefined,
  });
}
