/**
 * Maps everything that can go wrong talking to the API server (§10) to the one `ApiError`
 * (core/api-error.ts): HTTP statuses from client-node's `ApiException`, from `Watch` (`statusCode`)
 * and from our own requests, plus network failures and timeouts. `ApiException`'s message embeds
 * the whole body and headers; this keeps only the server's `Status` message.
 */
import { ApiException } from './client-node.ts';
import { ApiError, isRetryableStatus } from '../core/api-error.ts';
import { isJsonObject, numberAt, stringAt } from '../core/json.ts';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function parseRetryAfter(header: string | undefined, now: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function parseStatusBody(body: unknown): unknown {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body);
    } catch {
      return undefined; // not a Status (e.g. an HTML error page from a proxy): the HTTP status decides
    }
  }
  if (Buffer.isBuffer(body)) return parseStatusBody(body.toString('utf8'));
  return body;
}

function headerValue(headers: Readonly<Record<string, string>>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

export interface HttpFailure {
  readonly status: number;
  /** Raw text, parsed JSON or undefined: whatever the caller has. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/** Maps a non-2xx answer, reading `reason`, `message` and `retryAfterSeconds` from its `Status`. */
export function apiErrorFromHttp(failure: HttpFailure, now = Date.now()): ApiError {
  const status = parseStatusBody(failure.body);
  const reason = stringAt(status, ['reason']);
  const message = stringAt(status, ['message']);
  const retryAfterHeader = parseRetryAfter(headerValue(failure.headers ?? {}, 'retry-after'), now);
  const retryAfterSeconds = numberAt(status, ['details', 'retryAfterSeconds']);
  return new ApiError(
    `${failure.status}${reason ? ` ${reason}` : ''}${message ? `: ${message}` : ''}`,
    {
      status: failure.status,
      reason,
      retryable: isRetryableStatus(failure.status),
      retryAfterMs:
        retryAfterHeader ??
        (retryAfterSeconds === undefined ? undefined : retryAfterSeconds * 1000),
      cause: failure.cause,
    },
  );
}

function errorCode(err: unknown): string | undefined {
  if (!isJsonObject(err) && !(err instanceof Error)) return undefined;
  const own = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  const cause: unknown = 'cause' in err ? err.cause : undefined;
  return own ?? (cause === undefined ? undefined : errorCode(cause));
}

function fromNonHttpError(err: Error): ApiError {
  if (err.name === 'TimeoutError') {
    return new ApiError('request timed out', {
      reason: 'Timeout',
      retryable: true,
      cause: err,
    });
  }
  if (err.name === 'AbortError') {
    return new ApiError('request aborted', { reason: 'Aborted', retryable: false, cause: err });
  }
  const code = errorCode(err);
  // undici reports every connection-level failure as `TypeError: fetch failed` with the cause attached.
  const network =
    (code !== undefined && (NETWORK_CODES.has(code) || code.startsWith('UND_ERR'))) ||
    (err instanceof TypeError && err.message === 'fetch failed');
  return new ApiError(network ? `network error${code ? ` ${code}` : ''}` : err.message, {
    reason: code,
    retryable: network,
    cause: err,
  });
}

function watchStatusCode(err: Error): number | undefined {
  return 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : undefined;
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    return apiErrorFromHttp({ status: err.code, body, headers: err.headers, cause: err });
  }
  if (err instanceof Error) {
    const statusCode = watchStatusCode(err);
    if (statusCode !== undefined) return apiErrorFromHttp({ status: statusCode, cause: err });
    return fromNonHttpError(err);
  }
  return new ApiError(String(err), { retryable: false, cause: err });
}
