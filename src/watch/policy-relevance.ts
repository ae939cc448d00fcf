/**
 * A ReloadPolicy that starts to bind a workload to a source counts as the opt-in annotation added
 * on the workload would (§5.4, docs/reload-policy.md): the workload's relevantSince moves to now, so
 * a change the source had before the binding is absorbed into a baseline (R9), not rolled (R7).
 * Subscribed before the router and the status writer, so every pass that the binding triggers
 * reads the moved time. Followers keep it too: it is a fact of the caches, not a write.
 */
import type { SourceCacheEvent } from './source-cache.ts';
import type { PolicyEvent, PolicyStore } from './policy-store.ts';
import type { WatchHandler } from './watch-caches.ts';
import type { WorkloadStore, WorkloadStoreEvent } from './workload-store.ts';
import { sameLabels } from './source-cache.ts';

export interface PolicyRelevanceDeps {
  readonly policies: PolicyStore;
  readonly store: Pick<WorkloadStore, 'markRelevantNow'>;
}

export class PolicyRelevance implements WatchHandler {
  readonly #deps: PolicyRelevanceDeps;

  constructor(deps: PolicyRelevanceDeps) {
    this.#deps = deps;
  }

  onSourceEvent(event: SourceCacheEvent): void {
    if (event.kind !== 'labels') return;
    const { ref } = event;
    const source = { kind: ref.type, name: ref.name, labels: event.labels };
    for (const key of this.#deps.policies.gainedBySourceLabels(
      ref.namespace,
      source,
      event.prevLabels,
    )) {
      this.#deps.store.markRelevantNow(key);
    }
  }

  onWorkloadEvent(event: WorkloadStoreEvent): void {
    if (event.kind !== 'changed' || sameLabels(event.prev.labels, event.view.labels)) return;
    if (this.#deps.policies.gainedByWorkloadLabels(event.view, event.prev)) {
      this.#deps.store.markRelevantNow(event.key);
    }
  }

  onPolicyEvent(event: PolicyEvent): void {
    if (event.kind !== 'upserted') return;
    for (const key of this.#deps.policies.gainedByPolicy(event.view, event.previous)) {
      this.#deps.store.markRelevantNow(key);
    }
  }

  onNamespaceEntered(): void {
    // A namespace's first list counts as first seen now already (ADR 0021).
  }

  onNamespaceLeft(): void {
    // Nothing to move: its workloads are no longer planned.
  }

  onScopeJoined(): void {
    // Seeded lists count as first seen now already.
  }

  onKindWatched(): void {
    // Seeded lists count as first seen now already.
  }
}
