/**
 * What the running controller knows of each roll by eviction under way (docs/evict-strategy.md):
 * the progress its last round saw and the hold it is in, for explain; `kreload_pod_evictions_total`
 * and `kreload_pods_pending_eviction`. Memory only: the W marker `kreload.io/evict-before` is the
 * durable state, and after a restart the first round fills this in again. A workload leaves when
 * its roll ends, or when the watch shows it gone or without the marker.
 */
import { workloadKey } from '../core/keys.ts';
import { EVICT_BEFORE } from '../core/types.ts';
import type { WorkloadKey, WorkloadView } from '../core/types.ts';
import type { EvictionResult, Metrics } from '../metrics/metrics.ts';
import type { EvictionEvent } from '../reconcile/ports.ts';
import type { EvictionProgress } from '../rollout/evict.ts';

/** A roll by eviction as its last round left it. */
export interface EvictionStatus {
  /** Undefined until a round counted the pods (the first one after the roll's write). */
  readonly progress: EvictionProgress | undefined;
  /** Set while the roll is held: why, and when it is tried again (ms since the epoch). */
  readonly held: { readonly reason: string; readonly retryAt: number } | undefined;
}

export interface EvictionTrackerDeps {
  readonly workloads: {
    get(key: WorkloadKey): WorkloadView | undefined;
    /** Called after each store or removal of `key` (watch/workload-store.ts). */
    onUpdate(key: WorkloadKey, listener: () => void): () => void;
  };
  readonly now: () => number;
  readonly metrics: Pick<Metrics, 'recordEviction' | 'setPodsPendingEviction'>;
}

/** Which steps are Eviction requests, and how `kreload_pod_evictions_total` counts them. */
const REQUEST_RESULT: Readonly<Record<EvictionEvent['result'], EvictionResult | undefined>> = {
  evicted: 'evicted',
  held: 'blocked',
  failed: 'failed',
  blocked: undefined,
  done: undefined,
};

interface Followed {
  status: EvictionStatus;
  readonly unsubscribe: () => void;
}

export class EvictionTracker {
  readonly #deps: EvictionTrackerDeps;
  readonly #rolls = new Map<WorkloadKey, Followed>();

  constructor(deps: EvictionTrackerDeps) {
    this.#deps = deps;
  }

  /** One step of a roll by eviction, as the reconciler reports it. */
  observe(event: EvictionEvent): void {
    const counted = REQUEST_RESULT[event.result];
    if (counted !== undefined) this.#deps.metrics.recordEviction(counted);
    const key = workloadKey(event.view.ref);
    if (event.result === 'done') {
      this.#forget(key);
      return;
    }
    const followed = this.#rolls.get(key) ?? this.#follow(key);
    const progress = 'progress' in event ? event.progress : followed.status.progress;
    const held =
      event.result === 'held' || event.result === 'blocked'
        ? { reason: event.reason, retryAt: this.#deps.now() + event.retryInMs }
        : undefined;
    followed.status = { progress, held };
    this.#publish();
  }

  /** The roll by eviction under way on `key`, if this process has seen a round of it. */
  of(key: WorkloadKey): EvictionStatus | undefined {
    return this.#rolls.get(key)?.status;
  }

  #follow(key: WorkloadKey): Followed {
    const followed: Followed = {
      status: { progress: undefined, held: undefined },
      unsubscribe: this.#deps.workloads.onUpdate(key, () => {
        const view = this.#deps.workloads.get(key);
        if (view?.annotations[EVICT_BEFORE] === undefined) this.#forget(key);
      }),
    };
    this.#rolls.set(key, followed);
    return followed;
  }

  #forget(key: WorkloadKey): void {
    const followed = this.#rolls.get(key);
    if (followed === undefined) return;
    followed.unsubscribe();
    this.#rolls.delete(key);
    this.#publish();
  }

  #publish(): void {
    let pending = 0;
    for (const { status } of this.#rolls.values()) pending += status.progress?.old ?? 0;
    this.#deps.metrics.setPodsPendingEviction(pending);
  }
}
