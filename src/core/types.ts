/**
 * Shared vocabulary of kreload. Everything here is plain data: no client-node types, no I/O.
 * client-node objects stop at kube/projections.ts, which turns them into these views.
 */
import type { WorkloadKind } from '../rollout/kinds.ts';
import type { SourceKeyPrefix, SourceType } from './source-types.ts';
import type { RolloutStatusView } from '../rollout/rollout-status.ts';

/** The source types and their key prefixes are the rows of the source-type table. */
export type { SourceKeyPrefix, SourceType };

/** `configmap/<name>` etc. Always names an object in the workload's own namespace. */
export type SourceKey = `${SourceKeyPrefix}/${string}`;

export interface SourceRef {
  readonly type: SourceType;
  readonly namespace: string;
  readonly name: string;
}

/** The built-in kinds are the rows of the static kind table (§2.2). */
export type { WorkloadKind };

/**
 * A workload's kind: a built-in one or one configured at run time; which it is, and all it implies,
 * the effective kind table says (`KindTable` in rollout/kinds.ts).
 */
export type WorkloadKindName = string;

export interface WorkloadRef {
  readonly kind: WorkloadKindName;
  readonly namespace: string;
  readonly name: string;
}

/** `<Kind>/<namespace>/<name>`: the unit of work of the queue (§8). */
export type WorkloadKey = `${WorkloadKindName}/${string}/${string}`;

/** Annotations kept on a view: only the keys the rules read or kreload writes (§9.2). */
export type Annotations = Readonly<Record<string, string>>;

/** Object `metadata.labels`, kept only where a ReloadPolicy selector may read them. */
export type Labels = Readonly<Record<string, string>>;

/**
 * A ConfigMap, Secret or (for CSI) the desired state of a SecretProviderClass, reduced to what the
 * rules need. The data is hashed on arrival and dropped (§9.2): no value of the object survives here.
 */
export interface SourceView {
  readonly ref: SourceRef;
  readonly uid: string;
  readonly resourceVersion: string;
  /** RFC 3339, as served. */
  readonly creationTimestamp: string | undefined;
  /** SHA-1, 40 lowercase hex characters (§4.1). */
  readonly hash: string;
  /** Only the configured `ignore` and `match` keys, when present. */
  readonly annotations: Annotations;
  /** `metadata.labels`, kept only with `--enable-reload-policies` (policy selectors read them). */
  readonly labels?: Labels | undefined;
}

/** A container of a pod template, reduced to the references and `STAKATER_*` values (§9.2). */
export interface ContainerView {
  readonly name: string;
  /** `STAKATER_*` env vars with a literal value, by name. */
  readonly stakaterEnv: Readonly<Record<string, string>>;
  /** Names of ConfigMaps named by `env[].valueFrom.configMapKeyRef` or `envFrom[].configMapRef`. */
  readonly envConfigMaps: readonly string[];
  /** Names of Secrets named by `env[].valueFrom.secretKeyRef` or `envFrom[].secretRef`. */
  readonly envSecrets: readonly string[];
  /** Names of the volumes it mounts (`volumeMounts[].name`). */
  readonly volumeMounts: readonly string[];
}

/** A pod-template volume and the sources it refers to (§3.6 step 1). */
export interface VolumeView {
  readonly name: string;
  /** `configMap.name` and `projected.sources[].configMap.name`. */
  readonly configMaps: readonly string[];
  /** `secret.secretName` and `projected.sources[].secret.name`. */
  readonly secrets: readonly string[];
  /** `csi.volumeAttributes.secretProviderClass`, if any. */
  readonly secretProviderClass: string | undefined;
}

export interface PodSpecView {
  readonly containers: readonly ContainerView[];
  readonly initContainers: readonly ContainerView[];
  readonly volumes: readonly VolumeView[];
}

export interface OwnerView {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * A workload reduced to what reconciliation needs (§9.2 item 3). The spec flags are read only for
 * the kinds whose row lists them (`specFlags` in rollout/kinds.ts); on other kinds they are false.
 */
export interface WorkloadView {
  readonly ref: WorkloadRef;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number | undefined;
  readonly creationTimestamp: string | undefined;
  /** W: workload `metadata.annotations`, kept keys only. */
  readonly annotations: Annotations;
  /** PT: pod-template annotations (for CronJob, the job template's pod template), kept keys only. */
  readonly templateAnnotations: Annotations;
  readonly podSpec: PodSpecView;
  /** Controller ownerReference, if any. */
  readonly controller: OwnerView | undefined;
  /** Deployment / DeploymentConfig `spec.paused`. */
  readonly paused: boolean;
  /** CronJob `spec.suspend`. */
  readonly suspended: boolean;
  /** Job `spec.manualSelector`. */
  readonly manualSelector: boolean;
  /** Rollout `spec.workloadRef` is set (the Rollout has no template of its own). */
  readonly hasWorkloadRef: boolean;
  /** DeploymentConfig has a `ConfigChange` trigger. */
  readonly hasConfigChangeTrigger: boolean;
  /** `metadata.labels`, kept only with `--enable-reload-policies` (policy selectors read them). */
  readonly labels?: Labels | undefined;
  /** W label `kreload.io/revision-digest` (config revisions, docs/adr/0036), when present. */
  readonly revisionDigest?: string | undefined;
  /**
   * The status fields the kind's health model reads (rollout/health.ts); absent for kinds without
   * one (Job, CronJob). Never a reason to reconcile (watch/workload-store.ts).
   */
  readonly rolloutStatus?: RolloutStatusView | undefined;
}

/** Outcome of the decision algorithm (§3.5) for one workload and one source. */
export type DecisionResult = 'NO' | 'LIST' | 'AUTO';

/**
 * A bad annotation value found while deciding (§3.3, §3.4, §5.1, §7.2). Reported as a warning log
 * and an `InvalidAnnotation` Event on the object that carries it; never thrown.
 */
export interface AnnotationProblem {
  readonly on: 'workload' | 'source';
  /** For `on: 'source'`: the source that carries the value (in the workload's namespace). */
  readonly source?: { readonly type: SourceType; readonly name: string } | undefined;
  readonly key: string;
  readonly value: string;
  /** e.g. `invalid pattern "app-(" (missing closing )` */
  readonly problem: string;
  /** e.g. `ignored, other entries still apply` */
  readonly consequence: string;
  /** The reason of the Warning Event; `InvalidAnnotation` when unset. */
  readonly reason?: 'TooManySources' | undefined;
}

/** Reasons of `reloader_skipped_total` (§13.2). */
export type SkipReason =
  | 'ignored_or_not_selected'
  | 'no_data_change'
  | 'strategy_not_updated'
  | 'no_container'
  | 'dry_run';

export type ReloadStrategy = 'env-vars' | 'annotations';

export type { AnnotationKeys } from './annotations.ts';
/** The annotation table (core/annotations.ts) names every key; these are its defaults and fixed keys. */
export {
  BASELINE,
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  CRONJOB_INSTANTIATE,
  DEFAULT_ANNOTATION_KEYS,
  EVICT_BEFORE,
  FLAP_COOL_DOWN,
  FLAP_MAX_CHANGES,
  FLAP_PERIOD,
  HALT_ON_FAILED_ROLLOUT,
  INSTANTIATE_PENDING,
  LAST_RELOADED_FROM,
  POD_ROLLOUT_STRATEGY,
  PENDING_ROLL,
  RESTART_WINDOW,
  ROLLOUT_HALTED,
  ROLLOUT_FAILED,
  ROLLOUT_PRIORITY,
  SNAPSHOTS,
  SOURCE_HASHES,
  UNDO_FAILED_ROLLOUT,
} from './annotations.ts';

/** SHA-1 of `__RELOADER_EMPTY_DELETE_MARKER__`: the hash that stands for "source deleted". */
export const DELETE_MARKER = 'aae45badef99284e4dae01d6046154ea9d99532f';

/**
 * W *label*: SHA-1 of the live hashes the last config-revisions roll pinned (docs/adr/0036). A label,
 * because `kubectl rollout undo` of a Deployment restores the W annotations of the revision too.
 */
export const REVISION_DIGEST = 'kreload.io/revision-digest';
