/**
 * Follows each rollout kreload starts, from the generation its PATCH produced to `complete` or
 * `failed` (rollout/health.ts), on the status the workload watch already delivers: no request of
 * its own. It keeps the last rollout per workload for explain, sets `kreload_rollouts_in_progress`,
 * records `kreload_rollout_duration_seconds` when one ends and a `RolloutFailed` Warning Event when
 * one fails. A rollout kreload starts on a workload whose previous one has not ended supersedes it.
 *
 * Nothing is kept outside the process: after a restart (or when another replica takes the lead),
 * adoptInProgress() finds again, in the watch's caches, the rollouts still progressing on workloads
 * whose pod template carries kreload's roll marker, and follows them from then on.
 */
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadRef, WorkloadView } from '../core/types.ts';
import { rolloutFailedEvent } from '../events/event-messages.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import { workloadObjectRef } from '../events/object-refs.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics, RolloutResult } from '../metrics/metrics.ts';
import type { RolledEvent } from '../reconcile/ports.ts';
import { judgeRollout, judgeStartedRollout, type RolloutHealth } from '../rollout/health.ts';
import type { KindTable } from '../rollout/kinds.ts';

/** The last rollout kreload started on a workload, as explain shows it. */
export interface TrackedRollout {
  readonly ref: WorkloadRef;
  readonly uid: string;
  /** The generation kreload's PATCH produced. */
  readonly generation: number;
  /** ms since the epoch; for an adopted rollout, when this process found it. */
  readonly startedAt: number;
  /**
   * Found in progress when this process started or took the lead, not seen being started: the
   * generation is the one the watch showed then, and the duration counts from then.
   */
  readonly adopted: boolean;
  /** The last judgement; undefined until the watch delivered a status to judge. */
  readonly health: RolloutHealth | undefined;
  readonly ended: { readonly at: number; readonly result: RolloutResult } | undefined;
}

export interface RolloutTrackerDeps {
  /** The effective kind table: which kinds have a health model, and their apiVersion. */
  readonly kinds: KindTable;
  readonly workloads: {
    get(key: WorkloadKey): WorkloadView | undefined;
    /** Called after each store or removal of `key` (watch/workload-store.ts). */
    onUpdate(key: WorkloadKey, listener: () => void): () => void;
  };
  readonly now: () => number;
  readonly metrics: Pick<Metrics, 'setRolloutsInProgress' | 'recordRolloutEnded'>;
  readonly events: { record(request: EventRequest): void };
  readonly logger: Logger;
  /**
   * The workload's pod template carries kreload's roll marker (an applied hash, in the
   * annotation or the `STAKATER_*` env var of the reload strategy): kreload (or Reloader before it)
   * rolled it for a config change.
   */
  readonly carriesRollMarker: (key: WorkloadKey) => boolean;
}

interface Followed {
  rollout: TrackedRollout;
  /** Stops listening to the workload's updates: when it goes, or kreload rolls it again. */
  unsubscribe: (() => void) | undefined;
}

export class RolloutTracker {
  readonly #deps: RolloutTrackerDeps;
  /** One entry per workload kreload rolled, its last rollout; dropped when the workload goes. */
  readonly #rollouts = new Map<WorkloadKey, Followed>();
  /** Entries whose rollout has not ended: the gauge, kept as a count (no scan per update). */
  #inProgress = 0;
  /** Told when a followed rollout ends or its workload goes (roll admission's slots free). */
  readonly #endListeners = new Set<() => void>();

  constructor(deps: RolloutTrackerDeps) {
    this.#deps = deps;
  }

  /** A roll was acknowledged (the reconciler's `onRolled`). Kinds without a health model pass. */
  started(event: RolledEvent): void {
    const { view, generation } = event;
    if (generation === undefined || this.#deps.kinds.find(view.ref.kind)?.health === undefined)
      return;
    const key = workloadKey(view.ref);
    const previous = this.#rollouts.get(key);
    if (previous !== undefined) {
      previous.unsubscribe?.();
      this.#stop(previous, 'superseded');
    }
    this.#follow(key, { view, generation, adopted: false });
  }

  /**
   * After a restart or on taking the lead: follows the rollouts of `keys` that are progressing now
   * on a workload whose template carries kreload's roll marker and that no rollout is followed for
   * yet. Reads only the watch's caches and writes nothing. A rollout that already failed is left
   * alone: this process cannot tell whether its Event was recorded before. Returns how many it
   * adopted.
   */
  adoptInProgress(keys: Iterable<WorkloadKey>): number {
    let adopted = 0;
    for (const key of keys) {
      if (this.#rollouts.has(key)) continue;
      const view = this.#deps.workloads.get(key);
      if (view?.rolloutStatus === undefined || view.generation === undefined) continue;
      if (this.#deps.kinds.find(view.ref.kind)?.health === undefined) continue;
      const health = judgeRollout({
        generation: view.generation,
        paused: view.paused,
        status: view.rolloutStatus,
      });
      if (health.state !== 'progressing' || !this.#deps.carriesRollMarker(key)) continue;
      this.#follow(key, { view, generation: view.generation, adopted: true });
      adopted += 1;
    }
    if (adopted > 0) {
      this.#deps.logger.info('following rollouts in progress at start', { rollouts: adopted });
    }
    return adopted;
  }

  /** The last rollout kreload started on the workload, while the workload exists. */
  lastRollout(key: WorkloadKey): TrackedRollout | undefined {
    return this.#rollouts.get(key)?.rollout;
  }

  /** Rollouts followed that have not ended, cluster-wide or in one namespace (roll admission). */
  inProgress(namespace?: string): number {
    if (namespace === undefined) return this.#inProgress;
    let count = 0;
    for (const { rollout } of this.#rollouts.values()) {
      if (rollout.ended === undefined && rollout.ref.namespace === namespace) count += 1;
    }
    return count;
  }

  /** Calls `listener` whenever a followed rollout ends or stops being followed; returns the undo. */
  onEnded(listener: () => void): () => void {
    this.#endListeners.add(listener);
    return () => {
      this.#endListeners.delete(listener);
    };
  }

  /** Stops following every rollout (shutdown); the gauge drops to zero. */
  close(): void {
    for (const followed of this.#rollouts.values()) followed.unsubscribe?.();
    this.#rollouts.clear();
    this.#inProgress = 0;
    this.#publish();
  }

  #follow(
    key: WorkloadKey,
    from: { view: WorkloadView; generation: number; adopted: boolean },
  ): void {
    const followed: Followed = {
      rollout: {
        ref: from.view.ref,
        uid: from.view.uid,
        generation: from.generation,
        startedAt: this.#deps.now(),
        adopted: from.adopted,
        health: undefined,
        ended: undefined,
      },
      unsubscribe: undefined,
    };
    followed.unsubscribe = this.#deps.workloads.onUpdate(key, () => {
      this.#observe(key, followed);
    });
    this.#rollouts.set(key, followed);
    this.#inProgress += 1;
    this.#publish();
    this.#observe(key, followed);
  }

  #observe(key: WorkloadKey, followed: Followed): void {
    if (this.#rollouts.get(key) !== followed) return;
    const view = this.#deps.workloads.get(key);
    if (view?.uid !== followed.rollout.uid) {
      // Deleted (or replaced by a new object of the same name): nothing is left to roll out.
      followed.unsubscribe?.();
      this.#rollouts.delete(key);
      if (followed.rollout.ended === undefined) this.#inProgress -= 1;
      this.#publish();
      this.#ended();
      return;
    }
    if (followed.rollout.ended !== undefined || view.rolloutStatus === undefined) return;
    const health = judgeStartedRollout(followed.rollout, {
      generation: view.generation,
      paused: view.paused,
      status: view.rolloutStatus,
    });
    followed.rollout = { ...followed.rollout, health };
    if (health.state === 'complete') this.#stop(followed, 'complete');
    if (health.state === 'failed') {
      this.#stop(followed, 'failed');
      this.#reportFailure(followed.rollout, health);
    }
  }

  #stop(followed: Followed, result: RolloutResult): void {
    if (followed.rollout.ended !== undefined) return;
    const at = this.#deps.now();
    followed.rollout = { ...followed.rollout, ended: { at, result } };
    this.#inProgress -= 1;
    this.#deps.metrics.recordRolloutEnded(
      followed.rollout.ref.kind,
      result,
      Math.max(0, at - followed.rollout.startedAt) / 1000,
    );
    this.#publish();
    this.#ended();
  }

  #ended(): void {
    for (const listener of [...this.#endListeners]) listener();
  }

  #reportFailure(rollout: TrackedRollout, health: RolloutHealth & { state: 'failed' }): void {
    const { ref } = rollout;
    this.#deps.logger.warn('rollout failed', {
      namespace: ref.namespace,
      kind: ref.kind,
      workload: ref.name,
      reason: health.reason,
      generation: rollout.generation,
    });
    this.#deps.events.record({
      object: workloadObjectRef(this.#deps.kinds, ref, rollout.uid),
      ...rolloutFailedEvent({
        workload: ref,
        generation: rollout.generation,
        reason: health.reason,
        detail: health.detail,
      }),
    });
  }

  #publish(): void {
    this.#deps.metrics.setRolloutsInProgress(this.#inProgress);
  }
}
