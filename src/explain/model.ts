/**
 * The explanation model of `kreload explain` (docs/explain.md): plain data that the renderers turn
 * into a table, JSON or YAML. Every reason explain can give is a row of REASONS, so the unit test
 * can check that each one renders and the docs can list them all.
 */
import type { RollActionType } from '../rollout/kinds.ts';
import type { DecisionRule } from '../core/decide.ts';
import type { DecisionResult, SourceKey, SourceType, WorkloadKindName } from '../core/types.ts';
import type { RolloutState } from '../rollout/health.ts';

/** Why a source does (not) roll its workload, one name per rule of the controller. */
export type ExplainReason =
  | DecisionRule
  // Scope and configuration (§11, §12): the controller never sees the object, or never writes it.
  | 'workload-type-ignored'
  | 'argo-rollouts-disabled'
  | 'namespace-not-watched'
  | 'namespace-ignored'
  | 'namespace-not-selected'
  | 'controlled-by-cronjob'
  | 'resource-type-ignored'
  | 'csi-integration-disabled'
  | 'resource-label-selector'
  | 'secret-type-not-watched'
  | 'webhook-mode'
  | 'dry-run'
  // Tracking (§3.5 Tracked, §13.2 no_container).
  | 'not-referenced'
  | 'no-container'
  // What explain could read.
  | 'source-forbidden'
  | 'source-unreadable'
  | 'policies-unreadable'
  // What the running controller knows (GET /debug/explain).
  | 'source-cache-unhealthy';

/** One sentence per reason, completing "will not roll, because …" or naming the deciding rule. */
export const REASONS: Readonly<Record<ExplainReason, string>> = {
  'source-ignored': 'the source has ignore: "true"',
  excluded: "the source is on the workload's exclude list",
  'reload-list': "the source matches an element of the workload's reload list",
  policy: 'a ReloadPolicy targeting the workload binds the source (docs/reload-policy.md)',
  'search-match': 'search: "true" on the workload and match: "true" on the source',
  'typed-auto-off': 'the typed auto annotation for this source type is set but not true (veto)',
  'typed-auto': 'the typed auto annotation for this source type is true',
  auto: 'auto: "true"',
  'auto-reload-all': '--auto-reload-all, and the workload sets no auto annotation',
  'auto-off': 'auto is set but not true',
  'search-without-match': 'search: "true" on the workload, but the source has no match: "true"',
  'not-annotated': 'no annotation selects this source (and --auto-reload-all is off)',
  'workload-type-ignored': 'the workload type is in --ignored-workload-types',
  'argo-rollouts-disabled': 'Argo Rollouts are not watched (--is-Argo-Rollouts is off)',
  'namespace-not-watched': 'the namespace is not watched in this scope (--namespaces)',
  'namespace-ignored': 'the namespace is in --namespaces-to-ignore',
  'namespace-not-selected': 'the namespace does not match --namespace-selector',
  'controlled-by-cronjob': 'the Job is controlled by a CronJob, which kreload rolls instead',
  'resource-type-ignored': 'the source type is in --resources-to-ignore',
  'csi-integration-disabled': 'CSI integration is off (--enable-csi-integration)',
  'resource-label-selector': 'the source does not match --resource-label-selector',
  'secret-type-not-watched':
    'the Secret type is not watched (Helm release and service-account token Secrets)',
  'webhook-mode': 'webhook mode (--webhook-url): changes are posted, nothing is rolled',
  'dry-run': '--dry-run: the roll is logged, not written',
  'not-referenced':
    'auto applies only to sources a container uses, and no container reads or mounts this one',
  'no-container': 'the workload has no regular container to roll',
  'source-forbidden': 'explain may not read the source (RBAC): it cannot tell',
  'source-unreadable': 'explain could not read the source: it cannot tell',
  'policies-unreadable':
    'explain could not list the ReloadPolicies (RBAC, or their API is not served): a policy may bind the source, it cannot tell',
  'source-cache-unhealthy':
    "the controller's cache of this source type is not synced here, or its watch is forbidden: " +
    'it cannot tell (R1)',
};

/**
 * - `rolls-on-change`: tracked and up to date; a change of its data will roll the workload.
 * - `pending-roll`: changed since the last roll; the next pass rolls.
 * - `first-sight`: tracked, no state yet; the next pass records a baseline, changes after it roll.
 * - `missing`: tracked by name but absent; its creation records a baseline (rolls only with
 *   --reload-on-create).
 * - `no-roll`: a change will not roll the workload, because of `because`.
 * - `cannot-tell`: explain could not read what decides.
 */
export type Verdict =
  'rolls-on-change' | 'pending-roll' | 'first-sight' | 'missing' | 'no-roll' | 'cannot-tell';

export const VERDICTS: Readonly<Record<Verdict, string>> = {
  'rolls-on-change': 'a change will roll this',
  'pending-roll': 'changed since the last roll: will roll on the next pass',
  'first-sight':
    'no state yet: the next pass records a baseline; a change after that will roll this',
  missing: 'missing: its creation records a baseline',
  'no-roll': 'will not roll',
  'cannot-tell': 'cannot tell',
};

export type Prediction = 'roll' | 'no-roll' | 'unknown';

/** What kreload will do on each kind of change of the source. */
export interface Predictions {
  /** The source's data changes (its hash changes). */
  readonly change: Prediction;
  /** The source is deleted. */
  readonly delete: Prediction;
  /** The source is created (only meaningful while it is missing). */
  readonly create: Prediction;
}

/**
 * `env` is what the controller's projection keeps (envFrom or valueFrom, not which); the CLI reads
 * the raw template and says which, and tells a projected volume from a plain one.
 */
export type ReferenceVia =
  | 'envFrom'
  | 'valueFrom'
  | 'env'
  | 'volume'
  | 'projected volume'
  | 'csi volume'
  | 'unmounted volume';

export interface ReferenceSite {
  readonly container: string | undefined;
  readonly init: boolean;
  readonly via: ReferenceVia;
  /** The volume's name, for volume references. */
  readonly volume?: string | undefined;
}

export type AppliedFrom =
  | 'env var'
  | 'pod template kreload.io/source-hashes'
  | 'workload kreload.io/source-hashes'
  | 'last-reloaded-from';

export interface SourceExplanation {
  readonly key: SourceKey;
  readonly type: SourceType;
  readonly name: string;
  readonly references: readonly ReferenceSite[];
  /** Named by a reload list (or kept in kreload's state) rather than referenced. */
  readonly listed: boolean;
  readonly decision: {
    readonly result: DecisionResult;
    readonly rule: DecisionRule;
    readonly annotationsFrom: 'workload' | 'template';
    /** The reload-list element that matched, for `reload-list`. */
    readonly matchedElement?: string | undefined;
  };
  readonly status: 'present' | 'absent' | 'unknown';
  /** The container a roll writes into. */
  readonly container?: string | undefined;
  readonly currentHash?: string | undefined;
  readonly applied?: { readonly hash: string; readonly from: AppliedFrom } | undefined;
  readonly baseline?: string | undefined;
  /** The rule of §5.3 (R1–R9) the planner applied, for tracked sources. */
  readonly stateRule?: string | undefined;
  /** Config revisions: the snapshot the pod template references instead (docs/adr/0036). */
  readonly snapshot?: string | undefined;
  /** The ReloadPolicies that bind the source to the workload, oldest first. */
  readonly policies?: readonly string[] | undefined;
  readonly verdict: Verdict;
  /** Set for `no-roll` and `cannot-tell`; for tracked sources, the deciding rule. */
  readonly because: ExplainReason;
  readonly predicts: Predictions;
}

export interface ReloadListProblem {
  readonly key: string;
  readonly value: string;
  readonly problem: string;
  readonly consequence: string;
}

export interface WorkloadFacts {
  readonly paused: boolean;
  /** RFC 3339, or `now` when overdue; only for a pause kreload started. */
  readonly resumesAt?: string | undefined;
  readonly suspended: boolean;
  /** DeploymentConfig: an instantiate is owed (kreload.io/instantiate-pending). */
  readonly instantiatePending?: string | undefined;
  readonly collisions: readonly { readonly envVar: string; readonly keys: readonly SourceKey[] }[];
  /** How this workload rolls. */
  readonly rollAction: RollActionType;
  /**
   * A roll by eviction is under way (W `kreload.io/evict-before`, docs/adr/0044): pods created at or
   * before `before` (RFC 3339) still run an older config.
   */
  readonly evicting?:
    | {
        readonly before: string;
        /** From the running controller: pods running the new config, of all the workload's pods. */
        readonly progress?: { readonly replaced: number; readonly total: number } | undefined;
        /** From the running controller: why the roll is held, and its next try (RFC 3339). */
        readonly held?: { readonly reason: string; readonly retryAt: string } | undefined;
      }
    | undefined;
  readonly strategy: string;
  /**
   * Where the workload's baseline B is kept (docs/adr/0046): `workload` (W `kreload.io/baseline`),
   * or the baseline store's ConfigMap `<namespace>/<name>` holding its record; undefined: none
   * (or, outside the controller, no W baseline). The hashes are the sources' `baseline`.
   */
  readonly baselineIn?: string | undefined;
  /**
   * A Job kreload deleted to roll it and has not created again (§7.4 item 4, ADR 0019), from the
   * recreation journal; `since` is RFC 3339.
   */
  readonly recreationPending?: { readonly since: string } | undefined;
  /** Only in answers of the running controller (GET /debug/explain). */
  readonly controller?: ControllerFacts | undefined;
  /** Set when a ReloadPolicy binds the workload, or when explain could not read the policies. */
  readonly policy?: PolicyFacts | undefined;
  /** Kinds with a health model (not Job, CronJob): the rollout and how it is going. */
  readonly rollout?: RolloutFacts | undefined;
  /**
   * What holds the roll the plan wants (docs/windows-and-breaker.md): a restart window, a flapping
   * source (the controller's answer only). Empty or absent: nothing holds it.
   */
  readonly holds?: readonly HoldFact[] | undefined;
  /** W `kreload.io/pending-roll`: the held changes one roll will cover. */
  readonly pendingRoll?: readonly SourceKey[] | undefined;
  /**
   * Changes due here that are halted (`--rollout-waves`): the failed workload that carries the
   * halt marker, and how to resume. Empty without waves or halts.
   */
  readonly halts?: readonly HaltFacts[] | undefined;
}

export interface HoldFact {
  readonly reason: string;
  readonly detail: string;
  /** RFC 3339: when the hold ends by itself; absent: only a change of the workload ends it. */
  readonly until?: string | undefined;
}

/** A halted change this workload is held by (or, with `self`, that its own failure halted). */
export interface HaltFacts {
  /** `<type>/<namespace>/<name>` of the source. */
  readonly source: string;
  readonly hash: string;
  readonly by: { readonly kind: string; readonly namespace: string; readonly name: string };
  readonly reason: string;
  readonly at: string;
  /** This workload carries the marker: its rollout failed. */
  readonly self: boolean;
  readonly resume: string;
}

/**
 * The settings the binding policies give the workload, as the controller applies them: each one
 * from the oldest policy that sets it, unless the workload's own annotation does (ADR 0034).
 */
export type PolicyFacts =
  | {
      readonly state: 'bound';
      /** The active binding policies, oldest first. */
      readonly policies: readonly string[];
      /** The strategy a policy gives (undefined: kreload's --reload-strategy or the annotation). */
      readonly strategy?: { readonly value: string; readonly policy: string } | undefined;
      readonly syncDelayMs?: number | undefined;
      readonly pausePeriod?: string | undefined;
      /** `configMaps`, `configMaps+secrets` or `off` (spec.configRevisions, ADR 0038). */
      readonly configRevisions?: string | undefined;
      /** Settings of a binding policy that lost (the policy's Conflict condition). */
      readonly conflicts: readonly {
        readonly policy: string;
        readonly field: string;
        readonly message: string;
      }[];
    }
  | { readonly state: 'unknown'; readonly why: string };

/** A §5.4 mark the controller holds for the workload: the next pass consumes it. */
export interface PendingMark {
  readonly kind: 'create' | 'delete';
  readonly source: SourceKey;
  /** When the controller observed the creation or deletion, RFC 3339. */
  readonly at: string;
}

/**
 * - `idle`: no pass is due; the next one comes with a change or the periodic resync.
 * - `queued`: a pass is due at `dueAt` (debounce window or retry backoff).
 * - `in-flight`: a worker is reconciling the workload now.
 */
export type QueueState =
  | { readonly state: 'idle' }
  | { readonly state: 'queued'; readonly dueAt: string }
  | { readonly state: 'in-flight' };

/**
 * A rollout and its health (rollout/health.ts). `of: 'kreload'`: the last rollout this kreload
 * started, identified by the generation its PATCH produced (only the running controller knows it);
 * `of: 'current'`: the workload's rollout as its status stands (the CLI).
 */
export interface RolloutFacts {
  readonly of: 'kreload' | 'current';
  readonly generation: number | undefined;
  readonly state: RolloutState;
  /** `failed` only: the reason the workload reported (`ProgressDeadlineExceeded`). */
  readonly reason?: string | undefined;
  readonly detail: string;
  /** RFC 3339; `kreload` only. */
  readonly startedAt?: string | undefined;
  /**
   * `kreload` only: found in progress, carrying kreload's roll marker, when this controller started
   * or took the lead; followed since `startedAt`.
   */
  readonly adopted?: boolean | undefined;
  /** RFC 3339, once it ended; `kreload` only. */
  readonly endedAt?: string | undefined;
  /** How it ended: `superseded` when kreload rolled the workload again first. */
  readonly result?: 'complete' | 'failed' | 'superseded' | undefined;
}

/** Facts only the running controller has (docs/explain.md "From the running controller"). */
export interface ControllerFacts {
  /** A follower keeps its caches but writes nothing; the leader rolls. */
  readonly leading: boolean;
  readonly marks: readonly PendingMark[];
  readonly queue: QueueState;
  /** Active-active mode: who writes to the workload's namespace (docs/ha.md#active-active). */
  readonly shard?: ShardFacts | undefined;
}

export interface ShardFacts {
  readonly bucket: number;
  /** The replica holding the bucket's Lease, as this replica last read it. */
  readonly holder: string | undefined;
  /** The live member the bucket is assigned to, as this replica sees the members. */
  readonly assigned: string | undefined;
  /** This replica writes to the namespace now. */
  readonly owned: boolean;
}

/** Where the controller options came from (docs/explain.md "Configuration"). */
export type ConfigOrigin =
  | { readonly kind: 'deployment'; readonly namespace: string; readonly name: string }
  | { readonly kind: 'flags'; readonly args: readonly string[] }
  | { readonly kind: 'defaults'; readonly note: string }
  /** The answer of the running controller, with its own options (GET /debug/explain). */
  | { readonly kind: 'controller'; readonly pod: string | undefined };

export interface WorkloadExplanation {
  readonly kind: WorkloadKindName;
  readonly namespace: string;
  readonly name: string;
  /** Set when the whole workload is out of the controller's reach. */
  readonly gate?: ExplainReason | undefined;
  readonly sources: readonly SourceExplanation[];
  readonly facts: WorkloadFacts;
  readonly problems: readonly ReloadListProblem[];
}

export interface SourceUsage {
  readonly kind: WorkloadKindName;
  readonly namespace: string;
  readonly name: string;
  readonly source: SourceExplanation;
  readonly gate?: ExplainReason | undefined;
}

export interface SourceQueryExplanation {
  readonly key: SourceKey;
  readonly namespace: string;
  /** Workloads a change of the source rolls. */
  readonly rolls: readonly SourceUsage[];
  /** Workloads that reference or list it but a change does not roll. */
  readonly doesNotRoll: readonly SourceUsage[];
  /**
   * The controller explains a bounded number of workloads per source query; these many more may
   * use it and were not explained (ask for each workload to see them).
   */
  readonly unexplained?: number | undefined;
}

export interface ExplainReport {
  readonly config: ConfigOrigin;
  /** What explain assumes about facts only the running controller has. */
  readonly assumptions: readonly string[];
  readonly workload?: WorkloadExplanation | undefined;
  readonly source?: SourceQueryExplanation | undefined;
}

/** What the CLI assumes; the controller's endpoint knows these facts and assumes nothing. */
export const ASSUMPTIONS: readonly string[] = [
  'no create or delete of a source is pending in the controller (its marks are in memory)',
  "the controller's caches are synced and saw each source before its last change (R7 not applied)",
];
