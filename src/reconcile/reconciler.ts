/**
 * Reconciles one workload key (§5): reads the current view and sources, plans, and performs at most
 * one write sequence (§7) with the retry policy of §10, one attempt per call: a retryable failure
 * returns when to try again, and the queue waits (docs/adr/0023). Level-triggered: a failed or
 * skipped reconcile loses nothing, the next trigger or resync re-evaluates the workload. The two
 * things that cannot be rebuilt from the cluster live here as instance state: Job manifests whose
 * creation is pending (§7.4 item 4) and the pause-period warnings already given (§3.1).
 */
import type { ReloadListCache } from '../core/annotation-values.ts';
import { hasReloadList } from '../core/decide.ts';
import type { Mark } from '../core/marks.ts';
import {
  NO_BINDING,
  type PolicyBinding,
  strategyUnder,
  withPolicySettings,
} from '../core/reload-policy.ts';
import type {
  SkipReason,
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import { INSTANTIATE_PENDING } from '../core/types.ts';
import type { RandomSource } from '../queue/backoff.ts';
import {
  BACKOFF_POLICIES,
  WRITE_MAX_ATTEMPTS,
  backoffDelay,
  writeRetryDelay,
} from '../queue/backoff.ts';
import type { JsonObject } from '../core/json.ts';
import { stringAt } from '../core/json.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import { isReconciled, kindRow } from '../rollout/kinds.ts';
import { instantiateDonePatch } from '../rollout/patch.ts';
import { planPause } from '../rollout/pause.ts';
import type { PlanOptions, ReconcilePlan, SourceFacts } from './plan/model.ts';
import { planReconcile } from './plan/plan.ts';
import { cachedSourceFacts } from './source-facts.ts';
import type { PendingRecreation } from './pending-recreations.ts';
import { PendingRecreations, ProcessMemoryJournal } from './pending-recreations.ts';
import type {
  CreatedObject,
  MarkLedger,
  PolicyLookup,
  RecreationJournal,
  RecreationRetryEvent,
  ReconcileObserver,
  SnapshotApi,
  SourceLookup,
  WorkloadLookup,
  WorkloadWriter,
} from './ports.ts';
import { adoptSnapshots, snapshotOwners } from './snapshot-writes.ts';
import { HashMapCache } from '../core/state.ts';
import { EnvVarNames } from '../core/env-name.ts';
import { ApiError } from '../core/api-error.ts';
import { uniqueProblems } from './plan/tracking.ts';
import type { FollowUp, Target, WriteMemo } from './write-actions.ts';
import {
  instantiateFollowUp,
  LeadershipLostError,
  needsInstantiate,
  writeStrategyOf,
} from './write-actions.ts';
import { SOURCE_TYPES } from '../core/source-types.ts';

export interface ReconcileOptions extends Omit<
  PlanOptions,
  'reloadLists' | 'stateMaps' | 'envVarNames'
> {
  /** `--dry-run`: plan and report, never write (§13.8). */
  readonly dryRun: boolean;
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
}

/** What started this reconcile: the source changes of the queue entry (§8 item 1). */
export interface ReconcileTrigger {
  /** When each triggering source change was observed, ms since the epoch. */
  readonly observedAt?: ReadonlyMap<SourceKey, number> | undefined;
  /** A later attempt only: triggers arrived since the previous attempt started. */
  readonly retriggered?: boolean | undefined;
}

/** A follow-up whose first try failed: retried on its own, never repeating the write before it. */
interface DeferredFollowUp {
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
  /** Write attempts made so far (§10: at most WRITE_MAX_ATTEMPTS). */
  readonly attempts: number;
  /** Steps the attempts acknowledged (a CronJob's Job): shared by every attempt. */
  readonly memo: WriteMemo;
  /** The view the last attempt was based on, and whether it came from a GET. */
  readonly basis: { readonly view: WorkloadView; readonly fetched: boolean };
  /** The basis is stale (409): plan on a newer version, from the watch or else a GET. */
  readonly conflict: boolean;
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
   * A pause-period resume of this Deployment falls due then (ms since the epoch, §7.2): reconcile the
   * key again at that time. Undefined: nothing to schedule.
   */
  readonly resumeAt?: number | undefined;
  /** The write also resumed the paused Deployment. */
  readonly resumed?: boolean | undefined;
}

/**
 * After a config-revisions roll, the next reconcile hands the snapshots to the new revision
 * (docs/adr/0036): the Deployment controller creates its ReplicaSet within moments.
 */
export const ADOPTION_DELAY_MS = 2_000;
/** While a snapshot the template names has no revision yet, adoption is tried again this often. */
export const ADOPTION_RETRY_MS = 5_000;

/** Job creation after its deletion retries AlreadyExists for up to this long (§7.4 item 3). */
export const RECREATE_WINDOW_MS = 30_000;

const NOT_LEADER: ReconcileResult = { outcome: 'not-leader', attempts: 0 };

/** One reconcile in flight: what the plan was based on, and what its attempts already did. */
interface Pass {
  readonly key: WorkloadKey;
  readonly row: WorkloadKindRow;
  readonly marks: readonly Mark[];
  readonly trigger: ReconcileTrigger;
  readonly memo: WriteMemo;
}

/** One write attempt: the target to write, whether its view was fetched, its number from 1. */
interface Attempt {
  readonly target: Target;
  /** Whether `target.view` came from a GET rather than the watch cache. */
  readonly fetched: boolean;
  readonly attempt: number;
  readonly startedAt: number;
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

function isOutage(error: ApiError): boolean {
  return error.retryable && (error.status === undefined || error.status === 503);
}

/** Whether to retry a follow-up after `error`; `waitedMs` includes the delay before the retry. */
type RetryPolicy = (error: ApiError, attempt: number, waitedMs: number) => boolean;

const FOLLOW_UP_POLICIES: Readonly<Record<FollowUp['kind'], RetryPolicy>> = {
  // AlreadyExists (409) while the old Job is still being deleted, besides the §10 retryables.
  'create-job': (error, _attempt, waitedMs) =>
    (error.status === 409 || error.retryable) && waitedMs <= RECREATE_WINDOW_MS,
  instantiate: (error, attempt) => error.retryable && attempt < WRITE_MAX_ATTEMPTS,
};

/** What the follow-up added to a roll that went through. */
interface Completion {
  readonly createdJob?: CreatedObject | undefined;
  readonly instantiated?: boolean | undefined;
}

/** The earliest of the defined times. */
function earliest(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((value) => value !== undefined);
  return defined.length > 0 ? Math.min(...defined) : undefined;
}

function plansWrite(target: Target): boolean {
  return target.plan.action !== 'none' && target.plan.skip === undefined;
}

function hasWrite(target: Target): boolean {
  return plansWrite(target) || target.pause.write !== undefined;
}

function asApiError(error: unknown): ApiError {
  // Anything else is a bug in an adapter or a builder: let the queue count it as a handler error.
  if (error instanceof ApiError) return error;
  throw error;
}

export class Reconciler {
  readonly #deps: ReconcilerDeps;
  readonly #pending: PendingRecreations;
  /**
   * DeploymentConfig UIDs whose owed instantiate this process sent, and whether the marker's
   * removal was acknowledged too. The watch delivers the removal a moment later: until then the
   * cache still shows the marker, which must not instantiate a second time.
   */
  readonly #instantiated = new Map<string, 'instantiated' | 'marker-removed'>();
  /** When a write last failed because the API server was not there (FORBIDDEN_AFTER_OUTAGE_MS). */
  #lastOutageAt: number | undefined;
  /** UIDs already warned about a pause-period on a kind without it (§3.1: once per workload). */
  readonly #pauseIgnoredWarned = new Set<string>();
  /**
   * Workloads whose snapshots still wait for adoption after a config-revisions roll, also once
   * they opted out (docs/adr/0036). Opted-in workloads are adopted at every reconcile regardless.
   */
  readonly #adoptionOwed = new Set<WorkloadKey>();
  /** The state annotations, parsed once per distinct value (workloads bound alike share them). */
  readonly #stateMaps = new HashMapCache();
  /** Env var names, built once per source (every tracked source is named at every reconcile). */
  readonly #envVarNames = new EnvVarNames();
  /**
   * Per namespace, the UIDs of workloads that still owned a snapshot when this process first
   * reconciled there: an adoption owed before a restart is found again from cluster state (ADR 0037).
   */
  readonly #ownersAtStart = new Map<string, Promise<Set<string> | undefined>>();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
    this.#pending = new PendingRecreations(deps.journal ?? new ProcessMemoryJournal());
  }

  /**
   * Keys of deleted Jobs whose creation is pending (§7.4 item 4). The resync enqueues them with the
   * workload keys: their reconcile retries the creation under the queue's per-key exclusion.
   */
  pendingRecreations(): readonly WorkloadKey[] {
    return this.#pending.keys();
  }

  /** When the pending recreation of this Job was journalled (ms), if one is pending. */
  recreationPendingSince(key: WorkloadKey): number | undefined {
    return this.#pending.get(key)?.since;
  }

  /**
   * Reads the journal (docs/adr/0019) and returns every key with a pending Job creation: at start,
   * on gaining leadership and at each resync, so recreations journalled by a process that stopped
   * are finished here. Rejects with ApiError when the journal cannot be read.
   */
  async replayRecreations(): Promise<readonly WorkloadKey[]> {
    const { pending, withdrawn } = await this.#pending.replay();
    for (const key of withdrawn)
      this.#deps.observer.onRecreationRetried({ key, result: 'withdrawn' });
    return pending;
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
    if (resume) return this.#resume(key, trigger, resume);
    if (!this.#mayWrite()) return NOT_LEADER;
    const recreation = this.#pending.get(key) ? await this.#resumeRecreation(key) : undefined;
    if (recreation) return recreation;
    const view = this.#deps.workloads.get(key);
    if (!view) return { outcome: 'gone', attempts: 0 };
    const row = kindRow(view.ref.kind);
    const marks = this.#deps.marks.marksOf(key);
    const pass: Pass = { key, row, marks, trigger, memo: {} };
    if (!isReconciled(row, view.controller)) {
      this.#deps.marks.consume(key, marks);
      return { outcome: 'ignored', attempts: 0 };
    }
    const target = this.#target(pass, view);
    this.#reportDiagnostics(target);
    if (!hasWrite(target)) {
      if (this.#owesInstantiate(pass, view)) return this.#finishInstantiate(pass, target);
      const adoptAt = await this.#adopt(pass, target);
      return this.#settle(pass, target, 0, earliest(target.pause.resumeAt, adoptAt));
    }
    if (this.#deps.options.dryRun) return this.#dryRun(pass, target);
    return this.#write(pass, { target, fetched: false, attempt: 1, startedAt: this.#deps.now() });
  }

  #resume(
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation,
  ): Promise<ReconcileResult> {
    if (resume.followUp) return this.#retryFollowUp(key, trigger, resume, resume.followUp);
    if (!this.#mayWrite()) return Promise.resolve({ ...NOT_LEADER, attempts: resume.attempts });
    return this.#retryWrite(key, trigger, resume);
  }

  /**
   * A(K) of each key a pass would track on the workload now (§5.3), read from its cached object:
   * the ReloadPolicy status recovers a lost record from it. Plans only; nothing is written.
   */
  appliedHashes(key: WorkloadKey): ReadonlyMap<SourceKey, string> {
    const view = this.#deps.workloads.get(key);
    if (!view) return new Map();
    const pass: Pass = { key, row: kindRow(view.ref.kind), marks: [], trigger: {}, memo: {} };
    const { plan } = this.#target(pass, view);
    return new Map(
      plan.keys.flatMap((entry) =>
        entry.applied === undefined ? [] : [[entry.key, entry.applied] as const],
      ),
    );
  }

  #mayWrite(): boolean {
    return this.#deps.mayWrite?.() ?? true;
  }

  #target(pass: Pass, view: WorkloadView): Target {
    const binding = this.#deps.policies?.bindingOf(view) ?? NO_BINDING;
    const planned = withPolicySettings(view, binding, this.#deps.options.keys);
    const plan = this.#plan(pass, planned, binding);
    const pause = planPause({
      view: planned,
      row: pass.row,
      keys: this.#deps.options.keys,
      rolls: plan.action === 'roll',
      now: this.#deps.now(),
    });
    return { view, plan, pause };
  }

  #plan(pass: Pass, view: WorkloadView, binding: PolicyBinding): ReconcilePlan {
    const { options, reloadLists } = this.#deps;
    return planReconcile({
      view,
      row: pass.row,
      options: {
        ...options,
        strategy: strategyUnder(binding, options.strategy),
        reloadLists,
        stateMaps: this.#stateMaps,
        envVarNames: this.#envVarNames,
      },
      candidates: this.#listCandidates(view),
      facts: (key) => this.#facts(pass, view, key),
      marks: pass.marks,
      policySources: binding.sources,
      now: this.#deps.now(),
    });
  }

  /** Sources that only a reload list can make tracked: every source of a type the workload lists. */
  #listCandidates(view: WorkloadView): Partial<Record<SourceType, readonly string[]>> {
    const { sources, options } = this.#deps;
    const candidates: Partial<Record<SourceType, readonly string[]>> = {};
    for (const type of SOURCE_TYPES) {
      if (hasReloadList(view, type, options.keys)) {
        candidates[type] = sources.namesInNamespace(view.ref.namespace, type);
      }
    }
    return candidates;
  }

  #facts(pass: Pass, view: WorkloadView, key: SourceKey): SourceFacts {
    const facts = cachedSourceFacts(
      this.#deps,
      { key: pass.key, namespace: view.ref.namespace },
      key,
    );
    // Only the keys of the triggering changes were observed apart from their last change.
    const observedAt = pass.trigger.observedAt?.get(key);
    if (facts.status.state === 'unknown' || observedAt === undefined) return facts;
    return { ...facts, observedAt };
  }

  #reportDiagnostics(target: Target): void {
    const { observer } = this.#deps;
    const { view, plan, pause } = target;
    const problems = uniqueProblems([...plan.problems, ...pause.problems]);
    if (problems.length > 0) observer.onProblems({ view, problems });
    if (plan.collisions.length > 0) observer.onCollision({ view, collisions: plan.collisions });
    if (pause.notice === 'pause-period-ignored' && !this.#pauseIgnoredWarned.has(view.uid)) {
      this.#pauseIgnoredWarned.add(view.uid);
      observer.onPauseNotice({ view, notice: pause.notice });
    }
  }

  /** The reconcile completed without a write: consume marks, report why nothing was written. */
  #settle(
    pass: Pass,
    target: Target,
    attempts = 0,
    resumeAt = target.pause.resumeAt,
  ): ReconcileResult {
    this.#deps.marks.consume(pass.key, pass.marks);
    const skip = target.plan.skip ?? this.#notUpdatedReason(pass);
    if (skip) this.#deps.observer.onSkipped({ key: pass.key, view: target.view, reason: skip });
    return {
      outcome: skip ? 'skipped' : 'unchanged',
      plan: target.plan,
      skip,
      attempts,
      resumeAt,
    };
  }

  /** `strategy_not_updated`: a source change or mark triggered this reconcile and needed no write. */
  #notUpdatedReason(pass: Pass): SkipReason | undefined {
    const changes = pass.trigger.observedAt?.size ?? 0;
    return changes > 0 || pass.marks.length > 0 ? 'strategy_not_updated' : undefined;
  }

  /** §13.8: no write of any kind. A resume alone is not a reload: it is neither sent nor timed. */
  #dryRun(pass: Pass, target: Target): ReconcileResult {
    if (!plansWrite(target)) return this.#settle(pass, target, 0, undefined);
    const { marks, observer } = this.#deps;
    marks.consume(pass.key, pass.marks);
    observer.onDryRun({ view: target.view, plan: target.plan });
    observer.onSkipped({ key: pass.key, view: target.view, reason: 'dry_run' });
    return { outcome: 'dry-run', plan: target.plan, skip: 'dry_run', attempts: 0 };
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
        recreations: this.#pending,
        snapshots: this.#deps.snapshots,
      });
    } catch (error) {
      if (error instanceof LeadershipLostError) return { ...NOT_LEADER, attempts: attempt.attempt };
      return this.#writeFailed(pass, attempt, this.#classify(error), false);
    }
    return this.#complete(pass, attempt, followUp);
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
    const pass: Pass = {
      key,
      row: kindRow(stale.ref.kind),
      marks: this.#deps.marks.marksOf(key),
      trigger,
      memo: resume.memo,
    };
    const attempt = resume.attempts + 1;
    let basis: { readonly view: WorkloadView | undefined; readonly fetched: boolean };
    try {
      basis = await this.#currentView(key, resume);
    } catch (error) {
      // A failed re-read still owes the re-read.
      const failed = { target: this.#target(pass, stale), ...resume.basis, attempt };
      return this.#writeFailed(
        pass,
        { ...failed, startedAt: resume.startedAt },
        this.#classify(error),
        resume.conflict,
      );
    }
    if (!basis.view) return this.#gone(pass, attempt);
    const target = this.#target(pass, basis.view);
    this.#reportDiagnostics(target);
    if (!hasWrite(target)) {
      if (this.#owesInstantiate(pass, basis.view)) {
        return this.#finishInstantiate(pass, target, { attempt, startedAt: resume.startedAt });
      }
      return this.#settle(pass, target, resume.attempts);
    }
    return this.#write(pass, {
      target,
      fetched: basis.fetched,
      attempt,
      startedAt: resume.startedAt,
    });
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
    const final = this.#finalFailure(pass, target, error, attempt.attempt);
    if (final) return final;
    const stale = error.status === 409;
    const delayMs = stale ? 0 : this.#delay(error, attempt.attempt);
    this.#deps.observer.onRetry({ key: pass.key, error, attempt: attempt.attempt, delayMs });
    const resume: Continuation = {
      startedAt: attempt.startedAt,
      attempts: attempt.attempt,
      memo: pass.memo,
      basis: { view: target.view, fetched },
      conflict: stale || conflict,
    };
    const retry: ReconcileRetry =
      stale && !fetched
        ? {
            afterMs: CONFLICT_WATCH_WAIT_MS,
            wakeEarly: this.#deps.workloads.newerThan(
              pass.key,
              target.view.resourceVersion,
              CONFLICT_WATCH_WAIT_MS,
            ),
            resume,
          }
        : { afterMs: delayMs, resume };
    return { outcome: 'retrying', plan: target.plan, attempts: attempt.attempt, error, retry };
  }

  /** The write went through: try its follow-up, if any, then report. */
  async #complete(
    pass: Pass,
    timing: Attempt,
    followUp: FollowUp | undefined,
  ): Promise<ReconcileResult> {
    if (!followUp) return this.#written(pass, timing, {});
    const deferred = { followUp, target: timing.target, marks: pass.marks, tries: 0, waitedMs: 0 };
    return this.#tryFollowUp(pass, timing, deferred);
  }

  /** The follow-up of a write acknowledged by an earlier attempt, alone. */
  async #retryFollowUp(
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation,
    deferred: DeferredFollowUp,
  ): Promise<ReconcileResult> {
    const { target } = deferred;
    const pass: Pass = {
      key,
      row: kindRow(target.view.ref.kind),
      marks: deferred.marks,
      trigger,
      memo: resume.memo,
    };
    const timing: Attempt = {
      target,
      fetched: resume.basis.fetched,
      attempt: resume.attempts,
      startedAt: resume.startedAt,
    };
    const result = await this.#tryFollowUp(pass, timing, deferred);
    return result.retry || trigger.retriggered !== true ? result : { ...result, rerun: true };
  }

  /** One try of the follow-up; a retryable failure asks the queue for the next try. */
  async #tryFollowUp(
    pass: Pass,
    timing: Attempt,
    deferred: DeferredFollowUp,
  ): Promise<ReconcileResult> {
    const { followUp } = deferred;
    if (!this.#mayWrite()) return this.#followUpStopped(pass, timing, deferred);
    let createdJob: CreatedObject | undefined;
    try {
      createdJob = await this.#sendFollowUp(pass, timing.target, followUp);
    } catch (error) {
      return this.#followUpFailed(pass, timing, deferred, this.#classify(error));
    }
    if (followUp.kind === 'create-job') {
      await this.#settleRecreation(pass.key);
      return this.#written(pass, timing, { createdJob });
    }
    await this.#clearInstantiatePending(pass, timing.target.view);
    return this.#written(pass, timing, { instantiated: true });
  }

  async #sendFollowUp(
    pass: Pass,
    target: Target,
    followUp: FollowUp,
  ): Promise<CreatedObject | undefined> {
    const { ref, uid } = target.view;
    if (followUp.kind === 'create-job') return this.#createAgain(ref, uid, followUp.manifest);
    this.#instantiated.delete(uid);
    await this.#deps.writer.instantiate(ref, followUp.body);
    this.#instantiated.set(uid, 'instantiated');
    return undefined;
  }

  /**
   * The lease is gone. A deleted Job's entry stays journalled (docs/adr/0019): the next reconcile
   * of the key, here or on the next leader, creates it.
   */
  #followUpStopped(pass: Pass, timing: Attempt, deferred: DeferredFollowUp): ReconcileResult {
    if (deferred.followUp.kind === 'create-job') {
      this.#deps.observer.onRecreationRetried({ key: pass.key, result: 'handed-over' });
    }
    this.#deps.marks.consume(pass.key, pass.marks);
    return { ...NOT_LEADER, attempts: timing.attempt };
  }

  #followUpFailed(
    pass: Pass,
    timing: Attempt,
    deferred: DeferredFollowUp,
    error: ApiError,
  ): ReconcileResult {
    const { followUp, target } = deferred;
    const tries = deferred.tries + 1;
    const delayMs = this.#delay(error, tries);
    const waitedMs = deferred.waitedMs + delayMs;
    // A deleted Job was journalled before its DELETE (docs/adr/0019): a retry the queue drops
    // (shutdown, lost lease) leaves it to the next reconcile of the key, here or on the next leader.
    if (FOLLOW_UP_POLICIES[followUp.kind](error, tries, waitedMs)) {
      this.#deps.observer.onRetry({ key: pass.key, error, attempt: tries, delayMs });
      const resume: Continuation = {
        startedAt: timing.startedAt,
        attempts: timing.attempt,
        memo: pass.memo,
        basis: { view: target.view, fetched: timing.fetched },
        conflict: false,
        followUp: { ...deferred, tries, waitedMs },
      };
      const retry: ReconcileRetry = { afterMs: delayMs, resume };
      return { outcome: 'retrying', plan: target.plan, attempts: timing.attempt, error, retry };
    }
    this.#deps.marks.consume(pass.key, pass.marks);
    this.#deps.observer.onFailed({
      key: pass.key,
      view: target.view,
      plan: target.plan,
      error,
      gaveUp: error.retryable,
      attempts: tries,
      stage: followUp.kind,
      recreationPending: followUp.kind === 'create-job',
    });
    return { outcome: 'failed', plan: target.plan, attempts: timing.attempt, error };
  }

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
      return await writer.create(kindRow('Job'), ref.namespace, manifest);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 409) throw error;
      const uid = stringAt(await writer.getObject(ref), ['metadata', 'uid']);
      if (uid === undefined || uid === deletedUid) throw error;
      return { name: ref.name, uid };
    }
  }

  /** The Job exists again: drop its journal entry. A failed removal is retried at the next resync. */
  async #settleRecreation(key: WorkloadKey): Promise<void> {
    try {
      await this.#pending.settle(key);
    } catch (error) {
      this.#deps.observer.onRecreationRetried({
        key,
        result: 'failed',
        error: asApiError(error),
      });
    }
  }

  /**
   * A DeploymentConfig whose template was patched while its instantiate never succeeded (failed,
   * lease lost, crash) carries `kreload.io/instantiate-pending` (docs/adr/0019): the next reconcile
   * with nothing else to write instantiates it. A roll in the meantime instantiates anyway.
   */
  #owesInstantiate(pass: Pass, view: WorkloadView): boolean {
    if (view.annotations[INSTANTIATE_PENDING] === undefined) {
      this.#instantiated.delete(view.uid);
      return false;
    }
    return (
      pass.row.instantiatesWithoutConfigChangeTrigger &&
      this.#instantiated.get(view.uid) !== 'marker-removed' &&
      !this.#deps.options.dryRun
    );
  }

  /**
   * One try of an owed instantiate; a retryable failure asks the queue for the next attempt, which
   * plans again and comes back here while the marker is on the object.
   */
  async #finishInstantiate(
    pass: Pass,
    target: Target,
    timing: { readonly attempt: number; readonly startedAt: number } = {
      attempt: 1,
      startedAt: this.#deps.now(),
    },
  ): Promise<ReconcileResult> {
    const { view, plan } = target;
    // A ConfigChange trigger added since deploys the template by itself: only the marker goes.
    // Sent already, only the marker's removal failed: it alone is owed.
    if (needsInstantiate(pass.row, view) && this.#instantiated.get(view.uid) !== 'instantiated') {
      if (!this.#mayWrite()) return { ...NOT_LEADER, attempts: timing.attempt - 1 };
      try {
        await this.#sendFollowUp(pass, target, instantiateFollowUp(view));
      } catch (error) {
        const attempt: Attempt = { target, fetched: false, ...timing };
        return this.#writeFailed(pass, attempt, asApiError(error), false);
      }
    }
    await this.#clearInstantiatePending(pass, view);
    this.#deps.marks.consume(pass.key, pass.marks);
    return { outcome: 'rolled', plan, attempts: timing.attempt };
  }

  /** A failed removal leaves the marker: the next reconcile instantiates again (at least once). */
  async #clearInstantiatePending(pass: Pass, view: WorkloadView): Promise<void> {
    if (!this.#mayWrite()) return;
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

  /**
   * Config revisions (docs/adr/0036): hand the workload's snapshots to their revisions, sweep the
   * left-over ones. Returns when to try again (a snapshot waits for its revision, or the pass
   * failed); undefined when nothing is left. Never fails the reconcile.
   */
  async #adopt(pass: Pass, target: Target): Promise<number | undefined> {
    const api = this.#deps.snapshots;
    if (!api || this.#deps.options.dryRun) return undefined;
    const { view } = target;
    const owed = await this.#owesAdoption(pass, target, api);
    if (owed === 'unknown') return this.#deps.now() + ADOPTION_RETRY_MS;
    if (!owed) return undefined;
    try {
      const result = await adoptSnapshots({
        api,
        row: pass.row,
        view,
        ensureLeader: () => {
          if (!this.#mayWrite()) throw new LeadershipLostError(view.ref);
        },
      });
      if (result.adopted.length > 0 || result.swept.length > 0) {
        this.#deps.observer.onSnapshots({ view, adopted: result.adopted, swept: result.swept });
      }
      if (result.waiting) return this.#deps.now() + ADOPTION_RETRY_MS;
      this.#adoptionOwed.delete(pass.key);
      (await this.#ownersAtStart.get(view.ref.namespace))?.delete(view.uid);
      return undefined;
    } catch (error) {
      if (error instanceof LeadershipLostError) return undefined;
      this.#deps.observer.onSnapshots({ view, error: asApiError(error) });
      return this.#deps.now() + ADOPTION_RETRY_MS;
    }
  }

  /**
   * Opted in: always. Otherwise when a roll of this process left an adoption owed, or when the
   * workload still owned a snapshot at this process's first look at its namespace (ADR 0037).
   */
  async #owesAdoption(pass: Pass, target: Target, api: SnapshotApi): Promise<boolean | 'unknown'> {
    if (target.plan.revisions?.optedIn === true || this.#adoptionOwed.has(pass.key)) return true;
    const { view } = target;
    const owners = await this.#snapshotOwnersAtStart(api, view.ref.namespace);
    if (owners === undefined) return 'unknown';
    if (!owners.has(view.uid)) return false;
    this.#adoptionOwed.add(pass.key);
    return true;
  }

  /**
   * One LIST per snapshot type and namespace per process: the workloads a snapshot is still owned
   * by. Undefined when the list failed; it is not kept, so the next reconcile there asks again.
   */
  #snapshotOwnersAtStart(api: SnapshotApi, namespace: string): Promise<Set<string> | undefined> {
    const known = this.#ownersAtStart.get(namespace);
    if (known !== undefined) return known;
    const listed = snapshotOwners(api, namespace).catch(() => {
      this.#ownersAtStart.delete(namespace);
      return undefined;
    });
    this.#ownersAtStart.set(namespace, listed);
    return listed;
  }

  #written(pass: Pass, timing: Attempt, completion: Completion): ReconcileResult {
    const { marks, observer } = this.#deps;
    const { view, plan, pause } = timing.target;
    const attempts = timing.attempt;
    marks.consume(pass.key, pass.marks);
    const resumed = pause.write?.action === 'resume';
    if (resumed) observer.onResumed({ view, attempts });
    const adoptAt = this.#adoptionAfter(pass, plan);
    const done = { plan, attempts, resumeAt: earliest(pause.resumeAt, adoptAt), resumed };
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

  /** A roll with config revisions owes an adoption pass a moment later. */
  #adoptionAfter(pass: Pass, plan: ReconcilePlan): number | undefined {
    if (plan.action !== 'roll' || plan.revisions === undefined || !this.#deps.snapshots) {
      return undefined;
    }
    this.#adoptionOwed.add(pass.key);
    return this.#deps.now() + ADOPTION_DELAY_MS;
  }

  #gone(pass: Pass, attempts: number): ReconcileResult {
    this.#deps.marks.consume(pass.key, pass.marks);
    this.#deps.observer.onGone({ key: pass.key });
    return { outcome: 'gone', attempts };
  }

  /** The result when this error ends the write: 404, a non-retryable error, or the last attempt. */
  #finalFailure(
    pass: Pass,
    target: Target,
    error: ApiError,
    attempt: number,
  ): ReconcileResult | undefined {
    if (error.status === 404) return this.#gone(pass, attempt);
    const gaveUp = attempt >= WRITE_MAX_ATTEMPTS;
    if (error.retryable && !gaveUp) return undefined;
    this.#deps.observer.onFailed({
      key: pass.key,
      view: target.view,
      plan: target.plan,
      error,
      gaveUp: error.retryable,
      attempts: attempt,
      stage: 'write',
      recreationPending: false,
    });
    return { outcome: 'failed', plan: target.plan, attempts: attempt, error };
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

  #delay(error: ApiError, attempt: number): number {
    // A 403 is retried only while the API server comes back: wait as for a reconnect.
    if (error.status === 403) {
      return backoffDelay(BACKOFF_POLICIES.watch, attempt - 1, this.#deps.random);
    }
    return writeRetryDelay({
      retry: attempt - 1,
      random: this.#deps.random,
      retryAfterMs: error.status === 429 ? error.retryAfterMs : undefined,
    });
  }

  /**
   * §7.4 item 4 with the journal (docs/adr/0019): the next step of a Job recreation left pending by
   * an earlier reconcile, here or in a process that stopped. Undefined when nothing is left to
   * create (the Job has appeared, or was never deleted): the reconcile then goes on as usual.
   */
  async #resumeRecreation(key: WorkloadKey): Promise<ReconcileResult | undefined> {
    const { workloads, writer, observer } = this.#deps;
    // The journal is read again: an entry removed or edited there is not acted on (docs/adr/0019).
    let pending: PendingRecreation | undefined;
    try {
      pending = await this.#pending.confirm(key);
    } catch (error) {
      return this.#recreationFailed(key, asApiError(error));
    }
    if (pending === undefined) {
      observer.onRecreationRetried({ key, result: 'withdrawn' });
      return undefined;
    }
    const cached = workloads.get(key);
    if (cached && cached.uid !== pending.deletedUid) return this.#recreationEnded(key, 'appeared');
    let served: JsonObject | undefined;
    try {
      served = await writer.getObject(pending.ref);
    } catch (error) {
      return this.#recreationFailed(key, asApiError(error));
    }
    if (served) {
      if (stringAt(served, ['metadata', 'uid']) !== pending.deletedUid) {
        return this.#recreationEnded(key, 'appeared');
      }
      if (stringAt(served, ['metadata', 'deletionTimestamp']) === undefined) {
        return this.#recreationEnded(key, 'not-deleted');
      }
      return this.#recreationFailed(key, stillDeleting(pending));
    }
    if (!this.#mayWrite()) return NOT_LEADER;
    try {
      const createdJob = await this.#createAgain(pending.ref, pending.deletedUid, pending.manifest);
      await this.#settleRecreation(key);
      observer.onRecreationRetried({ key, result: 'created', createdJob });
      return { outcome: 'recreated', attempts: 1 };
    } catch (error) {
      return this.#recreationFailed(key, asApiError(error));
    }
  }

  async #recreationEnded(
    key: WorkloadKey,
    result: Extract<RecreationRetryEvent['result'], 'appeared' | 'not-deleted'>,
  ): Promise<undefined> {
    await this.#settleRecreation(key);
    this.#deps.observer.onRecreationRetried({ key, result });
    return undefined;
  }

  #recreationFailed(key: WorkloadKey, error: ApiError): ReconcileResult {
    this.#deps.observer.onRecreationRetried({ key, result: 'failed', error });
    return { outcome: 'failed', attempts: 1, error };
  }
}

/** The old Job of a pending recreation still exists with a deletionTimestamp (finalizers). */
function stillDeleting(pending: PendingRecreation): ApiError {
  const { namespace, name } = pending.ref;
  return new ApiError(`Job ${namespace}/${name} is still being deleted`, {
    status: 409,
    retryable: true,
  });
}
