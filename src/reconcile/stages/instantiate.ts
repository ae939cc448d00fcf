/**
 * The DeploymentConfig instantiate step (§7.6, docs/adr/0019) as a reconcile stage. A template
 * patch of a DeploymentConfig without a ConfigChange trigger carries the
 * `kreload.io/instantiate-pending` marker and is followed by an instantiate; the marker goes once
 * that is acknowledged. A reconcile with nothing else to write instantiates while the marker stays
 * (failed, lease lost, crash). It owns what this process already sent.
 */
import type { WorkloadView } from '../../core/types.ts';
import { INSTANTIATE_PENDING } from '../../core/types.ts';
import { instantiateDonePatch } from '../../rollout/patch.ts';
import type { Completion, Pass } from '../attempt.ts';
import { asApiError, NOT_LEADER } from '../attempt.ts';
import type { MarkLedger, ReconcileObserver, WorkloadWriter } from '../ports.ts';
import type { FollowUpStep, IdleAttempt, ReconcileStage, StageAnswer } from '../stages.ts';
import type { FollowUp, Target } from '../write-actions.ts';
import { instantiateFollowUp, needsInstantiate } from '../write-actions.ts';

export interface InstantiateDeps {
  readonly writer: WorkloadWriter;
  readonly marks: MarkLedger;
  readonly observer: ReconcileObserver;
  readonly mayWrite: () => boolean;
  readonly dryRun: boolean;
  /** Tries of an instantiate follow-up, the first included. */
  readonly maxTries: number;
}

export class Instantiate implements ReconcileStage {
  readonly #deps: InstantiateDeps;
  /**
   * DeploymentConfig UIDs whose owed instantiate this process sent, and whether the marker's
   * removal was acknowledged too. The watch delivers the removal a moment later: until then the
   * cache still shows the marker, which must not instantiate a second time.
   */
  readonly #instantiated = new Map<string, 'instantiated' | 'marker-removed'>();
  readonly followUps: ReconcileStage['followUps'];

  constructor(deps: InstantiateDeps) {
    this.#deps = deps;
    this.followUps = { instantiate: this.#step };
  }

  /** One try of an owed instantiate, then the marker's removal. */
  async idle(pass: Pass, target: Target, attempt: IdleAttempt): Promise<StageAnswer> {
    const { view, plan } = target;
    if (!this.#owes(pass, view)) return undefined;
    // A ConfigChange trigger added since deploys the template by itself: only the marker goes.
    // Sent already, only the marker's removal failed: it alone is owed.
    if (needsInstantiate(pass.row, view) && this.#instantiated.get(view.uid) !== 'instantiated') {
      if (!this.#deps.mayWrite())
        return { finish: { ...NOT_LEADER, attempts: attempt.attempt - 1 } };
      try {
        await this.#send(view, instantiateFollowUp(view));
      } catch (error) {
        return { failed: asApiError(error) };
      }
    }
    await this.#clearPending(pass, view);
    this.#deps.marks.consume(pass.key, pass.marks);
    return { finish: { outcome: 'rolled', plan, attempts: attempt.attempt } };
  }

  readonly #step: FollowUpStep = {
    send: async (_pass, target, followUp): Promise<Completion> => {
      await this.#send(target.view, followUp);
      return { instantiated: true };
    },
    sent: (pass, target) => this.#clearPending(pass, target.view),
    retries: (error, tries) => error.retryable && tries < this.#deps.maxTries,
    stopped: () => undefined,
    leavesPending: false,
  };

  /** Marked, and not known to be done: owed unless dry-run or the kind does not instantiate. */
  #owes(pass: Pass, view: WorkloadView): boolean {
    if (view.annotations[INSTANTIATE_PENDING] === undefined) {
      this.#instantiated.delete(view.uid);
      return false;
    }
    return (
      pass.row.instantiatesWithoutConfigChangeTrigger &&
      this.#instantiated.get(view.uid) !== 'marker-removed' &&
      !this.#deps.dryRun
    );
  }

  async #send(view: WorkloadView, followUp: FollowUp): Promise<void> {
    if (followUp.kind !== 'instantiate')
      throw new TypeError(`not an instantiate: ${followUp.kind}`);
    this.#instantiated.delete(view.uid);
    await this.#deps.writer.instantiate(view.ref, followUp.body);
    this.#instantiated.set(view.uid, 'instantiated');
  }

  /** A failed removal leaves the marker: the next reconcile instantiates again (at least once). */
  async #clearPending(pass: Pass, view: WorkloadView): Promise<void> {
    if (!this.#deps.mayWrite()) return;
    try {
      await this.#deps.writer.patch(view.ref, instantiateDonePatch(pass.row));
      if (this.#instantiated.has(view.uid)) this.#instantiated.set(view.uid, 'marker-removed');
    } catch (error) {
      this.#deps.observer.onRetry({
        key: pass.key,
        error: asApiError(error),
        attempt: 1,
        delayMs: 0,
      });
    }
  }
}
