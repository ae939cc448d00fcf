/** Which sources a workload tracks (§3.5 Tracked) and their desired hash D (§5.1). */
import type { ReloadListCache } from '../../core/annotation-values.ts';
import { decide, trackedContainer } from '../../core/decide.ts';
import { envVarName, type EnvVarNames } from '../../core/env-name.ts';
import { parseSourceKey, sourceKey } from '../../core/keys.ts';
import { referencedSources } from '../../core/references.ts';
import { compareUtf8 } from '../../core/state.ts';
import type { DeleteMark, Mark } from '../../core/marks.ts';
import type {
  AnnotationKeys,
  AnnotationProblem,
  SourceKey,
  SourceType,
  WorkloadView,
} from '../../core/types.ts';
import { DELETE_MARKER } from '../../core/types.ts';
import type { SourceFacts, TrackedSource } from './model.ts';
import { SOURCE_TYPES } from '../../core/source-types.ts';

export interface TrackingOptions {
  readonly keys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  readonly reloadOnDelete: boolean;
  /** The kind can roll for a deletion (not Job or CronJob, §5.1 D11). */
  readonly rollsOnDelete: boolean;
  readonly reloadLists?: ReloadListCache | undefined;
  readonly envVarNames?: EnvVarNames | undefined;
}

export interface TrackingInput {
  readonly view: WorkloadView;
  readonly options: TrackingOptions;
  readonly keys: readonly SourceKey[];
  readonly facts: (key: SourceKey) => SourceFacts;
  readonly marks: readonly Mark[];
  /** Sources an active ReloadPolicy binds to the workload. */
  readonly policySources?: ReadonlySet<SourceKey> | undefined;
}

export interface TrackingResult {
  readonly tracked: readonly TrackedSource[];
  readonly problems: readonly AnnotationProblem[];
}

/**
 * Every key the workload might track, sorted: its references, the reload-list candidates, keys of its
 * persisted state (so pruning sees them) and of its policy bindings, and keys of its marks (deleted
 * sources).
 */
export function keysToEvaluate(
  view: WorkloadView,
  candidates: Readonly<Partial<Record<SourceType, readonly string[]>>>,
  stateKeys: Iterable<SourceKey>,
  marks: readonly Mark[],
): SourceKey[] {
  const keys = new Set<SourceKey>(referencedSources(view.podSpec));
  for (const type of SOURCE_TYPES) {
    for (const name of candidates[type] ?? []) keys.add(sourceKey(type, name));
  }
  for (const key of stateKeys) keys.add(key);
  for (const mark of marks) keys.add(mark.sourceKey);
  return [...keys].sort(compareKeys);
}

export function compareKeys(a: string, b: string): number {
  return compareUtf8(a, b);
}

/** D(K) of §5.1. */
function desiredHash(
  facts: SourceFacts,
  hasDeleteMark: boolean,
  options: TrackingOptions,
): string | undefined {
  switch (facts.status.state) {
    case 'present':
      return facts.status.hash;
    case 'absent':
      return hasDeleteMark && options.reloadOnDelete && options.rollsOnDelete
        ? DELETE_MARKER
        : undefined;
    case 'unknown':
      return undefined;
  }
}

interface Evaluation {
  readonly tracked: TrackedSource | undefined;
  readonly problems: readonly AnnotationProblem[];
}

function evaluateKey(input: TrackingInput, key: SourceKey): Evaluation {
  const parsed = parseSourceKey(key);
  if (!parsed) return { tracked: undefined, problems: [] };
  const facts = input.facts(key);
  // A delete mark counts only while the source is absent; it then supplies S (§5.1).
  const deleteMark =
    facts.status.state === 'absent'
      ? input.marks.find(
          (mark): mark is DeleteMark => mark.kind === 'delete' && mark.sourceKey === key,
        )
      : undefined;
  const sourceAnnotations =
    facts.status.state === 'present'
      ? facts.status.annotations
      : (deleteMark?.sourceAnnotations ?? {});
  const decideInput = {
    workload: input.view,
    type: parsed.type,
    name: parsed.name,
    sourceAnnotations,
    keys: input.options.keys,
    autoReloadAll: input.options.autoReloadAll,
    reloadLists: input.options.reloadLists,
    boundByPolicy: input.policySources?.has(key) === true,
  };
  const decision = decide(decideInput);
  const tracking = trackedContainer(decideInput, decision);
  if (!tracking.tracked) return { tracked: undefined, problems: decision.problems };
  return {
    problems: decision.problems,
    tracked: {
      key,
      type: parsed.type,
      name: parsed.name,
      decision: decision.result,
      container: tracking.container,
      desired: desiredHash(facts, deleteMark !== undefined, input.options),
      facts,
      envVar:
        input.options.envVarNames?.of(key, parsed.type, parsed.name) ??
        envVarName(parsed.type, parsed.name),
    },
  };
}

function problemId(problem: AnnotationProblem): string {
  return JSON.stringify([problem.on, problem.key, problem.value, problem.problem]);
}

export function uniqueProblems(problems: Iterable<AnnotationProblem>): AnnotationProblem[] {
  const byId = new Map<string, AnnotationProblem>();
  for (const problem of problems) byId.set(problemId(problem), problem);
  return [...byId.values()];
}

export function evaluateTracking(input: TrackingInput): TrackingResult {
  const tracked: TrackedSource[] = [];
  const problems: AnnotationProblem[] = [];
  for (const key of input.keys) {
    const evaluation = evaluateKey(input, key);
    if (evaluation.tracked) tracked.push(evaluation.tracked);
    problems.push(...evaluation.problems);
  }
  return { tracked, problems: uniqueProblems(problems) };
}
