/**
 * Reconciles one workload key (§5): reads the current view and sources, plans, and performs at most
 * one write sequence (§7) with the retry policy of §10, one attempt per call: a retryable failure
 * returns when to try again, and the queue waits (docs/adr/0023). Level-triggered: a failed or
 * skipped reconcile loses nothing, the next trigger or resync re-evaluates the workload. Features
 * that remember something between reconciles are stages (stages.ts): Job re-creation, the
 * DeploymentConfig instantiate and config-revision adoption. The reconciler keeps the attempt
 * loop and the error classification; targets.ts plans, outcomes.ts reports how it ended.
 */
import type { ReloadListCache } from '../core/annotation-values.ts';
import { ApiError } from '../core/api-error.ts';
import { BASELINE } from '../core/types.ts';
import type { AnnotationProblem, SourceKey, WorkloadKey, WorkloadView } from '../core/types.ts';
import { workloadKey } from '../core/keys.ts';
import type { RandomSource } from '../queue/backoff.ts';
import { BACKOFF_POLICIES, backoffDelay, writeAttemptDelay } from '../queue/backoff.ts';
import type { KindTable } from '../rollout/kinds.ts';
import { isReconciled } from '../rollout/kinds.ts';
import { admitsEverything } from '../rollout/waves.ts';
import type {
  Attempt,
  AttemptTiming,
  Completion,
  Continuation,
  Pass,
  ReconcileResult,
  ReconcileRetry,
  ReconcileTrigger,
} from './attempt.ts';
import { asApiError, earliest, NOT_LEADER } from './attempt.ts';
import { NO_BINDING, withPolicySettings } from '../core/reload-policy.ts';
import { FollowUps } from './follow-ups.ts';
import { Outcomes } from './outcomes.ts';
import type { PlanOptions } from './plan/model.ts';
import type {
  BaselineStore,
  MarkLedger,
  PodApi,
  PolicyLookup,
  RecreationJournal,
  ReconcileObserver,
  SnapshotApi,
  SourceLookup,
  WorkloadLookup,
  WorkloadWriter,
} from './ports.ts';
import type { Hold } from '../rollout/holds.ts';
import type { ReconcileStage, StageAnswer } from './stages.ts';
import { type AdmissionDeps, RollAdmission } from './stages/admission.ts';
import { FailedRolloutUndo } from './stages/undo.ts';
import { Instantiate } from './stages/instantiate.ts';
import { JobRecreation } from './stages/job-recreation.ts';
import { PodEviction } from './stages/pod-eviction.ts';
import { RollHolds, type RollHoldsDeps } from './stages/roll-holds.ts';
import { SnapshotAdoption } from './stages/snapshot-adoption.ts';
import { Targets } from './targets.ts';
import type { FollowUp, Target } from './write-actions.ts';
import { LeadershipLostError, writeStrategyOf } from './write-actions.ts';

export interface ReconcileOptions extends Omit<
  PlanOptions,
  'reloadLists' | 'stateMaps' | 'envVarNames'
> {
  /** `--dry-run`: plan and report, never write (§13.8). */
  readonly dryRun: boolean;
  /** The effective kind table: the built-in kinds and those configured at run time. */
  readonly kinds: KindTable;
}

export interface ReconcilerDeps {
  readonly workloads: WorkloadLookup;
  readonly sources: SourceLookup;
  /** ReloadPolicies (`--enable-reload-policies`); without it no workload has a binding. */
  readonly policies?: PolicyLookup | undefined;
  readonly marks: MarkLedger;
  readonly writer: WorkloadWriter;
  readonly observer: ReconcileObserver;
  readonly options: ReconcileOptions;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly random: RandomSource;
  readonly reloadLists?: ReloadListCache | undefined;
  /**
   * §13.4 item 4: whether a write may start now (HA: the lease is held and was renewed less than
   * 10 s ago). Asked before the reconcile and before every request that writes. Default: always.
   */
  readonly mayWrite?: (() => boolean) | undefined;
  /**
   * Where a Job roll journals the Job before deleting it (docs/adr/0019). Default: this process's
   * memory, which a crash between DELETE and CREATE loses.
   */
  readonly journal?: RecreationJournal | undefined;
  /** ConfigMaps and Secrets for config revisions (docs/adr/0036); absent when they are off. */
  readonly snapshots?: SnapshotApi | undefined;
  /**
   * Roll admission (docs/adr/0043): budgets, waves and halts. Absent, or with settings that limit
   * nothing, every roll is admitted at once without any work (Reloader's behaviour).
   */
  readonly admission?:
    | Omit<AdmissionDeps, 'workloads' | 'tracked' | 'writer' | 'kinds' | 'now' | 'mayWrite'>
    | undefined;
  /** Pods, for rolls by eviction (docs/adr/0044); without it a roll by eviction fails. */
  readonly pods?: PodApi | undefined;
  /**
   * Restart windows and the flapping-source breaker (docs/adr/0045): gates of roll admission,
   * asked before the budget and the waves. Absent: no roll is held for them.
   */
  readonly holds?:
    Omit<RollHoldsDeps, 'writer' | 'now' | 'mayWrite' | 'underPolicy' | 'problems'> | undefined;
  /**
   * `--baseline-store=namespace` (docs/adr/0046): where baselines of never-rolled workloads are
   * kept. Absent: on the workloads (`kreload.io/baseline`).
   */
  readonly baselines?: BaselineStore | undefined;
}

/**
 * After a 409, how long to wait for the watch to deliver the version that made the patch stale
 * before falling back to a GET (docs/adr/0015). It normally arrives within milliseconds. The queue
 * waits, not the worker (docs/adr/0023).
 */
export const CONFLICT_WATCH_WAIT_MS = 1_000;

/**
 * A 403 this soon after a write failed for want of the API server (a network error, a timeout or a
 * 503) is the restarted server's authorizer not having loaded RBAC yet, not a refusal: it is
 * retried on the API server's backoff until this long after that failure (docs/adr/0023). Without
 * an outage a 403 stays final at once (§10).
 */
export const FORBIDDEN_AFTER_OUTAGE_MS = 60_000;

/** How long a roll's baseline-store record waits for the watch to show the roll before it goes. */
export const RECORD_RETIREMENT_WAIT_MS = 60_000;

function isOutage(error: ApiError): boolean {
  return error.retryable && (error.status === undefined || error.status === 503);
}

function plansWrite(target: Target): boolean {
  return target.plan.action !== 'none' && target.plan.skip === undefined;
}

function hasWrite(target: Target): boolean {
  return plansWrite(target) || target.pause.write !== undefined;
}

/**
 * The writes `--dry-run` suppresses and counts (§13.8): the plan's, and its baseline-store record
 * (docs/adr/0046), which with `--baseline-store=workload` is a workload write. A dry run writes no B
 * in either mode, so both plan the same; this makes them count the same too.
 */
function dryRunSuppresses(target: Target): boolean {
  return plansWrite(target) || target.plan.baselineRecord !== undefined;
}

export class Reconciler {
  readonly #deps: ReconcilerDeps;
  readonly #jobs: JobRecreation;
  /** In the order they are asked at each point. */
  readonly #stages: readonly ReconcileStage[];
  readonly #followUps: FollowUps;
  /** When a write last failed because the API server was not there (FORBIDDEN_AFTER_OUTAGE_MS). */
  #lastOutageAt: number | undefined;
  readonly #targets: Targets;
  readonly #outcomes: Outcomes;
  /** Roll admission, when a flag asks for it. */
  readonly #admission: RollAdmission | undefined;
  /** Its window and breaker gates. */
  readonly #holds: RollHolds | undefined;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#targets = new Targets(deps);
    this.#outcomes = new Outcomes(deps);
    const { writer, observer, marks, now, snapshots, options, pods, random } = deps;
    const mayWrite = (): boolean => this.#mayWrite();
    const dryRun = options.dryRun;
    this.#jobs = new JobRecreation({ ...deps, mayWrite });
    const instantiate = new Instantiate({
      writer,
      marks,
      observer,
      mayWrite,
      dryRun,
      maxTries: BACKOFF_POLICIES.write.maxAttempts,
    });
    const adoption = snapshots
      ? [new SnapshotAdoption({ api: snapshots, observer, now, mayWrite, dryRun })]
      : [];
    const underPolicy = deps.policies
      ? (view: WorkloadView): WorkloadView =>
          withPolicySettings(view, deps.policies?.bindingOf(view) ?? NO_BINDING, options.keys)
      : undefined;
    const problems = (view: WorkloadView, found: readonly AnnotationProblem[]): void => {
      observer.onProblems({ view, problems: found });
    };
    const admission = deps.admission;
    this.#admission =
      admission && !admitsEverything(admission.settings)
        ? new RollAdmission({
            ...admission,
            workloads: deps.workloads,
            tracked: (key) => this.#targets.trackedSources(key),
            writer,
            kinds: options.kinds,
            now,
            mayWrite,
            underPolicy,
            binding: deps.policies
              ? (view) => deps.policies?.bindingOf(view) ?? NO_BINDING
              : undefined,
            problems,
            undo: snapshots
              ? new FailedRolloutUndo({
                  writer,
                  revisions: snapshots,
                  configRevisions: options.configRevisions,
                  kinds: options.kinds,
                })
              : undefined,
          })
        : undefined;
    const eviction = pods
      ? [new PodEviction({ pods, writer, observer, now, random, mayWrite, dryRun })]
      : [];
    this.#holds =
      deps.holds && new RollHolds({ ...deps.holds, writer, now, mayWrite, underPolicy, problems });
    this.#stages = [
      this.#jobs,
      instantiate,
      ...adoption,
      ...(this.#holds ? [this.#holds] : []),
      ...eviction,
      ...(this.#admission ? [this.#admission] : []),
    ];
    this.#followUps = new FollowUps({
      stages: this.#stages,
      kinds: options.kinds,
      marks,
      observer,
      outcomes: this.#outcomes,
      mayWrite,
      classify: (thrown) => this.#classify(thrown),
      delay: (error, attempt) => writeAttemptDelay(error, attempt, deps.random),
      written: (pass, timing, completion) => this.#written(pass, timing, completion),
    });
  }

  /**
   * Keys of deleted Jobs whose creation is pending (§7.4 item 4). The resync enqueues them with the
   * workload keys: their reconcile retries the creation under the queue's per-key exclusion.
   */
  pendingRecreations(): readonly WorkloadKey[] {
    return this.#jobs.pending.keys();
  }

  /** When the pending recreation of this Job was journalled (ms), if one is pending. */
  recreationPendingSince(key: WorkloadKey): number | undefined {
    return this.#jobs.pending.get(key)?.since;
  }

  /**
   * Reads the journal (docs/adr/0019) and returns every key with a pending Job creation: at start,
   * on gaining leadership and at each resync, so recreations journalled by a process that stopped
   * are finished here. Rejects with ApiError when the journal cannot be read.
   */
  replayRecreations(): Promise<readonly WorkloadKey[]> {
    return this.#jobs.replay();
  }

  /**
   * One attempt (docs/adr/0023). `resume` is the continuation of the previous attempt's `retrying`
   * result; without it the reconcile starts afresh.
   */
  async reconcile(
    key: WorkloadKey,
    trigger: ReconcileTrigger = {},
    resume?: Continuation,
  ): Promise<ReconcileResult> {
    const result = resume
      ? await this.#resume(key, trigger, resume)
      : await this.#reconcileAfresh(key, trigger);
    if (result.retry === undefined && result.wait === undefined) this.#admission?.ended(key);
    return result;
  }

  /**
   * What would hold a roll of the cached workload now (explain): its window and the breakers of
   * the sources it would roll for. Plans only; nothing is written.
   */
  holdsOf(key: WorkloadKey): readonly Hold[] {
    const view = this.#deps.workloads.get(key);
    if (!view || !this.#holds) return [];
    const tracked = this.#targets.trackedSources(key);
    const rolling = [...tracked].flatMap(([source, hashes]) => (hashes.rolls ? [source] : []));
    return this.#holds.holdsOn(view, rolling);
  }

  /** The changes roll admission holds halted now (`/readyz` detail). */
  haltedChanges(): readonly { readonly source: string; readonly hash: string }[] {
    return this.#admission?.halted() ?? [];
  }

  async #reconcileAfresh(key: WorkloadKey, trigger: ReconcileTrigger): Promise<ReconcileResult> {
    if (!this.#mayWrite()) return NOT_LEADER;
    for (const stage of this.#stages) {
      const answer = await stage.opening?.(key);
      if (answer && 'finish' in answer) return answer.finish;
    }
    const view = this.#deps.workloads.get(key);
    if (!view) return { outcome: 'gone', attempts: 0 };
    const row = this.#deps.options.kinds.row(view.ref.kind);
    const marks = this.#deps.marks.marksOf(key);
    const pass: Pass = { key, row, marks, trigger, memo: {} };
    if (!isReconciled(row, view.controller)) {
      this.#deps.marks.consume(key, marks);
      return { outcome: 'ignored', attempts: 0 };
    }
    const target = this.#targets.of(pass, view);
    this.#targets.report(target);
    this.#recordBaseline(target, false);
    const timing = { attempt: 1, startedAt: this.#deps.now() };
    const dryRun = this.#dryRun(pass, target);
    if (dryRun) return dryRun;
    if (!hasWrite(target)) return this.#idle(pass, target, timing, true);
    const notAdmitted = await this.#admit(pass, target);
    if (notAdmitted) return notAdmitted;
    return this.#write(pass, { target, fetched: false, ...timing });
  }

  /** §13.8: how a dry run ends a reconcile that would write; undefined when it would not. */
  #dryRun(pass: Pass, target: Target): ReconcileResult | undefined {
    if (!this.#deps.options.dryRun) return undefined;
    const suppressed = dryRunSuppresses(target);
    if (!suppressed && !hasWrite(target)) return undefined;
    return this.#outcomes.dryRun(pass, target, suppressed);
  }

  /** Roll admission (docs/adr/0043): undefined when the roll may be written now. */
  async #admit(pass: Pass, target: Target): Promise<ReconcileResult | undefined> {
    for (const stage of this.#stages) {
      const answer = await stage.admit?.(pass, target);
      if (answer && 'wake' in answer) return { outcome: 'skipped', attempts: 0, wait: answer.wake };
      if (answer && 'finish' in answer) return answer.finish;
    }
    return undefined;
  }

  #resume(
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation,
  ): Promise<ReconcileResult> {
    if (resume.followUp) return this.#followUps.retry(key, trigger, resume, resume.followUp);
    if (!this.#mayWrite()) return Promise.resolve({ ...NOT_LEADER, attempts: resume.attempts });
    return this.#retryWrite(key, trigger, resume);
  }

  /**
   * A(K) of each key a pass would track on the workload now (§5.3), read from its cached object:
   * the ReloadPolicy status recovers a lost record from it. Plans only; nothing is written.
   */
  appliedHashes(key: WorkloadKey): ReadonlyMap<SourceKey, string> {
    return this.#targets.appliedHashes(key);
  }

  #mayWrite(): boolean {
    return this.#deps.mayWrite?.() ?? true;
  }

  /** The plan writes nothing: the stages' owed work, then settle. */
  async #idle(
    pass: Pass,
    target: Target,
    timing: AttemptTiming,
    fresh: boolean,
  ): Promise<ReconcileResult> {
    let againAt: number | undefined;
    for (const stage of this.#stages) {
      const answer = await stage.idle?.(pass, target, { ...timing, fresh });
      if (answer && 'finish' in answer) return answer.finish;
      if (answer && 'failed' in answer) {
        return this.#writeFailed(pass, { target, fetched: false, ...timing }, answer.failed, false);
      }
      againAt = earliest(againAt, answerAt(answer));
    }
    const resumeAt = earliest(target.pause.resumeAt, againAt);
    return this.#outcomes.settled(pass, target, timing.attempt - 1, resumeAt);
  }

  /** One write attempt (§10); a retryable failure asks the queue for the next one. */
  async #write(pass: Pass, attempt: Attempt): Promise<ReconcileResult> {
    const { target } = attempt;
    let followUp: FollowUp | undefined;
    try {
      followUp = await writeStrategyOf(target).write({
        row: pass.row,
        target,
        writer: this.#deps.writer,
        workloads: this.#deps.workloads,
        now: this.#deps.now(),
        memo: pass.memo,
        mayWrite: () => this.#mayWrite(),
        recreations: this.#jobs.pending,
        snapshots: this.#deps.snapshots,
        pods: this.#deps.pods,
      });
    } catch (error) {
      if (error instanceof LeadershipLostError) return { ...NOT_LEADER, attempts: attempt.attempt };
      return this.#writeFailed(pass, attempt, this.#classify(error), false);
    }
    if (!followUp) return this.#written(pass, attempt, {});
    return this.#followUps.first(pass, attempt, followUp);
  }

  /**
   * A later attempt of the write: plans again on the current view. After a 409 that is a newer
   * version, from the watch when it has one (docs/adr/0015), else a GET; a view that was itself
   * fetched (the cache may be older still) is fetched again at once. Often nothing is left (§10).
   */
  async #retryWrite(
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation,
  ): Promise<ReconcileResult> {
    const stale = resume.basis.view;
    const marks = this.#deps.marks.marksOf(key);
    const pass: Pass = {
      key,
      row: this.#deps.options.kinds.row(stale.ref.kind),
      marks,
      trigger,
      memo: resume.memo,
    };
    const timing = {
      attempt: resume.attempts + 1,
      startedAt: resume.startedAt,
      conflicts: resume.conflicts,
    };
    let basis: { readonly view: WorkloadView | undefined; readonly fetched: boolean };
    try {
      basis = await this.#currentView(key, resume);
    } catch (error) {
      // A failed re-read still owes the re-read.
      const failed = { target: this.#targets.of(pass, stale), ...resume.basis, ...timing };
      return this.#writeFailed(pass, failed, this.#classify(error), resume.conflict);
    }
    if (!basis.view) return this.#outcomes.gone(pass, timing.attempt);
    const target = this.#targets.of(pass, basis.view);
    this.#targets.report(target);
    this.#recordBaseline(target, false);
    if (!hasWrite(target)) return this.#idle(pass, target, timing, false);
    return this.#write(pass, { target, fetched: basis.fetched, ...timing });
  }

  async #currentView(
    key: WorkloadKey,
    resume: Continuation,
  ): Promise<{ readonly view: WorkloadView | undefined; readonly fetched: boolean }> {
    const { view: stale, fetched } = resume.basis;
    if (!resume.conflict) {
      return fetched ? resume.basis : { view: this.#deps.workloads.get(key), fetched: false };
    }
    const cached = fetched ? undefined : this.#deps.workloads.get(key);
    if (cached && cached.resourceVersion !== stale.resourceVersion) {
      return { view: cached, fetched: false };
    }
    return { view: await this.#deps.writer.get(stale.ref), fetched: true };
  }

  /**
   * The attempt failed: final (404, not retryable, or the last attempt), or the next attempt is
   * due after the §10 backoff or `Retry-After`. After a 409 it waits for the watch instead (up to
   * CONFLICT_WATCH_WAIT_MS, docs/adr/0015), or for nothing when the view was fetched.
   */
  #writeFailed(pass: Pass, attempt: Attempt, error: ApiError, conflict: boolean): ReconcileResult {
    const { target, fetched } = attempt;
    const stale = error.status === 409 && error.retryable;
    const conflicts = (attempt.conflicts ?? 0) + (stale ? 1 : 0);
    // The write budget counts the attempts the server or the network failed, not conflicts.
    const spent = stale ? conflicts : attempt.attempt - conflicts;
    const final = this.#finalFailure(pass, target, error, { attempt: attempt.attempt, spent });
    if (final) return final;
    const delayMs = stale
      ? conflictDelay(conflicts, this.#deps.random)
      : writeAttemptDelay(error, spent, this.#deps.random);
    this.#deps.observer.onRetry({ key: pass.key, error, attempt: attempt.attempt, delayMs });
    const resume: Continuation = {
      startedAt: attempt.startedAt,
      attempts: attempt.attempt,
      memo: pass.memo,
      basis: { view: target.view, fetched },
      conflict: stale || conflict,
      conflicts,
    };
    const { key } = pass;
    const retry: ReconcileRetry =
      stale && !fetched && conflicts === 1
        ? {
            afterMs: CONFLICT_WATCH_WAIT_MS,
            wakeEarly: this.#deps.workloads.newerThan(
              key,
              target.view.resourceVersion,
              CONFLICT_WATCH_WAIT_MS,
            ),
            resume,
          }
        : { afterMs: delayMs, resume };
    return { outcome: 'retrying', plan: target.plan, attempts: attempt.attempt, error, retry };
  }

  /** The result when this error ends the write: 404, a non-retryable error, or the last attempt. */
  #finalFailure(
    pass: Pass,
    target: Target,
    error: ApiError,
    count: { readonly attempt: number; readonly spent: number },
  ): ReconcileResult | undefined {
    const { attempt, spent } = count;
    if (error.status === 404) return this.#outcomes.gone(pass, attempt);
    const budget =
      error.status === 409
        ? BACKOFF_POLICIES.conflict.maxAttempts
        : BACKOFF_POLICIES.write.maxAttempts;
    if (error.retryable && spent < budget) return undefined;
    const failure = { error, attempts: attempt, stage: 'write', recreationPending: false } as const;
    return this.#outcomes.failed(pass, target, failure, attempt);
  }

  /**
   * Hands the plan's new baseline-store record to the store (docs/adr/0046). A roll retires the
   * record only once written (`rolled`): a roll that fails keeps the baseline it needs.
   */
  #recordBaseline(target: Target, rolled: boolean): void {
    const value = target.plan.baselineRecord;
    const { baselines, options } = this.#deps;
    if (value === undefined || !baselines || options.dryRun) return;
    if ((target.plan.action === 'roll') !== rolled || !this.#mayWrite()) return;
    if (rolled) {
      void this.#retireOnceSeen(target.view, baselines);
      return;
    }
    baselines.record(target.view, value);
  }

  /**
   * A written roll's record goes once the watch shows the roll: W then holds B (`{}` at least), and
   * no plan reads the record again. Until then the cached view is the one from before the roll,
   * without B of its own; planned without the record it would have no state at all, so roll
   * admission would not count it as a member of its change (the next wave, or another canary, would
   * start beside it). Gone or replaced (a Job re-created), no plan reads it either. Not shown
   * within RECORD_RETIREMENT_WAIT_MS: the record stays, and the first plan that sees W holding B
   * retires it.
   */
  async #retireOnceSeen(rolled: WorkloadView, baselines: BaselineStore): Promise<void> {
    const { workloads, now } = this.#deps;
    const key = workloadKey(rolled.ref);
    const deadline = now() + RECORD_RETIREMENT_WAIT_MS;
    let seen = workloads.get(key);
    while (seen?.uid === rolled.uid && seen.annotations[BASELINE] === undefined) {
      const left = deadline - now();
      if (left <= 0) return;
      seen = (await workloads.newerThan(key, seen.resourceVersion, left)) ?? workloads.get(key);
    }
    if (this.#mayWrite()) baselines.record(rolled, null);
  }

  #written(pass: Pass, timing: Attempt, completion: Completion): ReconcileResult {
    const { target } = timing;
    this.#recordBaseline(target, true);
    const againAt = earliest(
      ...this.#stages.map((stage) => answerAt(stage.written?.(pass, target))),
    );
    return this.#outcomes.written(pass, timing, completion, againAt);
  }

  /**
   * The error as the retry rules see it: an outage is remembered, and a 403 within
   * FORBIDDEN_AFTER_OUTAGE_MS of one is retryable.
   */
  #classify(thrown: unknown): ApiError {
    const error = asApiError(thrown);
    const now = this.#deps.now();
    if (isOutage(error)) this.#lastOutageAt = now;
    const sinceOutage = this.#lastOutageAt === undefined ? undefined : now - this.#lastOutageAt;
    if (
      error.status !== 403 ||
      sinceOutage === undefined ||
      sinceOutage > FORBIDDEN_AFTER_OUTAGE_MS
    ) {
      return error;
    }
    return new ApiError(error.message, {
      status: 403,
      reason: error.reason,
      retryable: true,
      cause: error,
    });
  }
}

/**
 * The wait after the n-th conflict of a write (docs/adr/0050): none after the first (the newer
 * version is read at once, ADR 0015), then the conflict backoff, so a workload whose status keeps
 * moving is patched in a gap between two updates rather than raced in a tight loop.
 */
function conflictDelay(conflicts: number, random: RandomSource): number {
  return conflicts <= 1 ? 0 : backoffDelay(BACKOFF_POLICIES.conflict, conflicts - 2, random);
}

/** The time a stage asks to be reconciled again at, if it asks. */
function answerAt(answer: StageAnswer): number | undefined {
  return answer && 'againAt' in answer ? answer.againAt : undefined;
}
