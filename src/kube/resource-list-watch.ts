/**
 * Wires a `ListWatch` to a real API resource through kreload's transport: list pages and watches
 * are both streamed and decoded one object at a time (ADR 0022), so memory is bounded by the
 * largest object, not by a page, and every request shows in `rest_client_*`.
 */
import type { JsonObject } from '../core/json.ts';
import { stringAt } from '../core/json.ts';
import type { ListPageFn, ListWatchConsumer, WatchFn } from './list-watch.ts';
import { ListWatch } from './list-watch.ts';
import type { Timers } from '../time/timers.ts';
import type { ApiResource } from './resources.ts';
import { resourcePath } from './resources.ts';
import { ListBodyDecoder, WatchStreamDecoder } from './response-decoding.ts';
import type { StreamingKubeTransport } from './transport.ts';

/**
 * Runs one list-page request when its turn comes. Shared by every list-watch of a process so that
 * dozens of loops starting together (scoped mode: one per namespace and kind) do not all read pages
 * at once.
 */
export type PageLimiter = <R>(fetch: () => Promise<R>) => Promise<R>;

const UNLIMITED: PageLimiter = (fetch) => fetch();

/**
 * Longest pause between two chunks of a list page. The API server streams a page as it encodes
 * it; a silent connection for this long is a dead one.
 */
export const LIST_IDLE_TIMEOUT_MS = 30_000;

/** One page of a collection, each item handed over as wire JSON as soon as it is decoded. */
export function createListPageFn(
  transport: StreamingKubeTransport,
  path: string,
  limiter: PageLimiter = UNLIMITED,
): ListPageFn {
  return (request) =>
    limiter(async () => {
      const response = await transport.stream({
        path,
        query: {
          limit: request.limit,
          continue: request.continue,
          labelSelector: request.labelSelector,
          fieldSelector: request.fieldSelector,
        },
        signal: request.signal,
        idleTimeoutMs: LIST_IDLE_TIMEOUT_MS,
      });
      const decoder = new ListBodyDecoder({ status: response.status, onItem: request.onItem });
      for await (const chunk of response.chunks) decoder.push(chunk);
      const { metadata } = decoder.end();
      return {
        resourceVersion: stringAt(metadata, ['resourceVersion']) ?? '',
        continue: stringAt(metadata, ['continue']),
      };
    });
}

/**
 * The API server sends a BOOKMARK about once a minute on a watch that asked for them, so a watch
 * silent for longer than this is half-open and is re-opened from its last resourceVersion.
 */
export const WATCH_INACTIVITY_TIMEOUT_MS = 90_000;

/**
 * Watches over the transport, one event per line. A line that cannot be decoded ends the watch
 * with a `MalformedResponseError` (the loop relists). A stream that ends inside a line lost only
 * that unfinished event, which the re-watch from the last complete event's resourceVersion repeats.
 */
export function createWatchFn(
  transport: StreamingKubeTransport,
  inactivityTimeoutMs = WATCH_INACTIVITY_TIMEOUT_MS,
): WatchFn {
  return async (path, query, onEvent, onDone) => {
    const controller = new AbortController();
    let response;
    try {
      response = await transport.stream({
        path,
        query: { watch: true, ...query },
        signal: controller.signal,
        idleTimeoutMs: inactivityTimeoutMs,
      });
    } catch (err) {
      onDone(err);
      return controller;
    }
    const decoder = new WatchStreamDecoder({
      status: response.status,
      onEvent: (event) => {
        onEvent(event.type, event.object);
      },
    });
    void (async () => {
      for await (const chunk of response.chunks) {
        if (controller.signal.aborted) break;
        decoder.push(chunk);
      }
    })().then(
      () => {
        onDone(null);
      },
      (err: unknown) => {
        // Aborted by the loop itself (stop, in-stream ERROR): not a failure of the stream.
        onDone(controller.signal.aborted ? null : err);
      },
    );
    return controller;
  };
}

export interface ResourceListWatchOptions<T> {
  readonly transport: StreamingKubeTransport;
  readonly resource: ApiResource;
  /** Omitted: all namespaces. */
  readonly namespace?: string | undefined;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly project: (object: JsonObject) => T;
  readonly consumer: ListWatchConsumer<T>;
  readonly timers?: Timers;
  readonly random?: () => number;
  /** Client-side inactivity watchdog; see `WATCH_INACTIVITY_TIMEOUT_MS`. */
  readonly inactivityTimeoutMs?: number;
  readonly pageLimiter?: PageLimiter | undefined;
}

export function createResourceListWatch<T>(options: ResourceListWatchOptions<T>): ListWatch<T> {
  const path = resourcePath(options.resource, { namespace: options.namespace });
  return new ListWatch<T>({
    path,
    listPage: createListPageFn(options.transport, path, options.pageLimiter),
    watch: createWatchFn(options.transport, options.inactivityTimeoutMs),
    project: options.project,
    consumer: options.consumer,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    timers: options.timers,
    random: options.random,
  });
}
