/** In-memory WorkloadLookup (the workload store); watch/marks.ts's MarkStore is the MarkLedger. */
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadKindName, WorkloadView } from '../core/types.ts';
import type { WorkloadLookup } from '../reconcile/ports.ts';

export class InMemoryWorkloads implements WorkloadLookup {
  readonly #views = new Map<WorkloadKey, WorkloadView>();
  readonly #relevantSince = new Map<WorkloadKey, number>();
  #jobsWatched = true;

  put(view: WorkloadView, relevantSince?: number): void {
    const key = workloadKey(view.ref);
    this.#views.set(key, view);
    if (relevantSince !== undefined) this.#relevantSince.set(key, relevantSince);
  }

  remove(key: WorkloadKey): void {
    this.#views.delete(key);
  }

  get(key: WorkloadKey): WorkloadView | undefined {
    return this.#views.get(key);
  }

  relevantSince(key: WorkloadKey): number | undefined {
    return this.#relevantSince.get(key);
  }

  /** Never waits: what is in the map now is all the "watch" will ever deliver. */
  newerThan(key: WorkloadKey, resourceVersion: string): Promise<WorkloadView | undefined> {
    const view = this.#views.get(key);
    return Promise.resolve(view?.resourceVersion === resourceVersion ? undefined : view);
  }

  /** `false`: as if `jobs` were in `--ignored-workload-types` (the CronJob guard is skipped). */
  setJobsWatched(watched: boolean): void {
    this.#jobsWatched = watched;
  }

  controlledBy(
    kind: WorkloadKindName,
    namespace: string,
    controllerUid: string,
  ): readonly WorkloadView[] | undefined {
    if (kind === 'Job' && !this.#jobsWatched) return undefined;
    return [...this.#views.values()].filter(
      (view) =>
        view.ref.kind === kind &&
        view.ref.namespace === namespace &&
        view.controller?.uid === controllerUid,
    );
  }
}
