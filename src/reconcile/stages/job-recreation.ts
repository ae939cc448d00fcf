/**
 * Job re-creation (§7.4, docs/adr/0019) as a reconcile stage. A Job roll journals the new Job and
 * deletes the old one (write-actions.ts); this stage creates it again as the roll's follow-up, and
 * at the opening of a later reconcile finishes a creation left pending here or by a process that
 * stopped. It owns the journal's entries held in this process.
 */
import { ApiError } from '../../core/api-error.ts';
import type { JsonObject } from '../../core/json.ts';
import { stringAt } from '../../core/json.ts';
import type { WorkloadKey, WorkloadRef } from '../../core/types.ts';
import { recreatedKindRow } from '../../rollout/kinds.ts';
import { asApiError, type Completion, type ReconcileResult, NOT_LEADER } from '../attempt.ts';
import type { PendingRecreation } from '../pending-recreations.ts';
import { PendingRecreations, ProcessMemoryJournal } from '../pending-recreations.ts';
import type {
  CreatedObject,
  RecreationJournal,
  RecreationRetryEvent,
  ReconcileObserver,
  WorkloadLookup,
  WorkloadWriter,
} from '../ports.ts';
import type { FollowUpStep, ReconcileStage, StageAnswer } from '../stages.ts';

/** Job creation after its deletion retries AlreadyExists for up to this long (§7.4 item 3). */
export const RECREATE_WINDOW_MS = 30_000;

export interface JobRecreationDeps {
  readonly workloads: WorkloadLookup;
  readonly writer: WorkloadWriter;
  readonly observer: ReconcileObserver;
  readonly mayWrite: () => boolean;
  /** Default: this process's memory, which a crash between DELETE and CREATE loses. */
  readonly journal?: RecreationJournal | undefined;
}

export class JobRecreation implements ReconcileStage {
  readonly #deps: JobRecreationDeps;
  /** The journal as the Job roll's write strategy records into it. */
  readonly pending: PendingRecreations;
  readonly followUps: ReconcileStage['followUps'];

  constructor(deps: JobRecreationDeps) {
    this.#deps = deps;
    this.pending = new PendingRecreations(deps.journal ?? new ProcessMemoryJournal());
    this.followUps = { 'create-job': this.#createJob };
  }

  /**
   * Reads the journal and returns every key with a pending Job creation; reports the entries it
   * no longer holds. Rejects with ApiError when the journal cannot be read.
   */
  async replay(): Promise<readonly WorkloadKey[]> {
    const { pending, withdrawn } = await this.pending.replay();
    for (const key of withdrawn)
      this.#deps.observer.onRecreationRetried({ key, result: 'withdrawn' });
    return pending;
  }

  async opening(key: WorkloadKey): Promise<StageAnswer> {
    if (!this.pending.get(key)) return undefined;
    const result = await this.#resume(key);
    return result ? { finish: result } : undefined;
  }

  readonly #createJob: FollowUpStep = {
    send: async (_pass, target, followUp): Promise<Completion> => {
      if (followUp.kind !== 'create-job')
        throw new TypeError(`not a Job creation: ${followUp.kind}`);
      const { ref, uid } = target.view;
      return { createdJob: await this.#createAgain(ref, uid, followUp.manifest) };
    },
    sent: (pass) => this.#settle(pass.key),
    // AlreadyExists (409) while the old Job is still being deleted, besides the §10 retryables.
    retries: (error, _tries, waitedMs) =>
      (error.status === 409 || error.retryable) && waitedMs <= RECREATE_WINDOW_MS,
    // The entry stays journalled (docs/adr/0019): the next reconcile, here or on the next leader.
    stopped: (key) => {
      this.#deps.observer.onRecreationRetried({ key, result: 'handed-over' });
    },
    leavesPending: true,
  };

  /**
   * CREATE of a deleted Job. AlreadyExists from a Job with another UID means it exists again (an
   * earlier answer lost, or someone else created it); from the old UID, the old Job is still going.
   */
  async #createAgain(
    ref: WorkloadRef,
    deletedUid: string,
    manifest: JsonObject,
  ): Promise<CreatedObject> {
    const { writer } = this.#deps;
    try {
      return await writer.create(recreatedKindRow(), ref.namespace, manifest);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
      const uid = stringAt(await writer.getObject(ref), ['metadata', 'uid']);
      if (uid === undefined || uid === deletedUid) throw error;
      return { name: ref.name, uid };
    }
  }

  /** The Job exists again: drop its journal entry. A failed removal is retried at the next resync. */
  async #settle(key: WorkloadKey): Promise<void> {
    try {
      await this.pending.settle(key);
    } catch (error) {
      this.#deps.observer.onRecreationRetried({
        key,
        result: 'failed',
        error: asApiError(error),
      });
    }
  }

  /**
   * §7.4 item 4 with the journal: the next step of a recreation left pending by an earlier
   * reconcile. Undefined when nothing is left to create (the Job has appeared, or was never
   * deleted): the reconcile then goes on as usual.
   */
  async #resume(key: WorkloadKey): Promise<ReconcileResult | undefined> {
    const { workloads, writer, observer } = this.#deps;
    // The journal is read again: an entry removed or edited there is not acted on (docs/adr/0019).
    let pending: PendingRecreation | undefined;
    try {
      pending = await this.pending.confirm(key);
    } catch (error) {
      return this.#failed(key, asApiError(error));
    }
    if (pending === undefined) {
      observer.onRecreationRetried({ key, result: 'withdrawn' });
      return undefined;
    }
    const cached = workloads.get(key);
    if (cached && cached.uid !== pending.deletedUid) return this.#ended(key, 'appeared');
    let served: JsonObject | undefined;
    try {
      served = await writer.getObject(pending.ref);
    } catch (error) {
      return this.#failed(key, asApiError(error));
    }
    if (served) {
      if (stringAt(served, ['metadata', 'uid']) !== pending.deletedUid) {
        return this.#ended(key, 'appeared');
      }
      if (stringAt(served, ['metadata', 'deletionTimestamp']) === undefined) {
        return this.#ended(key, 'not-deleted');
      }
      return this.#failed(key, stillDeleting(pending));
    }
    if (!this.#deps.mayWrite()) return NOT_LEADER;
    try {
      const createdJob = await this.#createAgain(pending.ref, pending.deletedUid, pending.manifest);
      await this.#settle(key);
      observer.onRecreationRetried({ key, result: 'created', createdJob });
      return { outcome: 'recreated', attempts: 1 };
    } catch (error) {
      return this.#failed(key, asApiError(error));
    }
  }

  async #ended(
    key: WorkloadKey,
    result: Extract<RecreationRetryEvent['result'], 'appeared' | 'not-deleted'>,
  ): Promise<undefined> {
    await this.#settle(key);
    this.#deps.observer.onRecreationRetried({ key, result });
    return undefined;
  }

  #failed(key: WorkloadKey, error: ApiError): ReconcileResult {
    this.#deps.observer.onRecreationRetried({ key, result: 'failed', error });
    return { outcome: 'failed', attempts: 1, error };
  }
}

/** The old Job of a pending recreation still exists with a deletionTimestamp (finalizers). */
function stillDeleting(pending: PendingRecreation): ApiError {
  const { kind, namespace, name } = pending.ref;
  return new ApiError(`${kind} ${namespace}/${name} is still being deleted`, {
    status: 409,
    retryable: true,
  });
}
