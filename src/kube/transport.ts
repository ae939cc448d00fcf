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
import { HttpMethod, IsomorphicFetchHttpLibrary, RequestContext } from '@kubernetes/client-node';
import { kubeApiErrorFromHttp, toKubeApiError } from './api-error.ts';
import { parseJsonBody } from './json.ts';

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

/** Resolves with the parsed response body; rejects with a `KubeApiError`. */
export interface KubeTransport {
  request(request: KubeRequest): Promise<unknown>;
}

export interface KubeTransportOptions {
  readonly kubeConfig: KubeConfig;
  /** Per-request deadline; a hung connection must not hold a worker forever. */
  readonly timeoutMs?: number;
  readonly userAgent?: string;
  /** Milliseconds since the epoch; for the dispatcher's age. */
  readonly now?: () => number;
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

export function createKubeTransport(options: KubeTransportOptions): KubeTransport {
  const { kubeConfig } = options;
  const http = new IsomorphicFetchHttpLibrary();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userAgent = options.userAgent ?? 'kreload';
  const dispatchers = new DispatcherReuse(options.now ?? Date.now);

  async function send(request: KubeRequest): Promise<unknown> {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const context = new RequestContext(
      buildUrl(cluster.server, request.path, request.query),
      request.method,
    );
    context.setHeaderParam('Accept', 'application/json');
    context.setHeaderParam('User-Agent', userAgent);
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      context.setBody(JSON.stringify(request.body));
    }
    const deadline = AbortSignal.timeout(timeoutMs);
    context.setSignal(request.signal ? AbortSignal.any([request.signal, deadline]) : deadline);
    await kubeConfig.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (fresh !== undefined) context.setDispatcher(dispatchers.reuse(fresh));
    const response = await http.send(context).toPromise();
    const text = await response.body.text();
    if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
      throw kubeApiErrorFromHttp({
        status: response.httpStatusCode,
        body: text,
        headers: response.headers,
      });
    }
    return parseJsonBody(text);
  }

  return {
    async request(request) {
      try {
        return await send(request);
      } catch (err) {
        throw toKubeApiError(err);
      }
    },
  };
}

export { HttpMethod };
