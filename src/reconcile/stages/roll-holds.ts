/**
 * Restart windows and the flapping-source breaker as gates of roll admission (docs/adr/0045,
 * docs/windows-and-breaker.md): asked at the `admit` point before the budget and the waves, they
 * hold a planned roll with a reason and a time (`later at t`). A hold records the changes it keeps
 * in W `kreload.io/pending-roll` (workload metadata: it rolls nothing), so a restart or a new
 * leader owes the same roll (rule R7 reads it); the roll that ends the hold covers every pending
 * change and removes the record in its one PATCH. The decision is rollout/holds.ts's.
 */
import type { ApiError } from '../../core/api-error.ts';
import type { FlapLimits, FlapStatus } from '../../core/flap-breaker.ts';
import type { PolicyParse } from '../../core/restart-window.ts';
import { parseRestartWindow } from '../../core/restart-window.ts';
import { formatHashMap, parseHashMap } from '../../core/state.ts';
import type { AnnotationProblem, SourceKey, WorkloadView } from '../../core/types.ts';
import { PENDING_ROLL, RESTART_WINDOW } from '../../core/types.ts';
import type { Hold } from '../../rollout/holds.ts';
import { holdsEnd, holdsOf } from '../../rollout/holds.ts';
import { workloadFlapLimits } from '../../rollout/workload-settings.ts';
import type { Pass } from '../attempt.ts';
import { asApiError } from '../attempt.ts';
import type { WorkloadWriter } from '../ports.ts';
import type { AdmitAnswer, ReconcileStage } from '../stages.ts';
import type { Target } from '../write-actions.ts';

/** After a failed `pending-roll` write the hold stands and the write is tried again this soon. */
export const PENDING_RETRY_MS = 5_000;

/** Parsed window values kept; a cluster has few distinct ones. Past this the cache starts over. */
const MAX_CACHED_POLICIES = 256;

/** What the holds report: metrics, logs, Events (wired in app/pipeline.ts). */
export interface HoldsReport {
  /**
   * A roll was held; `holds` say why and until when. `begun`: this reconcile started the hold or
   * added a change to it (its `pending-roll` record was written), rather than kept it.
   */
  held(view: WorkloadView, holds: readonly Hold[], begun: boolean): void;
  /** The `pending-roll` record could not be written; the hold stands, the write is retried. */
  pendingFailed(view: WorkloadView, error: ApiError): void;
}

export interface RollHoldsDeps {
  /** `--enable-restart-windows`. */
  readonly windowsEnabled: boolean;
  /** The breaker of each source (controller/source-breakers.ts), under a workload's limits. */
  readonly breakers: {
    status(namespace: string, source: SourceKey, limits: FlapLimits): FlapStatus;
  };
  /** `--flap-max-changes`, `--flap-period`, `--flap-cool-down`: the limits a workload overrides. */
  readonly flapLimits: FlapLimits;
  readonly writer: WorkloadWriter;
  readonly report: HoldsReport;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly mayWrite: () => boolean;
  /** The workload with the settings its ReloadPolicy stands for (windows, breaker limits). */
  readonly underPolicy?: ((view: WorkloadView) => WorkloadView) | undefined;
  /** A bad window or breaker annotation: InvalidAnnotation on that workload (the plan's path). */
  readonly problems?:
    ((view: WorkloadView, problems: readonly AnnotationProblem[]) => void) | undefined;
}

export class RollHolds implements ReconcileStage {
  readonly #deps: RollHoldsDeps;
  readonly #policies = new Map<string, PolicyParse>();

  constructor(deps: RollHoldsDeps) {
    this.#deps = deps;
  }

  async admit(pass: Pass, target: Target): Promise<AdmitAnswer> {
    const { plan, view } = target;
    if (plan.action !== 'roll') return undefined;
    const holds = this.holdsOn(view, plan.rolling, (problems) => {
      this.#deps.problems?.(view, problems);
    });
    if (holds.length === 0) return undefined;
    const recorded = await this.#recordPending(pass, target);
    this.#deps.report.held(view, holds, recorded === 'written');
    const end = holdsEnd(holds);
    const resumeAt = recorded === 'failed' ? this.#deps.now() + PENDING_RETRY_MS : end;
    return { finish: { outcome: 'skipped', plan, attempts: 0, resumeAt } };
  }

  /**
   * The holds a roll of `view` for `rolling` meets now (explain asks too): its window and breaker
   * limits are its annotations', else its policy's. Bad values go to `onProblems`.
   */
  holdsOn(
    view: WorkloadView,
    rolling: readonly SourceKey[],
    onProblems?: (problems: readonly AnnotationProblem[]) => void,
  ): readonly Hold[] {
    const under = this.#deps.underPolicy?.(view) ?? view;
    const windowValue = under.annotations[RESTART_WINDOW];
    const window = windowValue === undefined ? undefined : this.#policy(windowValue);
    const limits = workloadFlapLimits(under, this.#deps.flapLimits);
    const problems: AnnotationProblem[] = [...limits.problems];
    if (windowValue !== undefined && window !== undefined && 'problem' in window) {
      problems.push({
        on: 'workload',
        key: RESTART_WINDOW,
        value: windowValue.slice(0, 256),
        problem: `invalid restart window: ${window.problem}`,
        consequence: 'its rolls are held until it is fixed or removed',
      });
    }
    if (problems.length > 0) onProblems?.(problems);
    const namespace = view.ref.namespace;
    return holdsOf({
      windowValue,
      window,
      windowsEnabled: this.#deps.windowsEnabled,
      rolling,
      flapping: (source) => this.#deps.breakers.status(namespace, source, limits.settings),
      now: this.#deps.now(),
    });
  }

  #policy(value: string): PolicyParse {
    let parsed = this.#policies.get(value);
    if (parsed === undefined) {
      if (this.#policies.size >= MAX_CACHED_POLICIES) this.#policies.clear();
      parsed = parseRestartWindow(value);
      this.#policies.set(value, parsed);
    }
    return parsed;
  }

  /**
   * Writes W `kreload.io/pending-roll` = what it held ∪ every key the plan rolls for, at its D
   * (a metadata patch: nothing restarts), and says whether it wrote, found the record already
   * complete or failed. A key already
   * recorded keeps its first hash: rule R7 reads only that the key is owed, and rewriting the hash
   * at each change of a flapping source would write every dependent as often as the source
   * changes, the load the breaker exists to stop.
   */
  async #recordPending(pass: Pass, target: Target): Promise<'written' | 'unchanged' | 'failed'> {
    const { view } = target;
    const raw = view.annotations[PENDING_ROLL];
    const next = new Map(parseHashMap(raw).map ?? []);
    for (const entry of target.plan.keys) {
      const owed = target.plan.rolling.includes(entry.key) && entry.desired !== undefined;
      if (owed && !next.has(entry.key)) {
        next.set(entry.key, entry.desired);
      }
    }
    const value = formatHashMap(next);
    if (value === null || value === raw) return 'unchanged';
    if (!this.#deps.mayWrite()) return 'failed';
    try {
      await this.#deps.writer.patch(view.ref, {
        type: pass.row.metadataPatchType,
        body: { metadata: { annotations: { [PENDING_ROLL]: value } } },
      });
      return 'written';
    } catch (error) {
      this.#deps.report.pendingFailed(view, asApiError(error));
      return 'failed';
    }
  }
}
