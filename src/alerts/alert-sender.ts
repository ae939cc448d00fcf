import { ALERT_SINKS } from './alert-format.ts';
import type { AlertSinkName, RollAlert } from './alert-format.ts';
import { DeliveryQueue, deliver } from './delivery.ts';
import type { RetryPolicy } from './delivery.ts';
import type { DeliveryErrorCounter, DeliveryTimers, HttpFetch } from './ports.ts';
import { redactUrl } from '../log/redact-url.ts';
import { deliveryRetryDelay } from '../queue/backoff.ts';

export interface AlertSenderDeps {
  /** `ALERT_WEBHOOK_URL`, trimmed. Never logged: errors carry the redacted form. */
  readonly url: string;
  readonly sink: AlertSinkName;
  /** `ALERT_ADDITIONAL_INFO`: prefixes every message with `<info> : `. */
  readonly additionalInfo?: string;
  readonly fetch: HttpFetch;
  readonly timers: DeliveryTimers;
  readonly errors: DeliveryErrorCounter;
  /** A failed or dropped alert, for the log. Its message names the URL redacted. */
  readonly onFailure?: (error: AlertDeliveryError) => void;
  /** Alerts are queued only while this holds (followers send nothing). Default: always. */
  readonly canSend?: () => boolean;
  /** Default 1000 (§13.6). */
  readonly capacity?: number;
  /** Per-attempt timeout; default 10 s. */
  readonly timeoutMs?: number;
  /** The time a structured alert carries; default the system clock. */
  readonly now?: () => Date;
}

export class AlertDeliveryError extends Error {
  override readonly name = 'AlertDeliveryError';
}

const DEFAULT_CAPACITY = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** 3 attempts, waiting 1 s then 2 s. */
const ATTEMPTS = 3;

/**
 * Sends one alert per successful roll (§13.6), asynchronously: `send` only queues, so a slow or
 * failing sink never delays a roll (D42).
 */
export class AlertSender {
  readonly #deps: AlertSenderDeps;
  readonly #queue: DeliveryQueue<string>;

  constructor(deps: AlertSenderDeps) {
    this.#deps = deps;
    this.#queue = new DeliveryQueue<string>({
      capacity: deps.capacity ?? DEFAULT_CAPACITY,
      deliver: (message, signal) => this.#deliver(message, signal),
      onDropped: () => {
        this.#fail('alert dropped: queue full');
      },
    });
  }

  start(): void {
    this.#queue.start();
  }

  /** Abandons queued alerts and aborts the one in flight. */
  stop(): Promise<void> {
    return this.#queue.stop();
  }

  send(alert: RollAlert): void {
    if (this.#deps.canSend && !this.#deps.canSend()) return;
    const at = this.#deps.now?.() ?? new Date();
    this.#queue.push(ALERT_SINKS[this.#deps.sink].message(alert, this.#deps.additionalInfo, at));
  }

  /** Resolves when every queued alert has been delivered or has failed. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  async #deliver(message: string, signal: AbortSignal): Promise<void> {
    const format = ALERT_SINKS[this.#deps.sink];
    const policy: RetryPolicy = {
      attempts: ATTEMPTS,
      backoffMs: deliveryRetryDelay,
      timeoutMs: this.#deps.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      accepts: format.accepts,
    };
    const result = await deliver({
      fetch: this.#deps.fetch,
      timers: this.#deps.timers,
      url: this.#deps.url,
      headers: { 'content-type': format.contentType },
      body: format.body(message),
      policy,
      signal,
    });
    // An alert abandoned at shutdown is not a sink failure.
    if (!result.delivered && !signal.aborted) {
      this.#fail(`alert failed after ${result.attempts} attempt(s): ${result.reason}`);
    }
  }

  #fail(what: string): void {
    this.#deps.errors.recordError('alert_error');
    this.#deps.onFailure?.(
      new AlertDeliveryError(`${what} (${this.#deps.sink} ${redactUrl(this.#deps.url)})`),
    );
  }
}
