/**
 * Raw JSON requests on undici's dispatcher API (ADRs 0052, 0059): `Dispatcher.dispatch` for a request
 * whose answer is read whole, `Dispatcher.request` for a streamed list or watch; authenticated and
 * encrypted as client-node's `KubeConfig` says: its `applySecurityAuthentication` builds the
 * connection pool (CA, client certificate, proxy) and its authenticators (token, exec plugins, token
 * files) give each request its `Authorization` header.
 *
 * Why raw rather than the typed `*Api` classes: typed reads deserialise into model classes, which
 * drop fields the model does not know (a Job recreated from such a GET would lose them), turn
 * timestamps into `Date`s, and strip `kind`/`apiVersion` from list items; watch events arrive as
 * raw JSON. Reading and writing wire JSON everywhere gives list items, watch events and GETs one
 * shape, and custom resources need no special path.
 *
 * Why not `fetch`: each `fetch` builds WHATWG `Request`, `Headers` and stream objects around the
 * same dispatcher call; with `AbortSignal.timeout`/`AbortSignal.any` per request that was most of
 * the transport's CPU. Deadlines here are plain timers on one `AbortController`.
 */
import { Agent, type Dispatcher } from 'undici';
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpMethod, RequestContext } from './client-node.ts';
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

/** `setTimeout` fires at once for anything above this (Node clamps it to 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

function timerMs(ms: number): number {
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER_MS) : MAX_TIMER_MS;
}

function queryString(query: Readonly<Record<string, QueryValue>>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function buildUrl(
  server: string,
  path: string,
  query: Readonly<Record<string, QueryValue>> = {},
): string {
  return new URL(server.replace(/\/+$/, '') + path + queryString(query)).toString();
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

type ResponseBody = Dispatcher.ResponseData['body'];

async function readErrorBody(body: ResponseBody): Promise<string> {
  const parts: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      parts.push(chunk);
      bytes += chunk.byteLength;
      if (bytes >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // A broken error body still leaves its HTTP status.
  } finally {
    body.destroy();
  }
  return Buffer.concat(parts).toString('utf8');
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function timeoutError(message: string): DOMException {
  return new DOMException(message, 'TimeoutError');
}

/** The body's chunks, failing with a timeout when none arrives within `idleMs`. */
async function* chunksOf(
  body: ResponseBody,
  controller: AbortController,
  idleMs: number,
  release: () => void,
): AsyncGenerator<Uint8Array> {
  const iterator = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    for (;;) {
      timer = setTimeout(() => {
        controller.abort(timeoutError('no data within the idle timeout'));
      }, idleMs);
      let next: IteratorResult<Buffer>;
      try {
        next = await iterator.next();
      } catch (err) {
        throw toApiError(controller.signal.reason ?? err);
      }
      // The wait for the consumer is not the server's silence.
      clearTimeout(timer);
      if (next.done === true) return;
      yield next.value;
    }
  } finally {
    clearTimeout(timer);
    release();
    // An early exit (a decoding error, a stop) must close the connection.
    controller.abort();
    body.destroy();
  }
}

interface Collected {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: string;
}

/**
 * One request on `dispatcher.dispatch`, its answer collected whole (an error answer's up to
 * MAX_ERROR_BODY_BYTES). `signal` aborts it at any point; it rejects with undici's error or the
 * signal's reason.
 */
function collect(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal,
): Promise<Collected> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    let started: Dispatcher.DispatchController | undefined;
    let status = 0;
    let headers: Collected['headers'] = {};
    const parts: Buffer[] = [];
    let bytes = 0;
    const onAbort = (): void => {
      // Before the request starts, onRequestStart sees the signal.
      started?.abort(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        started = controller;
        if (signal.aborted) controller.abort(signal.reason as Error);
      },
      onResponseStart(_controller, statusCode, responseHeaders) {
        // 1xx answers are interim: the final one follows.
        if (statusCode < 200) return;
        status = statusCode;
        headers = responseHeaders;
      },
      onResponseData(_controller, chunk) {
        if (status <= 299 || bytes < MAX_ERROR_BODY_BYTES) {
          parts.push(chunk);
          bytes += chunk.byteLength;
        }
      },
      onResponseEnd() {
        signal.removeEventListener('abort', onAbort);
        resolve({ status, headers, body: Buffer.concat(parts, bytes).toString('utf8') });
      },
      onResponseError(_controller, error) {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    };
    try {
      dispatcher.dispatch(options, handler);
    } catch (error) {
      signal.removeEventListener('abort', onAbort);
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/** One connection pool and what every request on it sends, for DISPATCHER_MAX_AGE_MS. */
interface Connection {
  readonly dispatcher: Dispatcher;
  readonly origin: string;
  /** The server URL's path, without a trailing slash, put before every request path. */
  readonly basePath: string;
  readonly host: string;
  /** The kubeconfig's headers when the pool was built; `Authorization` is renewed per request. */
  readonly headers: Readonly<Record<string, string>>;
  readonly since: number;
}

interface AuthorizationOptions {
  headers?: Record<string, string>;
}

/**
 * client-node's per-request part of `applySecurityAuthentication`: the user's authenticator (exec
 * plugin, token file, OIDC …) or static token sets `Authorization`. Its CA and certificate part reads
 * files and builds a new undici Agent on every call, so that part runs once per pool instead. The
 * method is not in client-node's typings; without it every request takes the whole call.
 */
function authorizationOf(
  kubeConfig: KubeConfig,
): ((options: AuthorizationOptions) => Promise<void>) | undefined {
  const method: unknown = Reflect.get(kubeConfig, 'applyAuthorizationHeader');
  if (typeof method !== 'function') return undefined;
  return async (options) => {
    await (Reflect.apply(method, kubeConfig, [options]) as unknown);
  };
}

/**
 * client-node 2.0.1's `applySecurityAuthentication` builds a new undici Agent for every call once
 * TLS options are set, so every request paid a TLS handshake on both sides and left its connection
 * idling. The transport builds one pool and hands it out until it is DISPATCHER_MAX_AGE_MS old;
 * afterwards the next request builds a fresh one, so a rotated CA or client certificate is picked
 * up, and the old one closes once its in-flight requests (long watches among them) finish.
 */
class ConnectionPool {
  readonly #kubeConfig: KubeConfig;
  readonly #now: () => number;
  #current: Connection | undefined;
  #building: Promise<Connection> | undefined;

  constructor(kubeConfig: KubeConfig, now: () => number) {
    this.#kubeConfig = kubeConfig;
    this.#now = now;
  }

  get(): Connection | Promise<Connection> {
    const current = this.#current;
    if (current !== undefined && this.#now() - current.since < DISPATCHER_MAX_AGE_MS) {
      return current;
    }
    this.#building ??= this.#build().finally(() => {
      this.#building = undefined;
    });
    return this.#building;
  }

  async #build(): Promise<Connection> {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server);
    const context = new RequestContext(url.toString(), HttpMethod.GET);
    await this.#kubeConfig.applySecurityAuthentication(context);
    const connection: Connection = {
      dispatcher: context.getDispatcher() ?? new Agent(),
      origin: url.origin,
      basePath: url.pathname.replace(/\/+$/, ''),
      host: url.host,
      headers: context.getHeaders(),
      since: this.#now(),
    };
    const previous = this.#current;
    this.#current = connection;
    previous?.dispatcher.close().catch(() => undefined);
    return connection;
  }
}

interface Answer {
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: ResponseBody;
  readonly host: string;
}

export function createKubeTransport(options: KubeTransportOptions): StreamingKubeTransport {
  const { kubeConfig, metrics } = options;
  const timeoutMs = timerMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const userAgent = options.userAgent ?? 'kreload';
  const pool = new ConnectionPool(kubeConfig, options.now ?? Date.now);
  const authorize = authorizationOf(kubeConfig);
  const seconds = options.monotonicSeconds ?? (() => performance.now() / 1000);

  async function headersFor(
    connection: Connection,
    request: KubeRequest,
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      ...connection.headers,
      accept: 'application/json',
      'user-agent': userAgent,
    };
    if (request.body !== undefined) {
      headers['content-type'] = request.contentType ?? 'application/json';
    }
    if (authorize === undefined) {
      const context = new RequestContext(connection.origin, request.method);
      await kubeConfig.applySecurityAuthentication(context);
      const authorization = context.getHeaders().Authorization;
      if (authorization !== undefined) headers.Authorization = authorization;
    } else {
      const auth: AuthorizationOptions = { headers: {} };
      await authorize(auth);
      const authorization = auth.headers?.Authorization;
      if (authorization !== undefined) headers.Authorization = authorization;
    }
    return headers;
  }

  /** What undici is asked to send: the path, method, headers and JSON body of `request`. */
  async function dispatchOptions(
    request: KubeRequest,
  ): Promise<{ readonly connection: Connection; readonly options: Dispatcher.DispatchOptions }> {
    const connection = await pool.get();
    const headers = await headersFor(connection, request);
    return {
      connection,
      options: {
        origin: connection.origin,
        path: connection.basePath + request.path + queryString(request.query ?? {}),
        method: request.method,
        headers,
        body: request.body === undefined ? null : JSON.stringify(request.body),
      },
    };
  }

  /** Sends the request; a non-2xx answer becomes a `ApiError` built from its `Status`. */
  async function openOk(request: KubeRequest, signal: AbortSignal): Promise<Answer> {
    const { connection, options } = await dispatchOptions(request);
    const response = await connection.dispatcher.request({ ...options, signal });
    const status = response.statusCode;
    if (status < 200 || status > 299) {
      throw apiErrorFromHttp({
        status,
        body: await readErrorBody(response.body),
        headers: { 'retry-after': headerText(response.headers['retry-after']) ?? '' },
      });
    }
    return { status, headers: response.headers, body: response.body, host: connection.host };
  }

  /**
   * Sends the request and reads its whole answer; a non-2xx answer becomes a `ApiError` built from
   * its `Status`. Used for every request but streams: the answer's bytes are collected as undici
   * hands them over, without the stream and async context `Dispatcher.request` builds around them.
   */
  async function sendOk(
    request: KubeRequest,
    signal: AbortSignal,
  ): Promise<{ readonly status: number; readonly host: string; readonly text: string }> {
    const { connection, options } = await dispatchOptions(request);
    const answer = await collect(connection.dispatcher, options, signal);
    const { status } = answer;
    if (status < 200 || status > 299) {
      throw apiErrorFromHttp({
        status,
        body: answer.body,
        headers: { 'retry-after': headerText(answer.headers['retry-after']) ?? '' },
      });
    }
    return { status, host: connection.host, text: answer.body };
  }

  function record(method: HttpMethod, startedAt: number, code: string, host: string): void {
    metrics?.recordRestRequest({
      code,
      method,
      host,
      verb: method,
      seconds: seconds() - startedAt,
    });
  }

  /** The host label of a request that failed before its connection was known. */
  function serverHost(): string {
    try {
      return new URL(kubeConfig.getCurrentCluster()?.server ?? '').host;
    } catch {
      return '';
    }
  }

  /** Runs one request and records it once, answered or not. */
  async function measured<R extends { readonly status: number; readonly host: string }>(
    method: HttpMethod,
    run: () => Promise<R>,
    abortReason: () => unknown,
  ): Promise<R> {
    const startedAt = seconds();
    try {
      const result = await run();
      record(method, startedAt, String(result.status), result.host);
      return result;
    } catch (err) {
      const error = toApiError(abortReason() ?? err);
      const code = error.status === undefined ? NO_ANSWER_CODE : String(error.status);
      if (metrics !== undefined) record(method, startedAt, code, serverHost());
      throw error;
    }
  }

  /**
   * One controller per request, aborted by the deadline timer or the caller's signal. Returns the
   * signal and the function that disarms both.
   */
  function deadline(
    ms: number,
    caller: AbortSignal | undefined,
  ): { controller: AbortController; release: () => void; disarmTimer: () => void } {
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(timeoutError('no answer within the timeout'));
    }, ms);
    const onAbort = (): void => {
      controller.abort(caller?.reason);
    };
    if (caller?.aborted === true) onAbort();
    else caller?.addEventListener('abort', onAbort, { once: true });
    const disarmTimer = (): void => {
      clearTimeout(timer);
    };
    return {
      controller,
      disarmTimer,
      release: () => {
        clearTimeout(timer);
        caller?.removeEventListener('abort', onAbort);
      },
    };
  }

  return {
    async request(request) {
      const { controller, release } = deadline(timeoutMs, request.signal);
      try {
        const { body } = await measured(
          request.method,
          async () => {
            const answer = await sendOk(request, controller.signal);
            const { text } = answer;
            if (text.trim() === '')
              return { status: answer.status, host: answer.host, body: undefined };
            try {
              return {
                status: answer.status,
                host: answer.host,
                body: JSON.parse(text) as unknown,
              };
            } catch (err) {
              throw invalidJson(answer.status, text, err);
            }
          },
          () => (controller.signal.aborted ? controller.signal.reason : undefined),
        );
        return body;
      } finally {
        release();
      }
    },

    async stream(request) {
      const { controller, release, disarmTimer } = deadline(timeoutMs, request.signal);
      const get = { method: HttpMethod.GET, path: request.path, query: request.query };
      const idleMs = timerMs(request.idleTimeoutMs);
      try {
        return await measured(
          HttpMethod.GET,
          async () => {
            const answer = await openOk(get, controller.signal);
            disarmTimer();
            const chunks = chunksOf(answer.body, controller, idleMs, release);
            return { status: answer.status, host: answer.host, chunks };
          },
          () => (controller.signal.aborted ? controller.signal.reason : undefined),
        );
      } catch (err) {
        release();
        controller.abort();
        throw err;
      }
    },
  };
}

export { HttpMethod };
