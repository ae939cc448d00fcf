/**
 * `setTimeout` for any delay. Node takes a delay above 2^31−1 ms (~24.8 days) as 1 ms and warns
 * (`TimeoutOverflowWarning`): a `pause-period: 1000h` resume, re-armed after each early firing, became a
 * busy loop. Every timer kreload sets goes through here (ADR 0018).
 */

/** The longest delay Node's timers take as written. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Runs `callback` once after `delayMs` (0 when negative or NaN; never when Infinity). A longer delay is
 * chained through timers of at most `MAX_TIMEOUT_MS`. The returned function cancels it (idempotent).
 */
export function setLongTimeout(callback: () => void, delayMs: number): () => void {
  let handle: NodeJS.Timeout | undefined;
  const arm = (remainingMs: number): void => {
    if (remainingMs <= MAX_TIMEOUT_MS) {
      handle = setTimeout(callback, remainingMs);
      return;
    }
    handle = setTimeout(() => {
      arm(remainingMs - MAX_TIMEOUT_MS);
    }, MAX_TIMEOUT_MS);
  };
  arm(Number.isNaN(delayMs) ? 0 : Math.max(0, delayMs));
  return () => {
    clearTimeout(handle);
  };
}
