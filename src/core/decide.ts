/** The decision algorithm (§3.5): does workload W reload for source N of type T, and why. */
import {
  parseBool,
  parseExact,
  parseExcludeList,
  parseReloadList,
  type ParsedReloadList,
  type ReloadListCache,
  reloadListMatches,
  splitList,
} from './annotation-values.ts';
import { ownValue } from './records.ts';
import { selectContainer } from './references.ts';
import type {
  AnnotationKeys,
  AnnotationProblem,
  Annotations,
  DecisionResult,
  SourceType,
  WorkloadView,
} from './types.ts';

export interface DecideInput {
  readonly workload: WorkloadView;
  readonly type: SourceType;
  readonly name: string;
  /** S: the source's `ignore`/`match` values; `{}` when the source (or, for CSI, its SPC) is not visible. */
  readonly sourceAnnotations: Annotations;
  readonly keys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  /** Optional memo of parsed reload lists, owned by the caller. */
  readonly reloadLists?: ReloadListCache | undefined;
  /** An active ReloadPolicy targeting W binds this source (docs/reload-policy.md). */
  readonly boundByPolicy?: boolean | undefined;
}

/**
 * The step of §3.5 that settled the result, for `kreload explain`: the controller's own answer to
 * "why", so no second copy of the rules is needed to explain them.
 */
export type DecisionRule =
  | 'source-ignored'
  | 'excluded'
  | 'reload-list'
  | 'policy'
  | 'search-match'
  | 'typed-auto-off'
  | 'typed-auto'
  | 'auto'
  | 'auto-reload-all'
  | 'auto-off'
  | 'search-without-match'
  | 'not-annotated';

export interface Decision {
  readonly result: DecisionResult;
  readonly rule: DecisionRule;
  /** Whose annotations step 3 read: W, or PT because W has none of the four keys. */
  readonly annotationsFrom: 'workload' | 'template';
  /** Bad values met on W, PT or S; the caller reports each distinct one once (§13.3). */
  readonly problems: readonly AnnotationProblem[];
}

interface TypedKeys {
  readonly reload: string;
  readonly auto: string;
  readonly exclude: string;
}

type TypedKeyNames = Readonly<Record<keyof TypedKeys, keyof AnnotationKeys>>;

const TYPED_KEY_NAMES: Readonly<Record<SourceType, TypedKeyNames>> = {
  CONFIGMAP: { reload: 'configmapReload', auto: 'configmapAuto', exclude: 'configmapExclude' },
  SECRET: { reload: 'secretReload', auto: 'secretAuto', exclude: 'secretExclude' },
  SECRETPROVIDERCLASS: {
    reload: 'secretProviderClassReload',
    auto: 'secretProviderClassAuto',
    exclude: 'secretProviderClassExclude',
  },
};

/** Plural used in problem consequences. */
const TYPE_PLURAL: Readonly<Record<SourceType, string>> = {
  CONFIGMAP: 'ConfigMaps',
  SECRET: 'Secrets',
  SECRETPROVIDERCLASS: 'SecretProviderClasses',
};

export function typedKeys(keys: AnnotationKeys, type: SourceType): TypedKeys {
  const names = TYPED_KEY_NAMES[type];
  return { reload: keys[names.reload], auto: keys[names.auto], exclude: keys[names.exclude] };
}

/** The four keys of §3.5 step 3, read from W, or from PT when none of them is present on W. */
interface ChosenSet {
  readonly from: Decision['annotationsFrom'];
  readonly reloadList: string | undefined;
  readonly search: string | undefined;
  readonly auto: string | undefined;
  readonly typedAuto: string | undefined;
}

function chooseAnnotationSet(input: DecideInput): ChosenSet {
  const { workload, keys } = input;
  const typed = typedKeys(keys, input.type);
  const fourKeys = [typed.reload, keys.search, keys.auto, typed.auto];
  const onWorkload = fourKeys.some((key) => Object.hasOwn(workload.annotations, key));
  const set = onWorkload ? workload.annotations : workload.templateAnnotations;
  return {
    from: onWorkload ? 'workload' : 'template',
    reloadList: valueOf(set, typed.reload),
    search: valueOf(set, keys.search),
    auto: valueOf(set, keys.auto),
    typedAuto: valueOf(set, typed.auto),
  };
}

function valueOf(annotations: Annotations, key: string): string | undefined {
  return ownValue(annotations, key);
}

function reloadListOf(input: DecideInput, value: string): ParsedReloadList {
  return input.reloadLists?.get(value) ?? parseReloadList(value);
}

function isExcluded(input: DecideInput): boolean {
  const value = valueOf(input.workload.annotations, typedKeys(input.keys, input.type).exclude);
  return value !== undefined && parseExcludeList(value).includes(input.name);
}

function isExactlyTrue(value: string | undefined): boolean {
  return value === 'true';
}

function isEmptyOrAbsent(value: string | undefined): boolean {
  return value === undefined || value === '';
}

type Settled = Pick<Decision, 'result' | 'rule'>;

/** Step 7, with D5: a non-empty typed value that is not true switches the type off. */
function decideAuto(input: DecideInput, set: ChosenSet): Settled {
  const typed = set.typedAuto === undefined ? undefined : parseBool(set.typedAuto);
  if (!isEmptyOrAbsent(set.typedAuto) && typed !== true) {
    return { result: 'NO', rule: 'typed-auto-off' };
  }
  if (typed === true) return { result: 'AUTO', rule: 'typed-auto' };
  if (set.auto !== undefined && parseBool(set.auto) === true)
    return { result: 'AUTO', rule: 'auto' };
  if (isEmptyOrAbsent(set.auto) && isEmptyOrAbsent(set.typedAuto) && input.autoReloadAll) {
    return { result: 'AUTO', rule: 'auto-reload-all' };
  }
  if (!isEmptyOrAbsent(set.auto)) return { result: 'NO', rule: 'auto-off' };
  if (isExactlyTrue(set.search)) return { result: 'NO', rule: 'search-without-match' };
  return { result: 'NO', rule: 'not-annotated' };
}

function decideResult(input: DecideInput, set: ChosenSet): Settled {
  if (isExactlyTrue(valueOf(input.sourceAnnotations, input.keys.ignore))) {
    return { result: 'NO', rule: 'source-ignored' };
  }
  if (isExcluded(input)) return { result: 'NO', rule: 'excluded' };
  if (
    set.reloadList !== undefined &&
    reloadListMatches(reloadListOf(input, set.reloadList), input.name)
  ) {
    return { result: 'LIST', rule: 'reload-list' };
  }
  // A policy binding is an explicit list entry kept outside W: tracked even when unreferenced,
  // after W's own exclusions and reload list (ADR 0034).
  if (input.boundByPolicy === true) return { result: 'LIST', rule: 'policy' };
  if (
    isExactlyTrue(set.search) &&
    isExactlyTrue(valueOf(input.sourceAnnotations, input.keys.match))
  ) {
    return { result: 'AUTO', rule: 'search-match' };
  }
  return decideAuto(input, set);
}

function quoted(value: string): string {
  return JSON.stringify(value);
}

function exactProblem(
  on: AnnotationProblem['on'],
  key: string,
  value: string | undefined,
): AnnotationProblem[] {
  if (value === undefined || parseExact(value) !== 'invalid') return [];
  return [
    {
      on,
      key,
      value,
      problem: `invalid value ${quoted(value)} (only "true" enables it)`,
      consequence: 'counts as not set',
    },
  ];
}

function boolProblem(
  key: string,
  value: string | undefined,
  consequence: string,
): AnnotationProblem[] {
  if (value === undefined || value === '' || parseBool(value) !== undefined) return [];
  return [{ on: 'workload', key, value, problem: `invalid boolean ${quoted(value)}`, consequence }];
}

function reloadListProblems(
  input: DecideInput,
  key: string,
  value: string | undefined,
): AnnotationProblem[] {
  if (value === undefined) return [];
  const parsed = reloadListOf(input, value);
  const problems: AnnotationProblem[] = parsed.invalid.map(({ element, error }) => ({
    on: 'workload',
    key,
    value,
    problem: `invalid pattern ${quoted(element)} (${error})`,
    consequence: 'ignored, other entries still apply',
  }));
  if (parsed.overLimit !== undefined)
    problems.push({ on: 'workload', key, value, ...parsed.overLimit });
  return problems;
}

/**
 * Problems with every value the decision reads from the chosen set and from S, whatever step decides:
 * a bad value must be reported even when another rule happens to settle this particular source.
 */
function problemsOf(input: DecideInput, set: ChosenSet): AnnotationProblem[] {
  const { keys, type } = input;
  const ignore = valueOf(input.sourceAnnotations, keys.ignore);
  const match = valueOf(input.sourceAnnotations, keys.match);
  // Decided for every tracked source at every reconcile: nothing to check, nothing allocated.
  if (
    ignore === undefined &&
    match === undefined &&
    set.reloadList === undefined &&
    set.search === undefined &&
    set.auto === undefined &&
    set.typedAuto === undefined
  ) {
    return [];
  }
  const typed = typedKeys(keys, type);
  const autoConsequence = input.autoReloadAll
    ? 'counts as false, and --auto-reload-all does not apply to this workload'
    : 'counts as false';
  const source = { type, name: input.name };
  const onSource = (problem: AnnotationProblem): AnnotationProblem => ({ ...problem, source });
  return [
    ...exactProblem('source', keys.ignore, ignore).map(onSource),
    ...exactProblem('source', keys.match, match).map(onSource),
    ...reloadListProblems(input, typed.reload, set.reloadList),
    ...exactProblem('workload', keys.search, set.search),
    ...boolProblem(keys.auto, set.auto, autoConsequence),
    ...boolProblem(
      typed.auto,
      set.typedAuto,
      `counts as false, so ${TYPE_PLURAL[type]} are not reloaded automatically`,
    ),
  ];
}

/** Steps 2–8 of §3.5 for one workload and one source. */
export function decide(input: DecideInput): Decision {
  const set = chooseAnnotationSet(input);
  return {
    ...decideResult(input, set),
    annotationsFrom: set.from,
    problems: problemsOf(input, set),
  };
}

export interface Tracking {
  readonly tracked: boolean;
  /** The container that carries the env var / is named in `containerRefs`; undefined = none. */
  readonly container: string | undefined;
}

/**
 * The Tracked rule of §3.5: LIST is always tracked (an unreferenced source goes to the first regular
 * container); AUTO only when §3.6 finds a container.
 */
export function trackedContainer(input: DecideInput, decision: Decision): Tracking {
  const pod = input.workload.podSpec;
  switch (decision.result) {
    case 'NO':
      return { tracked: false, container: undefined };
    case 'LIST':
      return { tracked: true, container: selectContainer(pod, input.type, input.name, true) };
    case 'AUTO': {
      const container = selectContainer(pod, input.type, input.name, false);
      return { tracked: container !== undefined, container };
    }
  }
}

/**
 * Whether W or PT carries a non-empty reload list for the type: such a workload may match sources it does
 * not reference, so the index must offer it every source of that type (§9.2 (b)).
 */
export function hasReloadList(
  workload: WorkloadView,
  type: SourceType,
  keys: AnnotationKeys,
): boolean {
  const key = typedKeys(keys, type).reload;
  return [workload.annotations, workload.templateAnnotations].some((annotations) => {
    const value = valueOf(annotations, key);
    return value !== undefined && splitList(value).length > 0;
  });
}
