/**
 * The writes of one reconcile, one small strategy per kind of write (§7): the kind's roll action,
 * or a metadata-only patch (baselines, and a resume that comes without a roll). The reconciler owns
 * the retry policy of §10 and runs a strategy once per attempt; a strategy records in `memo` what an
 * earlier attempt of the same reconcile already did, so a retried attempt never repeats it.
 */
import { workloadKey } from '../core/keys.ts';
import { SOURCE_HASHES } from '../core/types.ts';
import type { WorkloadRef, WorkloadView } from '../core/types.ts';
import { buildJobFromCronJob, buildRecreatedJob, cronJobRunName } from '../rollout/jobs.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { isJsonObject, objectAt, stringAt } from '../core/json.ts';
import type { PodEvictionFacts, RollActionType, WorkloadKindRow } from '../rollout/kinds.ts';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import type { PodFacts } from '../rollout/evict.ts';
import { evictBeforeOf, evictionScopeOf, ownedPods } from '../rollout/evict.ts';
import type { PausePlan } from '../rollout/pause.ts';
import type { LiveTemplate, WorkloadChanges } from '../rollout/patch.ts';
import {
  buildEvictStartPatch,
  buildPatch,
  buildRestartPatch,
  deploymentRequest,
  needsLiveContainers,
  rfc3339Seconds,
} from '../rollout/patch.ts';
import type { PendingRecreation, PendingRecreations } from './pending-recreations.ts';
import type { ReconcilePlan, RevisionPlan } from './plan/model.ts';
import type {
  CreatedObject,
  JobCreationSkip,
  PodApi,
  SnapshotApi,
  WorkloadLookup,
  WorkloadWriter,
} from './ports.ts';
import type { PinnedChange } from './snapshot-writes.ts';
import { pinSnapshots } from './snapshot-writes.ts';
import { ApiError } from '../core/api-error.ts';

/** What one write acts on: the view it was planned from, the plan and the pause rules' verdict. */
export interface Target {
  readonly view: WorkloadView;
  readonly plan: ReconcilePlan;
  readonly pause: PausePlan;
}

/** Steps acknowledged by earlier attempts of one reconcile. Mutable, and lives for one reconcile. */
export interface WriteMemo {
  /** CronJob: the Job this reconcile created, and the `source-hashes` it carries. */
  createdJob?: CreatedObject;
  createdJobFor?: string;
  jobCreationSkipped?: JobCreationSkip | undefined;
  /** Job: the recreation journalled before this reconcile's DELETE (docs/adr/0019). */
  journalled?: PendingRecreation;
  /** The generation the last acknowledged PATCH of this reconcile produced. */
  patchedGeneration?: number | undefined;
}

/**
 * A step after the write was acknowledged that must never repeat it: creating the Job again after
 * its deletion (§7.4 item 3), or instantiating a DeploymentConfig after its template patch (§7.6).
 */
export type FollowUp =
  | { readonly kind: 'create-job'; readonly manifest: JsonObject }
  | { readonly kind: 'instantiate'; readonly body: JsonObject };

/**
 * The lease was lost between two requests of one write (§13.4): nothing more may be sent. Thrown by
 * a strategy; the reconciler ends the reconcile as `not-leader`.
 */
export class LeadershipLostError extends Error {
  constructor(ref: WorkloadRef) {
    super(`lost the lease while writing ${ref.kind} ${ref.namespace}/${ref.name}`);
    this.name = 'LeadershipLostError';
  }
}

export interface WriteContext {
  readonly row: WorkloadKindRow;
  readonly target: Target;
  readonly writer: WorkloadWriter;
  readonly workloads: WorkloadLookup;
  /** ms since the epoch, at the start of this attempt. */
  readonly now: number;
  readonly memo: WriteMemo;
  /** Whether a write may start now (§13.4); asked before every mutating request. */
  readonly mayWrite: () => boolean;
  /** The Job recreation journal (docs/adr/0019). */
  readonly recreations: PendingRecreations;
  /** ConfigMaps and Secrets for config revisions (docs/adr/0036); absent when they are off. */
  readonly snapshots?: SnapshotApi | undefined;
  /** Pods for rolls by eviction (docs/adr/0044). */
  readonly pods?: PodApi | undefined;
}

/** Throws LeadershipLostError unless a write may start now. */
function ensureLeader(context: WriteContext): void {
  if (!context.mayWrite()) throw new LeadershipLostError(context.target.view.ref);
}

export interface WriteStrategy {
  /** Sends this attempt's requests; rejects with ApiError. Resolves to the follow-up, if any. */
  write(context: WriteContext): Promise<FollowUp | undefined>;
}

/** A 404 seen as an absent object: the workload vanished between the cache and the write. */
export function vanished(ref: WorkloadRef): ApiError {
  return new ApiError(`${ref.kind} ${ref.namespace}/${ref.name} not found`, {
    status: 404,
    retryable: false,
  });
}

/** The served object has another UID than the cached view: re-read and plan again (§10). */
function replaced(ref: WorkloadRef): ApiError {
  return new ApiError(`${ref.kind} ${ref.namespace}/${ref.name} was replaced by another object`, {
    status: 409,
    retryable: true,
  });
}

/** The W-only part of a plan: what a write that leaves the template alone records. */
function workloadState(plan: ReconcilePlan): WorkloadChanges {
  return {
    envWrites: [],
    workloadSourceHashes: plan.workloadSourceHashes,
    baseline: plan.baseline,
  };
}

async function patchIfAny(
  context: WriteContext,
  changes: WorkloadChanges,
  live?: LiveTemplate,
): Promise<void> {
  const { row, target, writer } = context;
  const patch = buildPatch(row, target.view, changes, live);
  if (!patch) return;
  ensureLeader(context);
  context.memo.patchedGeneration = (await writer.patch(target.view.ref, patch)).generation;
}

async function liveTemplate(context: WriteContext): Promise<LiveTemplate> {
  const { view } = context.target;
  const object = await context.writer.getObject(view.ref);
  if (!object) throw vanished(view.ref);
  const path = context.row.templatePath;
  const containers = path && objectAt(object, [...path, 'spec'])?.containers;
  return { containers: Array.isArray(containers) ? containers : [] };
}

/** Baselines and pruning (§5.6 item 2), and a resume that comes without a roll (§7.2 rule 4). */
const METADATA_WRITE: WriteStrategy = {
  async write(context) {
    const { plan, pause } = context.target;
    await patchIfAny(context, { ...workloadState(plan), pause: pause.write });
    return undefined;
  },
};

/**
 * Config revisions (docs/adr/0036): GET the workload (its template must be the planned one), make
 * the snapshots, and return the rewritten references for the patch that follows.
 */
async function pinnedChange(context: WriteContext, revisions: RevisionPlan): Promise<PinnedChange> {
  const { view } = context.target;
  const object = await context.writer.getObject(view.ref);
  if (!object) throw vanished(view.ref);
  if (stringAt(object, ['metadata', 'resourceVersion']) !== view.resourceVersion) {
    throw new ApiError(`${view.ref.kind} ${view.ref.namespace}/${view.ref.name} changed`, {
      status: 409,
      retryable: true,
    });
  }
  return pinSnapshots({
    api: context.snapshots,
    row: context.row,
    view,
    revisions,
    template: (context.row.templatePath && objectAt(object, context.row.templatePath)) ?? {},
    ensureLeader: () => {
      ensureLeader(context);
    },
  });
}

/**
 * §6, §7.1, §7.5 `rollout`, §7.6: one patch of the pod template and W state (plus the pause write of
 * §7.2). A merge-patch kind with env-var changes GETs the live containers first (§10). A
 * DeploymentConfig without a ConfigChange trigger is then instantiated. With config revisions the
 * snapshots are made first and the same patch points the template at them (docs/adr/0036).
 */
const TEMPLATE_PATCH: WriteStrategy = {
  async write(context) {
    const { row, target } = context;
    const { view, plan, pause } = target;
    const pinned = plan.revisions ? await pinnedChange(context, plan.revisions) : undefined;
    const live =
      !pinned && needsLiveContainers(row, plan) ? await liveTemplate(context) : undefined;
    const instantiates = needsInstantiate(row, view);
    // The marker goes with the template (docs/adr/0019): the instantiate is owed until it succeeds.
    const instantiatePending = instantiates ? rfc3339Seconds(context.now) : undefined;
    await patchIfAny(context, { ...plan, ...pinned, pause: pause.write, instantiatePending }, live);
    return instantiates ? instantiateFollowUp(view) : undefined;
  },
};

/** §7.6: a DeploymentConfig without a ConfigChange trigger deploys a new template on instantiate. */
export function needsInstantiate(row: WorkloadKindRow, view: WorkloadView): boolean {
  return row.instantiatesWithoutConfigChangeTrigger && !view.hasConfigChangeTrigger;
}

export function instantiateFollowUp(view: WorkloadView): FollowUp {
  return { kind: 'instantiate', body: deploymentRequest(view.ref.name) };
}

function cronJobSourceHashes(target: Target): string {
  const hashes = target.plan.workloadSourceHashes ?? target.view.annotations[SOURCE_HASHES] ?? null;
  // A roll always writes a non-empty map: every rolling key gets its new hash.
  if (hashes === null) throw new Error('a CronJob roll must record its source hashes');
  return hashes;
}

/**
 * AlreadyExists for the run's deterministic name (ADR 0020): an earlier POST of this change window
 * went through (its answer lost, or the process stopped before the metadata patch). Done, if the
 * Job is this CronJob's; a Job of that name that is not stays untouched and the roll fails.
 */
async function existingRun(
  context: WriteContext,
  run: WorkloadRef,
  clash: ApiError,
): Promise<CreatedObject | undefined> {
  const { view } = context.target;
  const { kind, namespace, name } = run;
  const job = await context.writer.getObject(run);
  // Gone again already (a TTL, or a user): the run existed all the same.
  if (!job) return undefined;
  const owners = objectAt(job, ['metadata'])?.ownerReferences;
  const ownedHere =
    Array.isArray(owners) && owners.some((owner) => isControllerOf(owner, view.uid));
  if (!ownedHere) {
    throw new ApiError(
      `${kind} ${namespace}/${name} exists and is not controlled by ${view.ref.kind} ${view.ref.name}`,
      {
        status: 409,
        retryable: false,
        cause: clash,
      },
    );
  }
  return { name, uid: stringAt(job, ['metadata', 'uid']) ?? '' };
}

function isControllerOf(owner: JsonValue, uid: string): boolean {
  return isJsonObject(owner) && owner.controller === true && owner.uid === uid;
}

/**
 * §7.3 items 1–2: the guard (this reconcile's memo, then the Job cache), then one Job under the
 * change window's name; AlreadyExists means that Job was created before (ADR 0020).
 */
async function createJobOnce(
  context: WriteContext,
  runRow: WorkloadKindRow,
  sourceHashes: string,
): Promise<void> {
  const { target, writer, workloads, memo } = context;
  const { view, plan } = target;
  if (memo.createdJobFor === sourceHashes) return;
  const owned = workloads.controlledBy(runRow.kind, view.ref.namespace, view.uid);
  if (owned?.some((job) => job.annotations[SOURCE_HASHES] === sourceHashes)) {
    memo.jobCreationSkipped = 'already-created';
    return;
  }
  const cronJob = await writer.getObject(view.ref);
  if (!cronJob) throw vanished(view.ref);
  const name = cronJobRunName({
    cronJobName: view.ref.name,
    cronJobUid: view.uid,
    previousHashes: view.annotations[SOURCE_HASHES],
    sourceHashes,
  });
  const body = buildJobFromCronJob(cronJob, {
    name,
    sourceHashes,
    change: plan.jobTemplate ?? { envWrites: [] },
  });
  ensureLeader(context);
  try {
    memo.createdJob = await writer.create(runRow, view.ref.namespace, body);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 409) throw error;
    const run = { kind: runRow.kind, namespace: view.ref.namespace, name };
    const existing = await existingRun(context, run, error);
    if (existing) memo.createdJob = existing;
    else memo.jobCreationSkipped = 'already-created';
  }
  memo.createdJobFor = sourceHashes;
}

/** §7.3: create one Job (not when suspended), then record the state in CronJob metadata. */
const CREATE_JOB_FROM_CRONJOB: WriteStrategy = {
  async write(context) {
    const { row, target, memo } = context;
    if (row.runKind === undefined) throw new TypeError(`${row.kind} has no run kind to create`);
    memo.jobCreationSkipped = undefined;
    if (target.view.suspended) memo.jobCreationSkipped = 'suspended';
    else
      await createJobOnce(
        context,
        BUILT_IN_KIND_TABLE.row(row.runKind),
        cronJobSourceHashes(target),
      );
    await patchIfAny(context, workloadState(target.plan));
    return undefined;
  },
};

/**
 * §7.4 items 1–2 with the journal of docs/adr/0019: GET the Job, build the new one, journal it,
 * then DELETE the old one with preconditions. Creating it is the follow-up, retried on its own once
 * the deletion is acknowledged. A journal write that fails deletes nothing.
 *
 * A 404 after this reconcile journalled the Job means an earlier attempt's DELETE went through and
 * its answer was lost: the Job is created. A 404 on this attempt's own DELETE means someone else
 * deleted the Job first: it is not created again.
 */
const RECREATE_JOB: WriteStrategy = {
  async write(context) {
    const { writer, memo, recreations } = context;
    const { view, plan } = context.target;
    const earlier = memo.journalled?.deletedUid === view.uid ? memo.journalled : undefined;
    const job = await writer.getObject(view.ref);
    if (!job) {
      if (earlier) return { kind: 'create-job', manifest: earlier.manifest };
      throw vanished(view.ref);
    }
    if (stringAt(job, ['metadata', 'uid']) !== view.uid) throw replaced(view.ref);
    // Our earlier DELETE is still being finalized: the CREATE waits for it (AlreadyExists).
    if (earlier && stringAt(job, ['metadata', 'deletionTimestamp']) !== undefined) {
      return { kind: 'create-job', manifest: earlier.manifest };
    }
    const manifest = buildRecreatedJob(job, plan);
    ensureLeader(context);
    memo.journalled = await recreations.record({
      ref: view.ref,
      manifest,
      deletedUid: view.uid,
      since: context.now,
    });
    ensureLeader(context);
    try {
      await writer.delete(view.ref, { uid: view.uid, resourceVersion: view.resourceVersion });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        await recreations.settle(workloadKey(view.ref));
      }
      throw error;
    }
    return { kind: 'create-job', manifest };
  },
};

/** §7.5 `restart`: W state and `spec.restartAt`; the template is never touched. */
const ROLLOUT_RESTART: WriteStrategy = {
  async write(context) {
    const { row, target, writer, now } = context;
    const patch = buildRestartPatch(row, target.view, target.plan, rfc3339Seconds(now));
    ensureLeader(context);
    context.memo.patchedGeneration = (await writer.patch(target.view.ref, patch)).generation;
    return undefined;
  },
};

/**
 * The start of a roll by eviction (docs/adr/0044): GET the workload for its selector, LIST its pods
 * through the owner chain, and record the applied state with `kreload.io/evict-before` set to the
 * newest pod's creation time, in one W-only patch. The pods are evicted by the pod-eviction stage.
 */
const EVICT_PODS: WriteStrategy = {
  async write(context) {
    const { row, target, writer, pods } = context;
    const { view, plan } = target;
    const facts = row.podEviction;
    if (facts === undefined || pods === undefined) {
      throw new TypeError(`${row.kind} ${view.ref.name} cannot be rolled by eviction here`);
    }
    const object = await writer.getObject(view.ref);
    if (!object) throw vanished(view.ref);
    const scope = evictionScopeOf(facts, object);
    if ('problem' in scope) {
      throw new ApiError(
        `${view.ref.kind} ${view.ref.namespace}/${view.ref.name}: ${scope.problem}`,
        { status: 422, retryable: false },
      );
    }
    const owned = await podsOrForbidden(pods, facts, view, scope.selector);
    const evictBefore = rfc3339Seconds(evictBeforeOf(owned ?? [], context.now));
    ensureLeader(context);
    // Metadata only: no new generation, so no rollout for the health model to follow.
    await writer.patch(view.ref, buildEvictStartPatch(row, view, plan, evictBefore));
    return undefined;
  },
};

/**
 * The workload's pods; undefined when listing them is forbidden (403). The roll still starts: its
 * marker then falls on this second, and the pod-eviction stage holds it with the reason until
 * the pods may be read (docs/evict-strategy.md, `reloader.enableEvictStrategy`).
 */
async function podsOrForbidden(
  pods: PodApi,
  facts: PodEvictionFacts,
  view: WorkloadView,
  selector: string,
): Promise<readonly PodFacts[] | undefined> {
  const { namespace } = view.ref;
  try {
    const replicaSets =
      facts.owners === 'replica-sets' ? await pods.listReplicaSets(namespace, selector) : [];
    return ownedPods({
      facts,
      workloadUid: view.uid,
      pods: await pods.listPods(namespace, selector),
      replicaSets,
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return undefined;
    throw error;
  }
}

const ROLL_STRATEGIES: Readonly<Record<RollActionType, WriteStrategy>> = {
  'template-patch': TEMPLATE_PATCH,
  'create-job-from-cronjob': CREATE_JOB_FROM_CRONJOB,
  'recreate-job': RECREATE_JOB,
  'rollout-restart': ROLLOUT_RESTART,
  'evict-pods': EVICT_PODS,
};

/** The strategy of a target: its roll action when it rolls, otherwise the metadata write. */
export function writeStrategyOf(target: Target): WriteStrategy {
  return target.plan.action === 'roll' ? ROLL_STRATEGIES[target.plan.rollAction] : METADATA_WRITE;
}
