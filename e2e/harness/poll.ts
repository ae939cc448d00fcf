import { setTimeout as sleep } from 'node:timers/promises';

export interface PollOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** What we are waiting for, for the timeout message ("ReplicaSet count of api to be 2"). */
  readonly describe: string;
  readonly signal?: AbortSignal;
}

export class PollTimeoutError extends Error {
  override readonly name = 'PollTimeoutError';
}

/** Thrown from a poll function to stop polling at once (e.g. the awaited process exited). */
export class PollGiveUpError extends Error {
  override readonly name = 'PollGiveUpError';
}

/**
 * Calls `check` every `intervalMs` (default 200) until it returns something other than
 * `undefined` or `false`, and resolves with that value. A throw counts as "not yet" and is kept
 * as the cause of the timeout error, except PollGiveUpError and an abort, which end the wait.
 */
export async function pollUntil<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: PollOptions,
): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      if (error instanceof PollGiveUpError) throw error;
      lastError = error;
    }
    const remaining = deadline - performance.now();
    if (remaining <= 0) {
      const reason = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new PollTimeoutError(
        `timed out after ${options.timeoutMs} ms waiting for ${options.describe}${reason}`,
        {
          cause: lastError,
        },
      );
    }
    await sleep(Math.min(options.intervalMs ?? 200, remaining), undefined, {
      signal: options.signal,
    });
  }
}
