/**
 * Config revisions' adoption (docs/adr/0036, ADR 0037) as a reconcile stage: after a roll that
 * pinned snapshots, a later reconcile hands them to the new revision and sweeps the left-over
 * ones. It owns which workloads still owe an adoption, and which owned a snapshot when this
 * process first looked at their namespace. It never fails the reconcile.
 */
import type { WorkloadKey } from '../../core/types.ts';
import type { Pass } from '../attempt.ts';
import { asApiError } from '../attempt.ts';
import type { ReconcileObserver, SnapshotApi } from '../ports.ts';
import { adoptSnapshots, snapshotOwners } from '../snapshot-writes.ts';
import type { IdleAttempt, ReconcileStage, StageAnswer } from '../stages.ts';
import type { Target } from '../write-actions.ts';
import { LeadershipLostError } from '../write-actions.ts';

/**
 * After a config-revisions roll, the next reconcile hands the snapshots to the new revision: the
 * Deployment controller creates its ReplicaSet within moments.
 */
export const ADOPTION_DELAY_MS = 2_000;
/** While a snapshot the template names has no revision yet, adoption is tried again this often. */
export const ADOPTION_RETRY_MS = 5_000;

export interface SnapshotAdoptionDeps {
  readonly api: SnapshotApi;
  readonly observer: ReconcileObserver;
  readonly now: () => number;
  readonly mayWrite: () => boolean;
  readonly dryRun: boolean;
}

export class SnapshotAdoption implements ReconcileStage {
  readonly #deps: SnapshotAdoptionDeps;
  /** Workloads whose snapshots still wait for adoption after a roll, also once they opted out. */
  readonly #owed = new Set<WorkloadKey>();
  /** Per namespace, the UIDs of workloads that still owned a snapshot at this process's start. */
  readonly #ownersAtStart = new Map<string, Promise<Set<string> | undefined>>();

  constructor(deps: SnapshotAdoptionDeps) {
    this.#deps = deps;
  }

  /** A fresh reconcile that writes nothing adopts what is owed; answers when to try again. */
  async idle(pass: Pass, target: Target, attempt: IdleAttempt): Promise<StageAnswer> {
    if (!attempt.fresh || this.#deps.dryRun) return undefined;
    const at = await this.#adopt(pass, target);
    return at === undefined ? undefined : { againAt: at };
  }

  /** A roll with config revisions owes an adoption pass a moment later. */
  written(pass: Pass, target: Target): StageAnswer {
    if (target.plan.action !== 'roll' || target.plan.revisions === undefined) return undefined;
    this.#owed.add(pass.key);
    return { againAt: this.#deps.now() + ADOPTION_DELAY_MS };
  }

  async #adopt(pass: Pass, target: Target): Promise<number | undefined> {
    const { api, observer } = this.#deps;
    const { view } = target;
    const owed = await this.#owes(pass, target);
    if (owed === 'unknown') return this.#deps.now() + ADOPTION_RETRY_MS;
    if (!owed) return undefined;
    try {
      const result = await adoptSnapshots({
        api,
        row: pass.row,
        view,
        ensureLeader: () => {
          if (!this.#deps.mayWrite()) throw new LeadershipLostError(view.ref);
        },
      });
      if (result.adopted.length > 0 || result.swept.length > 0) {
        observer.onSnapshots({ view, adopted: result.adopted, swept: result.swept });
      }
      if (result.waiting) return this.#deps.now() + ADOPTION_RETRY_MS;
      this.#owed.delete(pass.key);
      (await this.#ownersAtStart.get(view.ref.namespace))?.delete(view.uid);
      return undefined;
    } catch (error) {
      if (error instanceof LeadershipLostError) return undefined;
      observer.onSnapshots({ view, error: asApiError(error) });
      return this.#deps.now() + ADOPTION_RETRY_MS;
    }
  }

  /**
   * Opted in: always. Otherwise when a roll of this process left an adoption owed, or when the
   * workload still owned a snapshot at this process's first look at its namespace (ADR 0037).
   */
  async #owes(pass: Pass, target: Target): Promise<boolean | 'unknown'> {
    if (target.plan.revisions?.optedIn === true || this.#owed.has(pass.key)) return true;
    const { view } = target;
    const owners = await this.#ownersAtStartIn(view.ref.namespace);
    if (owners === undefined) return 'unknown';
    if (!owners.has(view.uid)) return false;
    this.#owed.add(pass.key);
    return true;
  }

  /**
   * One LIST per snapshot type and namespace per process: the workloads a snapshot is still owned
   * by. Undefined when the list failed; it is not kept, so the next reconcile there asks again.
   */
  #ownersAtStartIn(namespace: string): Promise<Set<string> | undefined> {
    const known = this.#ownersAtStart.get(namespace);
    if (known !== undefined) return known;
    const listed = snapshotOwners(this.#deps.api, namespace).catch(() => {
      this.#ownersAtStart.delete(namespace);
      return undefined;
    });
    this.#ownersAtStart.set(namespace, listed);
    return listed;
  }
}
