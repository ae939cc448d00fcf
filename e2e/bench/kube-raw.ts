/**
 * Wire-JSON requests through client-node's own HTTP stack (the path its `Watch` takes). The bench
 * and the ideal reactor read and write raw JSON so that list items and watch events have one shape
 * and no typed deserialisation costs the reactor time it would not have in a real controller.
 */
import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  RequestContext,
  type KubeConfig,
} from '@kubernetes/client-node';

export type QueryValue = string | number | boolean | undefined;

export interface RawRequest {
  readonly method: HttpMethod;
  /** Absolute API path, e.g. `/apis/apps/v1/namespaces/ns/deployments/web`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** A non-2xx answer; `status` 0 means the request never got one (connection error, timeout). */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
  readonly status: number;

  constructor(details: { message: string; status: number; cause?: unknown }) {
    super(details.message, { cause: details.cause });
    this.status = details.status;
  }
}

export function isStatus(error: unknown, status: number): boolean {
  return error instanceof KubeRequestError && error.status === status;
}

const DEFAULT_TIMEOUT_MS = 60_000;

export function apiUrl(
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

/** One client per KubeConfig: client-node caches its undici dispatcher, so connections are reused. */
export class KubeRaw {
  readonly kc: KubeConfig;
  readonly #http = new IsomorphicFetchHttpLibrary();

  constructor(deps: { kc: KubeConfig }) {
    this.kc = deps.kc;
  }

  async request(request: RawRequest): Promise<unknown> {
    const cluster = this.kc.getCurrentCluster();
    if (cluster === null) throw new Error('kubeconfig has no current cluster');
    const context = new RequestContext(
      apiUrl(cluster.server, request.path, request.query),
      request.method,
    );
    context.setHeaderParam('Accept', 'application/json');
    if (request.body !== undefined) {
      context.setHeaderParam('Content-Type', request.contentType ?? 'application/json');
      context.setBody(JSON.stringify(request.body));
    }
    context.setSignal(AbortSignal.timeout(request.timeoutMs ?? DEFAULT_TIMEOUT_MS));
    await this.kc.applySecurityAuthentication(context);
    let status = 0;
    let text: string;
    try {
      const response = await this.#http.send(context).toPromise();
      status = response.httpStatusCode;
      text = await response.body.text();
    } catch (error) {
      throw new KubeRequestError({
        message: `${request.method} ${request.path}: ${error instanceof Error ? error.message : String(error)}`,
        status,
        cause: error,
      });
    }
    if (status < 200 || status > 299) {
      throw new KubeRequestError({
        message: `${request.method} ${request.path}: HTTP ${status}: ${text.slice(0, 300)}`,
        status,
      });
    }
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  get(path: string, query?: Readonly<Record<string, QueryValue>>): Promise<unknown> {
    return this.request({ method: HttpMethod.GET, path, ...(query ? { query } : {}) });
  }

  create(path: string, body: unknown): Promise<unknown> {
    return this.request({ method: HttpMethod.POST, path, body });
  }

  patch(details: {
    path: string;
    body: unknown;
    contentType: string;
    fieldManager?: string;
  }): Promise<unknown> {
    return this.request({
      method: HttpMethod.PATCH,
      path: details.path,
      body: details.body,
      contentType: details.contentType,
      ...(details.fieldManager === undefined
        ? {}
        : { query: { fieldManager: details.fieldManager } }),
    });
  }

  delete(path: string): Promise<unknown> {
    return this.request({ method: HttpMethod.DELETE, path });
  }
}

export { HttpMethod };
