/**
 * What one reconcile attempt acts on (§5, §7.2): the view under its ReloadPolicy, the plan, and the
 * pause rules' verdict; and the diagnostics the plan found, each reported once per occasion. Reads
 * caches only: nothing here writes.
 */
import type { ReloadListCache } from '../core/annotation-values.ts';
import { hasReloadList } from '../core/decide.ts';
import {
  NO_BINDING,
  type PolicyBinding,
  strategyUnder,
  withPolicySettings,
} from '../core/reload-policy.ts';
import { EnvVarNames } from '../core/env-name.ts';
import { SOURCE_TYPES } from '../core/source-types.ts';
import { HashMapCache } from '../core/state.ts';
import type { SourceKey, SourceType, WorkloadKey, WorkloadView } from '../core/types.ts';
import type { KindTable } from '../rollout/kinds.ts';
import { planPause } from '../rollout/pause.ts';
import type { Pass } from './attempt.ts';
import type { PlanOptions, ReconcilePlan, SourceFacts, StoredBaseline } from './plan/model.ts';
import { planReconcile } from './plan/plan.ts';
import { mayHoldAppliedState } from './plan/applied.ts';
import { uniqueProblems } from './plan/tracking.ts';
import type {
  BaselineStore,
  PolicyLookup,
  ReconcileObserver,
  SourceLookup,
  WorkloadLookup,
} from './ports.ts';
import { cachedSourceFacts } from './source-facts.ts';
import type { Target } from './write-actions.ts';

export interface TargetsDeps {
  readonly workloads: WorkloadLookup;
  readonly sources: SourceLookup;
  readonly policies?: PolicyLookup | undefined;
  readonly observer: ReconcileObserver;
  readonly options: Omit<PlanOptions, 'reloadLists' | 'stateMaps' | 'envVarNames'> & {
    readonly kinds: KindTable;
  };
  readonly reloadLists?: ReloadListCache | undefined;
  /** ms since the epoch. */
  readonly now: () => number;
  /** `--baseline-store=namespace` (docs/adr/0046); absent, B lives on the workload only. */
  readonly baselines?: Pick<BaselineStore, 'inUse' | 'recordOf'> | undefined;
}

/** What one workload holds and wants of one source. */
export interface TrackedHashes {
  readonly applied: string | undefined;
  readonly desired: string | undefined;
  /** The plan rolls the workload for this source now. */
  readonly rolls: boolean;
}

export class Targets {
  readonly #deps: TargetsDeps;
  /** UIDs already warned about a pause-period on a kind without it (§3.1: once per workload). */
  readonly #pauseIgnoredWarned = new Set<string>();
  /** The state annotations, parsed once per distinct value (workloads bound alike share them). */
  readonly #stateMaps = new HashMapCache();
  /** Env var names, built once per source (every tracked source is named at every reconcile). */
  readonly #envVarNames = new EnvVarNames();

  constructor(deps: TargetsDeps) {
    this.#deps = deps;
  }

  /** The target of an attempt on `view`. */
  of(pass: Pass, view: WorkloadView): Target {
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

  /** A(K) of each key a pass would track on the cached workload now (§5.3). */
  appliedHashes(key: WorkloadKey): ReadonlyMap<SourceKey, string> {
    const view = this.#deps.workloads.get(key);
    // Without any state to read, the plan's A is undefined for every key: no plan needed.
    if (view === undefined || !mayHoldAppliedState(view)) return new Map();
    const plan = this.#cachedPlan(key);
    if (!plan) return new Map();
    return new Map(
      plan.keys.flatMap((entry) =>
        entry.applied === undefined ? [] : [[entry.key, entry.applied] as const],
      ),
    );
  }

  /**
   * Per tracked source of the cached workload: A(K), D(K) and whether a roll is planned for it now
   * (roll admission reads a change's members from it). Plans only; nothing is written.
   */
  trackedSources(key: WorkloadKey): ReadonlyMap<SourceKey, TrackedHashes> {
    const plan = this.#cachedPlan(key);
    if (!plan) return new Map();
    return new Map(
      plan.keys.map((entry) => [
        entry.key,
        { applied: entry.applied, desired: entry.desired, rolls: plan.rolling.includes(entry.key) },
      ]),
    );
  }

  /** The plan of the cached workload now, without marks or a trigger; undefined when not cached. */
  #cachedPlan(key: WorkloadKey): Target['plan'] | undefined {
    const view = this.#deps.workloads.get(key);
    if (!view) return undefined;
    const pass: Pass = {
      key,
      row: this.#deps.options.kinds.row(view.ref.kind),
      marks: [],
      trigger: {},
      memo: {},
    };
    return this.of(pass, view).plan;
  }

  /** Reports the plan's problems and collisions, and a pause-period notice once per workload. */
  report(target: Target): void {
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
      storedBaseline: this.#storedBaseline(view),
    });
  }

  /**
   * The store's record (docs/adr/0046). Once the store fell back, the records it read (and those
   * set before) are still read, read-only: a change made while kreload was down still rolls.
   */
  #storedBaseline(view: WorkloadView): StoredBaseline | undefined {
    const { baselines } = this.#deps;
    if (baselines === undefined) return undefined;
    return { raw: baselines.recordOf(view), readOnly: !baselines.inUse() };
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
}
