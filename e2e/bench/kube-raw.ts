/**
 * Wire-JSON requests through kreload's transport (client-node's HTTP stack, pooled). The bench
 * and the ideal reactor read and write raw JSON so that list items and watch events have one shape
 * and no typed deserialisation costs the reactor time it would not have in a real controller.
 */
import { HttpMethod, type KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../src/core/api-error.ts';
import { createKubeTransport, type KubeTransport } from '../../src/kube/transport.ts';

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

/**
 * One client per KubeConfig, over kreload's own transport: the same connection reuse (ADR 0016),
 * so the ideal reactor and the bench pay no TLS handshake per request either.
 */
export class KubeRaw {
  readonly kc: KubeConfig;
  #transport: KubeTransport | undefined;

  constructor(deps: { kc: KubeConfig }) {
    this.kc = deps.kc;
  }

  async request(request: RawRequest): Promise<unknown> {
    this.#transport ??= createKubeTransport({
      kubeConfig: this.kc,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      userAgent: 'kreload-bench',
    });
    try {
      return await this.#transport.request({
        method: request.method,
        path: request.path,
        ...(request.query === undefined ? {} : { query: request.query }),
        ...(request.body === undefined ? {} : { body: request.body }),
        ...(request.contentType === undefined ? {} : { contentType: request.contentType }),
        ...(request.timeoutMs === undefined
          ? {}
          : { signal: AbortSignal.timeout(request.timeoutMs) }),
      });
    } catch (error) {
      const status = error instanceof ApiError ? (error.status ?? 0) : 0;
      throw new KubeRequestError({
        message: `${request.method} ${request.path}: ${error instanceof Error ? error.message : String(error)}`,
        status,
        cause: error,
      });
    }
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
