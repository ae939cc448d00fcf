/**
 * The planner's input and output (§5): what the reconciler gathers for one reconcile and the plan
 * it gets back. Types only, over core/ and rollout/, so the planner's modules and the reconciler's
 * ports depend on this module and never on each other (docs/adr/0027-planner-model-and-read-ports.md).
 */
import type { ReloadListCache } from '../../core/annotation-values.ts';
import type { EnvVarNames } from '../../core/env-name.ts';
import type { HashMapCache } from '../../core/state.ts';
import type { Mark } from '../../core/marks.ts';
import type {
  AnnotationKeys,
  AnnotationProblem,
  Annotations,
  DecisionResult,
  ReloadStrategy,
  SourceKey,
  SourceType,
  WorkloadView,
} from '../../core/types.ts';
import type { RollActionType, WorkloadKindRow } from '../../rollout/kinds.ts';
import type { TemplateChange, WorkloadChanges } from '../../rollout/patch.ts';
import type { SnapshotMap, SnapshotType } from '../../rollout/snapshots.ts';

/** What the caches say about one source now. */
export type SourceStatus =
  | {
      readonly state: 'present';
      readonly hash: string;
      /** Undefined for a SecretProviderClass, whose hash has no single object (§4.4). */
      readonly uid: string | undefined;
      readonly annotations: Annotations;
    }
  /** The type's cache is synced and healthy and holds no such object. */
  | { readonly state: 'absent' }
  /** The type's cache is not synced, forbidden or missing (§5.1). */
  | { readonly state: 'unknown' };

/** Per-source inputs of the planner. Times are ms since the epoch. */
export interface SourceFacts {
  readonly status: SourceStatus;
  /** `lastChange(K)` of §5.4. */
  readonly lastChange?: number | undefined;
  /** `trackingStart(W,K)` of §5.4. */
  readonly trackingStart?: number | undefined;
  /** When kreload observed the change this reconcile acts on (last-reloaded-from, §6.2). */
  readonly observedAt?: number | undefined;
}

export interface PlanOptions {
  readonly strategy: ReloadStrategy;
  /** `--enable-config-revisions` (docs/adr/0036). */
  readonly configRevisions: boolean;
  readonly reloadOnCreate: boolean;
  readonly reloadOnDelete: boolean;
  readonly keys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  readonly reloadLists?: ReloadListCache | undefined;
  /** Parsed state annotations shared between reconciles. */
  readonly stateMaps?: HashMapCache | undefined;
  /** Env var names shared between reconciles. */
  readonly envVarNames?: EnvVarNames | undefined;
}

/**
 * The baseline store's record of one workload (docs/adr/0046): its baseline when it has none in
 * its own metadata. `raw` undefined: the store holds no record of it.
 */
export interface StoredBaseline {
  readonly raw: string | undefined;
  /**
   * The store fell back to baselines on the workloads: its records, as read until then, are still
   * B of a workload whose metadata holds none, but B now goes to the workload, and no record is
   * written or removed any more.
   */
  readonly readOnly?: boolean | undefined;
}

export interface PlanInput {
  readonly view: WorkloadView;
  readonly row: WorkloadKindRow;
  readonly options: PlanOptions;
  /**
   * Names of sources that may match a reload list, per type. References of the pod spec, keys of
   * the persisted state and keys of marks are added by the planner.
   */
  readonly candidates: Readonly<Partial<Record<SourceType, readonly string[]>>>;
  /** What the caches and §5.4 facts say about one source; called for every evaluated key. */
  readonly facts: (key: SourceKey) => SourceFacts;
  /** The workload's §5.4 marks, as the mark store holds them. */
  readonly marks: readonly Mark[];
  /** Sources an active ReloadPolicy binds to the workload (docs/reload-policy.md). */
  readonly policySources?: ReadonlySet<SourceKey> | undefined;
  /** ms since the epoch. */
  readonly now: number;
  /** `--baseline-store=namespace`: the store's record of the workload; absent otherwise. */
  readonly storedBaseline?: StoredBaseline | undefined;
}

/**
 * Where a workload's applied state lives and how rolls are written: env vars or annotations in the
 * pod template, or W `kreload.io/source-hashes` (CronJob, restart Rollout) for both strategies.
 */
export type StateMode = ReloadStrategy | 'workload';

export type RuleId = 'R1' | 'R2' | 'R3' | 'R4' | 'R5' | 'R6' | 'R7' | 'R8' | 'R9';

export type KeyOutcome = 'nothing' | 'roll' | 'baseline';

/** A source the workload tracks (§3.5) and its desired hash D (§5.1). */
export interface TrackedSource {
  readonly key: SourceKey;
  readonly type: SourceType;
  readonly name: string;
  readonly decision: DecisionResult;
  /** Undefined only for a LIST source of a workload without regular containers. */
  readonly container: string | undefined;
  /** D(K); undefined = unknown. */
  readonly desired: string | undefined;
  readonly facts: SourceFacts;
  /** The `STAKATER_*` variable of the source (§4.3). */
  readonly envVar: string;
}

/** One tracked key with D, A, B and the rule that decided it. */
export interface KeyPlan extends TrackedSource {
  readonly applied: string | undefined;
  readonly baseline: string | undefined;
  readonly rule: RuleId;
  readonly outcome: KeyOutcome;
}

/** Tracked sources whose names sanitise to one env var in one selected container (§6.3). */
export interface EnvVarCollision {
  readonly envVar: string;
  readonly container: string;
  /** Sorted. */
  readonly keys: readonly SourceKey[];
}

export interface PlannedChanges extends WorkloadChanges {
  /**
   * The workload's new record in the baseline store (docs/adr/0046): null removes it, undefined
   * leaves it. Never part of the workload's own patch.
   */
  readonly baselineRecord?: string | null | undefined;
  /** CronJob: the strategy's change for the Job the roll creates (§7.3 item 2); the CronJob keeps its template. */
  readonly jobTemplate?: TemplateChange | undefined;
}

export type PlanAction = 'none' | 'baseline' | 'roll';

/** A source a config-revisions roll copies and points the template at (docs/adr/0036). */
export interface PinnedSource {
  readonly key: SourceKey;
  readonly type: SnapshotType;
  readonly name: string;
  /** D(K): the snapshot's content must hash to it, or the roll is planned again. */
  readonly hash: string;
}

/** What a roll does about config revisions. */
export interface RevisionPlan {
  /** False: opted out, and the roll restores the live references. */
  readonly optedIn: boolean;
  readonly pinned: readonly PinnedSource[];
  /** PT `kreload.io/snapshots` before the roll. */
  readonly current: SnapshotMap;
}

export interface ReconcilePlan extends PlannedChanges {
  /** roll: the kind's roll (§7); baseline: a metadata-only patch; none: no write. */
  readonly action: PlanAction;
  /** How this workload rolls: its kind's action, or `rollout-restart` (§7.5). */
  readonly rollAction: RollActionType;
  /** Sorted keys whose outcome is roll. */
  readonly rolling: readonly SourceKey[];
  /** Set when the workload tracks sources but has no regular container (§13.2). */
  readonly skip?: 'no_container' | undefined;
  readonly mode: StateMode;
  /** Every tracked key, sorted. */
  readonly keys: readonly KeyPlan[];
  readonly problems: readonly AnnotationProblem[];
  readonly collisions: readonly EnvVarCollision[];
  /** Set for workloads that opted in to config revisions, or whose template still names snapshots. */
  readonly revisions?: RevisionPlan | undefined;
}
