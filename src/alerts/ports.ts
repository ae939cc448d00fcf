import type { ErrorType } from '../metrics/metrics.ts';
import type { Timers } from '../time/timers.ts';

/** One outgoing POST. Redirects are never followed: a 3xx answer is a failure (§13.6). */
export interface HttpRequest {
  readonly method: 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly redirect: 'manual';
  readonly signal: AbortSignal;
}

export interface HttpResponse {
  readonly status: number;
  text(): Promise<string>;
}

/** The global `fetch`, or one bound to a proxy (see `createHttpTransport`). */
export type HttpFetch = (url: string, request: HttpRequest) => Promise<HttpResponse>;

/** Deliveries only wait: the one `Timers` (time/timers.ts), without its clock. */
export type DeliveryTimers = Pick<Timers, 'schedule'>;

/** Where failed and dropped deliveries are counted (`reloader_errors_total`). */
export interface DeliveryErrorCounter {
  recordError(type: Extract<ErrorType, 'alert_error' | 'webhook_error'>): void;
}
