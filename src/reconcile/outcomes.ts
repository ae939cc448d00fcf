/**
 * How a reconcile ends (§13.2): the marks it read are consumed, the observer hears of it once, and
 * the result says what happened. The reconciler decides which end it is; this says it.
 */
import type { ApiError } from '../core/api-error.ts';
import type { SkipReason } from '../core/types.ts';
import type { Attempt, Completion, Pass, ReconcileResult } from './attempt.ts';
import { earliest } from './attempt.ts';
import type { FailedStage, MarkLedger, ReconcileObserver } from './ports.ts';
import type { Target } from './write-actions.ts';

export interface OutcomesDeps {
  readonly marks: MarkLedger;
  readonly observer: ReconcileObserver;
  /** ms since the epoch. */
  readonly now: () => number;
}

/** A request of the reconcile that failed for good, and what it leaves behind. */
export interface FinalFailure {
  readonly error: ApiError;
  /** The attempts the failure report counts. */
  readonly attempts: number;
  readonly stage: FailedStage;
  /** A deleted Job is left to be created by a later reconcile (§7.4 item 4). */
  readonly recreationPending: boolean;
}

export class Outcomes {
  readonly #deps: OutcomesDeps;

  constructor(deps: OutcomesDeps) {
    this.#deps = deps;
  }

  /** The reconcile completed without a write: consume marks, report why nothing was written. */
  settled(
    pass: Pass,
    target: Target,
    attempts = 0,
    resumeAt = target.pause.resumeAt,
  ): ReconcileResult {
    this.#deps.marks.consume(pass.key, pass.marks);
    const skip = target.plan.skip ?? notUpdatedReason(pass);
    if (skip) this.#deps.observer.onSkipped({ key: pass.key, view: target.view, reason: skip });
    return {
      outcome: skip ? 'skipped' : 'unchanged',
      plan: target.plan,
      skip,
      attempts,
      resumeAt,
    };
  }

  /** §13.8: no write of any kind. A resume alone is not a reload: it is neither sent nor timed. */
  dryRun(pass: Pass, target: Target, plansWrite: boolean): ReconcileResult {
    if (!plansWrite) return this.settled(pass, target, 0, undefined);
    const { marks, observer } = this.#deps;
    marks.consume(pass.key, pass.marks);
    observer.onDryRun({ view: target.view, plan: target.plan });
    observer.onSkipped({ key: pass.key, view: target.view, reason: 'dry_run' });
    return { outcome: 'dry-run', plan: target.plan, skip: 'dry_run', attempts: 0 };
  }

  /** The write and its follow-up went through; `againAt`: when a stage wants the key again. */
  written(
    pass: Pass,
    timing: Attempt,
    completion: Completion,
    againAt: number | undefined,
  ): ReconcileResult {
    const { marks, observer } = this.#deps;
    const { view, plan, pause } = timing.target;
    const attempts = timing.attempt;
    marks.consume(pass.key, pass.marks);
    const resumed = pause.write?.action === 'resume';
    if (resumed) observer.onResumed({ view, attempts });
    const done = { plan, attempts, resumeAt: earliest(pause.resumeAt, againAt), resumed };
    if (plan.action === 'roll') {
      observer.onRolled({
        view,
        plan,
        attempts,
        durationMs: this.#deps.now() - timing.startedAt,
        createdJob: completion.createdJob ?? pass.memo.createdJob,
        jobCreationSkipped: pass.memo.jobCreationSkipped,
        instantiated: completion.instantiated,
        generation: pass.memo.patchedGeneration,
      });
      if (pause.notice === 'paused-by-other')
        observer.onPauseNotice({ view, notice: pause.notice });
      return { outcome: 'rolled', ...done };
    }
    if (plan.action === 'baseline') {
      observer.onBaselined({ view, plan });
      return { outcome: 'baselined', ...done };
    }
    return { outcome: 'resumed', ...done };
  }

  /** The workload is not there (any more): 404 during the write, or gone from the cache. */
  gone(pass: Pass, attempts: number): ReconcileResult {
    this.#deps.marks.consume(pass.key, pass.marks);
    this.#deps.observer.onGone({ key: pass.key });
    return { outcome: 'gone', attempts };
  }

  /**
   * A request failed for good; `attempts` is the result's count of write attempts. The marks stay
   * unless the write itself went through (a failed follow-up): the caller consumes them then.
   */
  failed(pass: Pass, target: Target, failure: FinalFailure, attempts: number): ReconcileResult {
    const { error } = failure;
    this.#deps.observer.onFailed({
      key: pass.key,
      view: target.view,
      plan: target.plan,
      gaveUp: error.retryable,
      ...failure,
    });
    return { outcome: 'failed', plan: target.plan, attempts, error };
  }
}

/** `strategy_not_updated`: a source change or mark triggered this reconcile and needed no write. */
function notUpdatedReason(pass: Pass): SkipReason | undefined {
  const changes = pass.trigger.observedAt?.size ?? 0;
  return changes > 0 || pass.marks.length > 0 ? 'strategy_not_updated' : undefined;
}
