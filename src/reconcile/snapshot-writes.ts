/**
 * The writes of config revisions (docs/adr/0036): the snapshots a roll pins, made before its
 * template patch, and the adoption that hands them to the revisions that use them (or sweeps them
 * when nothing does). The content of a source lives here for one copy and is dropped with it.
 */
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { objectAt, objectsAt, stringAt } from '../core/json.ts';
import { sourceKey } from '../core/keys.ts';
import type { SourceKey, WorkloadView } from '../core/types.ts';
import { SNAPSHOTS } from '../core/types.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import type { ReferenceLists, SnapshotOwner, SnapshotType } from '../rollout/snapshots.ts';
import {
  SNAPSHOT_LABELS,
  contentHash,
  formatSnapshotMap,
  liveNameOf,
  parseSnapshotMap,
  renameReferences,
  snapshotBody,
  snapshotName,
  snapshotOwnerLabel,
  snapshotRefusal,
} from '../rollout/snapshots.ts';
import type { PinnedSource, RevisionPlan } from './plan/model.ts';
import type { SnapshotApi, SnapshotVersion } from './ports.ts';

const SNAPSHOT_TYPES: readonly SnapshotType[] = ['CONFIGMAP', 'SECRET'];

/** A snapshot cannot be named or made: the roll fails with this reason and nothing is patched. */
function refused(message: string, cause?: unknown): ApiError {
  return new ApiError(message, { reason: 'Invalid', retryable: false, cause });
}

/** The source moved on since the plan: plan again (409, like a stale workload). */
function planAgain(message: string): ApiError {
  return new ApiError(message, { status: 409, reason: 'Conflict', retryable: true });
}

export function ownerOf(row: WorkloadKindRow, view: WorkloadView): SnapshotOwner {
  return { apiVersion: row.apiVersion, kind: row.kind, name: view.ref.name, uid: view.uid };
}

function ownerReferences(object: JsonObject): JsonObject[] {
  return [...objectsAt(object, ['metadata', 'ownerReferences'])];
}

function ownedBy(object: JsonObject, uid: string): boolean {
  return ownerReferences(object).some((owner) => owner.uid === uid);
}

export interface PinContext {
  /** Absent when config revisions are off: then only an opt-out's restore (nothing pinned) runs. */
  readonly api: SnapshotApi | undefined;
  readonly row: WorkloadKindRow;
  readonly view: WorkloadView;
  readonly revisions: RevisionPlan;
  /** The pod template as served by the GET this write made. */
  readonly template: JsonObject;
  /** Throws unless a write may start now (§13.4). */
  readonly ensureLeader: () => void;
}

/** Every pinned source gets a name first: a name too long fails the roll before any write. */
function namesOf(pinned: readonly PinnedSource[]): Map<SourceKey, string> {
  const names = new Map<SourceKey, string>();
  for (const source of pinned) {
    const naming = snapshotName(source.name, source.hash);
    if (!naming.ok) throw refused(naming.reason);
    names.set(source.key, naming.name);
  }
  return names;
}

/** How often a reuse reads the snapshot again when another writer changed it in between. */
const REUSE_ATTEMPTS = 3;

/**
 * An existing object under the snapshot's name: kreload's immutable copy of this content is reused
 * (the workload becomes an owner too, and labels itself so its adoption finds the snapshot);
 * anything else is refused, never pinned. Workloads that share a snapshot append themselves
 * without a resourceVersion precondition, so they do not conflict with each other; a change in
 * between (the object replaced under the same name) is read again here, not planned again.
 */
async function reuse(
  context: PinContext,
  api: SnapshotApi,
  source: PinnedSource,
  name: string,
): Promise<void> {
  const { view, row } = context;
  const namespace = view.ref.namespace;
  for (let attempt = 1; ; attempt++) {
    const existing = await api.get(source.type, namespace, name);
    // Deleted since the POST was refused (a sweep, a user): the next attempt creates it.
    if (!existing) throw planAgain(`snapshot ${namespace}/${name} vanished while being reused`);
    const refusal = snapshotRefusal(existing, source.type, {
      sourceName: source.name,
      hash: source.hash,
    });
    if (refusal !== undefined) throw refused(`${refusal} (namespace ${namespace})`);
    if (ownedBy(existing, view.uid)) return;
    const owner = { ...ownerOf(row, view), blockOwnerDeletion: false };
    context.ensureLeader();
    try {
      await api.addOwner(source.type, existing, owner, snapshotOwnerLabel(view.uid));
      return;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      // Deleted meanwhile (a sweep, a user): not the workload gone; the next attempt creates it.
      if (error.status === 404)
        throw planAgain(`snapshot ${namespace}/${name} vanished while being reused`);
      // The UID test failed (400, 409 or 422 by server version): another object under the name.
      const replaced = error.status === 400 || error.status === 409 || error.status === 422;
      if (!replaced || attempt >= REUSE_ATTEMPTS) throw error;
    }
  }
}

/** GET the live source, check its hash against the plan's, POST the copy, drop both. */
async function copy(context: PinContext, source: PinnedSource, name: string): Promise<void> {
  const { api, view, row } = context;
  // The planner pins nothing without --enable-config-revisions, which also wires the API.
  if (!api) throw new Error('a config-revisions roll needs the snapshot API');
  const namespace = view.ref.namespace;
  const live = await api.get(source.type, namespace, source.name);
  if (!live) throw planAgain(`${source.key} vanished before its snapshot was made`);
  if (contentHash(source.type, live) !== source.hash) {
    throw planAgain(`${source.key} changed since the roll was planned`);
  }
  const body = snapshotBody(live, {
    type: source.type,
    namespace,
    sourceName: source.name,
    name,
    hash: source.hash,
    owner: ownerOf(row, view),
  });
  context.ensureLeader();
  try {
    await api.create(source.type, namespace, body);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 409) throw error;
    await reuse(context, api, source, name);
  }
}

/** The template's references after the roll: pinned sources to their snapshot, the rest live. */
function renamer(current: RevisionPlan['current'], names: ReadonlyMap<SourceKey, string>) {
  const live = liveNameOf(current);
  return (type: SnapshotType, name: string): string => {
    const source = live(type, name);
    return names.get(sourceKey(type, source)) ?? source;
  };
}

export interface PinnedChange {
  readonly references: ReferenceLists;
  readonly snapshots: string | null;
}

/**
 * The snapshots of the roll, created (or reused) one after the other, then the template's
 * reference lists and `kreload.io/snapshots` for the patch that follows. Opted out (no pinned
 * sources), it only restores the live references.
 */
export async function pinSnapshots(context: PinContext): Promise<PinnedChange> {
  const { pinned, current } = context.revisions;
  const names = namesOf(pinned);
  for (const source of pinned) await copy(context, source, names.get(source.key) ?? '');
  const spec = objectAt(context.template, ['spec']) ?? {};
  return {
    references: renameReferences(spec, renamer(current, names)),
    snapshots: formatSnapshotMap(names),
  };
}

/** What one adoption pass did, for the log, and whether a snapshot still waits for its revision. */
export interface AdoptionResult {
  readonly adopted: readonly string[];
  readonly swept: readonly string[];
  readonly waiting: boolean;
}

/** The snapshot names a revision's pod template references, per type. */
function namedBy(revision: JsonObject): ReadonlySet<string> {
  const template =
    objectAt(revision, ['spec', 'template']) ?? objectAt(revision, ['data', 'spec', 'template']);
  const map = parseSnapshotMap(stringAt(template, ['metadata', 'annotations', SNAPSHOTS]));
  return new Set([...map].map(([key, name]) => `${key.split('/')[0] ?? ''}/${name}`));
}

function revisionOwner(revision: JsonObject): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: stringAt(revision, ['kind']) ?? '',
    name: stringAt(revision, ['metadata', 'name']) ?? '',
    uid: stringAt(revision, ['metadata', 'uid']) ?? '',
    blockOwnerDeletion: false,
  };
}

function controlledBy(object: JsonObject, uid: string): boolean {
  return ownerReferences(object).some((owner) => owner.uid === uid && owner.controller === true);
}

function uidOf(owner: JsonObject): string {
  return stringAt(owner, ['uid']) ?? '';
}

function sameOwners(a: readonly JsonObject[], b: readonly JsonObject[]): boolean {
  const uids = (list: readonly JsonObject[]) => list.map(uidOf).sort();
  return JSON.stringify(uids(a)) === JSON.stringify(uids(b));
}

const PREFIX: Readonly<Record<SnapshotType, string>> = { CONFIGMAP: 'configmap', SECRET: 'secret' };

export interface AdoptContext {
  readonly api: SnapshotApi;
  readonly row: WorkloadKindRow;
  readonly view: WorkloadView;
  readonly ensureLeader: () => void;
}

/**
 * Snapshots still owned by the workload get every revision whose template names them as owners
 * instead (the garbage collector then deletes them with the last of those revisions); those that
 * neither a revision nor the current template names are left over from a crash or a failed roll and
 * are deleted (ADR 0036).
 */
interface Revision {
  readonly owner: JsonObject;
  readonly names: ReadonlySet<string>;
}

/** This workload's hold on one snapshot it owns: the label found it by, and how it is read. */
function holdOf(object: JsonObject, uid: string) {
  const label = snapshotOwnerLabel(uid);
  const labelled = stringAt(object, ['metadata', 'labels', label]) !== undefined;
  return {
    version: {
      namespace: stringAt(object, ['metadata', 'namespace']) ?? '',
      name: stringAt(object, ['metadata', 'name']) ?? '',
      resourceVersion: stringAt(object, ['metadata', 'resourceVersion']) ?? '',
    },
    /** The label patch that drops the workload's reuse label with its ownership, if it has one. */
    dropLabel: labelled ? { [label]: null } : undefined,
  };
}

/** DELETE with preconditions; already deleted (the garbage collector, a user) is what was wanted. */
async function deleteUnlessGone(
  api: SnapshotApi,
  type: SnapshotType,
  ref: SnapshotVersion & { readonly uid: string },
): Promise<void> {
  try {
    await api.delete(type, ref);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  }
}

/**
 * One workload-owned snapshot: its owners now, or its release when nothing of this workload names
 * it. A snapshot other workloads own too (they reused it) only loses this workload; it is deleted
 * when this workload was its sole owner, with a resourceVersion precondition so that an owner
 * appended meanwhile keeps it.
 */
async function adoptOne(
  context: AdoptContext,
  snapshot: { readonly type: SnapshotType; readonly object: JsonObject },
  named: { readonly revisions: readonly Revision[]; readonly current: ReadonlySet<string> },
  result: { adopted: string[]; swept: string[]; waiting: boolean },
): Promise<void> {
  const { api, view } = context;
  const { type, object } = snapshot;
  const hold = holdOf(object, view.uid);
  const id = `${PREFIX[type]}/${hold.version.name}`;
  const owners = named.revisions.filter((r) => r.names.has(id)).map((r) => r.owner);
  // The template names it: the workload keeps it until a later roll moves on (its revision may
  // not exist yet, or another revision with the same snapshots may be the older one).
  const inUse = named.current.has(id);
  const existing = ownerReferences(object);
  const isWorkload = (owner: JsonObject): boolean => uidOf(owner) === view.uid;
  const others = existing.filter(
    (owner) => !isWorkload(owner) && !owners.some((o) => uidOf(o) === uidOf(owner)),
  );
  if (owners.length === 0 && !inUse && others.length === 0) {
    context.ensureLeader();
    await deleteUnlessGone(api, type, {
      ...hold.version,
      uid: stringAt(object, ['metadata', 'uid']) ?? '',
    });
    result.swept.push(id);
    return;
  }
  if (inUse && owners.length === 0) result.waiting = true;
  const next = [...others, ...owners, ...(inUse ? existing.filter(isWorkload) : [])];
  if (sameOwners(existing, next)) return;
  context.ensureLeader();
  await api.setOwners(type, hold.version, next, inUse ? undefined : hold.dropLabel);
  result.adopted.push(id);
}

/** The snapshots of one type a workload owns: made by it, or reused by it (its owner label). */
async function ownedSnapshots(
  api: SnapshotApi,
  type: SnapshotType,
  namespace: string,
  uid: string,
): Promise<JsonObject[]> {
  const made = await api.list(type, namespace, `${SNAPSHOT_LABELS.workloadUid}=${uid}`);
  const reused = await api.list(type, namespace, snapshotOwnerLabel(uid));
  const byUid = new Map<string, JsonObject>();
  for (const object of [...made, ...reused]) {
    if (ownedBy(object, uid)) byUid.set(stringAt(object, ['metadata', 'uid']) ?? '', object);
  }
  return [...byUid.values()];
}

/**
 * Snapshots still owned by the workload (made or reused by it) get every revision whose template
 * names them as owners (the garbage collector then deletes them with the last of those
 * revisions), and lose the workload as owner once the current template no longer names them;
 * those that neither a revision nor the current template names are left over from a crash or a
 * failed roll: the workload lets go of them, and deletes them when it was their sole owner
 * (ADR 0036).
 */
export async function adoptSnapshots(context: AdoptContext): Promise<AdoptionResult> {
  const { api, row, view } = context;
  const namespace = view.ref.namespace;
  const pending: { type: SnapshotType; object: JsonObject }[] = [];
  for (const type of SNAPSHOT_TYPES) {
    for (const object of await ownedSnapshots(api, type, namespace, view.uid)) {
      pending.push({ type, object });
    }
  }
  const result = { adopted: [] as string[], swept: [] as string[], waiting: false };
  if (pending.length === 0 || row.revisionKind === undefined) return result;
  const revisions = (await api.revisions(row.revisionKind, namespace))
    .filter((revision) => controlledBy(revision, view.uid))
    .map((revision) => ({ owner: revisionOwner(revision), names: namedBy(revision) }));
  const current = namedBy({
    spec: { template: { metadata: { annotations: view.templateAnnotations } } },
  });
  for (const snapshot of pending) {
    await adoptOne(context, snapshot, { revisions, current }, result);
  }
  return result;
}

/** The owners of a snapshot that are workloads: its creator and those that labelled it on reuse. */
function workloadOwners(object: JsonObject): string[] {
  const creator = stringAt(object, ['metadata', 'labels', SNAPSHOT_LABELS.workloadUid]);
  const labels = objectAt(object, ['metadata', 'labels']) ?? {};
  return ownerReferences(object)
    .map(uidOf)
    .filter((uid) => uid === creator || labels[snapshotOwnerLabel(uid)] !== undefined);
}

/**
 * UIDs of the workloads that still own one of the namespace's snapshots (by the UID label every
 * snapshot carries, and the label of each workload that reused it). A type that may not be listed
 * counts as holding none.
 */
export async function snapshotOwners(api: SnapshotApi, namespace: string): Promise<Set<string>> {
  const owners = new Set<string>();
  for (const type of SNAPSHOT_TYPES) {
    let objects: readonly JsonObject[];
    try {
      objects = await api.list(type, namespace, SNAPSHOT_LABELS.workloadUid);
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) continue;
      throw error;
    }
    for (const uid of objects.flatMap(workloadOwners)) owners.add(uid);
  }
  return owners;
}
