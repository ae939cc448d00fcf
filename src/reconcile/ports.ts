/**
 * Ports of the reconciler. kube/ and watch/ implement them for real, src/testing/ in memory.
 * Nothing here carries source data: only hashes, UIDs and the kept annotations.
 */
import type { Mark } from '../core/marks.ts';
import type { PolicyBinding } from '../core/reload-policy.ts';
import type {
  AnnotationProblem,
  SkipReason,
  SourceKey,
  SourceType,
  SourceView,
  WorkloadKey,
  WorkloadKindName,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type { RevisionKind, WorkloadKindRow } from '../rollout/kinds.ts';
import type { SnapshotType } from '../rollout/snapshots.ts';
import type { PauseNotice } from '../rollout/pause.ts';
import type { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import type { Patch } from '../rollout/patch.ts';
import type { EvictionProgress } from '../rollout/evict.ts';
import type { EnvVarCollision, ReconcilePlan } from './plan/model.ts';

/** Source caches as the reconciler reads them (§9.2). Times are ms since the epoch. */
export interface SourceLookup {
  /**
   * The current object; for a SecretProviderClass a view whose hash is the desired hash of §4.4 and
   * whose annotations are those of the SPC object. Undefined: absent (or no SPCPS).
   */
  get(namespace: string, type: SourceType, name: string): SourceView | undefined;
  /** Names of the sources of one type in a namespace (candidates for reload lists). */
  namesInNamespace(namespace: string, type: SourceType): readonly string[];
  /**
   * False while the type's cache is not synced, or its watch of `namespace` is forbidden or its
   * API is missing: D is unknown there.
   */
  isHealthy(type: SourceType, namespace: string): boolean;
  /** `firstObserved(K)` of §5.4. */
  firstObserved(namespace: string, key: SourceKey): number | undefined;
  /** `lastChange(K)` of §5.4. */
  lastChange(namespace: string, key: SourceKey): number | undefined;
}

/** The ReloadPolicy cache (docs/reload-policy.md): what the policies give one workload. */
export interface PolicyLookup {
  bindingOf(view: WorkloadView): PolicyBinding;
}

/** The workload store (§9.2 item 3). */
export interface WorkloadLookup {
  get(key: WorkloadKey): WorkloadView | undefined;
  /** `relevantSince(W)` of §5.4. */
  relevantSince(key: WorkloadKey): number | undefined;
  /**
   * The cached view once the watch has delivered a version other than `resourceVersion` (at once
   * if it already has). Undefined when none arrives within `timeoutMs` or the workload leaves the
   * cache: the caller then GETs it.
   */
  newerThan(
    key: WorkloadKey,
    resourceVersion: string,
    timeoutMs: number,
  ): Promise<WorkloadView | undefined>;
  /**
   * The cached workloads of `kind` in `namespace` whose controller ownerReference has UID
   * `controllerUid`: for the Jobs of a CronJob (their W annotations hold `kreload.io/source-hashes`),
   * the idempotency guard of §7.3 item 1. Undefined when the kind is not watched (`jobs` ignored, API
   * forbidden or not yet synced): the guard is then skipped.
   */
  controlledBy(
    kind: WorkloadKindName,
    namespace: string,
    controllerUid: string,
  ): readonly WorkloadView[] | undefined;
}

/**
 * The baseline store (docs/adr/0046): the baselines of workloads kreload never rolled, kept in
 * kreload's own namespace instead of on the workloads. A record belongs to one workload object
 * (kind, namespace, name and UID): a workload re-created under the same name has none.
 */
export interface BaselineStore {
  /**
   * False once the store fell back to baselines on the workloads (its ConfigMaps are forbidden):
   * a first sight then writes B into W, as with `--baseline-store=workload`, and no record is
   * written or removed. The records read until then are still answered by `recordOf`.
   */
  inUse(): boolean;
  /** The workload's record (a `kreload.io/baseline` hash map), or undefined when there is none. */
  recordOf(view: WorkloadView): string | undefined;
  /**
   * Sets the workload's record (null removes it). Seen by `recordOf` at once; written in a later
   * batch, only while this process may write.
   */
  record(view: WorkloadView, value: string | null): void;
}

/** Marks held per workload (§5.4); the leader consumes them when a reconcile completes. */
export interface MarkLedger {
  marksOf(key: WorkloadKey): readonly Mark[];
  /** Drops exactly the given marks (by identity); marks added since they were read stay. */
  consume(key: WorkloadKey, marks: readonly Mark[]): void;
}

/** `DeleteOptions.preconditions` of a Job deletion (§7.4 item 2). */
export interface DeletePreconditions {
  readonly uid: string;
  readonly resourceVersion: string;
}

/** What the API returned for a patched workload. */
export interface PatchResult {
  /**
   * `metadata.generation` of the patched object: a template patch produces a new one, which
   * identifies the rollout it started (rollout/health.ts). Undefined when the answer has none.
   */
  readonly generation: number | undefined;
  /** `metadata.resourceVersion` of the patched object; undefined when the answer has none. */
  readonly resourceVersion: string | undefined;
}

/** What the API returned for a created object. */
export interface CreatedObject {
  /** The final name (generated when the body had `generateName`). */
  readonly name: string;
  readonly uid: string;
}

/**
 * Workload API calls (§10), implemented by kube/workload-client.ts. Every method rejects with
 * ApiError (HTTP status kept, `retryable` per §10: 409, 429, 5xx, timeouts and network errors) and
 * every mutating call sends `fieldManager=kreload`. `ref.kind` selects the resource through
 * `kindRow(ref.kind)` (group, version, plural).
 */
export interface WorkloadWriter {
  /**
   * PATCH `<resource>/<name>`. The Content-Type follows `patch.type`: `strategic` →
   * `application/strategic-merge-patch+json`, `merge` → `application/merge-patch+json`. The body
   * carries `metadata.resourceVersion` as the precondition (a stale one gives 409).
   */
  patch(ref: WorkloadRef, patch: Patch): Promise<PatchResult>;
  /** Fresh GET after a 409, projected to a view; undefined when the workload is gone (404). */
  get(ref: WorkloadRef): Promise<WorkloadView | undefined>;
  /**
   * Fresh GET of the full object as served (parsed JSON, unprojected); undefined on 404. Used for
   * Job recreation, the Job a CronJob roll creates and the containers list of a CRD merge patch.
   * The object is used for the one write and dropped.
   */
  getObject(ref: WorkloadRef): Promise<JsonObject | undefined>;
  /**
   * POST `body` to the `row` resource in `namespace` (`?fieldManager=kreload`). A name clash
   * (AlreadyExists) rejects with status 409.
   */
  create(row: WorkloadKindRow, namespace: string, body: JsonObject): Promise<CreatedObject>;
  /**
   * DELETE `<resource>/<name>` with body
   * `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background",
   *   "preconditions":{"uid":…,"resourceVersion":…}}`.
   * A failed precondition rejects with 409, a missing object with 404.
   */
  delete(ref: WorkloadRef, preconditions: DeletePreconditions): Promise<void>;
  /**
   * POST `deploymentconfigs/<name>/instantiate` with `body` (a DeploymentRequest, §7.6)
   * (`?fieldManager=kreload`).
   */
  instantiate(ref: WorkloadRef, body: JsonObject): Promise<void>;
}

/**
 * Pods of a workload rolled by eviction (docs/adr/0044), implemented by kube/pod-client.ts. Every
 * method rejects with ApiError. Objects are returned as served for one round and dropped.
 */
export interface PodApi {
  /** LIST `pods` in `namespace` with `labelSelector`. */
  listPods(namespace: string, labelSelector: string): Promise<readonly JsonObject[]>;
  /** LIST `replicasets` (apps/v1) in `namespace` with `labelSelector`. */
  listReplicaSets(namespace: string, labelSelector: string): Promise<readonly JsonObject[]>;
  /**
   * POST `pods/<name>/eviction` with a policy/v1 Eviction whose deleteOptions require `uid`. A
   * PodDisruptionBudget that forbids it now rejects with 429, a pod that is gone with 404, a pod of
   * another UID under the name with 409.
   */
  evict(namespace: string, pod: { readonly name: string; readonly uid: string }): Promise<void>;
}

/** A step of a roll by eviction (docs/adr/0044), for logs, Events and metrics. */
export type EvictionEvent =
  | {
      readonly view: WorkloadView;
      readonly result: 'evicted';
      readonly pod: string;
      readonly progress: EvictionProgress;
    }
  /** A PodDisruptionBudget (or the API's 429) refused; tried again after `retryInMs`. */
  | {
      readonly view: WorkloadView;
      readonly result: 'held';
      readonly pod: string;
      readonly reason: string;
      readonly retryInMs: number;
      readonly progress: EvictionProgress;
    }
  /**
   * The Eviction request of `pod` failed otherwise (a 403, a 5xx): the reconcile's error handling
   * goes on from there; this reports the request alone.
   */
  | {
      readonly view: WorkloadView;
      readonly result: 'failed';
      readonly pod: string;
      readonly progress: EvictionProgress;
    }
  /**
   * The roll cannot go on now: the workload's own spec (no selector), or the pods may not be listed
   * or evicted (403); tried again after `retryInMs`.
   */
  | {
      readonly view: WorkloadView;
      readonly result: 'blocked';
      readonly reason: string;
      readonly retryInMs: number;
    }
  | { readonly view: WorkloadView; readonly result: 'done'; readonly progress: EvictionProgress };

/** Why a CronJob roll created no Job (§7.3): suspended, or the guard found one already. */
export type JobCreationSkip = 'suspended' | 'already-created';

export interface RolledEvent {
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
  readonly attempts: number;
  /** From the first write attempt to the last acknowledgement (reloader_action_latency_seconds). */
  readonly durationMs: number;
  /** CronJob and Job rolls: the Job created. */
  readonly createdJob?: CreatedObject | undefined;
  /** CronJob rolls that created no Job. */
  readonly jobCreationSkipped?: JobCreationSkip | undefined;
  /** DeploymentConfig without a ConfigChange trigger: instantiate was acknowledged (§7.6). */
  readonly instantiated?: boolean | undefined;
  /** The generation the roll's PATCH produced: the rollout kreload started (rollout/health.ts). */
  readonly generation?: number | undefined;
}

/**
 * The request that failed: the reconcile's write (patch; for a Job its GET and DELETE), creating the
 * Job again after its deletion, or the instantiate of a DeploymentConfig.
 */
export type FailedStage = 'write' | 'create-job' | 'instantiate';

export interface FailedEvent {
  readonly key: WorkloadKey;
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
  readonly error: ApiError;
  /** True after the last retryable attempt; false for an error that is never retried. */
  readonly gaveUp: boolean;
  readonly attempts: number;
  readonly stage: FailedStage;
  /**
   * `create-job` only: the old Job is deleted and the new one is not created. Its manifest is kept
   * and creation is retried at every resync (§7.4 item 4): log the loss at error level.
   */
  readonly recreationPending: boolean;
}

export interface RetryEvent {
  readonly key: WorkloadKey;
  readonly error: ApiError;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly delayMs: number;
}

/**
 * A Job kreload deletes to roll it, journalled before the DELETE and kept until the Job exists again
 * (docs/adr/0019-job-recreation-journal.md). The manifest is the user's own Job as served, with
 * server fields dropped and the roll's change applied; it references Secrets by name only.
 */
export interface JournalEntry {
  readonly ref: WorkloadRef;
  /** The Job to create, as built before the deletion. */
  readonly manifest: JsonObject;
  /** UID of the Job to delete: a Job with another UID means the Job has appeared. */
  readonly deletedUid: string;
  /** When the entry was journalled, ms since the epoch. */
  readonly since: number;
}

/**
 * Durable storage of Job recreations (docs/adr/0019), so a crash, an OOM kill or a failover
 * between the DELETE and the CREATE loses no Job. Every method rejects with ApiError.
 */
export interface RecreationJournal {
  /** Stores `entry` (replacing one for the same Job); resolves once it is durable. */
  record(entry: JournalEntry): Promise<void>;
  /** Drops the entry of `ref`, if any. */
  remove(ref: WorkloadRef): Promise<void>;
  /** Every stored entry: the replay at start, on gaining leadership and at each resync. */
  entries(): Promise<readonly JournalEntry[]>;
}

/**
 * Why an entry is not replayed, the `reason` of `kreload_job_recreations_refused_total`:
 * `malformed` (not an entry of this version), `wrong_key` (stored under another Job's key),
 * `wrong_manifest` (its manifest is not that Job), `namespace_refused` (a namespace kreload does
 * not act on), `bad_signature` (not signed with kreload's key).
 */
export const JOURNAL_REFUSAL_REASONS = [
  'malformed',
  'wrong_key',
  'wrong_manifest',
  'namespace_refused',
  'bad_signature',
] as const;

export type JournalRefusalReason = (typeof JOURNAL_REFUSAL_REASONS)[number];

/** A step of a journalled Job recreation (§7.4 item 4, docs/adr/0019). */
export type RecreationRetryEvent =
  | { readonly key: WorkloadKey; readonly result: 'created'; readonly createdJob: CreatedObject }
  /** The Job exists again (created by someone else, or an earlier answer was lost). */
  | { readonly key: WorkloadKey; readonly result: 'appeared' }
  /** The DELETE never took effect: the Job still exists, nothing to create. */
  | { readonly key: WorkloadKey; readonly result: 'not-deleted' }
  /** The lease was lost between the DELETE and the CREATE: the next leader replays the journal. */
  | { readonly key: WorkloadKey; readonly result: 'handed-over' }
  /**
   * The journal no longer holds the entry (removed, edited into one kreload refuses, or deleted
   * with the whole journal): the Job is not created.
   */
  | { readonly key: WorkloadKey; readonly result: 'withdrawn' }
  | { readonly key: WorkloadKey; readonly result: 'failed'; readonly error: ApiError };

/** Hooks for metrics, Events and logs; every hook fires once per occasion (§13.2). */
export interface ReconcileObserver {
  onRolled(event: RolledEvent): void;
  onBaselined(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void;
  /** A paused Deployment was resumed (§7.2 rule 4), alone or in the same patch as a roll. */
  onResumed(event: { readonly view: WorkloadView; readonly attempts: number }): void;
  onSkipped(event: {
    readonly key: WorkloadKey;
    readonly view: WorkloadView;
    readonly reason: SkipReason;
  }): void;
  onDryRun(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void;
  onFailed(event: FailedEvent): void;
  onRetry(event: RetryEvent): void;
  /** The workload vanished before or during the write (404): debug level only. */
  onGone(event: { readonly key: WorkloadKey }): void;
  onProblems(event: {
    readonly view: WorkloadView;
    readonly problems: readonly AnnotationProblem[];
  }): void;
  onCollision(event: {
    readonly view: WorkloadView;
    readonly collisions: readonly EnvVarCollision[];
  }): void;
  /**
   * `paused-by-other`: a roll was applied to a Deployment someone else paused; nothing is resumed
   * (§7.2 rule 3, info log). `pause-period-ignored`: pause-period on a kind without it (§3.1,
   * warning log); fired once per workload UID per process.
   */
  onPauseNotice(event: { readonly view: WorkloadView; readonly notice: PauseNotice }): void;
  onRecreationRetried(event: RecreationRetryEvent): void;
  /**
   * Config revisions (docs/adr/0036): snapshots handed to their revisions (`adopted`) or deleted as
   * left over (`swept`), or the adoption pass failed (retried at the next reconcile).
   */
  onSnapshots(event: SnapshotsEvent): void;
  /** A step of a roll by eviction (docs/adr/0044). */
  onEviction(event: EvictionEvent): void;
}

export type SnapshotsEvent =
  | {
      readonly view: WorkloadView;
      readonly adopted: readonly string[];
      readonly swept: readonly string[];
    }
  | { readonly view: WorkloadView; readonly error: ApiError };

/**
 * ConfigMaps and Secrets as config revisions use them (docs/adr/0036), implemented by
 * kube/snapshot-client.ts. Every method rejects with ApiError; a source's content is returned for
 * one copy and never kept.
 */
/** A snapshot as read: the resourceVersion a write's precondition names. */
export interface SnapshotVersion {
  readonly namespace: string;
  readonly name: string;
  readonly resourceVersion: string;
}

export interface SnapshotApi {
  /** GET, as served; undefined on 404. */
  get(type: SnapshotType, namespace: string, name: string): Promise<JsonObject | undefined>;
  /** POST (`?fieldManager=kreload`); AlreadyExists rejects with status 409. */
  create(type: SnapshotType, namespace: string, body: JsonObject): Promise<void>;
  /** LIST with a label selector. */
  list(
    type: SnapshotType,
    namespace: string,
    labelSelector: string,
  ): Promise<readonly JsonObject[]>;
  /**
   * Merge patch of `metadata.ownerReferences` (and of the given labels, `null` removes one) with
   * the resourceVersion precondition (a stale one gives 409).
   */
  setOwners(
    type: SnapshotType,
    ref: SnapshotVersion,
    owners: readonly JsonObject[],
    labels?: Readonly<Record<string, string | null>>,
  ): Promise<void>;
  /**
   * Appends one owner and one label (value `true`) to `current`, the object as read, without a
   * resourceVersion precondition: the workloads that share a snapshot append concurrently without
   * conflicting. The object must still have current's uid (a JSON patch `test`: another object
   * under the name rejects with 409 or 422).
   */
  addOwner(
    type: SnapshotType,
    current: JsonObject,
    owner: JsonObject,
    label: string,
  ): Promise<void>;
  /**
   * DELETE with UID and resourceVersion preconditions (an owner added since the read gives 409);
   * 404 and 409 reject.
   */
  delete(type: SnapshotType, ref: SnapshotVersion & { readonly uid: string }): Promise<void>;
  /** LIST of the ReplicaSets or ControllerRevisions of a namespace. */
  revisions(kind: RevisionKind, namespace: string): Promise<readonly JsonObject[]>;
}
