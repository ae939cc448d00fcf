/**
 * The vocabulary of one reconcile attempt (docs/adr/0023): what the reconciler returns, what the
 * queue hands back with the next attempt, and what the stages of reconcile/stages.ts see.
 */
import { ApiError } from '../core/api-error.ts';
import type { Mark } from '../core/marks.ts';
import type { SkipReason, SourceKey, WorkloadKey, WorkloadView } from '../core/types.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import type { ReconcilePlan } from './plan/model.ts';
import type { CreatedObject } from './ports.ts';
import type { FollowUp, Target, WriteMemo } from './write-actions.ts';

/** What started this reconcile: the source changes of the queue entry (§8 item 1). */
export interface ReconcileTrigger {
  /** When each triggering source change was observed, ms since the epoch. */
  readonly observedAt?: ReadonlyMap<SourceKey, number> | undefined;
  /** A later attempt only: triggers arrived since the previous attempt started. */
  readonly retriggered?: boolean | undefined;
}

/** A follow-up whose first try failed: retried on its own, never repeating the write before it. */
export interface DeferredFollowUp {
  readonly followUp: FollowUp;
  /** What the acknowledged write acted on. */
  readonly target: Target;
  readonly marks: readonly Mark[];
  /** Tries of the follow-up so far, and the backoff they waited. */
  readonly tries: number;
  readonly waitedMs: number;
}

/**
 * What the earlier attempts of one reconcile did (docs/adr/0023). The reconciler makes one attempt
 * per call; the queue keeps this between the calls and hands it back with the next one, so a
 * dropped key (shutdown, lost lease, deleted workload) forgets it together with the retry.
 */
export interface Continuation {
  /** When the first write attempt started (`reloader_action_latency_seconds`). */
  readonly startedAt: number;
  /** Write attempts made so far (§10: at most the write budget of queue/backoff.ts). */
  readonly attempts: number;
  /** Steps the attempts acknowledged (a CronJob's Job): shared by every attempt. */
  readonly memo: WriteMemo;
  /** The view the last attempt was based on, and whether it came from a GET. */
  readonly basis: { readonly view: WorkloadView; readonly fetched: boolean };
  /** The basis is stale (409): plan on a newer version, from the watch or else a GET. */
  readonly conflict: boolean;
  /** How many of `attempts` met a 409 (docs/adr/0050): they do not spend the write budget. */
  readonly conflicts?: number | undefined;
  /** The write went through; only its follow-up is left. */
  readonly followUp?: DeferredFollowUp | undefined;
}

/** The next attempt of a reconcile: when it is due, and what it goes on from. */
export interface ReconcileRetry {
  readonly afterMs: number;
  /** Settles when the awaited version arrives from the watch: the attempt may start before. */
  readonly wakeEarly?: Promise<unknown> | undefined;
  readonly resume: Continuation;
}

/**
 * - `gone`: not in the cache, or vanished during the write (404);
 * - `unchanged` / `skipped`: nothing written (`skipped` carries the reason of §13.2);
 * - `baselined`, `rolled`, `resumed` (a resume alone): written;
 * - `recreated`: a pending Job creation succeeded (§7.4 item 4);
 * - `ignored`: a Job controlled by a CronJob, never reconciled (§7.4 item 5);
 * - `not-leader`: the lease does not allow writes (§13.4); nothing was planned or consumed, or the
 *   write stopped between attempts;
 * - `retrying`: this attempt failed in a way §10 retries; `retry` says when and with what.
 */
export type ReconcileOutcome =
  | 'gone'
  | 'unchanged'
  | 'skipped'
  | 'dry-run'
  | 'baselined'
  | 'rolled'
  | 'resumed'
  | 'recreated'
  | 'failed'
  | 'ignored'
  | 'not-leader'
  | 'retrying';

export interface ReconcileResult {
  readonly outcome: ReconcileOutcome;
  readonly plan?: ReconcilePlan | undefined;
  readonly skip?: SkipReason | undefined;
  /** Attempts of the reconcile's write so far (0 without a write). */
  readonly attempts: number;
  readonly error?: ApiError | undefined;
  /** Outcome `retrying` only: the next attempt. */
  readonly retry?: ReconcileRetry | undefined;
  /**
   * This attempt only finished an earlier one's follow-up while new triggers arrived: nothing
   * planned for them, so the key must be reconciled again.
   */
  readonly rerun?: boolean | undefined;
  /**
   * The key is to be reconciled again then (ms since the epoch): a pause-period resume falls due
   * (§7.2), or a stage owes more work (an adoption). Undefined: nothing to schedule.
   */
  readonly resumeAt?: number | undefined;
  /** The write also resumed the paused Deployment. */
  readonly resumed?: boolean | undefined;
  /**
   * Roll admission said not now: run the key again (afresh, its triggers kept) after `afterMs`,
   * or when `wakeEarly` settles. Nothing was written or consumed.
   */
  readonly wait?:
    { readonly afterMs: number; readonly wakeEarly?: Promise<unknown> | undefined } | undefined;
}

export const NOT_LEADER: ReconcileResult = { outcome: 'not-leader', attempts: 0 };

/** One reconcile in flight: what the plan was based on, and what its attempts already did. */
export interface Pass {
  readonly key: WorkloadKey;
  readonly row: WorkloadKindRow;
  readonly marks: readonly Mark[];
  readonly trigger: ReconcileTrigger;
  readonly memo: WriteMemo;
}

/** The number of a write attempt (from 1) and when the reconcile's first attempt started. */
export interface AttemptTiming {
  readonly attempt: number;
  readonly startedAt: number;
  /** Earlier attempts of this reconcile that met a 409 (docs/adr/0050); 0 when absent. */
  readonly conflicts?: number | undefined;
}

/** One write attempt: the target to write and whether its view was fetched. */
export interface Attempt extends AttemptTiming {
  readonly target: Target;
  /** Whether `target.view` came from a GET rather than the watch cache. */
  readonly fetched: boolean;
}

/** What a follow-up added to a roll that went through. */
export interface Completion {
  readonly createdJob?: CreatedObject | undefined;
  readonly instantiated?: boolean | undefined;
}

/** The earliest of the defined times. */
export function earliest(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((value) => value !== undefined);
  return defined.length > 0 ? Math.min(...defined) : undefined;
}

export function asApiError(error: unknown): ApiError {
  // Anything else is a bug in an adapter or a builder: let the queue count it as a handler error.
  if (error instanceof ApiError) return error;
  throw error;
}
