/**
 * The one seam of the reconcile for features with state of their own (docs/architecture.md,
 * "Reconcile stages"): a stage is asked at fixed points of an attempt and answers with a
 * StageAnswer. The reconciler keeps the attempt loop, the error classification and the retry
 * rules; a stage keeps what it must remember between reconciles (a journalled Job, an owed
 * instantiate, an owed adoption) and never builds a retry itself.
 */
import type { ApiError } from '../core/api-error.ts';
import type { WorkloadKey } from '../core/types.ts';
import type { AttemptTiming, Completion, Pass, ReconcileResult } from './attempt.ts';
import type { FollowUp, Target } from './write-actions.ts';

/**
 * - undefined: nothing for this stage here, go on;
 * - `finish`: the stage ended the reconcile with this result;
 * - `againAt`: go on, and reconcile the key again at this time (ms since the epoch);
 * - `failed`: the stage's request failed, and the write's retry rules (§10) decide what follows.
 */
export type StageAnswer =
  | undefined
  | { readonly finish: ReconcileResult }
  | { readonly againAt: number }
  | { readonly failed: ApiError };

/**
 * Roll admission's answer (docs/adr/0041 §3): a StageAnswer (undefined: admitted now; `finish`:
 * held), or `wake`: not now, ask again after `afterMs` or when `wakeEarly` settles, whichever is
 * first. The queue waits; the reconcile's marks and triggers stay with the key.
 */
export type AdmitAnswer =
  | StageAnswer
  | { readonly wake: { readonly afterMs: number; readonly wakeEarly: Promise<unknown> } };

/** Where an idle stage runs: the attempt, and whether it is the reconcile's first. */
export interface IdleAttempt extends AttemptTiming {
  readonly fresh: boolean;
}

/**
 * A request that follows an acknowledged write and must never repeat it (creating a deleted Job
 * again, instantiating a DeploymentConfig). The reconciler retries it on its own.
 */
export interface FollowUpStep {
  /** Sends it; rejects with what the API answered. */
  send(pass: Pass, target: Target, followUp: FollowUp): Promise<Completion>;
  /** After an acknowledged send: local bookkeeping that never fails the reconcile. */
  sent(pass: Pass, target: Target): Promise<void>;
  /** Whether to try again after `error`, `tries` tries and `waitedMs` including the next wait. */
  retries(error: ApiError, tries: number, waitedMs: number): boolean;
  /** The lease was lost before the next try. */
  stopped(key: WorkloadKey): void;
  /** A final failure leaves a deleted Job to be created by a later reconcile (§7.4 item 4). */
  readonly leavesPending: boolean;
}

/** A feature of the reconcile; every point is optional. */
export interface ReconcileStage {
  /** Before the view is read: work owed to the key from an earlier reconcile. */
  opening?(key: WorkloadKey): Promise<StageAnswer>;
  /** After the plan, before the first write attempt of a roll: may it roll now? */
  admit?(pass: Pass, target: Target): Promise<AdmitAnswer>;
  /** The reconcile of `key` ended (not a retry): whatever it held for the write is released. */
  ended?(key: WorkloadKey): void;
  /** The plan writes nothing: work owed regardless of the plan. */
  idle?(pass: Pass, target: Target, attempt: IdleAttempt): Promise<StageAnswer>;
  /** The write (and its follow-up) went through. */
  written?(pass: Pass, target: Target): StageAnswer;
  /** The follow-ups this stage sends, by kind. */
  readonly followUps?: Partial<Record<FollowUp['kind'], FollowUpStep>>;
}
