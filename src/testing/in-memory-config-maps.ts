/**
 * The ConfigMaps of one namespace as the baseline store uses them (docs/adr/0046): merge PATCH of
 * `data` (null removes a key), POST, and a log of every request. `observed()` is what the store's
 * list-watch would deliver now.
 */
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import type { StoreObject } from '../kube/baseline-records.ts';
import type { BaselineFence, BaselineStoreEvents } from '../kube/baseline-store.ts';
import { KubeBaselineStore, projectStoreObject } from '../kube/baseline-store.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import type { KubeRequest, KubeTransport } from '../kube/transport.ts';

/** An API error with an HTTP status; 5xx are retryable. */
export function statusError(code: number): ApiError {
  return new ApiError(`status ${String(code)}`, { status: code, retryable: code >= 500 });
}

export class InMemoryConfigMaps implements KubeTransport {
  readonly objects = new Map<string, JsonObject>();
  readonly writes: { method: string; path: string; body: unknown }[] = [];
  /** The next request fails with this error. */
  failNext: ApiError | undefined;
  /** The next request is applied, then its response is lost with this error. */
  loseNextResponse: ApiError | undefined;
  readonly #collection: string;
  #version = 100;

  constructor(namespace: string) {
    this.#collection = `/api/v1/namespaces/${namespace}/configmaps`;
  }

  request(request: KubeRequest): Promise<unknown> {
    this.writes.push({ method: request.method, path: request.path, body: request.body });
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      return Promise.reject(error);
    }
    const lost = this.loseNextResponse;
    this.loseNextResponse = undefined;
    const served = this.#apply(request);
    return lost === undefined ? served : served.then(() => Promise.reject(lost));
  }

  #apply(request: KubeRequest): Promise<unknown> {
    const body = request.body as JsonObject;
    if (request.method === 'POST') {
      const metadata = body.metadata as JsonObject;
      const name = metadata.name as string;
      if (this.objects.has(name)) return Promise.reject(statusError(409));
      return Promise.resolve(this.#store(name, body));
    }
    const name = request.path.slice(this.#collection.length + 1);
    const current = this.objects.get(name);
    if (!current) return Promise.reject(statusError(404));
    const data = { ...(current.data as Record<string, string>) };
    for (const [key, value] of Object.entries(body.data as Record<string, string | null>)) {
      if (value === null) Reflect.deleteProperty(data, key);
      else data[key] = value;
    }
    return Promise.resolve(this.#store(name, { ...current, data }));
  }

  #store(name: string, object: JsonObject): JsonObject {
    this.#version += 1;
    const metadata = { ...(object.metadata as JsonObject), resourceVersion: String(this.#version) };
    const stored = { ...object, metadata };
    this.objects.set(name, stored);
    return stored;
  }

  /** What the watch would deliver now. */
  observed(): StoreObject[] {
    return [...this.objects.values()].map(projectStoreObject);
  }
}

/**
 * A baseline store in kreload's namespace on real timers, as a pipeline test opens it: always
 * allowed to write unless `mayWrite` says otherwise, and deaf to every event not given.
 */
export function aPipelineBaselineStore(
  transport: KubeTransport,
  options: {
    readonly namespace?: string;
    readonly mayWrite?: () => boolean;
    readonly fence?: BaselineFence;
    readonly events?: Partial<BaselineStoreEvents>;
  } = {},
): KubeBaselineStore {
  return new KubeBaselineStore({
    transport,
    namespace: options.namespace ?? 'kreload-system',
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    mayWrite: options.mayWrite ?? (() => true),
    fence: options.fence,
    events: {
      onRefused: () => undefined,
      onLost: () => undefined,
      onWriteFailed: () => undefined,
      ...options.events,
    },
  });
}
