/**
 * The watch server's in-memory side (§9.2): one source cache per watched type, the workload store
 * and the namespace filter, each reporting what it observed to the server's subscribers, as an
 * informer calls its event handlers. Handlers only enqueue work; nothing here calls the API server.
 */
import type { AnnotationKeys, SourceType, WorkloadKey } from '../core/types.ts';
import type { ResourceType } from '../metrics/metrics.ts';
import { NamespaceFilter, type NamespaceScope } from './namespace-filter.ts';
import type { Clock, Timers } from '../time/timers.ts';
import { SourceCache, SourceCaches, type SourceCacheEvent } from './source-cache.ts';
import { WorkloadStore, type WorkloadStoreEvent } from './workload-store.ts';
import { SOURCE_TYPE_ROWS } from '../core/source-types.ts';
import type { WorkloadKindName } from '../core/types.ts';
import { type PolicyEvent, PolicyStore } from './policy-store.ts';

/** What the watch server tells its subscribers, each call after its cache reflects the event. */
export interface WatchHandler {
  onSourceEvent(event: SourceCacheEvent): void;
  onWorkloadEvent(event: WorkloadStoreEvent): void;
  /** The namespace joined the `--namespace-selector` set (§11 item 1). */
  onNamespaceEntered(namespace: string): void;
  /** The namespace left the selected set: nothing more is written there (§11 item 1). */
  onNamespaceLeft(namespace: string): void;
  /**
   * A watch of `resource`, forbidden or absent before its first list, lists now (ADR 0021): in
   * `namespace`, or cluster-wide when undefined. Its workloads were reconciled without it.
   */
  onScopeJoined(resource: ResourceType, namespace: string | undefined): void;
  /** An optional kind's API (or with `undefined` the CSI API) is served now, its list is in (§2.2). */
  onKindWatched(kind: WorkloadKindName | undefined): void;
  /** A ReloadPolicy was created, changed or deleted (docs/reload-policy.md). */
  onPolicyEvent(event: PolicyEvent): void;
}

/**
 * The fan-out to every subscribed handler, in subscription order. Its members are bound, so the
 * caches take them as their `notify` as they are.
 */
export class WatchSubscribers implements WatchHandler {
  readonly #handlers: WatchHandler[] = [];

  add(handler: WatchHandler): void {
    this.#handlers.push(handler);
  }

  readonly onSourceEvent = (event: SourceCacheEvent): void => {
    for (const handler of this.#handlers) handler.onSourceEvent(event);
  };

  readonly onWorkloadEvent = (event: WorkloadStoreEvent): void => {
    for (const handler of this.#handlers) handler.onWorkloadEvent(event);
  };

  onNamespaceEntered(namespace: string): void {
    for (const handler of this.#handlers) handler.onNamespaceEntered(namespace);
  }

  onNamespaceLeft(namespace: string): void {
    for (const handler of this.#handlers) handler.onNamespaceLeft(namespace);
  }

  onScopeJoined(resource: ResourceType, namespace: string | undefined): void {
    for (const handler of this.#handlers) handler.onScopeJoined(resource, namespace);
  }

  onKindWatched(kind: WorkloadKindName | undefined): void {
    for (const handler of this.#handlers) handler.onKindWatched(kind);
  }

  readonly onPolicyEvent = (event: PolicyEvent): void => {
    for (const handler of this.#handlers) handler.onPolicyEvent(event);
  };
}

export interface WatchCaches {
  /** By type; the SECRETPROVIDERCLASS cache is added when the CSI API is watched. */
  readonly byType: Partial<Record<SourceType, SourceCache>>;
  readonly sources: SourceCaches;
  readonly store: WorkloadStore;
  readonly namespaces: NamespaceFilter;
  /** With `--enable-reload-policies` only. */
  readonly policies: PolicyStore | undefined;
}

export interface WatchCachesOptions {
  readonly sourceTypes: readonly SourceType[];
  readonly keys: AnnotationKeys;
  readonly scope: NamespaceScope;
  readonly clock: Pick<Clock, 'now'>;
  /** The timeout of the store's `newerThan`. */
  readonly timers: Timers;
  /** When kreload last wrote a workload (the write ledger of ADR 0014). */
  readonly writeBasis: (key: WorkloadKey) => number | undefined;
  /** D of `type` in `namespace` is known: its list-watches there are healthy (§5.1, ADR 0021). */
  readonly isTypeHealthy: (type: SourceType, namespace: string) => boolean;
  /** `--enable-reload-policies`: keep a policy store. */
  readonly reloadPolicies?: boolean | undefined;
}

export function createWatchCaches(
  options: WatchCachesOptions,
  subscribers: WatchSubscribers,
): WatchCaches {
  const byType: Partial<Record<SourceType, SourceCache>> = {};
  for (const type of options.sourceTypes) {
    byType[type] = new SourceCache({
      type,
      clock: options.clock,
      notify: subscribers.onSourceEvent,
    });
  }
  const store = new WorkloadStore({
    clock: options.clock,
    timers: options.timers,
    keys: options.keys,
    writeBasis: options.writeBasis,
    notify: subscribers.onWorkloadEvent,
  });
  const policies =
    options.reloadPolicies === true
      ? new PolicyStore({
          keys: options.keys,
          sourcesIn: (namespace, type) => {
            const cache = byType[type];
            if (cache === undefined) return [];
            return cache.namesInNamespace(namespace).map((name) => ({
              kind: type,
              name,
              labels: cache.get(namespace, name)?.view.labels,
            }));
          },
          workloadsIn: (namespace) =>
            store.keysInNamespace(namespace).flatMap((key) => store.get(key) ?? []),
          workloadOf: (key) => store.get(key),
          membershipVersion: (namespace) =>
            [
              store.membershipVersion(namespace),
              ...options.sourceTypes.map((type) => byType[type]?.membershipVersion(namespace)),
              byType.SECRETPROVIDERCLASS?.membershipVersion(namespace) ?? 'no-csi',
            ].join('.'),
          notify: subscribers.onPolicyEvent,
        })
      : undefined;
  return {
    byType,
    sources: new SourceCaches({ caches: byType, isTypeHealthy: options.isTypeHealthy }),
    store,
    policies,
    namespaces: new NamespaceFilter({
      scope: options.scope,
      notify: (event) => {
        if (event.kind === 'entered') subscribers.onNamespaceEntered(event.namespace);
        else subscribers.onNamespaceLeft(event.namespace);
      },
    }),
  };
}

/** Objects held per kind (`kreload_cached_objects`): each source type's cache and the workloads. */
export function cachedObjectCounts(caches: WatchCaches): Record<string, number> {
  const counts: Record<string, number> = { workload: caches.store.size };
  for (const row of SOURCE_TYPE_ROWS) {
    const cache = caches.byType[row.type];
    if (cache !== undefined) counts[row.kind] = cache.size;
  }
  return counts;
}
