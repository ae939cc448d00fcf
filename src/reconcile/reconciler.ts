/**
 * Reconciles one workload key (§5): reads the current view and sources, plans, and sends at most one
 * patch with the retry policy of §10. Level-triggered: a failed or skipped reconcile loses nothing,
 * the next trigger or resync re-evaluates the workload.
 */
import type { ReloadListCache } from '../core/annotation-values.ts';
import { hasReloadList } from '../core/decide.ts';
import { parseSourceKey } from '../core/keys.ts';
import type {
  SkipReason,
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadView,
} from '../core/types.ts';
import type { RandomSource } from '../queue/backoff.ts';
import { WRITE_MAX_ATTEMPTS, writeRetryDelay } from '../queue/backoff.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import { kindRow } from '../rollout/kinds.ts';
import { buildPatch } from '../rollout/patch.ts';
import type { PlanOptions, ReconcilePlan, SourceFacts } from './plan.ts';
import { planReconcile } from './plan.ts';
import type {
  MarkLedger,
  ReconcileObserver,
  SourceLookup,
  WorkloadLookup,
  WorkloadMarks,
  WorkloadWriter,
} from './ports.ts';
import { WriteError } from './ports.ts';

export interface ReconcileOptions extends Omit<PlanOptions, 'reloadLists'> {
  /** `--dry-run`: plan and report, never write (§13.8). */
  readonly dryRun: boolean;
}

export interface ReconcilerDeps {
  readonly workloads: WorkloadLookup;
  readonly sources: SourceLookup;
  readonly marks: MarkLedger;
  readonly writer: WorkloadWriter;
  readonly observer: ReconcileObserver;
  readonly options: ReconcileOptions;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: RandomSource;
  readonly reloadLists?: ReloadListCache | undefined;
}

/** What started this reconcile: the source changes of the queue entry (§8 item 1). */
export interface ReconcileTrigger {
  /** When each triggering source change was observed, ms since the epoch. */
  readonly observedAt?: ReadonlyMap<SourceKey, number> | undefined;
}

export type ReconcileOutcome =
  'gone' | 'unchanged' | 'skipped' | 'dry-run' | 'baselined' | 'rolled' | 'failed';

export interface ReconcileResult {
  readonly outcome: ReconcileOutcome;
  readonly plan?: ReconcilePlan | undefined;
  readonly skip?: SkipReason | undefined;
  /** Write attempts made (0 without a write). */
  readonly attempts: number;
  readonly error?: WriteError | undefined;
}

const SOURCE_TYPES: readonly SourceType[] = ['CONFIGMAP', 'SECRET', 'SECRETPROVIDERCLASS'];

/** One reconcile in flight: what the plan was based on. */
interface Pass {
  readonly key: WorkloadKey;
  readonly row: WorkloadKindRow;
  readonly marks: WorkloadMarks;
  readonly trigger: ReconcileTrigger;
}

interface Target {
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
}

/** One write attempt: the target to patch, whether to GET it first, and its number from 1. */
interface Attempt {
  readonly target: Target;
  readonly reread: boolean;
  readonly attempt: number;
  readonly startedAt: number;
}

type Step =
  { readonly result: ReconcileResult } | { readonly target: Target; readonly reread: boolean };

function isTarget(value: Target | ReconcileResult): value is Target {
  return 'view' in value;
}

function maxDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((value) => value !== undefined);
  return defined.length > 0 ? Math.max(...defined) : undefined;
}

function hasMarks(marks: WorkloadMarks): boolean {
  return marks.creates.length > 0 || marks.deletes.length > 0;
}

function asWriteError(error: unknown): WriteError {
  // Anything else is a bug in an adapter or a builder: let the queue count it as a handler error.
  if (error instanceof WriteError) return error;
  throw error;
}

export class Reconciler {
  readonly #deps: ReconcilerDeps;

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
  }

  async reconcile(key: WorkloadKey, trigger: ReconcileTrigger = {}): Promise<ReconcileResult> {
    const view = this.#deps.workloads.get(key);
    if (!view) return { outcome: 'gone', attempts: 0 };
    const pass: Pass = {
      key,
      row: kindRow(view.ref.kind),
      marks: this.#deps.marks.marksOf(key),
      trigger,
    };
    const plan = this.#plan(pass, view);
    this.#reportDiagnostics(view, plan);
    if (plan.action === 'none' || plan.skip) return this.#settle(pass, { view, plan });
    if (this.#deps.options.dryRun) return this.#dryRun(pass, { view, plan });
    return this.#write(pass, { view, plan });
  }

  #plan(pass: Pass, view: WorkloadView): ReconcilePlan {
    const { options, reloadLists } = this.#deps;
    return planReconcile({
      view,
      row: pass.row,
      options: { ...options, reloadLists },
      candidates: this.#listCandidates(view),
      facts: (key) => this.#facts(pass, view, key),
      marks: pass.marks,
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
    const { sources, workloads } = this.#deps;
    const parsed = parseSourceKey(key);
    const namespace = view.ref.namespace;
    if (!parsed || !sources.isHealthy(parsed.type)) return { status: { state: 'unknown' } };
    const source = sources.get(namespace, parsed.type, parsed.name);
    const lastChange = sources.lastChange(namespace, key);
    return {
      status: source
        ? { state: 'present', hash: source.hash, uid: source.uid, annotations: source.annotations }
        : { state: 'absent' },
      lastChange,
      trackingStart: maxDefined(
        sources.firstObserved(namespace, key),
        workloads.relevantSince(pass.key),
      ),
      observedAt: pass.trigger.observedAt?.get(key) ?? lastChange,
    };
  }

  #reportDiagnostics(view: WorkloadView, plan: ReconcilePlan): void {
    const { observer } = this.#deps;
    if (plan.problems.length > 0) observer.onProblems({ view, problems: plan.problems });
    if (plan.collisions.length > 0) observer.onCollision({ view, collisions: plan.collisions });
  }

  /** The reconcile completed without a write: consume marks, report why nothing was written. */
  #settle(pass: Pass, target: Target, attempts = 0): ReconcileResult {
    this.#deps.marks.consume(pass.key, pass.marks);
    const skip = target.plan.skip ?? this.#notUpdatedReason(pass);
    if (skip) this.#deps.observer.onSkipped({ key: pass.key, view: target.view, reason: skip });
    return { outcome: skip ? 'skipped' : 'unchanged', plan: target.plan, skip, attempts };
  }

  /** `strategy_not_updated`: a source change or mark triggered this reconcile and needed no write. */
  #notUpdatedReason(pass: Pass): SkipReason | undefined {
    const changes = pass.trigger.observedAt?.size ?? 0;
    return changes > 0 || hasMarks(pass.marks) ? 'strategy_not_updated' : undefined;
  }

  #dryRun(pass: Pass, target: Target): ReconcileResult {
    const { marks, observer } = this.#deps;
    marks.consume(pass.key, pass.marks);
    observer.onDryRun(target);
    observer.onSkipped({ key: pass.key, view: target.view, reason: 'dry_run' });
    return { outcome: 'dry-run', plan: target.plan, skip: 'dry_run', attempts: 0 };
  }

  /** §10: up to WRITE_MAX_ATTEMPTS attempts; a 409 re-reads the object and plans again. */
  async #write(pass: Pass, first: Target): Promise<ReconcileResult> {
    const startedAt = this.#deps.now();
    let next: Attempt = { target: first, reread: false, attempt: 1, startedAt };
    for (;;) {
      const step = await this.#attempt(pass, next);
      if ('result' in step) return step.result;
      next = { ...step, attempt: next.attempt + 1, startedAt };
    }
  }

  async #attempt(pass: Pass, current: Attempt): Promise<Step> {
    let target = current.target;
    try {
      if (current.reread) {
        const refreshed = await this.#refresh(pass, target, current.attempt);
        if (!isTarget(refreshed)) return { result: refreshed };
        target = refreshed;
      }
      await this.#patch(pass, target);
      return { result: this.#written(pass, target, current) };
    } catch (error) {
      const writeError = asWriteError(error);
      const final = this.#finalFailure(pass, target, writeError, current.attempt);
      if (final) return { result: final };
      await this.#backOff(pass, writeError, current.attempt);
      // A failed re-read still owes the re-read.
      const reread = writeError.status === 409 || (current.reread && target === current.target);
      return { target, reread };
    }
  }

  /** After a 409: GET the object and plan again; often nothing is left to do (§10). */
  async #refresh(pass: Pass, stale: Target, attempt: number): Promise<Target | ReconcileResult> {
    const fresh = await this.#deps.writer.get(stale.view.ref);
    if (!fresh) return this.#gone(pass, attempt);
    const target = { view: fresh, plan: this.#plan(pass, fresh) };
    if (target.plan.action === 'none' || target.plan.skip) {
      return this.#settle(pass, target, attempt - 1);
    }
    return target;
  }

  async #patch(pass: Pass, target: Target): Promise<void> {
    const patch = buildPatch(pass.row, target.view, target.plan);
    if (patch) await this.#deps.writer.patch(target.view.ref, patch);
  }

  #written(pass: Pass, target: Target, timing: Attempt): ReconcileResult {
    const { marks, observer } = this.#deps;
    marks.consume(pass.key, pass.marks);
    if (target.plan.action === 'roll') {
      const durationMs = this.#deps.now() - timing.startedAt;
      observer.onRolled({ ...target, attempts: timing.attempt, durationMs });
      return { outcome: 'rolled', plan: target.plan, attempts: timing.attempt };
    }
    observer.onBaselined(target);
    return { outcome: 'baselined', plan: target.plan, attempts: timing.attempt };
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
    error: WriteError,
    attempt: number,
  ): ReconcileResult | undefined {
    if (error.status === 404) return this.#gone(pass, attempt);
    const gaveUp = attempt >= WRITE_MAX_ATTEMPTS;
    if (error.retryable && !gaveUp) return undefined;
    this.#deps.observer.onFailed({
      key: pass.key,
      ...target,
      error,
      gaveUp: error.retryable,
      attempts: attempt,
    });
    return { outcome: 'failed', plan: target.plan, attempts: attempt, error };
  }

  async #backOff(pass: Pass, error: WriteError, attempt: number): Promise<void> {
    const delayMs = writeRetryDelay({
      retry: attempt - 1,
      random: this.#deps.random,
      retryAfterMs: error.status === 429 ? error.retryAfterMs : undefined,
    });
    this.#deps.observer.onRetry({ key: pass.key, error, attempt, delayMs });
    await this.#deps.sleep(delayMs);
  }
}
