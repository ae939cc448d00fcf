/**
 * The one table of workload kinds (§2.2): every fact that varies by kind is a field of its row, and
 * the `WorkloadKind` union, the metric `resource_type` values and the planned watches derive from
 * it. This module imports only types from rollout-status.ts and one key from core/annotations.ts
 * (both import nothing), so core/types.ts can take the kind union from here without an import cycle.
 */
import { POD_ROLLOUT_STRATEGY } from '../core/annotations.ts';
import type { HealthModel } from './rollout-status.ts';

/** W or PT annotations of one object (the same type as core's `Annotations`). */
type AnnotationMap = Readonly<Record<string, string>>;

/**
 * Content type of a patch (§10): strategic merge for built-in kinds (apps, batch, DeploymentConfig),
 * JSON merge patch (RFC 7386) for custom resources (Argo Rollout).
 */
export type PatchType = 'strategic' | 'merge';

/** Where a kind keeps the applied state A of §5.1: pod-template (PT) or workload (W) annotations. */
export type AppliedStatePlacement = 'PT' | 'W';

/**
 * What a roll does (§7):
 * - `template-patch`: patch the pod template (Deployment, DaemonSet, StatefulSet, Rollout, DC);
 * - `create-job-from-cronjob`: create one Job from the job template, then record W state (CronJob);
 * - `recreate-job`: delete the Job and create it again under the same name (Job);
 * - `rollout-restart`: set `spec.restartAt` and record W state (Rollout with `restart`);
 * - `evict-pods`: record W state and evict the pods through the Eviction API, never touching the
 *   template (W `kreload.io/rollout-strategy: evict`, docs/adr/0044).
 */
export type RollActionType =
  'template-patch' | 'create-job-from-cronjob' | 'recreate-job' | 'rollout-restart' | 'evict-pods';

/**
 * How `evict-pods` treats a kind's pods (docs/adr/0044): how they are found, how many the workload
 * wants and how many may be unavailable at once.
 */
export interface PodEvictionFacts {
  /**
   * Pods whose controller is the workload (`direct`), or a ReplicaSet whose controller is the
   * workload (`replica-sets`), or every pod the selector matches (`selector`: a configured kind
   * whose controller owns its pods through objects kreload does not know).
   */
  readonly owners: 'direct' | 'replica-sets' | 'selector';
  /** Where the object says how many pods it wants (`spec.replicas`, a DaemonSet's status). */
  readonly desiredPath: readonly string[];
  /** The workload's own `maxUnavailable` (an int or a percentage); absent: one pod at a time. */
  readonly maxUnavailablePath: readonly string[];
  /** Where the object keeps the LabelSelector of its pods (`spec.selector`). */
  readonly selectorPath: readonly string[];
}

const REPLICAS = ['spec', 'replicas'] as const;

/**
 * A per-kind spec fact the projection copies onto the view (§9.2 item 3), named as the `WorkloadView`
 * field it fills. A kind's row lists the ones it has; the rest are always false on its views.
 */
export type WorkloadSpecFlag =
  'paused' | 'suspended' | 'manualSelector' | 'hasWorkloadRef' | 'hasConfigChangeTrigger';

/**
 * Where a configured kind (docs/custom-kinds.md) keeps the numbers of the `replica-set` health
 * model; the built-in kinds read theirs from fixed places (kube/workload-projection.ts).
 */
export interface ReplicaStatusPaths {
  readonly observedGeneration: readonly string[] | undefined;
  /** How many pods the object wants; absent on the object: 1. */
  readonly desired: readonly string[];
  readonly replicas: readonly string[] | undefined;
  readonly updated: readonly string[];
  readonly available: readonly string[];
}

/** One supported workload kind: everything that varies by kind, in one row. */
interface KindRowFields {
  readonly kind: string;
  /** API group; '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** `group/version`, or `version` for the core group. */
  readonly apiVersion: string;
  /**
   * Resource name: URL segment, RBAC resource (scripts/gen-chart-kinds.ts), `resource_type` metric
   * label (§13.2) and the kind's key in `/readyz` `checks.kinds` (http/readiness.ts).
   */
  readonly plural: string;
  /** kubectl's short names, which `kreload explain` accepts too. */
  readonly shortNames: readonly string[];
  /**
   * Path of the pod template (PT) inside the object; undefined for a configured kind without one,
   * which rolls only by eviction.
   */
  readonly templatePath: readonly string[] | undefined;
  /** Patch type for template changes. */
  readonly templatePatchType: PatchType;
  /** Patch type for metadata-only writes (baselines, W state). */
  readonly metadataPatchType: PatchType;
  readonly appliedState: AppliedStatePlacement;
  /** Argo Rollout: W `rollout-strategy: restart` moves the applied state to W (§7.5). */
  readonly supportsRestartStrategy: boolean;
  /** The kind's roll; `rolloutStrategy` may replace it per workload (see `rollActionOf`). */
  readonly rollAction: RollActionType;
  /** Whether deleting a tracked source can roll it (§5.1 MARKER; Job and CronJob never do, D11). */
  readonly rollsOnDelete: boolean;
  /** Whether `pause-period` applies (§7.2). */
  readonly supportsPausePeriod: boolean;
  /** DeploymentConfig: a template change without a `ConfigChange` trigger also needs instantiate. */
  readonly instantiatesWithoutConfigChangeTrigger: boolean;
  /** The kind a roll creates one object of (CronJob: a Job, §7.3); undefined for the others. */
  readonly runKind: string | undefined;
  /** Owner kind whose controlled objects are never reconciled (Job owned by a CronJob, §7.4 item 5). */
  readonly notReconciledWhenControlledBy: string | undefined;
  /** Spec facts the projection reads for this kind (`spec.paused`, `spec.suspend`, …). */
  readonly specFlags: readonly WorkloadSpecFlag[];
  /**
   * Optional API (§2.2): watched only once discovery says it is served (Rollout, DeploymentConfig);
   * the built-in kinds are watched without asking.
   */
  readonly optionalApi: boolean;
  /**
   * Not watched when this option is off: `--is-Argo-Rollouts` for Rollout (off unless true),
   * `--is-openshift` for DeploymentConfig (on unless false).
   */
  readonly enabledByOption: 'isArgoRollouts' | 'isOpenshift' | undefined;
  /** `--ignored-workload-types` drops the kind when it names its plural (§11 item 4). */
  readonly ignorable: boolean;
  /**
   * The object Kubernetes keeps one of per pod template (docs/adr/0036): what owns a config
   * snapshot. Undefined: the kind has no revision history and config revisions do not apply.
   */
  readonly revisionKind: RevisionKind | undefined;
  /** Which revision object runs now (`kreload history`); only read where `revisionKind` is set. */
  readonly liveRevision: LiveRevisionRule;
  /** Logged when discovery finds the kind's optional API not served; undefined: nothing logged. */
  readonly absentApiWarning: string | undefined;
  /**
   * How the kind's status tells a rollout's progress (rollout/health.ts); undefined for kinds whose
   * roll is not a rollout of pods (Job, CronJob).
   */
  readonly health: HealthModel | undefined;
  /**
   * Where the `replica-set` model reads its numbers when they are not where a Deployment keeps
   * them (configured kinds); undefined: the model's own places.
   */
  readonly statusPaths: ReplicaStatusPaths | undefined;
  /** How `evict-pods` treats the kind's pods; undefined: the kind is never rolled by eviction. */
  readonly podEviction: PodEvictionFacts | undefined;
  /** Supplied at run time (`--custom-workload-kinds`), not built in. */
  readonly configured: boolean;
  /**
   * What the chart's RBAC grants for the kind (§13.11): these verbs on its own `plural` in its
   * `group`, and what its roll writes elsewhere. The chart's rules are generated from this field
   * (scripts/gen-tables.ts).
   */
  readonly rbac: KindRbac;
}

/** An RBAC verb the chart grants. */
export type RbacVerb = 'get' | 'list' | 'watch' | 'patch' | 'create' | 'delete';

/** One resource and the verbs on it, in the API group `group` ('' for the core group). */
export interface RbacGrant {
  readonly group: string;
  readonly resource: string;
  readonly verbs: readonly RbacVerb[];
  /**
   * Needed only by this roll action, which a workload opts into: the chart grants it behind its
   * own value (`evict-pods`: `reloader.enableEvictStrategy`, off by default).
   */
  readonly onlyFor?: 'evict-pods' | undefined;
}

export interface KindRbac {
  /** Verbs on the kind's own resource. */
  readonly verbs: readonly RbacVerb[];
  /** Further resources the roll writes: the Job a CronJob creates, a DeploymentConfig's instantiate. */
  readonly also: readonly RbacGrant[];
}

/**
 * How the live revision is found: a Deployment names its number in an annotation, a StatefulSet
 * its update revision in its status; for the rest it is the newest one (a DaemonSet's controller
 * renumbers the revision it returns to).
 */
export type LiveRevisionRule = 'revision-annotation' | 'update-revision' | 'newest';

/** The per-template history objects of the apps kinds (docs/adr/0036). */
export type RevisionKind = 'ReplicaSet' | 'ControllerRevision';

const APPS_V1 = { group: 'apps', version: 'v1', apiVersion: 'apps/v1' } as const;
const BATCH_V1 = { group: 'batch', version: 'v1', apiVersion: 'batch/v1' } as const;
const POD_TEMPLATE = ['spec', 'template'] as const;

/**
 * What `evict-pods` needs besides the kind's own verbs (docs/adr/0044): find the pods (and, for a
 * Deployment or Rollout, their ReplicaSets) and evict them through the Eviction subresource.
 */
const EVICTION_GRANTS = [
  { group: '', resource: 'pods', verbs: ['get', 'list'], onlyFor: 'evict-pods' },
  { group: '', resource: 'pods/eviction', verbs: ['create'], onlyFor: 'evict-pods' },
] as const satisfies readonly RbacGrant[];
const REPLICA_SET_LIST = {
  group: 'apps',
  resource: 'replicasets',
  verbs: ['list'],
  onlyFor: 'evict-pods',
} as const;
const OWN_VERBS = ['get', 'list', 'watch', 'patch'] as const;

/** The template-patching built-in kinds share everything but their names (§7.1). */
const BUILT_IN_TEMPLATE_KIND = {
  ...APPS_V1,
  templatePath: POD_TEMPLATE,
  templatePatchType: 'strategic',
  metadataPatchType: 'strategic',
  appliedState: 'PT',
  supportsRestartStrategy: false,
  rollAction: 'template-patch',
  rollsOnDelete: true,
  supportsPausePeriod: false,
  instantiatesWithoutConfigChangeTrigger: false,
  runKind: undefined,
  notReconciledWhenControlledBy: undefined,
  specFlags: [],
  optionalApi: false,
  enabledByOption: undefined,
  ignorable: false,
  revisionKind: undefined,
  shortNames: [],
  liveRevision: 'newest',
  absentApiWarning: undefined,
  health: undefined,
  statusPaths: undefined,
  podEviction: undefined,
  configured: false,
  rbac: { verbs: OWN_VERBS, also: [] },
} as const;

const SELECTOR = ['spec', 'selector'] as const;

/** Supported kinds (§2.2), one row each; `as const` so the unions below derive from it. */
const ROWS = [
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'Deployment',
    shortNames: ['deploy'],
    plural: 'deployments',
    supportsPausePeriod: true,
    specFlags: ['paused'],
    revisionKind: 'ReplicaSet',
    liveRevision: 'revision-annotation',
    health: 'replica-set',
    podEviction: {
      owners: 'replica-sets',
      selectorPath: SELECTOR,
      desiredPath: REPLICAS,
      maxUnavailablePath: ['spec', 'strategy', 'rollingUpdate', 'maxUnavailable'],
    },
    rbac: { verbs: OWN_VERBS, also: [...EVICTION_GRANTS, REPLICA_SET_LIST] },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'DaemonSet',
    shortNames: ['ds'],
    plural: 'daemonsets',
    revisionKind: 'ControllerRevision',
    health: 'daemon-set',
    podEviction: {
      owners: 'direct',
      selectorPath: SELECTOR,
      desiredPath: ['status', 'desiredNumberScheduled'],
      maxUnavailablePath: ['spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable'],
    },
    rbac: { verbs: OWN_VERBS, also: EVICTION_GRANTS },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    kind: 'StatefulSet',
    shortNames: ['sts'],
    plural: 'statefulsets',
    revisionKind: 'ControllerRevision',
    liveRevision: 'update-revision',
    health: 'stateful-set',
    podEviction: {
      owners: 'direct',
      selectorPath: SELECTOR,
      desiredPath: REPLICAS,
      maxUnavailablePath: ['spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable'],
    },
    rbac: { verbs: OWN_VERBS, also: EVICTION_GRANTS },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    ...BATCH_V1,
    kind: 'CronJob',
    shortNames: ['cj'],
    plural: 'cronjobs',
    templatePath: ['spec', 'jobTemplate', 'spec', 'template'],
    appliedState: 'W',
    rollAction: 'create-job-from-cronjob',
    runKind: 'Job',
    rollsOnDelete: false,
    specFlags: ['suspended'],
    ignorable: true,
    rbac: {
      verbs: ['get', 'list', 'watch', 'patch'],
      also: [{ group: 'batch', resource: 'jobs', verbs: ['create'] }],
    },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    ...BATCH_V1,
    kind: 'Job',
    plural: 'jobs',
    rollAction: 'recreate-job',
    rollsOnDelete: false,
    notReconciledWhenControlledBy: 'CronJob',
    specFlags: ['manualSelector'],
    ignorable: true,
    rbac: { verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'], also: [] },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    group: 'argoproj.io',
    version: 'v1alpha1',
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Rollout',
    shortNames: ['ro'],
    plural: 'rollouts',
    templatePatchType: 'merge',
    metadataPatchType: 'merge',
    supportsRestartStrategy: true,
    specFlags: ['hasWorkloadRef'],
    optionalApi: true,
    enabledByOption: 'isArgoRollouts',
    absentApiWarning: 'Argo Rollouts API is not served; Rollouts are not watched until it is',
    health: 'rollout-phase',
    podEviction: {
      owners: 'replica-sets',
      selectorPath: SELECTOR,
      desiredPath: REPLICAS,
      maxUnavailablePath: ['spec', 'strategy', 'canary', 'maxUnavailable'],
    },
    rbac: { verbs: OWN_VERBS, also: [...EVICTION_GRANTS, REPLICA_SET_LIST] },
  },
  {
    ...BUILT_IN_TEMPLATE_KIND,
    group: 'apps.openshift.io',
    version: 'v1',
    apiVersion: 'apps.openshift.io/v1',
    kind: 'DeploymentConfig',
    shortNames: ['dc'],
    plural: 'deploymentconfigs',
    instantiatesWithoutConfigChangeTrigger: true,
    specFlags: ['paused', 'hasConfigChangeTrigger'],
    optionalApi: true,
    enabledByOption: 'isOpenshift',
    health: 'replica-set',
    rbac: {
      verbs: ['get', 'list', 'watch', 'patch'],
      also: [
        {
          group: 'apps.openshift.io',
          resource: 'deploymentconfigs/instantiate',
          verbs: ['create'],
        },
      ],
    },
  },
] as const satisfies readonly KindRowFields[];

/** A built-in workload kind: the `kind` of a row of the static table. */
export type WorkloadKind = (typeof ROWS)[number]['kind'];

/** A built-in workload kind's resource name: the `plural` of a row. */
export type WorkloadPlural = (typeof ROWS)[number]['plural'];

/** The plurals `--ignored-workload-types` accepts: those of the rows marked `ignorable`. */
export type IgnorablePlural = Extract<
  (typeof ROWS)[number],
  { readonly ignorable: true }
>['plural'];

/**
 * A row of the effective table: a built-in row or one configured at run time, whose kind and
 * plural are whatever the configuration names.
 */
export type WorkloadKindRow = KindRowFields;

/** A row of the static table. */
export interface BuiltInKindRow extends KindRowFields {
  readonly kind: WorkloadKind;
  readonly plural: WorkloadPlural;
  readonly runKind: WorkloadKind | undefined;
}

/** The built-in rows (§2.2). The table the controller uses is a `KindTable` built from them. */
export const WORKLOAD_KINDS: readonly BuiltInKindRow[] = ROWS;

/** Thrown when a kind without a row reaches code that needs one: a wiring bug, not bad input. */
export class UnsupportedKindError extends Error {
  constructor(kind: string) {
    super(`workload kind ${kind} is not supported`);
    this.name = 'UnsupportedKindError';
  }
}

/** The built-in row of a kind; undefined for a kind that is not built in. */
export function findKindRow(kind: string): BuiltInKindRow | undefined {
  return WORKLOAD_KINDS.find((row) => row.kind === kind);
}

/** The built-in row of a kind; throws for a kind without one. */
export function kindRow(kind: WorkloadKind): BuiltInKindRow {
  const row = findKindRow(kind);
  if (!row) throw new UnsupportedKindError(kind);
  return row;
}

/**
 * The effective kind table: the built-in rows and the rows configured at run time, in that order.
 * Built once at startup from the options and passed to every component that looks a kind up, so a
 * configured kind is watched, projected, explained, counted and evented like a built-in one.
 */
export interface KindTable {
  readonly rows: readonly WorkloadKindRow[];
  find(kind: string): WorkloadKindRow | undefined;
  /** The row of a kind; throws `UnsupportedKindError` for a kind without one (a wiring bug). */
  row(kind: string): WorkloadKindRow;
}

/** The table of the built-in rows plus `configured` (validated by config/custom-kinds.ts). */
export function kindTable(configured: readonly WorkloadKindRow[] = []): KindTable {
  const rows: readonly WorkloadKindRow[] = [...WORKLOAD_KINDS, ...configured];
  const byKind = new Map(rows.map((row) => [row.kind, row]));
  return {
    rows,
    find: (kind) => byKind.get(kind),
    row: (kind) => {
      const row = byKind.get(kind);
      if (!row) throw new UnsupportedKindError(kind);
      return row;
    },
  };
}

/** The table of the built-in kinds alone (tests, and tools that read no configuration). */
export const BUILT_IN_KIND_TABLE: KindTable = kindTable();

function usesRestartStrategy(
  row: WorkloadKindRow,
  workloadAnnotations: AnnotationMap,
  rolloutStrategyKey: string,
): boolean {
  return row.supportsRestartStrategy && workloadAnnotations[rolloutStrategyKey] === 'restart';
}

/** W `kreload.io/rollout-strategy: evict` (docs/adr/0044) on a kind with a pod ownership. */
export const EVICT_STRATEGY_VALUE = 'evict';

/** Whether this workload rolls by evicting its pods. */
export function usesEvictStrategy(
  row: WorkloadKindRow,
  workloadAnnotations: AnnotationMap,
): boolean {
  return (
    row.podEviction !== undefined &&
    workloadAnnotations[POD_ROLLOUT_STRATEGY] === EVICT_STRATEGY_VALUE
  );
}

/**
 * Where this workload keeps its applied state: the kind's placement, except that an Argo Rollout
 * with `rollout-strategy: restart` and a workload rolled by eviction keep it in W (§5.1, §7.5).
 */
export function appliedStatePlacement(
  row: WorkloadKindRow,
  workloadAnnotations: AnnotationMap,
  rolloutStrategyKey: string,
): AppliedStatePlacement {
  return usesRestartStrategy(row, workloadAnnotations, rolloutStrategyKey) ||
    usesEvictStrategy(row, workloadAnnotations)
    ? 'W'
    : row.appliedState;
}

/**
 * The roll of this workload: the kind's, `evict-pods` under `kreload.io/rollout-strategy: evict`,
 * or `rollout-restart` for a Rollout using `restart`.
 */
export function rollActionOf(
  row: WorkloadKindRow,
  workloadAnnotations: AnnotationMap,
  rolloutStrategyKey: string,
): RollActionType {
  if (usesEvictStrategy(row, workloadAnnotations)) return 'evict-pods';
  return usesRestartStrategy(row, workloadAnnotations, rolloutStrategyKey)
    ? 'rollout-restart'
    : row.rollAction;
}

/**
 * Whether the kind's roll deletes the object and creates it again: the rolls the recreation journal
 * covers between the two writes (docs/adr/0019).
 */
export function rollsByRecreation(row: WorkloadKindRow): boolean {
  return row.rollAction === 'recreate-job';
}

/** The kind the recreation journal holds entries of: the one whose roll re-creates it. */
export function recreatedKindRow(): BuiltInKindRow {
  const row = WORKLOAD_KINDS.find(rollsByRecreation);
  if (!row) throw new UnsupportedKindError('rolled by re-creation');
  return row;
}

/** §7.4 item 5: a Job controlled by a CronJob is left to its CronJob. */
export function isReconciled(
  row: WorkloadKindRow,
  controller: { readonly kind: string } | undefined,
): boolean {
  return (
    row.notReconciledWhenControlledBy === undefined ||
    controller?.kind !== row.notReconciledWhenControlledBy
  );
}

/**
 * A kind configured at run time (`--custom-workload-kinds`, docs/custom-kinds.md), as
 * config/custom-kinds.ts validated it. Everything else of its row follows from these facts.
 */
export interface ConfiguredKindSpec {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly shortNames: readonly string[];
  /** Absent: the kind rolls only by eviction. */
  readonly templatePath: readonly string[] | undefined;
  /** `rollout`: the pod template is patched; `evict`: the pods are evicted (docs/adr/0044). */
  readonly strategies: readonly ConfiguredStrategy[];
  /** Present when `evict` is allowed. */
  readonly pods:
    | {
        readonly selectorPath: readonly string[];
        readonly owners: 'direct' | 'selector';
        readonly desiredPath: readonly string[];
        readonly maxUnavailablePath: readonly string[];
      }
    | undefined;
  readonly status: ReplicaStatusPaths | undefined;
}

/** What a configured kind may be rolled by. */
export type ConfiguredStrategy = 'rollout' | 'evict';

/**
 * The row of a configured kind: a custom resource, so merge patches (§10); an optional API, so it
 * is watched once discovery says it is served; W state when it rolls by eviction alone.
 */
export function configuredKindRow(spec: ConfiguredKindSpec): WorkloadKindRow {
  const rollsOut = spec.strategies.includes('rollout');
  const pods = spec.strategies.includes('evict') ? spec.pods : undefined;
  const evicts = pods !== undefined;
  return {
    ...BUILT_IN_TEMPLATE_KIND,
    group: spec.group,
    version: spec.version,
    apiVersion: `${spec.group}/${spec.version}`,
    kind: spec.kind,
    plural: spec.plural,
    shortNames: spec.shortNames,
    templatePath: spec.templatePath,
    templatePatchType: 'merge',
    metadataPatchType: 'merge',
    appliedState: rollsOut ? 'PT' : 'W',
    rollAction: rollsOut ? 'template-patch' : 'evict-pods',
    optionalApi: true,
    absentApiWarning: `the ${spec.kind} API (${spec.group}/${spec.version}) is not served; ${spec.plural} are not watched until it is`,
    health: spec.status === undefined ? undefined : 'replica-set',
    statusPaths: spec.status,
    podEviction: pods,
    configured: true,
    rbac: { verbs: OWN_VERBS, also: evicts ? EVICTION_GRANTS : [] },
  };
}
