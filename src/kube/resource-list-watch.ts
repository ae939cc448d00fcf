/** Wires a `ListWatch` to a real API resource: raw paginated lists and client-node's `Watch`. */
import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';
import type { JsonObject } from './json.ts';
import { objectsAt, stringAt } from './json.ts';
import type { ListPageFn, ListWatchConsumer } from './list-watch.ts';
import { ListWatch } from './list-watch.ts';
import type { Timers } from './list-watch-timing.ts';
import type { ApiResource } from './resources.ts';
import { resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';

/**
 * Runs one list-page request when its turn comes. Shared by every list-watch of a process so that
 * dozens of loops starting together (scoped mode: one per namespace and kind) do not hold dozens of
 * multi-megabyte pages in memory at once.
 */
export type PageLimiter = <R>(fetch: () => Promise<R>) => Promise<R>;

const UNLIMITED: PageLimiter = (fetch) => fetch();

/** One page of a collection, as wire JSON (items keep their string timestamps). */
export function createListPageFn(
  transport: KubeTransport,
  path: string,
  limiter: PageLimiter = UNLIMITED,
): ListPageFn {
  return async (request) => {
    const body = await limiter(() =>
      transport.request({
        method: HttpMethod.GET,
        path,
        query: {
          limit: request.limit,
          continue: request.continue,
          labelSelector: request.labelSelector,
          fieldSelector: request.fieldSelector,
        },
        signal: request.signal,
      }),
    );
    return {
      items: objectsAt(body, 'items'),
      resourceVersion: stringAt(body, 'metadata', 'resourceVersion') ?? '',
      continue: stringAt(body, 'metadata', 'continue'),
    };
  };
}

export interface ResourceListWatchOptions<T> {
  readonly kubeConfig: KubeConfig;
  readonly transport: KubeTransport;
  readonly resource: ApiResource;
  /** Omitted: all namespaces. */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly project: (object: JsonObject) => T;
  readonly consumer: ListWatchConsumer<T>;
  readonly timers?: Timers;
  readonly random?: () => number;
  /** Client-side inactivity watchdog; see `createWatch`. */
  readonly inactivityTimeoutMs?: number;
  readonly pageLimiter?: PageLimiter | undefined;
}

/**
 * The API server sends a BOOKMARK about once a minute on a watch that asked for them. client-node's
 * `Watch` aborts a watch after 30 s without data, so a quiet watch would never see one: it would
 * re-watch every 30 s from an ever older resourceVersion until that falls out of the watch cache
 * and costs a full relist. The watchdog (a private field in client-node 2.0.1, guarded by a test)
 * is therefore raised above the bookmark interval; it still catches half-open connections.
 */
export const WATCH_INACTIVITY_TIMEOUT_MS = 90_000;

export function createWatch(
  kubeConfig: KubeConfig,
  inactivityTimeoutMs = WATCH_INACTIVITY_TIMEOUT_MS,
): Watch {
  return Object.assign(new Watch(kubeConfig), { requestTimeoutMs: inactivityTimeoutMs });
}

export function createResourceListWatch<T>(options: ResourceListWatchOptions<T>): ListWatch<T> {
  const path = resourcePath(options.resource, { namespace: options.namespace });
  const watch = createWatch(options.kubeConfig, options.inactivityTimeoutMs);
  return new ListWatch<T>({
    path,
    listPage: createListPageFn(options.transport, path, options.pageLimiter),
    watch: (watchPath, query, onEvent, onDone) => watch.watch(watchPath, query, onEvent, onDone),
    project: options.project,
    consumer: options.consumer,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    timers: options.timers,
    random: options.random,
  });
}
