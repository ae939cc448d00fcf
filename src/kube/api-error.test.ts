import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { apiErrorFromHttp, toApiError } from './api-error.ts';
import { ApiError } from '../core/api-error.ts';

function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
    message,
  });
}

describe('toApiError from ApiException', () => {
  it.each([
    [400, 'BadRequest', false],
    [403, 'Forbidden', false],
    [404, 'NotFound', false],
    [408, 'Timeout', true],
    [409, 'Conflict', true],
    [410, 'Expired', false],
    [415, 'UnsupportedMediaType', false],
    [422, 'Invalid', false],
    [429, 'TooManyRequests', true],
    [500, 'InternalError', true],
    [503, 'ServiceUnavailable', true],
    [504, 'Timeout', true],
  ])('%i %s → retryable %s', (code, reason, retryable) => {
    const err = toApiError(
      new ApiException(code, 'Unknown API Status Code!', statusBody(code, reason, 'boom'), {}),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: code,
      reason,
      retryable,
      message: `${code} ${reason}: boom`,
    });
  });

  it('keeps the exception as cause and a readable message', () => {
    const original = new ApiException(
      409,
      'Unknown API Status Code!',
      statusBody(409, 'Conflict', 'the object has been modified'),
      {},
    );
    const err = toApiError(original);
    expect(err.cause).toBe(original);
    expect(err.message).toBe('409 Conflict: the object has been modified');
  });

  it.each([
    ['seconds header', { 'retry-after': '7' }, undefined, 7000],
    ['header beats details', { 'Retry-After': '2' }, 9, 2000],
    ['details.retryAfterSeconds', {}, 3, 3000],
    ['none', {}, undefined, undefined],
  ])('429 retryAfterMs from %s', (_name, headers, detailSeconds, expected) => {
    const body = JSON.stringify({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      details: detailSeconds === undefined ? {} : { retryAfterSeconds: detailSeconds },
    });
    const err = toApiError(new ApiException(429, 'x', body, headers));
    expect(err.retryAfterMs).toBe(expected);
  });

  it('reads an HTTP-date Retry-After relative to now', () => {
    const now = Date.parse('2026-01-02T03:04:05Z');
    const err = apiErrorFromHttp(
      { status: 503, headers: { 'retry-after': 'Fri, 02 Jan 2026 03:04:15 GMT' } },
      now,
    );
    expect(err.retryAfterMs).toBe(10_000);
  });

  it.each([
    ['a Buffer body', Buffer.from(statusBody(422, 'Invalid', 'bad'))],
    ['a parsed body', JSON.parse(statusBody(422, 'Invalid', 'bad')) as unknown],
  ])('parses %s', (_name, body) => {
    expect(toApiError(new ApiException(422, 'x', body, {}))).toMatchObject({
      status: 422,
      reason: 'Invalid',
      retryable: false,
    });
  });

  it('survives a non-JSON body (proxy error page)', () => {
    const err = toApiError(new ApiException(502, 'x', '<html>bad gateway</html>', {}));
    expect(err).toMatchObject({ status: 502, reason: undefined, retryable: true, message: '502' });
  });
});

describe('toApiError from other failures', () => {
  function fetchFailed(code: string): TypeError {
    const cause = Object.assign(new Error(`connect ${code}`), { code });
    return new TypeError('fetch failed', { cause });
  }

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'])(
    'fetch failed with %s is a retryable network error',
    (code) => {
      expect(toApiError(fetchFailed(code))).toMatchObject({
        status: undefined,
        reason: code,
        retryable: true,
        message: `network error ${code}`,
      });
    },
  );

  it('a bare fetch failed without a code is still a network error', () => {
    expect(toApiError(new TypeError('fetch failed'))).toMatchObject({ retryable: true });
  });

  it('a watch status error uses statusCode', () => {
    const err = Object.assign(new Error('Gone'), { statusCode: 410 });
    expect(toApiError(err)).toMatchObject({ status: 410, retryable: false });
  });

  it('TimeoutError is retryable, AbortError is not', () => {
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const abort = new DOMException('This operation was aborted', 'AbortError');
    expect(toApiError(timeout)).toMatchObject({ reason: 'Timeout', retryable: true });
    expect(toApiError(abort)).toMatchObject({ reason: 'Aborted', retryable: false });
  });

  it('a plain Error is not retryable; a ApiError passes through', () => {
    expect(toApiError(new Error('bug'))).toMatchObject({ message: 'bug', retryable: false });
    const original = new ApiError('x', { retryable: true });
    expect(toApiError(original)).toBe(original);
    expect(toApiError('weird')).toMatchObject({ message: 'weird', retryable: false });
  });
});
