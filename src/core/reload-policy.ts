/**
 * ReloadPolicy (docs/reload-policy.md, docs/adr/0034-reload-policy.md): the policy as kreload keeps
 * it, which workloads and sources it names, and the combination rules when several policies and a
 * workload's own annotations meet. Pure: the watch side projects and stores the policies, the
 * planner reads the binding of one workload.
 */
import { sourceKey } from './keys.ts';
import {
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  FLAP_COOL_DOWN,
  FLAP_MAX_CHANGES,
  FLAP_PERIOD,
  HALT_ON_FAILED_ROLLOUT,
  POD_ROLLOUT_STRATEGY,
  RESTART_WINDOW,
  ROLLOUT_PRIORITY,
  UNDO_FAILED_ROLLOUT,
} from './types.ts';
import type {
  AnnotationKeys,
  Labels,
  ReloadStrategy,
  SourceKey,
  SourceType,
  WorkloadKindName,
  WorkloadView,
} from './types.ts';
import { byCodeUnit } from './order.ts';

/**
 * `spec.configRevisions` (docs/config-revisions.md): the targets pin ConfigMaps, and with `secrets`
 * Secrets too, at each roll, as the `kreload.io/config-revisions` (`-secrets`) annotations would.
 */
export interface PolicyConfigRevisions {
  readonly configMaps: boolean;
  readonly secrets: boolean;
}

/**
 * `spec.strategy`: a reload strategy, `restart` (Argo Rollouts, §7.5), or `evict` (a roll by pod
 * eviction, §7.7).
 */
export type PolicyStrategy = ReloadStrategy | 'restart' | 'evict';

export interface SelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

/** A Kubernetes label selector; at least one term (the CRD rejects an empty one). */
export interface PolicySelector {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly matchExpressions: readonly SelectorRequirement[];
}

/** One entry of `spec.sources` or `spec.targets`: exactly one of `name` and `selector`. */
export type PolicyMember<K> =
  | { readonly kind: K; readonly name: string; readonly selector?: undefined }
  | { readonly kind: K; readonly name?: undefined; readonly selector: PolicySelector };

/** What kreload recorded in `status.targets[]` for one workload. */
export interface PolicyTargetStatus {
  readonly kind: string;
  readonly name: string;
  readonly lastReloadTime: string | undefined;
  /** The first hashes by kind and name; the rest are counted in `unlistedSourceHashes`. */
  readonly sourceHashes: readonly PolicySourceHash[];
  readonly unlistedSourceHashes?: number | undefined;
}

export interface PolicySourceHash {
  readonly kind: string;
  readonly name: string;
  readonly hash: string;
}

export interface PolicyCondition {
  readonly type: PolicyConditionType;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration: number | undefined;
}

export type PolicyConditionType = 'Ready' | 'SourcesFound' | 'TargetsFound' | 'Conflict';

/** The status as last read from the API server: the writer merges into it. */
export interface PolicyStatusView {
  readonly observedGeneration: number | undefined;
  readonly conditions: readonly PolicyCondition[];
  readonly targets: readonly PolicyTargetStatus[];
  readonly lastReloadTime: string | undefined;
  readonly foundSources: string | undefined;
  readonly foundTargets: string | undefined;
  /** Workloads the policy targets now; `targets[]` lists the most recently rolled of them. */
  readonly boundTargets?: number | undefined;
  /** Targets with a record that `targets[]` leaves out (it is capped). */
  readonly unlistedTargets?: number | undefined;
}

/** The settings a policy sets beside its members, each read and checked as its annotation is. */
export interface PolicySettingValues {
  /** `spec.rollout.maxConcurrent`: the most of this policy's targets in flight for one change. */
  readonly rolloutMaxConcurrent?: number | undefined;
  /** `spec.rollout.canary` as text, `3` or `25%`: this policy's targets' share of the canary wave. */
  readonly rolloutCanary?: string | undefined;
  /** `spec.rollout.haltOnFailure`, as `kreload.io/halt-on-failed-rollout`. */
  readonly rolloutHaltOnFailure?: boolean | undefined;
  /** `spec.rollout.undoOnFailure`, as `kreload.io/undo-failed-rollout`. */
  readonly rolloutUndoOnFailure?: boolean | undefined;
  /** `spec.windows` as the JSON the restart-window annotation takes (validated). */
  readonly windows?: string | undefined;
  /** `spec.breaker.maxChanges`, as `kreload.io/flap-max-changes`. */
  readonly breakerMaxChanges?: number | undefined;
  /** `spec.breaker.period` (Go duration), as `kreload.io/flap-period`. */
  readonly breakerPeriod?: string | undefined;
  /** `spec.breaker.coolDown` (Go duration), as `kreload.io/flap-cool-down`. */
  readonly breakerCoolDown?: string | undefined;
}

export interface ReloadPolicyView extends PolicySettingValues {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly creationTimestamp: string | undefined;
  readonly sources: readonly PolicyMember<SourceType>[];
  readonly targets: readonly PolicyMember<WorkloadKindName>[];
  readonly strategy: PolicyStrategy | undefined;
  /** `spec.syncDelay` in ms; undefined: kreload's `--sync-delay`. */
  readonly syncDelayMs: number | undefined;
  /** `spec.pausePeriod` as written (a Go duration), the value the pause-period annotation takes. */
  readonly pausePeriod: string | undefined;
  /** `spec.configRevisions`; undefined: the workload's own annotations decide. */
  readonly configRevisions?: PolicyConfigRevisions | undefined;
  /** `spec.rollout.priority`, as `kreload.io/rollout-priority`; lower rolls first. */
  readonly rolloutPriority?: number | undefined;
  readonly suspend: boolean;
  readonly status: PolicyStatusView;
  /** Spec entries kreload could not use (a CRD older than this kreload, or none installed). */
  readonly problems: readonly string[];
}

export interface PolicyRef {
  readonly namespace: string;
  readonly name: string;
}

/** Does the label set satisfy every term of the selector (apimachinery semantics). */
export function selectorMatches(selector: PolicySelector, labels: Labels | undefined): boolean {
  if (labels === undefined) return false;
  const has = (key: string): boolean => Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels)) {
    if (!has(key) || labels[key] !== value) return false;
  }
  return selector.matchExpressions.every((term) => {
    switch (term.operator) {
      case 'In':
        return has(term.key) && term.values.includes(labels[term.key] ?? '');
      case 'NotIn':
        return !has(term.key) || !term.values.includes(labels[term.key] ?? '');
      case 'Exists':
        return has(term.key);
      case 'DoesNotExist':
        return !has(term.key);
    }
  });
}

/** An object a member may name: its kind, name and (for selectors) labels. */
export interface NamedObject<K> {
  readonly kind: K;
  readonly name: string;
  readonly labels: Labels | undefined;
}

export function memberMatches<K>(member: PolicyMember<K>, object: NamedObject<K>): boolean {
  if (member.kind !== object.kind) return false;
  return member.name === undefined
    ? selectorMatches(member.selector, object.labels)
    : member.name === object.name;
}

/** The policy names this workload as a target (suspended policies included). */
export function targetsWorkload(
  policy: ReloadPolicyView,
  workload: NamedObject<WorkloadKindName>,
): boolean {
  return policy.targets.some((member) => memberMatches(member, workload));
}

/** The source objects a policy can see, by type: their names and labels. */
export type SourceCatalog = (type: SourceType) => readonly NamedObject<SourceType>[];

/** Keys of the sources the policy binds: named ones (present or not) and the selected ones. */
export function boundSourceKeys(policy: ReloadPolicyView, catalog: SourceCatalog): SourceKey[] {
  const keys = new Set<SourceKey>();
  for (const member of policy.sources) {
    if (member.name !== undefined) {
      keys.add(sourceKey(member.kind, member.name));
      continue;
    }
    for (const object of catalog(member.kind)) {
      if (memberMatches(member, object)) keys.add(sourceKey(object.kind, object.name));
    }
  }
  return [...keys];
}

/**
 * Oldest first by creationTimestamp (RFC 3339 in UTC sorts as text), then by name. Compared by code
 * unit, not `localeCompare`, whose first call pages in ICU's collation data (3 MiB of RSS).
 */
export function comparePolicyAge(a: ReloadPolicyView, b: ReloadPolicyView): number {
  return (
    byCodeUnit(a.creationTimestamp ?? '', b.creationTimestamp ?? '') || byCodeUnit(a.name, b.name)
  );
}

/** Where a setting of one workload came from when policies and annotations meet. */
export type SettingSource =
  | { readonly from: 'annotation' }
  | { readonly from: 'policy'; readonly policy: PolicyRef }
  | { readonly from: 'default' };

/** One workload's view of every active (not suspended) policy that targets it. */
export interface PolicyBinding {
  /** Union of the sources of every active binding policy. */
  readonly sources: ReadonlySet<SourceKey>;
  /** Which active policies bind each of `sources`, oldest first (explain names them). */
  readonly policiesOf: ReadonlyMap<SourceKey, readonly PolicyRef[]>;
  /** The binding policies, oldest first. */
  readonly policies: readonly PolicyRef[];
  /** The strategy chosen by the combination rule, undefined when no policy sets one. */
  readonly strategy: PolicyStrategy | undefined;
  readonly strategyFrom: SettingSource;
  readonly syncDelayMs: number | undefined;
  readonly pausePeriod: string | undefined;
  /** The configRevisions chosen by the combination rule, undefined when no policy sets it. */
  readonly configRevisions: PolicyConfigRevisions | undefined;
  /** The rollout priority chosen by the combination rule, undefined when no policy sets one. */
  readonly rolloutPriority: number | undefined;
  /**
   * The per-policy settings chosen by the combination rule; each undefined when no policy sets it
   * (or, for those with an annotation, the workload's own annotation wins).
   */
  readonly policySettings: PolicySettings;
  /** Binding policies whose setting lost (another policy or the workload's annotation won). */
  readonly conflicts: readonly PolicyConflict[];
}

/** A setting a policy gives its targets as a group: which policy, so the group is its targets. */
export interface GroupSetting<T> {
  readonly value: T;
  readonly policy: PolicyRef;
}

/** The settings a policy gives its targets as a group (a budget and a canary share among them). */
type GroupSettingField = 'rolloutMaxConcurrent' | 'rolloutCanary';

export type PolicySettingField = keyof PolicySettingValues;

/** The settings that bind a workload: a group setting says which policy's group it is. */
export type PolicySettings = {
  readonly [Field in PolicySettingField]?: Field extends GroupSettingField
    ? GroupSetting<NonNullable<PolicySettingValues[Field]>> | undefined
    : PolicySettingValues[Field];
};

/** The settings one policy may set, each combined by the same rule (ADR 0034). */
export type PolicyField =
  | 'strategy'
  | 'syncDelay'
  | 'pausePeriod'
  | 'configRevisions'
  | 'rolloutPriority'
  | PolicySettingField;

export interface PolicyConflict {
  readonly policy: PolicyRef;
  readonly field: PolicyField;
  readonly message: string;
}

export const NO_BINDING: PolicyBinding = {
  sources: new Set(),
  policiesOf: new Map(),
  policies: [],
  strategy: undefined,
  strategyFrom: { from: 'default' },
  syncDelayMs: undefined,
  pausePeriod: undefined,
  rolloutPriority: undefined,
  configRevisions: undefined,
  policySettings: {},
  conflicts: [],
};

/** The sources a set of active policies binds, and which of them binds each. */
export interface BoundSources {
  readonly sources: ReadonlySet<SourceKey>;
  readonly policiesOf: ReadonlyMap<SourceKey, readonly PolicyRef[]>;
}

/** The union of the sources of `active` (oldest first), given each policy's own keys. */
export function unionOfBoundSources(
  active: readonly ReloadPolicyView[],
  keysOf: (policy: ReloadPolicyView) => Iterable<SourceKey>,
): BoundSources {
  const policiesOf = new Map<SourceKey, PolicyRef[]>();
  for (const policy of active) {
    const ref = refOf(policy);
    for (const key of keysOf(policy)) {
      const refs = policiesOf.get(key);
      if (refs === undefined) policiesOf.set(key, [ref]);
      else refs.push(ref);
    }
  }
  return { sources: new Set(policiesOf.keys()), policiesOf };
}

/** The spec of two views of one policy is the same: only its status (or nothing) changed. */
export function sameSpec(a: ReloadPolicyView, b: ReloadPolicyView): boolean {
  return (
    JSON.stringify({ ...a, status: undefined }) === JSON.stringify({ ...b, status: undefined })
  );
}

export interface BindingInput {
  readonly workload: NamedObject<WorkloadKindName>;
  /** Every policy of the workload's namespace. */
  readonly policies: readonly ReloadPolicyView[];
  readonly catalog: SourceCatalog;
  /**
   * The union of the sources of the active binding policies, when the caller keeps it (the
   * controller's policy index shares one per set of policies); otherwise read from `catalog`.
   */
  readonly boundSources?: ((active: readonly ReloadPolicyView[]) => BoundSources) | undefined;
  /** The workload's own annotations set these (they win over every policy). */
  readonly annotated: {
    readonly strategy: boolean;
    readonly pausePeriod: boolean;
    /** `kreload.io/config-revisions` or `kreload.io/config-revisions-secrets` is set. */
    readonly configRevisions?: boolean | undefined;
    /** `kreload.io/rollout-priority` is set. */
    readonly rolloutPriority?: boolean | undefined;
    /** The other settings whose annotation the workload carries (see ANNOTATION_OF). */
    readonly others?: ReadonlySet<PolicyField> | undefined;
  };
}

type Field = PolicyField;

function refOf(policy: ReloadPolicyView): PolicyRef {
  return { namespace: policy.namespace, name: policy.name };
}

const text = (value: number | boolean | string | undefined): string | undefined =>
  value === undefined ? undefined : String(value);

/** Each setting as the text compared between policies and named in a conflict message. */
const VALUE_OF: Readonly<Record<Field, (policy: ReloadPolicyView) => string | undefined>> = {
  strategy: (policy) => policy.strategy,
  syncDelay: (policy) =>
    policy.syncDelayMs === undefined ? undefined : `${String(policy.syncDelayMs)}ms`,
  pausePeriod: (policy) => policy.pausePeriod,
  configRevisions: (policy) =>
    policy.configRevisions === undefined
      ? undefined
      : describeConfigRevisions(policy.configRevisions),
  rolloutPriority: (policy) => text(policy.rolloutPriority),
  rolloutMaxConcurrent: (policy) => text(policy.rolloutMaxConcurrent),
  rolloutCanary: (policy) => policy.rolloutCanary,
  rolloutHaltOnFailure: (policy) => text(policy.rolloutHaltOnFailure),
  rolloutUndoOnFailure: (policy) => text(policy.rolloutUndoOnFailure),
  windows: (policy) => policy.windows,
  breakerMaxChanges: (policy) => text(policy.breakerMaxChanges),
  breakerPeriod: (policy) => policy.breakerPeriod,
  breakerCoolDown: (policy) => policy.breakerCoolDown,
};

/**
 * The workload annotation a policy setting stands for, when there is one: the workload carrying
 * it wins. Canary and maxConcurrent size a group of targets, so a workload alone has neither.
 */
export const ANNOTATION_OF: Readonly<Partial<Record<Field, string>>> = {
  rolloutHaltOnFailure: HALT_ON_FAILED_ROLLOUT,
  rolloutUndoOnFailure: UNDO_FAILED_ROLLOUT,
  windows: RESTART_WINDOW,
  breakerMaxChanges: FLAP_MAX_CHANGES,
  breakerPeriod: FLAP_PERIOD,
  breakerCoolDown: FLAP_COOL_DOWN,
};

function valueOf(policy: ReloadPolicyView, field: Field): string | undefined {
  return VALUE_OF[field](policy);
}

/** `configMaps+secrets`, `configMaps`, `off`: the value named in a conflict message. */
export function describeConfigRevisions(value: PolicyConfigRevisions): string {
  if (!value.configMaps) return 'off';
  return value.secrets ? 'configMaps+secrets' : 'configMaps';
}

/**
 * The combination rule of one setting (ADR 0034): the workload's annotation wins, then the oldest
 * policy that sets it; every other policy that sets a different value is in conflict.
 */
function combine(
  active: readonly ReloadPolicyView[],
  field: Field,
  annotated: boolean,
  workload: string,
): { winner: ReloadPolicyView | undefined; conflicts: PolicyConflict[] } {
  const setting = active.filter((policy) => valueOf(policy, field) !== undefined);
  const winner = annotated ? undefined : setting[0];
  const conflicts: PolicyConflict[] = [];
  for (const policy of setting) {
    if (policy === winner) continue;
    const value = valueOf(policy, field);
    if (winner !== undefined && valueOf(winner, field) === value) continue;
    const by = winner === undefined ? "the workload's annotation" : `policy ${winner.name}`;
    conflicts.push({
      policy: refOf(policy),
      field,
      message: `${field} ${String(value)} is not applied to ${workload}: ${by} sets it`,
    });
  }
  return { winner, conflicts };
}

function describeWorkload(workload: NamedObject<WorkloadKindName>): string {
  return `${workload.kind} ${workload.name}`;
}

/** The settings beside strategy, delays, revisions and priority, by the same rule. */
function combineOthers(
  active: readonly ReloadPolicyView[],
  annotated: ReadonlySet<Field>,
  who: string,
): { settings: PolicySettings; conflicts: PolicyConflict[] } {
  const conflicts: PolicyConflict[] = [];
  const winnerOf = (field: Field): ReloadPolicyView | undefined => {
    const result = combine(active, field, annotated.has(field), who);
    conflicts.push(...result.conflicts);
    return result.winner;
  };
  const grouped = <T>(
    winner: ReloadPolicyView | undefined,
    value: (policy: ReloadPolicyView) => T | undefined,
  ): GroupSetting<T> | undefined => {
    const chosen = winner && value(winner);
    return winner === undefined || chosen === undefined
      ? undefined
      : { value: chosen, policy: refOf(winner) };
  };
  const settings: PolicySettings = {
    rolloutMaxConcurrent: grouped(
      winnerOf('rolloutMaxConcurrent'),
      (policy) => policy.rolloutMaxConcurrent,
    ),
    rolloutCanary: grouped(winnerOf('rolloutCanary'), (policy) => policy.rolloutCanary),
    rolloutHaltOnFailure: winnerOf('rolloutHaltOnFailure')?.rolloutHaltOnFailure,
    rolloutUndoOnFailure: winnerOf('rolloutUndoOnFailure')?.rolloutUndoOnFailure,
    windows: winnerOf('windows')?.windows,
    breakerMaxChanges: winnerOf('breakerMaxChanges')?.breakerMaxChanges,
    breakerPeriod: winnerOf('breakerPeriod')?.breakerPeriod,
    breakerCoolDown: winnerOf('breakerCoolDown')?.breakerCoolDown,
  };
  return { settings, conflicts };
}

/** The binding of one workload: which sources, and which settings win (ADR 0034). */
export function bindingOf(input: BindingInput): PolicyBinding {
  const binding = input.policies
    .filter((policy) => targetsWorkload(policy, input.workload))
    .sort(comparePolicyAge);
  const active = binding.filter((policy) => !policy.suspend);
  if (active.length === 0) return NO_BINDING;
  const { sources, policiesOf } =
    input.boundSources?.(active) ??
    unionOfBoundSources(active, (policy) => boundSourceKeys(policy, input.catalog));
  const who = describeWorkload(input.workload);
  const strategy = combine(active, 'strategy', input.annotated.strategy, who);
  const syncDelay = combine(active, 'syncDelay', false, who);
  const pause = combine(active, 'pausePeriod', input.annotated.pausePeriod, who);
  const revisions = combine(
    active,
    'configRevisions',
    input.annotated.configRevisions === true,
    who,
  );
  const priority = combine(
    active,
    'rolloutPriority',
    input.annotated.rolloutPriority === true,
    who,
  );
  const others = combineOthers(active, input.annotated.others ?? new Set<Field>(), who);
  const conflicts = [
    ...strategy.conflicts,
    ...syncDelay.conflicts,
    ...pause.conflicts,
    ...revisions.conflicts,
    ...priority.conflicts,
    ...others.conflicts,
  ];
  return {
    sources,
    policiesOf,
    policies: active.map(refOf),
    strategy: strategy.winner?.strategy,
    strategyFrom: input.annotated.strategy
      ? { from: 'annotation' }
      : strategy.winner
        ? { from: 'policy', policy: refOf(strategy.winner) }
        : { from: 'default' },
    syncDelayMs: syncDelay.winner?.syncDelayMs,
    pausePeriod: pause.winner?.pausePeriod,
    configRevisions: revisions.winner?.configRevisions,
    rolloutPriority: priority.winner?.rolloutPriority,
    policySettings: others.settings,
    conflicts,
  };
}

/** The policy settings a workload's own annotations override (they win over every policy). */
export function annotatedSettings(
  view: WorkloadView,
  keys: Pick<AnnotationKeys, 'rolloutStrategy' | 'pausePeriod'>,
): BindingInput['annotated'] {
  return {
    strategy:
      Object.hasOwn(view.annotations, keys.rolloutStrategy) ||
      Object.hasOwn(view.annotations, POD_ROLLOUT_STRATEGY),
    pausePeriod: Object.hasOwn(view.annotations, keys.pausePeriod),
    configRevisions:
      Object.hasOwn(view.annotations, CONFIG_REVISIONS) ||
      Object.hasOwn(view.annotations, CONFIG_REVISIONS_SECRETS),
    rolloutPriority: Object.hasOwn(view.annotations, ROLLOUT_PRIORITY),
    others: new Set(
      Object.entries(ANNOTATION_OF).flatMap(([field, key]) =>
        Object.hasOwn(view.annotations, key) ? [field as Field] : [],
      ),
    ),
  };
}

/** The binding of a projected workload among its namespace's policies (controller and CLI). */
export function bindingOfWorkload(
  view: WorkloadView,
  policies: readonly ReloadPolicyView[],
  catalog: SourceCatalog,
  keys: Pick<AnnotationKeys, 'rolloutStrategy' | 'pausePeriod'>,
): PolicyBinding {
  if (policies.length === 0) return NO_BINDING;
  return bindingOf({
    workload: { kind: view.ref.kind, name: view.ref.name, labels: view.labels },
    policies,
    catalog,
    annotated: annotatedSettings(view, keys),
  });
}

/**
 * The workload as the planner sees it under its binding: a policy's `strategy: restart` or `evict`,
 * `pausePeriod`, `configRevisions`, `rollout.priority` and the settings of ANNOTATION_OF act as
 * the annotations they stand for, which the workload
 * itself does not carry (when it does, the annotation won in `bindingOf` and the binding leaves
 * them unset). `--enable-config-revisions` is still required, as for the annotation.
 */
export function withPolicySettings(
  view: WorkloadView,
  binding: PolicyBinding,
  keys: Pick<AnnotationKeys, 'rolloutStrategy' | 'pausePeriod'>,
): WorkloadView {
  const added: Record<string, string> = {};
  if (binding.strategy === 'restart') added[keys.rolloutStrategy] = 'restart';
  if (binding.strategy === 'evict') added[POD_ROLLOUT_STRATEGY] = 'evict';
  if (binding.pausePeriod !== undefined) added[keys.pausePeriod] = binding.pausePeriod;
  if (binding.configRevisions !== undefined) {
    added[CONFIG_REVISIONS] = String(binding.configRevisions.configMaps);
    added[CONFIG_REVISIONS_SECRETS] = String(binding.configRevisions.secrets);
  }
  if (binding.rolloutPriority !== undefined) {
    added[ROLLOUT_PRIORITY] = String(binding.rolloutPriority);
  }
  const settings = binding.policySettings;
  const asAnnotations: Readonly<Partial<Record<Field, number | boolean | string | undefined>>> = {
    rolloutHaltOnFailure: settings.rolloutHaltOnFailure,
    rolloutUndoOnFailure: settings.rolloutUndoOnFailure,
    windows: settings.windows,
    breakerMaxChanges: settings.breakerMaxChanges,
    breakerPeriod: settings.breakerPeriod,
    breakerCoolDown: settings.breakerCoolDown,
  };
  for (const [field, key] of Object.entries(ANNOTATION_OF)) {
    const value = asAnnotations[field as Field];
    if (value !== undefined) added[key] = String(value);
  }
  if (Object.keys(added).length === 0) return view;
  return { ...view, annotations: { ...view.annotations, ...added } };
}

/** The reload strategy under the binding: the policy's, or kreload's `--reload-strategy`. */
export function strategyUnder(binding: PolicyBinding, fallback: ReloadStrategy): ReloadStrategy {
  return binding.strategy === 'env-vars' || binding.strategy === 'annotations'
    ? binding.strategy
    : fallback;
}
