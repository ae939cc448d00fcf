/**
 * The one error type of a failed request to the API server (§10), whichever port made it: list and
 * watch, discovery, workload writes, the Job journal, Events, the Lease. kube/api-error.ts maps
 * client-node and network failures to it; the in-memory ports of src/testing/ throw it directly.
 * Its message holds only the server's `Status` message, never a request or response body.
 */

export interface ApiErrorDetails {
  /** HTTP status; undefined for timeouts and network errors. */
  readonly status?: number | undefined;
  readonly reason?: string | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

export class ApiError extends Error {
  readonly status: number | undefined;
  /** `Status.reason` (e.g. `Conflict`, `Forbidden`, `Expired`), or the network error code. */
  readonly reason: string | undefined;
  /** 409, 408, 429, 5xx, timeouts and network errors (§10). */
  readonly retryable: boolean;
  /** From `Retry-After` or `Status.details.retryAfterSeconds`; not capped here. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ApiErrorDetails) {
    super(message, { cause: details.cause });
    this.name = 'ApiError';
    this.status = details.status;
    this.reason = details.reason;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 409 means "re-read and re-decide"; 408, 429 and 5xx are transient (§10). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || (status >= 500 && status <= 599);
}
