import { workloadKey } from '../core/keys.ts';
import type { SourceRef, WorkloadRef } from '../core/types.ts';
import { sourceTypeRow } from '../core/source-types.ts';
import { DeliveryQueue, deliver } from './delivery.ts';
import type { RetryPolicy } from './delivery.ts';
import type { DeliveryErrorCounter, DeliveryTimers, HttpFetch } from './ports.ts';
import { redactUrl } from '../log/redact-url.ts';
import { deliveryRetryDelay } from '../queue/backoff.ts';
import { byCodeUnit } from '../core/order.ts';

export type WebhookEvent = 'create' | 'update' | 'delete';

/** One observed source change in `--webhook-url` mode (§13.7). */
export interface WebhookNotification {
  readonly event: WebhookEvent;
  readonly source: SourceRef;
  /** The new hash; MARKER for a delete. */
  readonly hash: string;
  /** Workloads that would have been rolled; may be empty. */
  readonly workloads: readonly WorkloadRef[];
  readonly observedAt: Date;
}

export interface WebhookNotifierDeps {
  /** `--webhook-url`. Never logged: errors carry the redacted form. */
  readonly url: string;
  readonly fetch: HttpFetch;
  readonly timers: DeliveryTimers;
  readonly errors: DeliveryErrorCounter;
  readonly onFailure?: (error: WebhookDeliveryError) => void;
  /** Notifications are queued only while this holds (followers post nothing). Default: always. */
  readonly canSend?: () => boolean;
  /** Default 1000, as for alerts. */
  readonly capacity?: number;
  /** Per-attempt timeout; default 10 s. */
  readonly timeoutMs?: number;
}

export class WebhookDeliveryError extends Error {
  override readonly name = 'WebhookDeliveryError';
}

const DEFAULT_CAPACITY = 1000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** The first attempt and up to 5 retries, waiting 1, 2, 4, 8 and 16 s. */
const ATTEMPTS = 6;

/** RFC 3339 in UTC, whole seconds, as in §13.7's example. */
function rfc3339Seconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** The §13.7 body; `webhook` stays first so receivers written for Reloader still match. */
export function webhookBody(notification: WebhookNotification): string {
  const { event, source, hash, workloads, observedAt } = notification;
  const sorted = [...workloads].sort((a, b) => byCodeUnit(workloadKey(a), workloadKey(b)));
  return JSON.stringify({
    webhook: 'update successful',
    event,
    source: {
      kind: sourceTypeRow(source.type).kind,
      namespace: source.namespace,
      name: source.name,
      hash,
    },
    workloads: sorted.map((w) => ({ kind: w.kind, namespace: w.namespace, name: w.name })),
    observedAt: rfc3339Seconds(observedAt),
  });
}

const POLICY_BASE: Omit<RetryPolicy, 'timeoutMs'> = {
  attempts: ATTEMPTS,
  backoffMs: deliveryRetryDelay,
  accepts: (status) => status >= 200 && status < 300,
};

/** Posts source changes to `--webhook-url` asynchronously, with retries (§13.7, D43). */
export class WebhookNotifier {
  readonly #deps: WebhookNotifierDeps;
  readonly #queue: DeliveryQueue<WebhookNotification>;

  constructor(deps: WebhookNotifierDeps) {
    this.#deps = deps;
    this.#queue = new DeliveryQueue<WebhookNotification>({
      capacity: deps.capacity ?? DEFAULT_CAPACITY,
      deliver: (notification, signal) => this.#deliver(notification, signal),
      onDropped: (notification) => {
        this.#fail(notification, 'dropped: queue full');
      },
    });
  }

  start(): void {
    this.#queue.start();
  }

  /** Abandons queued notifications and aborts the one in flight. */
  stop(): Promise<void> {
    return this.#queue.stop();
  }

  notify(notification: WebhookNotification): void {
    if (this.#deps.canSend && !this.#deps.canSend()) return;
    this.#queue.push(notification);
  }

  idle(): Promise<void> {
    return this.#queue.idle();
  }

  async #deliver(notification: WebhookNotification, signal: AbortSignal): Promise<void> {
    const result = await deliver({
      fetch: this.#deps.fetch,
      timers: this.#deps.timers,
      url: this.#deps.url,
      headers: { 'content-type': 'application/json' },
      body: webhookBody(notification),
      policy: { ...POLICY_BASE, timeoutMs: this.#deps.timeoutMs ?? DEFAULT_TIMEOUT_MS },
      signal,
    });
    if (!result.delivered && !signal.aborted) {
      this.#fail(notification, `failed after ${result.attempts} attempt(s): ${result.reason}`);
    }
  }

  #fail(notification: WebhookNotification, what: string): void {
    const { event, source } = notification;
    this.#deps.errors.recordError('webhook_error');
    this.#deps.onFailure?.(
      new WebhookDeliveryError(
        `webhook for ${event} of ${source.type} ${source.namespace}/${source.name} ${what} ` +
          `(${redactUrl(this.#deps.url)})`,
      ),
    );
  }
}
