/**
 * Raw JSON requests through client-node's own HTTP stack: `KubeConfig.applySecurityAuthentication`
 * (token, client certificates, exec plugins, the cached undici dispatcher) and its fetch-based
 * `IsomorphicFetchHttpLibrary`, the same path `Watch` uses.
 *
 * Why raw rather than the typed `*Api` classes: typed reads deserialise into model classes, which
 * drop fields the model does not know (a Job recreated from such a GET would lose them), turn
 * timestamps into `Date`s, and strip `kind`/`apiVersion` from list items; watch events arrive as
 * raw JSON. Reading and writing wire JSON everywhere gives list items, watch events and GETs one
 * shape, and custom resources need no special path.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext } from './client-node.ts';
import type { ResponseContext } from '@kubernetes/client-node';
import type { RestRequestRecord } from '../metrics/metrics.ts';
import { apiErrorFromHttp, toApiError } from './api-error.ts';
import { ApiError } from '../core/api-error.ts';

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  readonly method: HttpMethod;
  /** Absolute API path, e.g. `/apis/apps/v1/namespaces/ns/deployments/api`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** Serialised as JSON. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
}

/** Resolves with the parsed response body; rejects with a `ApiError`. */
export interface KubeTransport {
  request(request: KubeRequest): Promise<unknown>;
}

export interface KubeStreamRequest {
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly signal?: AbortSignal;
  /**
   * Once the headers are in, the longest wait for the next chunk; then the stream fails with a
   * `Timeout` ApiError. Also catches half-open connections.
   */
  readonly idleTimeoutMs: number;
}

export interface KubeResponseStream {
  readonly status: number;
  /** The body chunk by chunk; a broken connection throws a `ApiError`. Iterate it once. */
  readonly chunks: AsyncIterable<Uint8Array>;
}

/** A transport that can also stream a GET's body (lists and watches, ADR 0022). */
export interface StreamingKubeTransport extends KubeTransport {
  /** Resolves once a 2xx answer's headers are in; a non-2xx rejects with a `ApiError`. */
  stream(request: KubeStreamRequest): Promise<KubeResponseStream>;
}

export interface KubeTransportOptions {
  readonly kubeConfig: KubeConfig;
  /** Per-request deadline; a hung connection must not hold a worker forever. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** Milliseconds since the epoch; for the dispatcher's age. */
  readonly now?: () => number;
  /** Receives `rest_client_*` samples, one per request (a stream: once its headers are in). */
  readonly metrics?: { recordRestRequest(request: RestRequestRecord): void };
  /** Monotonic seconds, for request durations. */
  readonly monotonicSeconds?: () => number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * How long one dispatcher (one pool of keep-alive connections) serves every request. Afterwards the
 * next request's freshly built one takes over, so a rotated CA or client certificate is picked up.
 */
export const DISPATCHER_MAX_AGE_MS = 5 * 60_000;

/**
 * client-node 2.0.1's `applySecurityAuthentication` builds a new undici Agent for every request
 * once TLS options are set, so every request paid a TLS handshake on both sides and left its
 * connection idling (about 15 % of kreload's CPU in the K1 benchmark went to TLS setup). The
 * transport keeps the first one and hands it out until it is DISPATCHER_MAX_AGE_MS old.
 */
class DispatcherReuse {
  readonly #now: () => number;
  #current: { readonly dispatcher: Dispatcher; readonly since: number } | undefined;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The dispatcher to use instead of `fresh`, which client-node just built for this request. */
  reuse(fresh: Dispatcher): Dispatcher {
    const now = this.#now();
    const current = this.#current;
    if (current !== undefined && now - current.since < DISPATCHER_MAX_AGE_MS) {
      return current.dispatcher;
    }
    this.#current = { dispatcher: fresh, since: now };
    // In-flight requests (long watches among them) finish on the old pool before it closes.
    current?.dispatcher.close().catch(() => undefined);
    return fresh;
  }
}

export function buildUrl(
  server: string,
  path: string,
  query: Readonly<Record<string, QueryValue>> = {},
): string {
  const url = new URL(server.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url.toString();
}

/** The code label of a request that got no HTTP answer, as client-go records it. */
export const NO_ANSWER_CODE = '<error>';

/** Error answers are small `Status` objects; a proxy's page beyond this is not read further. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** A 2xx body that `JSON.parse` rejects. The SyntaxError (which quotes the body) is not kept. */
function invalidJson(status: number, text: string, error: unknown): ApiError {
  const position =
    error instanceof SyntaxError ? /position (\d+)/.exec(error.message)?.[1] : undefined;
  return new ApiError(
    `malformed ${String(status)} response: ${String(Buffer.byteLength(text))} bytes that are not valid JSON${position === undefined ? '' : ` (at position ${position})`}`,
    { status, reason: 'MalformedResponse', retryable: true },
  );
}

async function readErrorBody(response: ResponseContext): Promise<string> {
  const body = response.body.stream();
  if (body === null) return '';
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      bytes += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(parts).toString('utf8');
}

function idleTimeout(): DOMException {
  return new DOMException('no data within the idle timeout', 'TimeoutError');
}

/** The body's chunks, failing with a timeout when none arrives within `idleMs`. */
async function* chunksOf(
  response: ResponseContext,
  controller: AbortController,
  idleMs: number,
): AsyncGenerator<Uint8Array> {
  const body = response.body.stream();
  if (body === null) return;
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      controller.abort(idleTimeout());
    }, idleMs);
  };
  try {
    for (;;) {
      arm();
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        throw toApiError(controller.signal.reason ?? err);
      }
      // The wait for the consumer is not the server's silence.
      clearTimeout(timer);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
    // An early exit (a decoding error, a stop) must close the connection.
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
}

export function createKubeTransport(options: KubeTransportOptions): StreamingKubeTransport {
  const { kubeConfig, metrics } = options;
  const http = new IsomorphicFetchHttpLibrary();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userAgent = options.userAgent ?? 'kreload';
  const dispatchers = new DispatcherReuse(options.now ?? Date.now);
  const seconds = options.monotonicSeconds ?? (() => performance.now() / 1000);

  function serverUrl(): string {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    return cluster.server;
  }

  function record(method: HttpMethod, startedAt: number, code: string): void {
    if (metrics === undefined) return;
    let host: string;
    try {
      host = new URL(serverUrl()).host;
    } catch {
      host = '';
    }
    metrics.recordRestRequest({ code, method, host, verb: method, seconds: seconds() - startedAt });
  }

  async function open(request: KubeRequest, signal: AbortSignal): Promise<ResponseContext> {
    const context = new RequestContext(
      buildUrl(serverUrl(), request.path, request.query),
      request.method,
    );
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('User-Agent', userAgent);
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      context.setBody(JSON.stringify(request.body));
    }
    context.setSignal(signal);
    await kubeConfig.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh !== undefined) context.setDispatcher(dispatchers.reuse(fresh));
    return http.send(context).toPromise();
  }

  /** Opens the request; a non-2xx answer becomes a `ApiError` built from its `Status`. */
  async function openOk(request: KubeRequest, signal: AbortSignal): Promise<ResponseContext> {
    const response = await open(request, signal);
    const status = response.httpStatusCode;
    if (status < 200 || status > 299) {
      throw apiErrorFromHttp({
        status,
        body: await readErrorBody(response),
        headers: response.headers,
      });
    }
    return response;
  }

  /** Runs one request and records it once, answered or not. */
  async function measured<R extends { readonly status: number }>(
    method: HttpMethod,
    run: () => Promise<R>,
  ): Promise<R> {
    const startedAt = seconds();
    try {
      const result = await run();
      record(method, startedAt, String(result.status));
      return result;
    } catch (err) {
      const error = toApiError(err);
      record(method, startedAt, error.status === undefined ? NO_ANSWER_CODE : String(error.status));
      throw error;
    }
  }

  async function send(request: KubeRequest): Promise<{ status: number; body: unknown }> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
    const response = await openOk(request, signal);
    const status = response.httpStatusCode;
    const text = await response.body.text();
    if (text.trim() === '') return { status, body: undefined };
    try {
      return { status, body: JSON.parse(text) };
    } catch (err) {
      throw invalidJson(status, text, err);
    }
  }

  return {
    async request(request) {
      const { body } = await measured(request.method, () => send(request));
      return body;
    },

    async stream(request) {
      const controller = new AbortController();
      const connectTimer = setTimeout(() => {
        controller.abort(new DOMException('no answer within the timeout', 'TimeoutError'));
      }, timeoutMs);
      const signal = request.signal
        ? AbortSignal.any([request.signal, controller.signal])
        : controller.signal;
      const get = { method: HttpMethod.GET, path: request.path, query: request.query };
      try {
        return await measured(HttpMethod.GET, async () => {
          const response = await openOk(get, signal).catch((err: unknown) => {
            throw toApiError(controller.signal.reason ?? err);
          });
          const chunks = chunksOf(response, controller, request.idleTimeoutMs);
          return { status: response.httpStatusCode, chunks };
        });
      } catch (err) {
        controller.abort();
        throw err;
      } finally {
        clearTimeout(connectTimer);
      }
    },
  };
}

export { HttpMethod };
