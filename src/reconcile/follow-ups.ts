/**
 * Follow-ups (§7.4 item 3, §7.6): a request after an acknowledged write that must never repeat the
 * write, sent by the stage that owns its kind (stages.ts). A failed try is retried on its own,
 * with the write's backoff, as a continuation the queue hands back; the lease lost in between
 * hands it over to the stage.
 */
import type { ApiError } from '../core/api-error.ts';
import type { WorkloadKey } from '../core/types.ts';
import type { KindTable } from '../rollout/kinds.ts';
import type {
  Attempt,
  Completion,
  Continuation,
  DeferredFollowUp,
  Pass,
  ReconcileResult,
  ReconcileTrigger,
} from './attempt.ts';
import { NOT_LEADER } from './attempt.ts';
import type { Outcomes } from './outcomes.ts';
import type { MarkLedger, ReconcileObserver } from './ports.ts';
import type { FollowUpStep, ReconcileStage } from './stages.ts';
import type { FollowUp } from './write-actions.ts';

export interface FollowUpsDeps {
  readonly stages: readonly ReconcileStage[];
  readonly kinds: KindTable;
  readonly marks: MarkLedger;
  readonly observer: ReconcileObserver;
  readonly outcomes: Outcomes;
  readonly mayWrite: () => boolean;
  /** The reconciler's error classification and write backoff (§10). */
  readonly classify: (thrown: unknown) => ApiError;
  readonly delay: (error: ApiError, attempt: number) => number;
  /** Reports the roll once its follow-up went through. */
  readonly written: (pass: Pass, timing: Attempt, completion: Completion) => ReconcileResult;
}

export class FollowUps {
  readonly #deps: FollowUpsDeps;
  readonly #steps: Partial<Record<FollowUp['kind'], FollowUpStep>> = {};

  constructor(deps: FollowUpsDeps) {
    this.#deps = deps;
    for (const stage of deps.stages) Object.assign(this.#steps, stage.followUps);
  }

  /** The first try, right after the write of `timing` was acknowledged. */
  first(pass: Pass, timing: Attempt, followUp: FollowUp): Promise<ReconcileResult> {
    const deferred = { followUp, target: timing.target, marks: pass.marks, tries: 0, waitedMs: 0 };
    return this.#try(pass, timing, deferred);
  }

  /** A later try, alone: the write of an earlier attempt went through. */
  async retry(
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation,
    deferred: DeferredFollowUp,
  ): Promise<ReconcileResult> {
    const { target, marks } = deferred;
    const row = this.#deps.kinds.row(target.view.ref.kind);
    const pass: Pass = { key, row, marks, trigger, memo: resume.memo };
    const timing: Attempt = {
      target,
      fetched: resume.basis.fetched,
      attempt: resume.attempts,
      startedAt: resume.startedAt,
    };
    const result = await this.#try(pass, timing, deferred);
    // Triggers came in meanwhile that nothing planned for: the key is reconciled again.
    return result.retry || trigger.retriggered !== true ? result : { ...result, rerun: true };
  }

  /** One try of the follow-up; a retryable failure asks the queue for the next try. */
  async #try(pass: Pass, timing: Attempt, deferred: DeferredFollowUp): Promise<ReconcileResult> {
    const { followUp, target } = deferred;
    const step = this.#stepOf(followUp);
    if (!this.#deps.mayWrite()) {
      step.stopped(pass.key);
      this.#deps.marks.consume(pass.key, pass.marks);
      return { ...NOT_LEADER, attempts: timing.attempt };
    }
    let completion: Completion;
    try {
      completion = await step.send(pass, target, followUp);
    } catch (error) {
      return this.#failed(pass, timing, deferred, this.#deps.classify(error));
    }
    await step.sent(pass, target);
    return this.#deps.written(pass, timing, completion);
  }

  #stepOf(followUp: FollowUp): FollowUpStep {
    const step = this.#steps[followUp.kind];
    if (!step) throw new TypeError(`no stage sends the ${followUp.kind} follow-up`);
    return step;
  }

  #failed(
    pass: Pass,
    timing: Attempt,
    deferred: DeferredFollowUp,
    error: ApiError,
  ): ReconcileResult {
    const { followUp, target } = deferred;
    const step = this.#stepOf(followUp);
    const tries = deferred.tries + 1;
    const delayMs = this.#deps.delay(error, tries);
    const waitedMs = deferred.waitedMs + delayMs;
    // A deleted Job was journalled before its DELETE (docs/adr/0019): a retry the queue drops
    // (shutdown, lost lease) leaves it to the next reconcile of the key, here or on the next leader.
    if (step.retries(error, tries, waitedMs)) {
      this.#deps.observer.onRetry({ key: pass.key, error, attempt: tries, delayMs });
      const resume: Continuation = {
        startedAt: timing.startedAt,
        attempts: timing.attempt,
        memo: pass.memo,
        basis: { view: target.view, fetched: timing.fetched },
        conflict: false,
        followUp: { ...deferred, tries, waitedMs },
      };
      const retry = { afterMs: delayMs, resume };
      return { outcome: 'retrying', plan: target.plan, attempts: timing.attempt, error, retry };
    }
    this.#deps.marks.consume(pass.key, pass.marks);
    const { leavesPending: recreationPending } = step;
    const failure = { error, attempts: tries, stage: followUp.kind, recreationPending };
    return this.#deps.outcomes.failed(pass, target, failure, timing.attempt);
  }
}
