/**
 * The pure planner of one reconcile (§5): which sources the workload tracks, D, A and B for each, the
 * rules of §5.3, and the single change of §5.6. No I/O: the reconciler gathers every input.
 */
import { countingCreateMark } from '../../core/marks.ts';
import type { AnnotationProblem, SourceKey } from '../../core/types.ts';
import type { RollActionType } from '../../rollout/kinds.ts';
import { appliedStatePlacement, rollActionOf } from '../../rollout/kinds.ts';
import type { WorkloadChanges } from '../../rollout/patch.ts';
import type { AppliedContext } from './applied.ts';
import { appliedHash, stateModeOf } from './applied.ts';
import { planChanges } from './changes.ts';
import { findCollisions } from './collisions.ts';
import type {
  KeyPlan,
  PlanAction,
  PlanInput,
  ReconcilePlan,
  StateMode,
  TrackedSource,
} from './model.ts';
import type { PersistedState } from './persisted-state.ts';
import { persistedKeys, readPersistedState } from './persisted-state.ts';
import {
  nextRevisionDigest,
  pinnedByLastRoll,
  revisionPlan,
  revisionSettings,
  withRestore,
} from './revisions.ts';
import { boundPolicySources } from './policy-budget.ts';
import { applyRules } from './rules.ts';
import { evaluateTracking, keysToEvaluate, uniqueProblems } from './tracking.ts';

function createRolls(input: PlanInput, source: TrackedSource): boolean {
  const status = source.facts.status;
  if (!input.options.reloadOnCreate || status.state !== 'present') return false;
  return countingCreateMark(input.marks, source.key, status) !== undefined;
}

interface KeyLookup {
  readonly mode: StateMode;
  readonly context: AppliedContext;
  readonly state: PersistedState;
  /** Config revisions: the live sources are those the last roll pinned (docs/adr/0036). */
  readonly pinned: boolean;
}

function planKey(input: PlanInput, lookup: KeyLookup, source: TrackedSource): KeyPlan {
  // A rolled-back template is the user's choice while the live sources stay as last pinned.
  const applied = lookup.pinned ? source.desired : appliedHash(lookup.mode, lookup.context, source);
  const baseline = lookup.state.baseline.get(source.key);
  const verdict = applyRules({
    desired: source.desired,
    applied,
    baseline,
    lastChange: source.facts.lastChange,
    trackingStart: source.facts.trackingStart,
    createRolls: createRolls(input, source),
    pending: lookup.state.pending.has(source.key),
  });
  return { ...source, applied, baseline, ...verdict };
}

function noContainerPlan(
  mode: StateMode,
  rollAction: RollActionType,
  tracked: readonly TrackedSource[],
  problems: readonly AnnotationProblem[],
): ReconcilePlan {
  const keys = tracked.map((source) => ({
    ...source,
    applied: undefined,
    baseline: undefined,
    rule: 'R1' as const,
    outcome: 'nothing' as const,
  }));
  return {
    action: 'none',
    rollAction,
    rolling: [],
    skip: 'no_container',
    mode,
    keys,
    problems,
    collisions: [],
    envWrites: [],
  };
}

function actionOf(rolling: readonly SourceKey[], changes: WorkloadChanges): PlanAction {
  if (rolling.length > 0) return 'roll';
  return changes.baseline === undefined &&
    changes.revisionDigest === undefined &&
    changes.pendingRoll === undefined
    ? 'none'
    : 'baseline';
}

export function planReconcile(input: PlanInput): ReconcilePlan {
  const { view, options } = input;
  const state = readPersistedState(view, options.stateMaps, input.storedBaseline);
  const policySources = boundPolicySources(input.policySources);
  const tracking = evaluateTracking({
    view,
    options: { ...options, rollsOnDelete: input.row.rollsOnDelete },
    keys: keysToEvaluate(
      view,
      input.candidates,
      [...persistedKeys(state), ...(policySources.sources ?? [])],
      input.marks,
    ),
    facts: input.facts,
    marks: input.marks,
    policySources: policySources.sources,
  });
  const revisions = revisionSettings(view, input.row, options.configRevisions);
  const problems = uniqueProblems([
    ...state.problems,
    ...tracking.problems,
    ...revisions.problems,
    ...(policySources.problem === undefined ? [] : [policySources.problem]),
  ]);
  const placement = appliedStatePlacement(
    input.row,
    view.annotations,
    options.keys.rolloutStrategy,
  );
  const mode = stateModeOf(placement, options.strategy);
  const rollAction = rollActionOf(input.row, view.annotations, options.keys.rolloutStrategy);
  // A Rollout with workloadRef has no template of its own (§7.5). A roll by eviction writes no
  // template, so it needs none (a configured kind without a pod template, docs/custom-kinds.md).
  const noContainer =
    rollAction !== 'evict-pods' && (view.hasWorkloadRef || view.podSpec.containers.length === 0);
  if (tracking.tracked.length > 0 && noContainer) {
    return noContainerPlan(mode, rollAction, tracking.tracked, problems);
  }
  const collisions = options.strategy === 'env-vars' ? findCollisions(tracking.tracked) : [];
  const context = { view, state, colliding: new Set(collisions.flatMap((group) => group.keys)) };
  const lookup = { mode, context, state, pinned: pinnedByLastRoll(revisions, tracking.tracked) };
  const keys = withRestore(
    revisions,
    tracking.tracked.map((source) => planKey(input, lookup, source)),
  );
  const jobStrategy = rollAction === 'create-job-from-cronjob' ? options.strategy : undefined;
  const changes = planChanges({ view, mode, keys, state, collisions, now: input.now, jobStrategy });
  const rolling = keys.filter((key) => key.outcome === 'roll').map((key) => key.key);
  const revisionDigest = nextRevisionDigest(revisions, tracking.tracked, view.revisionDigest);
  const revisionPlanned = revisionPlan(revisions, view, keys);
  return {
    ...changes,
    ...(revisionDigest !== undefined && { revisionDigest }),
    ...(revisionPlanned && { revisions: revisionPlanned }),
    action: actionOf(rolling, { ...changes, revisionDigest }),
    rollAction,
    rolling,
    mode,
    keys,
    problems,
    collisions,
  };
}
