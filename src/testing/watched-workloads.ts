/** The workload store as the trackers read it: views by key, and update listeners. */
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadView } from '../core/types.ts';

export class WatchedWorkloads {
  readonly #views = new Map<WorkloadKey, WorkloadView>();
  readonly #listeners = new Map<WorkloadKey, Set<() => void>>();

  get(key: WorkloadKey): WorkloadView | undefined {
    return this.#views.get(key);
  }

  onUpdate(key: WorkloadKey, listener: () => void): () => void {
    const set = this.#listeners.get(key) ?? new Set();
    set.add(listener);
    this.#listeners.set(key, set);
    return () => set.delete(listener);
  }

  /** How many listeners `key` has (a tracker that lets go leaves none). */
  listeners(key: WorkloadKey): number {
    return this.#listeners.get(key)?.size ?? 0;
  }

  put(view: WorkloadView): void {
    this.#notify(view, () => this.#views.set(workloadKey(view.ref), view));
  }

  remove(view: WorkloadView): void {
    this.#notify(view, () => this.#views.delete(workloadKey(view.ref)));
  }

  #notify(view: WorkloadView, change: () => void): void {
    change();
    for (const listener of [...(this.#listeners.get(workloadKey(view.ref)) ?? [])]) listener();
  }
}
