import type { DeliveryTimers, HttpFetch } from './ports.ts';
import { redactIn } from '../log/redact-url.ts';

/** How one HTTP answer counts. */
export type AnswerVerdict = 'delivered' | 'retry' | 'failed';

export interface RetryPolicy {
  /** Total attempts, the first included. */
  readonly attempts: number;
  /** Wait before attempt `n + 1` (n counts from 1). */
  readonly backoffMs: (failedAttempts: number) => number;
  /** Per-attempt timeout; a timeout counts as a network error. */
  readonly timeoutMs: number;
  /** Verdict for a status that is neither a redirect nor 429 nor 5xx. */
  readonly accepts: (status: number) => boolean;
}

export type DeliveryResult =
  | { readonly delivered: true; readonly attempts: number }
  | { readonly delivered: false; readonly attempts: number; readonly reason: string };

export interface DeliveryAttempt {
  readonly fetch: HttpFetch;
  readonly timers: DeliveryTimers;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly policy: RetryPolicy;
  /** Aborts the current attempt and every later one (shutdown). */
  readonly signal: AbortSignal;
}

/** Redirects fail; 429 and 5xx are retried; everything else is up to the sink. */
export function judgeStatus(status: number, accepts: (status: number) => boolean): AnswerVerdict {
  if (status >= 300 && status < 400) return 'failed';
  if (status === 429 || status >= 500) return 'retry';
  return accepts(status) ? 'delivered' : 'failed';
}

function networkReason(error: unknown, url: string): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code =
    cause instanceof Error && 'code' in cause && typeof cause.code === 'string'
      ? cause.code
      : undefined;
  const message = cause instanceof Error ? cause.message : String(cause);
  // Messages such as "Failed to parse URL from <url>" would leak the URL's token.
  return `network error: ${redactIn(code ?? message, url)}`;
}

function sleep(timers: DeliveryTimers, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const cancel = timers.schedule(ms, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    const onAbort = (): void => {
      cancel();
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function attemptOnce(
  attempt: DeliveryAttempt,
): Promise<{ verdict: AnswerVerdict; reason: string }> {
  const { fetch, timers, url, headers, body, policy, signal } = attempt;
  const timeout = new AbortController();
  const cancelTimeout = timers.schedule(policy.timeoutMs, () => {
    timeout.abort();
  });
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, timeout.signal]),
    });
    // Drain the body so the connection can be reused; its content is never logged.
    await response.text().catch(() => '');
    const verdict = judgeStatus(response.status, policy.accepts);
    return { verdict, reason: `status ${response.status}` };
  } catch (error) {
    const reason = timeout.signal.aborted ? 'timed out' : networkReason(error, url);
    return { verdict: 'retry', reason };
  } finally {
    cancelTimeout();
  }
}

/** POSTs with bounded retries on network errors, timeouts, 429 and 5xx. Never rejects. */
export async function deliver(attempt: DeliveryAttempt): Promise<DeliveryResult> {
  const { policy, signal, timers } = attempt;
  let reason = 'not attempted';
  for (let n = 1; n <= policy.attempts; n += 1) {
    if (signal.aborted) return { delivered: false, attempts: n - 1, reason: 'shutting down' };
    const outcome = await attemptOnce(attempt);
    if (outcome.verdict === 'delivered') return { delivered: true, attempts: n };
    reason = outcome.reason;
    if (outcome.verdict === 'failed') return { delivered: false, attempts: n, reason };
    if (n < policy.attempts) await sleep(timers, policy.backoffMs(n), signal);
  }
  return { delivered: false, attempts: policy.attempts, reason };
}

export interface DeliveryQueueDeps<T> {
  /** Oldest items are dropped beyond this many pending ones. */
  readonly capacity: number;
  /** Delivers one item and reports its own failures; should not reject. */
  readonly deliver: (item: T, signal: AbortSignal) => Promise<void>;
  /** The item was dropped on overflow, or its delivery rejected against its contract. */
  readonly onDropped: (item: T) => void;
}

/**
 * A bounded FIFO drained by one worker, so a slow sink delays only other deliveries, never the
 * caller. On overflow the oldest pending item is dropped.
 */
export class DeliveryQueue<T> {
  readonly #deps: DeliveryQueueDeps<T>;
  readonly #pending: T[] = [];
  #abort = new AbortController();
  #worker: Promise<void> | undefined;
  #accepting = false;

  constructor(deps: DeliveryQueueDeps<T>) {
    this.#deps = deps;
  }

  start(): void {
    if (this.#accepting) return;
    this.#abort = new AbortController();
    this.#accepting = true;
  }

  /** Queues an item; ignored unless started. */
  push(item: T): void {
    if (!this.#accepting) return;
    if (this.#pending.length >= this.#deps.capacity) {
      const dropped = this.#pending.shift();
      if (dropped !== undefined) this.#deps.onDropped(dropped);
    }
    this.#pending.push(item);
    this.#worker ??= this.#drain().finally(() => {
      this.#worker = undefined;
    });
  }

  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Resolves when nothing is pending or in flight. */
  async idle(): Promise<void> {
    while (this.#worker) await this.#worker;
  }

  /** Stops accepting, abandons pending items and aborts the one in flight (and its retries). */
  async stop(): Promise<void> {
    this.#accepting = false;
    this.#pending.length = 0;
    this.#abort.abort();
    await this.idle();
  }

  async #drain(): Promise<void> {
    for (let item = this.#pending.shift(); item !== undefined; item = this.#pending.shift()) {
      const current = item;
      await this.#deps.deliver(current, this.#abort.signal).catch(() => {
        this.#deps.onDropped(current);
      });
    }
  }
}
