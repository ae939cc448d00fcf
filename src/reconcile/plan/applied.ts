/** A(K), the applied hash (§5.1): one lookup order per state mode. */
import type { AppliedStatePlacement } from '../../rollout/kinds.ts';
import type { ReloadStrategy, SourceKey, WorkloadView } from '../../core/types.ts';
import { LAST_RELOADED_FROM, SOURCE_HASHES } from '../../core/types.ts';
import { envVarOf } from './collisions.ts';
import type { PersistedState } from './persisted-state.ts';
import type { StateMode, TrackedSource } from './model.ts';

export function stateModeOf(placement: AppliedStatePlacement, strategy: ReloadStrategy): StateMode {
  return placement === 'W' ? 'workload' : strategy;
}

export interface AppliedContext {
  readonly view: WorkloadView;
  readonly state: PersistedState;
  /** Keys in an env-var collision group: their env var is no A (§6.3 step 1). */
  readonly colliding: ReadonlySet<SourceKey>;
}

type AppliedLookup = (context: AppliedContext, source: TrackedSource) => string | undefined;

/** Steps 2–3 of the env-vars row: the selected container first, then the first one that has it. */
function envVarValue(view: WorkloadView, source: TrackedSource): string | undefined {
  const name = envVarOf(source);
  const selected = view.podSpec.containers.find((c) => c.name === source.container);
  const selectedValue = selected?.stakaterEnv[name];
  if (selectedValue !== undefined) return selectedValue;
  return view.podSpec.containers.find((c) => c.stakaterEnv[name] !== undefined)?.stakaterEnv[name];
}

function lastReloadedFromHash(state: PersistedState, key: SourceKey): string | undefined {
  return state.lastReloadedFrom?.key === key ? state.lastReloadedFrom.hash : undefined;
}

const APPLIED_LOOKUPS: Readonly<Record<StateMode, AppliedLookup>> = {
  'env-vars': (context, source) =>
    context.state.templateHashes.get(source.key) ??
    (context.colliding.has(source.key) ? undefined : envVarValue(context.view, source)),
  annotations: (context, source) =>
    context.state.templateHashes.get(source.key) ?? lastReloadedFromHash(context.state, source.key),
  workload: (context, source) => context.state.workloadHashes.get(source.key),
};

/**
 * Whether any A(K) can be read from `view` at all: every lookup below reads a `STAKATER_*` env var
 * of a regular container, `source-hashes` (PT or W) or PT `last-reloaded-from`, and config
 * revisions pin A only through the W revision digest. False means every key's A is undefined, so
 * a caller that only asks whether the workload carries kreload's state need not plan it (at start,
 * thousands of workloads a pass plans anyway).
 */
export function mayHoldAppliedState(view: WorkloadView): boolean {
  return (
    view.templateAnnotations[SOURCE_HASHES] !== undefined ||
    view.templateAnnotations[LAST_RELOADED_FROM] !== undefined ||
    view.annotations[SOURCE_HASHES] !== undefined ||
    view.revisionDigest !== undefined ||
    view.podSpec.containers.some((container) => Object.keys(container.stakaterEnv).length > 0)
  );
}

export function appliedHash(
  mode: StateMode,
  context: AppliedContext,
  source: TrackedSource,
): string | undefined {
  return APPLIED_LOOKUPS[mode](context, source);
}
