/**
 * The pure heart of `kreload explain`: the objects explain read → the controller's own decision
 * (core/decide.ts) and planner (reconcile/plan/plan.ts) → an explanation. Nothing here restates a
 * rule: scope gates come from the watch plan's functions, decisions and R1–R9 from the controller.
 */
import type { FlapStatus } from '../core/flap-breaker.ts';
import { parseRestartWindow } from '../core/restart-window.ts';
import { PENDING_ROLL, RESTART_WINDOW } from '../core/types.ts';
import { holdsOf } from '../rollout/holds.ts';
import { parseReloadList } from '../core/annotation-values.ts';
import { decide, hasReloadList, trackedContainer, typedKeys } from '../core/decide.ts';
import type { DecideInput } from '../core/decide.ts';
import { parseSourceKey, sourceKey } from '../core/keys.ts';
import { referencedSources } from '../core/references.ts';
import { parseHashMap, parseLastReloadedFrom } from '../core/state.ts';
import type {
  SourceKey,
  SourceType,
  SourceView,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import {
  BASELINE,
  EVICT_BEFORE,
  INSTANTIATE_PENDING,
  LAST_RELOADED_FROM,
  ROLLOUT_HALTED,
  SNAPSHOTS,
  SOURCE_HASHES,
} from '../core/types.ts';
import type { Options } from '../config/parse-options.ts';
import type { Mark } from '../core/marks.ts';
import type { PolicyBinding } from '../core/reload-policy.ts';
import {
  NO_BINDING,
  describeConfigRevisions,
  strategyUnder,
  withPolicySettings,
} from '../core/reload-policy.ts';
import type { KeyPlan, PlanInput, ReconcilePlan, SourceFacts } from '../reconcile/plan/model.ts';
import { planReconcile } from '../reconcile/plan/plan.ts';
import type { KindTable, RollActionType, WorkloadKindRow } from '../rollout/kinds.ts';
import { isReconciled } from '../rollout/kinds.ts';
import { pauseResumeDue, planPause } from '../rollout/pause.ts';
import { judgeRollout, type RolloutHealth } from '../rollout/health.ts';
import { parseSnapshotMap } from '../rollout/snapshots.ts';
import {
  haltMarkerSource,
  type HaltMarker,
  parseHaltMarker,
  resumeCommand,
} from '../rollout/waves.ts';
import { isNamespaceIgnored } from '../watch/namespace-filter.ts';
import { SOURCE_RESOURCES, plannedKinds, watchedSourceResources } from '../watch/watch-plan.ts';
import type {
  AppliedFrom,
  ControllerFacts,
  ExplainReason,
  HaltFacts,
  HoldFact,
  PolicyFacts,
  Predictions,
  RolloutFacts,
  QueueState,
  ReferenceSite,
  ShardFacts,
  SourceExplanation,
  Verdict,
  WorkloadExplanation,
  WorkloadFacts,
} from './model.ts';
import { SOURCE_TYPES } from '../core/source-types.ts';

/** What explain read of one source. */
export type SourceRead =
  | {
      readonly state: 'present';
      readonly view: SourceView;
      /** Set when the controller's watch does not deliver the object (its server-side filters). */
      readonly unwatched?: 'resource-label-selector' | 'secret-type-not-watched' | undefined;
    }
  | { readonly state: 'absent' }
  | { readonly state: 'forbidden' }
  | { readonly state: 'unreadable' }
  /** The controller's cache of the type is not synced in the namespace, or its watch is forbidden. */
  | { readonly state: 'unhealthy' };

/** What only the running controller knows (GET /debug/explain); the CLI has none of it. */
export interface ControllerKnowledge {
  /** The workload's §5.4 marks, as the mark store holds them. */
  readonly marks: readonly Mark[];
  /** The planner's facts of one key, gathered as the reconciler gathers them (R7 included). */
  readonly facts: (key: SourceKey) => SourceFacts;
  readonly leading: boolean;
  readonly queue: QueueState;
  /** The last rollout this kreload started on the workload (controller/rollout-tracker.ts). */
  readonly rollout?: StartedRollout | undefined;
  /** The roll by eviction under way, as its last round left it (controller/eviction-tracker.ts). */
  readonly eviction?: RunningEviction | undefined;
  /** Active-active mode: the namespace's bucket and its owner. */
  readonly shard?: ShardFacts | undefined;
}

/**
 * The baseline store's record of a workload and the ConfigMap (`<namespace>/<name>`) holding it
 * (docs/adr/0046): the planner reads B from it as the reconciler does.
 */
export interface StoredBaselineFact {
  readonly raw: string | undefined;
  readonly object: string | undefined;
  /** The store fell back: the record is still read, but B goes to the workload. */
  readonly readOnly?: boolean | undefined;
}

/** A roll by eviction as the controller's eviction tracker holds it. */
export interface RunningEviction {
  readonly progress:
    { readonly old: number; readonly current: number; readonly desired: number } | undefined;
  /** ms since the epoch for `retryAt`. */
  readonly held: { readonly reason: string; readonly retryAt: number } | undefined;
}

/** A rollout kreload started, as the controller's rollout tracker holds it. */
export interface StartedRollout {
  readonly generation: number;
  /** ms since the epoch. */
  readonly startedAt: number;
  /** Found in progress when the controller started or took the lead (then `startedAt`). */
  readonly adopted?: boolean;
  /** Undefined until the watch delivered a status to judge. */
  readonly health: RolloutHealth | undefined;
  readonly ended:
    { readonly at: number; readonly result: 'complete' | 'failed' | 'superseded' } | undefined;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The rollout kreload started (the controller), or else the workload's current one (the CLI). */
function rolloutFacts(input: WorkloadInput): RolloutFacts | undefined {
  const started = input.controller?.rollout;
  if (started !== undefined) {
    const health = started.health ?? {
      state: 'unknown' as const,
      detail: 'no status of the generation yet',
    };
    return {
      of: 'kreload',
      generation: started.generation,
      state: health.state,
      reason: health.state === 'failed' ? health.reason : undefined,
      detail: health.detail,
      startedAt: iso(started.startedAt),
      ...(started.adopted === true ? { adopted: true } : {}),
      endedAt: started.ended === undefined ? undefined : iso(started.ended.at),
      result: started.ended?.result,
    };
  }
  const { view } = input;
  if (view.rolloutStatus === undefined) return undefined;
  const health = judgeRollout({
    generation: view.generation,
    paused: view.paused,
    status: view.rolloutStatus,
  });
  return {
    of: 'current',
    generation: view.generation,
    state: health.state,
    reason: health.state === 'failed' ? health.reason : undefined,
    detail: health.detail,
  };
}

export interface WorkloadInput {
  readonly view: WorkloadView;
  readonly row: WorkloadKindRow;
  /** The effective kind table: whether the workload's kind is watched at all. */
  readonly kinds: KindTable;
  /** Where the pod template names each source, as written (display only). */
  readonly sites: ReadonlyMap<SourceKey, readonly ReferenceSite[]>;
  readonly options: Options;
  /** Whether --namespace-selector selects the namespace; undefined when no selector applies. */
  readonly namespaceSelected: boolean | undefined;
  /** Every key of `keysToRead` (and the candidates), as read. A missing entry counts as unreadable. */
  readonly sources: ReadonlyMap<SourceKey, SourceRead>;
  /** Names of the sources of each type the workload has a reload list for (§9.2 (b)). */
  readonly candidates: Readonly<Partial<Record<SourceType, readonly string[]>>>;
  /** ms since the epoch. */
  readonly now: number;
  /** When kreload journalled the recreation of this Job (ms), if one is pending. */
  readonly recreationPendingSince?: number | undefined;
  readonly controller?: ControllerKnowledge | undefined;
  /**
   * The workload's record, from the controller's cache (read-only once its store fell back) or,
   * for the CLI, from the store's ConfigMaps as just read. Undefined: the store is off or not read.
   */
  readonly storedBaseline?: StoredBaselineFact | undefined;
  /** What the ReloadPolicies give the workload (docs/reload-policy.md); none when not given. */
  readonly policies?: PolicyKnowledge | undefined;
  /** Halt markers on the namespace's workloads (`--rollout-waves`, docs/safe-rollouts.md). */
  readonly halts?: readonly HaltSeen[] | undefined;
  /**
   * The CLI: the progress of a roll by eviction under way, counted from the pods it listed now;
   * the running controller's own count (`controller.eviction`) comes first.
   */
  readonly podsProgress?: RunningEviction['progress'];
  /** The controller's flapping-source breakers; without them no source counts as flapping. */
  readonly flapping?: ((source: SourceKey) => FlapStatus) | undefined;
}

const NOT_FLAPPING: FlapStatus = { open: false };

/** The holds on the roll the plan wants, if it wants one. */
function holdFacts(input: WorkloadInput, rolling: readonly SourceKey[]): HoldFact[] | undefined {
  if (rolling.length === 0) return undefined;
  const windowValue = input.view.annotations[RESTART_WINDOW];
  const holds = holdsOf({
    windowValue,
    window: windowValue === undefined ? undefined : parseRestartWindow(windowValue),
    windowsEnabled: input.options.enableRestartWindows,
    rolling,
    flapping: (source) => input.flapping?.(source) ?? NOT_FLAPPING,
    now: input.now,
  });
  return holds.map((hold) => ({
    reason: hold.reason,
    detail: hold.detail,
    ...(hold.until !== undefined && { until: new Date(hold.until).toISOString() }),
  }));
}

function pendingRollOf(view: WorkloadView): SourceKey[] | undefined {
  const map = parseHashMap(view.annotations[PENDING_ROLL]).map;
  return map === undefined || map.size === 0 ? undefined : [...map.keys()].sort();
}

/** A workload carrying `kreload.io/rollout-halted`, and its marker. */
export interface HaltSeen {
  readonly ref: WorkloadRef;
  readonly marker: HaltMarker;
}

/** The halt markers among `views` (the namespace's workloads). */
export function haltsAmong(views: readonly WorkloadView[]): readonly HaltSeen[] {
  return views.flatMap((view) => {
    const marker = parseHaltMarker(view.annotations[ROLLOUT_HALTED]);
    return marker === undefined ? [] : [{ ref: view.ref, marker }];
  });
}

function nonEmpty<T>(items: readonly T[]): readonly T[] | undefined {
  return items.length > 0 ? items : undefined;
}

/** Halts of the changes this workload is due to roll for, or that its own marker names. */
function haltFacts(input: WorkloadInput, result: ReconcilePlan): readonly HaltFacts[] {
  const { view } = input;
  const due = result.keys.flatMap((entry) =>
    entry.outcome === 'roll' && entry.desired !== undefined
      ? [{ source: haltMarkerSource(view.ref.namespace, entry.key), hash: entry.desired }]
      : [],
  );
  return (input.halts ?? []).flatMap(({ ref, marker }) => {
    const self = ref.kind === view.ref.kind && ref.name === view.ref.name;
    const held = due.some((d) => d.source === marker.source && d.hash === marker.hash);
    if (!self && !held) return [];
    return [
      {
        source: marker.source,
        hash: marker.hash,
        by: { kind: ref.kind, namespace: ref.namespace, name: ref.name },
        reason: marker.reason,
        at: marker.at,
        self,
        resume: resumeCommand(ref),
      },
    ];
  });
}

/**
 * `known`: the binding the controller computes (`--enable-reload-policies` on and the policies
 * read); `unknown`: the policies could not be read, so no source counts as "not bound".
 */
export type PolicyKnowledge =
  | { readonly state: 'known'; readonly binding: PolicyBinding }
  | { readonly state: 'unknown'; readonly why: string };

const NO_MARKS: PlanInput['marks'] = [];
/** A reload-list element explain can read as a plain object name, to show a listed-but-missing source. */
const PLAIN_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function stateKeys(view: WorkloadView): SourceKey[] {
  const maps = [
    parseHashMap(view.templateAnnotations[SOURCE_HASHES]).map,
    parseHashMap(view.annotations[SOURCE_HASHES]).map,
    parseHashMap(view.annotations[BASELINE]).map,
  ];
  const keys = maps.flatMap((map) => [...(map?.keys() ?? [])]);
  const last = parseLastReloadedFrom(view.templateAnnotations[LAST_RELOADED_FROM]).value;
  if (last?.namespace === view.ref.namespace) keys.push(sourceKey(last.type, last.name));
  return keys;
}

function reloadListValue(view: WorkloadView, keys: Options['annotationKeys'], type: SourceType) {
  const key = typedKeys(keys, type).reload;
  return { key, value: view.annotations[key] ?? view.templateAnnotations[key] };
}

/** Plain names in the workload's reload lists: shown even when no such source exists. */
function listedNames(view: WorkloadView, options: Options): SourceKey[] {
  return SOURCE_TYPES.flatMap((type) => {
    const { value } = reloadListValue(view, options.annotationKeys, type);
    if (value === undefined) return [];
    return parseReloadList(value)
      .patterns.map((pattern) => pattern.source)
      .filter((source) => PLAIN_NAME.test(source))
      .map((name) => sourceKey(type, name));
  });
}

/** The sources explain must read for this workload, besides the reload-list candidates. */
export function keysToRead(view: WorkloadView, options: Options): readonly SourceKey[] {
  return [
    ...new Set([
      ...referencedSources(view.podSpec),
      ...stateKeys(view),
      ...listedNames(view, options),
    ]),
  ];
}

/** Types whose every source in the namespace the workload may match through a reload list. */
export function listedTypes(view: WorkloadView, options: Options): readonly SourceType[] {
  return SOURCE_TYPES.filter((type) => hasReloadList(view, type, options.annotationKeys));
}

function isWatchedKind(input: WorkloadInput): boolean {
  const kinds = plannedKinds(input.options, input.kinds);
  return [...kinds.always, ...kinds.ifServed].includes(input.view.ref.kind);
}

function isIgnoredNamespace(input: WorkloadInput): boolean {
  const { scope } = input.options;
  return isNamespaceIgnored(
    {
      mode: scope.mode === 'global' ? 'global' : 'scoped',
      ignored: scope.ignoreNamespaces,
      selectorEnabled: scope.namespaceSelector !== '',
    },
    input.view.ref.namespace,
  );
}

interface WorkloadGateRow {
  readonly reason: ExplainReason;
  readonly holds: (input: WorkloadInput) => boolean;
}

/** §11, §7.4 item 5, §12, in the order the controller meets them; the first that holds is named. */
const WORKLOAD_GATES: readonly WorkloadGateRow[] = [
  {
    reason: 'argo-rollouts-disabled',
    // --is-openshift=false is told apart by the kind plan (`workload-type-ignored` below).
    holds: ({ row, options }) =>
      row.enabledByOption === 'isArgoRollouts' && !options.isArgoRollouts,
  },
  { reason: 'workload-type-ignored', holds: (i) => !isWatchedKind(i) },
  {
    reason: 'namespace-not-watched',
    holds: ({ options: { scope }, view }) =>
      scope.mode !== 'global' && !scope.namespaces.includes(view.ref.namespace),
  },
  { reason: 'namespace-ignored', holds: isIgnoredNamespace },
  {
    reason: 'namespace-not-selected',
    holds: (i) => i.options.scope.mode === 'global' && i.namespaceSelected === false,
  },
  { reason: 'controlled-by-cronjob', holds: (i) => !isReconciled(i.row, i.view.controller) },
  { reason: 'webhook-mode', holds: (i) => i.options.webhookUrl !== undefined },
  { reason: 'dry-run', holds: (i) => i.options.dryRun },
];

/** Why the controller never writes this workload, if it does not. */
export function workloadGate(input: WorkloadInput): ExplainReason | undefined {
  return WORKLOAD_GATES.find((gate) => gate.holds(input))?.reason;
}

function typeGate(type: SourceType, options: Options): ExplainReason | undefined {
  if (type === 'SECRETPROVIDERCLASS') {
    return options.enableCsiIntegration ? undefined : 'csi-integration-disabled';
  }
  const watched = watchedSourceResources(options).map((resource) => SOURCE_RESOURCES[resource]);
  return watched.includes(type) ? undefined : 'resource-type-ignored';
}

function sourceGate(type: SourceType, read: SourceRead, options: Options) {
  return typeGate(type, options) ?? (read.state === 'present' ? read.unwatched : undefined);
}

/** What the controller's caches would hold: a filtered-out or unwatched object is not there. */
function factsOf(type: SourceType, read: SourceRead, options: Options): SourceFacts {
  if (typeGate(type, options) !== undefined) return { status: { state: 'unknown' } };
  switch (read.state) {
    case 'present':
      if (read.unwatched !== undefined) return { status: { state: 'absent' } };
      return {
        status: {
          state: 'present',
          hash: read.view.hash,
          uid: type === 'SECRETPROVIDERCLASS' ? undefined : read.view.uid,
          annotations: read.view.annotations,
        },
      };
    case 'absent':
      return { status: { state: 'absent' } };
    case 'forbidden':
    case 'unreadable':
    case 'unhealthy':
      return { status: { state: 'unknown' } };
  }
}

const UNREADABLE: SourceRead = { state: 'unreadable' };

function readOf(input: WorkloadInput, key: SourceKey): SourceRead {
  return input.sources.get(key) ?? UNREADABLE;
}

function bindingIn(input: WorkloadInput): PolicyBinding {
  return input.policies?.state === 'known' ? input.policies.binding : NO_BINDING;
}

function plan(input: WorkloadInput): ReconcilePlan {
  const { options } = input;
  const binding = bindingIn(input);
  return planReconcile({
    view: input.view,
    row: input.row,
    options: {
      strategy: strategyUnder(binding, options.reloadStrategy),
      reloadOnCreate: options.reloadOnCreate,
      reloadOnDelete: options.reloadOnDelete,
      keys: options.annotationKeys,
      autoReloadAll: options.autoReloadAll,
      configRevisions: options.enableConfigRevisions,
    },
    candidates: input.candidates,
    facts: (key) => {
      const parsed = parseSourceKey(key);
      if (!parsed) return { status: { state: 'unknown' } };
      const gated = typeGate(parsed.type, options) !== undefined;
      if (input.controller !== undefined && !gated) return input.controller.facts(key);
      return factsOf(parsed.type, readOf(input, key), options);
    },
    marks: input.controller?.marks ?? NO_MARKS,
    storedBaseline: input.storedBaseline && {
      raw: input.storedBaseline.raw,
      readOnly: input.storedBaseline.readOnly,
    },
    now: input.now,
    policySources: binding.sources,
  });
}

function appliedFrom(view: WorkloadView, result: ReconcilePlan, key: KeyPlan): AppliedFrom {
  if (result.mode === 'workload') return 'workload kreload.io/source-hashes';
  if (parseHashMap(view.templateAnnotations[SOURCE_HASHES]).map?.has(key.key) === true) {
    return 'pod template kreload.io/source-hashes';
  }
  return result.mode === 'env-vars' ? 'env var' : 'last-reloaded-from';
}

const VERDICT_OF_RULE: Readonly<Record<KeyPlan['rule'], Verdict>> = {
  R1: 'cannot-tell',
  R2: 'rolls-on-change',
  R3: 'pending-roll',
  R4: 'rolls-on-change',
  R5: 'pending-roll',
  R6: 'pending-roll',
  R7: 'pending-roll',
  R8: 'pending-roll',
  R9: 'first-sight',
};

const NO_ROLL: Predictions = { change: 'no-roll', delete: 'no-roll', create: 'no-roll' };
const UNKNOWN: Predictions = { change: 'unknown', delete: 'unknown', create: 'unknown' };

interface Outcome {
  readonly verdict: Verdict;
  readonly because: ExplainReason;
  readonly predicts: Predictions;
}

interface KeyContext {
  readonly input: WorkloadInput;
  readonly gate: ExplainReason | undefined;
  readonly read: SourceRead;
  readonly tracked: boolean;
  readonly decision: ReturnType<typeof decide>;
  readonly keyPlan: KeyPlan | undefined;
  readonly noContainer: boolean;
}

/** Reads that leave the source's state unknown, and the reason each gives. */
const CANNOT_TELL: Readonly<Partial<Record<SourceRead['state'], ExplainReason>>> = {
  forbidden: 'source-forbidden',
  unreadable: 'source-unreadable',
  unhealthy: 'source-cache-unhealthy',
};

/** Rules decide() applies before a policy binding: no policy changes their NO. */
const POLICY_CANNOT_OVERRIDE: ReadonlySet<string> = new Set(['source-ignored', 'excluded']);

/** Not tracked: no roll, unless unread policies might bind the source (then cannot tell). */
function untrackedOutcome({ input, decision }: KeyContext): Outcome {
  if (input.policies?.state === 'unknown' && !POLICY_CANNOT_OVERRIDE.has(decision.rule)) {
    return { verdict: 'cannot-tell', because: 'policies-unreadable', predicts: UNKNOWN };
  }
  const because = decision.result === 'NO' ? decision.rule : 'not-referenced';
  return { verdict: 'no-roll', because, predicts: NO_ROLL };
}

function outcomeOf(context: KeyContext): Outcome {
  const { input, read, decision, keyPlan } = context;
  const { options } = input;
  if (context.gate !== undefined)
    return { verdict: 'no-roll', because: context.gate, predicts: NO_ROLL };
  const unread = CANNOT_TELL[read.state];
  if (unread !== undefined) return { verdict: 'cannot-tell', because: unread, predicts: UNKNOWN };
  if (!context.tracked) return untrackedOutcome(context);
  if (context.noContainer) {
    return { verdict: 'no-roll', because: 'no-container', predicts: NO_ROLL };
  }
  // A pending delete mark (R6) rolls a workload whose source is gone.
  if (keyPlan?.outcome === 'roll') {
    return { verdict: 'pending-roll', because: decision.rule, predicts: rollPredictions(context) };
  }
  // A listed name that does not exist is no candidate yet: the controller tracks it once created.
  if (read.state === 'absent' || keyPlan === undefined) {
    const create = options.reloadOnCreate ? 'roll' : 'no-roll';
    return { verdict: 'missing', because: decision.rule, predicts: { ...NO_ROLL, create } };
  }
  return {
    verdict: VERDICT_OF_RULE[keyPlan.rule],
    because: decision.rule,
    predicts: rollPredictions(context),
  };
}

function rollPredictions({ input: { options, row } }: KeyContext): Predictions {
  const rollsOnDelete = options.reloadOnDelete && row.rollsOnDelete;
  return { change: 'roll', delete: rollsOnDelete ? 'roll' : 'no-roll', create: 'no-roll' };
}

function matchedElement(input: WorkloadInput, type: SourceType, name: string) {
  const { value } = reloadListValue(input.view, input.options.annotationKeys, type);
  if (value === undefined) return undefined;
  return parseReloadList(value).patterns.find((pattern) => pattern.matches(name))?.source;
}

function explainKey(
  input: WorkloadInput,
  context: {
    gate: ExplainReason | undefined;
    result: ReconcilePlan;
    sites: ReadonlyMap<SourceKey, readonly ReferenceSite[]>;
  },
  key: SourceKey,
): SourceExplanation | undefined {
  const parsed = parseSourceKey(key);
  if (!parsed) return undefined;
  const { type, name } = parsed;
  const read = readOf(input, key);
  const decideInput: DecideInput = {
    workload: input.view,
    type,
    name,
    sourceAnnotations: read.state === 'present' ? read.view.annotations : {},
    keys: input.options.annotationKeys,
    autoReloadAll: input.options.autoReloadAll,
    boundByPolicy: bindingIn(input).sources.has(key),
  };
  const decision = decide(decideInput);
  const tracking = trackedContainer(decideInput, decision);
  const keyPlan = context.result.keys.find((candidate) => candidate.key === key);
  const references = context.sites.get(key) ?? [];
  const outcome = outcomeOf({
    input,
    gate: context.gate ?? sourceGate(type, read, input.options),
    read,
    tracked: tracking.tracked,
    decision,
    keyPlan,
    noContainer: context.result.skip === 'no_container',
  });
  return {
    key,
    type,
    name,
    references,
    listed: references.length === 0,
    decision: {
      result: decision.result,
      rule: decision.rule,
      annotationsFrom: decision.annotationsFrom,
      ...(decision.rule === 'reload-list'
        ? { matchedElement: matchedElement(input, type, name) }
        : {}),
    },
    status: factsOf(type, read, input.options).status.state,
    container: tracking.container,
    currentHash: read.state === 'present' ? read.view.hash : undefined,
    applied:
      keyPlan?.applied === undefined
        ? undefined
        : { hash: keyPlan.applied, from: appliedFrom(input.view, context.result, keyPlan) },
    baseline: keyPlan?.baseline,
    stateRule: keyPlan?.rule,
    snapshot: parseSnapshotMap(input.view.templateAnnotations[SNAPSHOTS]).get(key),
    ...policiesField(input, key),
    ...outcome,
  };
}

function policiesField(input: WorkloadInput, key: SourceKey) {
  const refs = bindingIn(input).policiesOf.get(key);
  return refs === undefined ? {} : { policies: refs.map((ref) => ref.name) };
}

function policyFacts(input: WorkloadInput): PolicyFacts | undefined {
  const knowledge = input.policies;
  if (knowledge === undefined) return undefined;
  if (knowledge.state === 'unknown') return { state: 'unknown', why: knowledge.why };
  const { binding } = knowledge;
  if (binding.policies.length === 0) return undefined;
  const from = binding.strategyFrom;
  return {
    state: 'bound',
    policies: binding.policies.map((ref) => ref.name),
    strategy:
      binding.strategy === undefined || from.from !== 'policy'
        ? undefined
        : { value: binding.strategy, policy: from.policy.name },
    syncDelayMs: binding.syncDelayMs,
    pausePeriod: binding.pausePeriod,
    configRevisions:
      binding.configRevisions === undefined
        ? undefined
        : describeConfigRevisions(binding.configRevisions),
    conflicts: binding.conflicts.map((conflict) => ({
      policy: conflict.policy.name,
      field: conflict.field,
      message: conflict.message,
    })),
  };
}

function controllerFacts(knowledge: ControllerKnowledge): ControllerFacts {
  return {
    leading: knowledge.leading,
    ...(knowledge.shard && { shard: knowledge.shard }),
    marks: knowledge.marks.map((mark) => ({
      kind: mark.kind,
      source: mark.sourceKey,
      at: new Date(mark.at).toISOString(),
    })),
    queue: knowledge.queue,
  };
}

function resumesAt(input: WorkloadInput): string | undefined {
  const due = pauseResumeDue(input.view, input.now, input.options.annotationKeys);
  if (due === undefined) return undefined;
  return due === 'now' ? 'now' : new Date(due).toISOString();
}

/**
 * A roll by eviction under way: its marker on W (docs/adr/0044), and from the running controller
 * the progress its last round counted and the hold it is in.
 */
function evictingFacts(
  rollAction: RollActionType,
  view: WorkloadView,
  running: RunningEviction | undefined,
  counted: RunningEviction['progress'],
): WorkloadFacts['evicting'] {
  const before = view.annotations[EVICT_BEFORE];
  if (rollAction !== 'evict-pods' || before === undefined) return undefined;
  const progress = running?.progress ?? counted;
  const held = running?.held;
  return {
    before,
    progress:
      progress === undefined
        ? undefined
        : { replaced: progress.current, total: progress.current + progress.old },
    held: held === undefined ? undefined : { reason: held.reason, retryAt: iso(held.retryAt) },
  };
}

/** Explains every source the workload references, lists, or tracks through its state. */
/** Where B is read from, as `readPersistedState` reads it: W first, else the store's record. */
function baselineIn(input: WorkloadInput): string | undefined {
  if (input.view.annotations[BASELINE] !== undefined) return 'workload';
  const stored = input.storedBaseline;
  return stored?.raw === undefined ? undefined : (stored.object ?? 'the baseline store');
}

export function explainWorkload(given: WorkloadInput): WorkloadExplanation {
  // A policy's restart strategy and pausePeriod act as the annotations they stand for (ADR 0034).
  const view = withPolicySettings(given.view, bindingIn(given), given.options.annotationKeys);
  const input: WorkloadInput = { ...given, view };
  const { options } = input;
  const gate = workloadGate(input);
  const result = plan(input);
  const tracked = new Set(result.keys.map((key) => key.key));
  const shown = [
    ...new Set([...referencedSources(view.podSpec), ...listedNames(view, options), ...tracked]),
  ].sort();
  const sources = shown.flatMap(
    (key) => explainKey(input, { gate, result, sites: input.sites }, key) ?? [],
  );
  const pause = planPause({
    view,
    row: input.row,
    keys: options.annotationKeys,
    rolls: result.action === 'roll',
    now: input.now,
  });
  return {
    kind: view.ref.kind,
    namespace: view.ref.namespace,
    name: view.ref.name,
    gate,
    sources,
    facts: {
      paused: view.paused,
      resumesAt: resumesAt(input),
      suspended: view.suspended,
      instantiatePending: view.annotations[INSTANTIATE_PENDING],
      collisions: result.collisions.map(({ envVar, keys }) => ({ envVar, keys })),
      rollAction: result.rollAction,
      evicting: evictingFacts(
        result.rollAction,
        view,
        input.controller?.eviction,
        input.podsProgress,
      ),
      strategy: result.mode,
      baselineIn: baselineIn(input),
      recreationPending:
        input.recreationPendingSince === undefined
          ? undefined
          : { since: new Date(input.recreationPendingSince).toISOString() },
      controller: input.controller === undefined ? undefined : controllerFacts(input.controller),
      policy: policyFacts(input),
      rollout: rolloutFacts(input),
      halts: nonEmpty(haltFacts(input, result)),
      holds: holdFacts(input, result.rolling),
      pendingRoll: pendingRollOf(view),
    },
    problems: [...result.problems, ...pause.problems].map(
      ({ key, value, problem, consequence }) => ({
        key,
        value,
        problem,
        consequence,
      }),
    ),
  };
}
