/**
 * Config revisions (docs/adr/0036), the pure part: snapshot names, the PT `kreload.io/snapshots` map,
 * the rewrite of a pod spec's references and the body of a snapshot object.
 */
import { parseSourceKey, sourceKey } from '../core/keys.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { cloneJson, isJsonObject, objectAt, stringAt, stringMapAt } from '../core/json.ts';
import { hashConfigMap, hashSecret } from '../core/hash.ts';
import { goJsonString } from '../core/go-json.ts';
import type { SourceKey, SourceType } from '../core/types.ts';

/** The types whose content is in the API, so a copy can be made (SPCs are not). */
export type SnapshotType = Extract<SourceType, 'CONFIGMAP' | 'SECRET'>;

export const SNAPSHOT_HASH_LENGTH = 10;
/** A ConfigMap or Secret name is a DNS-1123 subdomain: at most 253 characters. */
const MAX_OBJECT_NAME = 253;
/** Label values are at most 63 characters; longer source names are kept in an annotation only. */
const MAX_LABEL_VALUE = 63;

export const SNAPSHOT_LABELS = {
  source: 'kreload.io/snapshot-of',
  hash: 'kreload.io/snapshot-hash',
  workloadUid: 'kreload.io/snapshot-workload-uid',
} as const;
/**
 * The label each workload that reuses a snapshot made by another adds with itself as owner
 * (`<prefix><uid>`): its adoption and sweep find the snapshot by it, as the creator finds its own
 * by `kreload.io/snapshot-workload-uid`.
 */
export const SNAPSHOT_OWNER_LABEL_PREFIX = 'snapshot-owner.kreload.io/';

export function snapshotOwnerLabel(uid: string): string {
  return `${SNAPSHOT_OWNER_LABEL_PREFIX}${uid}`;
}

export const SNAPSHOT_SOURCE_ANNOTATION = 'kreload.io/snapshot-source';
export const SNAPSHOT_SOURCE_HASH_ANNOTATION = 'kreload.io/snapshot-source-hash';

export type SnapshotNaming =
  { readonly ok: true; readonly name: string } | { readonly ok: false; readonly reason: string };

/** `<source>-<hash10>`; a name over 253 characters is refused with the reason (ADR 0036). */
export function snapshotName(sourceName: string, hash: string): SnapshotNaming {
  const name = `${sourceName}-${hash.slice(0, SNAPSHOT_HASH_LENGTH)}`;
  if (name.length <= MAX_OBJECT_NAME) return { ok: true, name };
  const room = MAX_OBJECT_NAME - SNAPSHOT_HASH_LENGTH - 1;
  return {
    ok: false,
    reason:
      `cannot snapshot "${sourceName}": the snapshot name would have ${String(name.length)} ` +
      `characters, over ${String(MAX_OBJECT_NAME)}; source names for config revisions must have ` +
      `at most ${String(room)}`,
  };
}

/** Source key → snapshot name, as PT `kreload.io/snapshots` holds it. */
export type SnapshotMap = ReadonlyMap<SourceKey, string>;

const EMPTY: SnapshotMap = new Map();

function snapshotType(key: SourceKey): SnapshotType | undefined {
  const type = parseSourceKey(key)?.type;
  return type === 'CONFIGMAP' || type === 'SECRET' ? type : undefined;
}

/** The map of PT `kreload.io/snapshots`; absent or malformed is empty (the references are live). */
export function parseSnapshotMap(raw: string | undefined): SnapshotMap {
  if (raw === undefined) return EMPTY;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return EMPTY;
  }
  if (!isJsonObject(parsed)) return EMPTY;
  const map = new Map<SourceKey, string>();
  for (const [key, name] of Object.entries(parsed)) {
    const parsedKey = parseSourceKey(key);
    if (!parsedKey || typeof name !== 'string' || name === '') return EMPTY;
    const normalised = sourceKey(parsedKey.type, parsedKey.name);
    if (snapshotType(normalised) === undefined) return EMPTY;
    map.set(normalised, name);
  }
  return map;
}

/** Compact JSON, keys sorted; `null` for an empty map (removes the annotation in a patch). */
export function formatSnapshotMap(map: SnapshotMap): string | null {
  if (map.size === 0) return null;
  const members = [...map.keys()]
    .sort()
    .map((key) => `${goJsonString(key)}:${goJsonString(map.get(key) ?? '')}`);
  return `{${members.join(',')}}`;
}

/** What a name in a reference becomes: kept when the function returns it unchanged. */
export type ReferenceRename = (type: SnapshotType, name: string) => string;

/** The live source a referenced name stands for: the inverse of the map, per type. */
export function liveNameOf(map: SnapshotMap): ReferenceRename {
  const bySnapshot = new Map<string, string>();
  for (const [key, snapshot] of map) {
    const parsed = parseSourceKey(key);
    if (parsed) bySnapshot.set(`${parsed.type}/${snapshot}`, parsed.name);
  }
  return (type, name) => bySnapshot.get(`${type}/${name}`) ?? name;
}

type Site = readonly [path: readonly string[], type: SnapshotType, field: string];

const ENV_SITES: readonly Site[] = [
  [['valueFrom', 'configMapKeyRef'], 'CONFIGMAP', 'name'],
  [['valueFrom', 'secretKeyRef'], 'SECRET', 'name'],
];
const ENV_FROM_SITES: readonly Site[] = [
  [['configMapRef'], 'CONFIGMAP', 'name'],
  [['secretRef'], 'SECRET', 'name'],
];
const VOLUME_SITES: readonly Site[] = [
  [['configMap'], 'CONFIGMAP', 'name'],
  [['secret'], 'SECRET', 'secretName'],
];
const PROJECTION_SITES: readonly Site[] = [
  [['configMap'], 'CONFIGMAP', 'name'],
  [['secret'], 'SECRET', 'name'],
];

/** Renames the reference of each site in place (`entry` is a copy). */
function renameSites(entry: JsonObject, sites: readonly Site[], rename: ReferenceRename): void {
  for (const [path, type, field] of sites) {
    const holder = objectAt(entry, path);
    const name = holder?.[field];
    if (holder && typeof name === 'string') holder[field] = rename(type, name);
  }
}

function mapEntries(
  list: JsonValue | undefined,
  edit: (entry: JsonObject) => void,
): JsonValue[] | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map((item) => {
    if (!isJsonObject(item)) return item;
    const copy = cloneJson(item);
    edit(copy);
    return copy;
  });
}

function setIfDefined(target: JsonObject, field: string, value: JsonValue[] | undefined): void {
  if (value !== undefined) target[field] = value;
}

function renameContainer(container: JsonObject, rename: ReferenceRename): void {
  setIfDefined(
    container,
    'env',
    mapEntries(container.env, (env) => {
      renameSites(env, ENV_SITES, rename);
    }),
  );
  setIfDefined(
    container,
    'envFrom',
    mapEntries(container.envFrom, (from) => {
      renameSites(from, ENV_FROM_SITES, rename);
    }),
  );
}

function renameVolume(volume: JsonObject, rename: ReferenceRename): void {
  renameSites(volume, VOLUME_SITES, rename);
  const projected = objectAt(volume, ['projected']);
  if (!projected) return;
  setIfDefined(
    projected,
    'sources',
    mapEntries(projected.sources, (source) => {
      renameSites(source, PROJECTION_SITES, rename);
    }),
  );
}

/** The three lists of a pod spec that hold references, as a strategic merge patch sends them. */
export interface ReferenceLists {
  readonly containers: JsonValue[];
  readonly initContainers?: JsonValue[];
  readonly volumes?: JsonValue[];
}

/**
 * Copies of `containers`, `initContainers` and `volumes` of a pod spec with every ConfigMap and
 * Secret reference renamed (env `valueFrom`, `envFrom`, volumes, projected volumes). Lists the spec
 * lacks stay absent; every other field is kept as it is.
 */
export function renameReferences(podSpec: JsonObject, rename: ReferenceRename): ReferenceLists {
  const containers = (list: JsonValue | undefined): JsonValue[] | undefined =>
    mapEntries(list, (container) => {
      renameContainer(container, rename);
    });
  const lists: { -readonly [K in keyof ReferenceLists]: ReferenceLists[K] } = {
    containers: containers(podSpec.containers) ?? [],
  };
  const init = containers(podSpec.initContainers);
  if (init) lists.initContainers = init;
  const volumes = mapEntries(podSpec.volumes, (volume) => {
    renameVolume(volume, rename);
  });
  if (volumes) lists.volumes = volumes;
  return lists;
}

/** The workload that owns a snapshot until a revision of it does (ADR 0036). */
export interface SnapshotOwner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

export interface SnapshotMeta {
  readonly type: SnapshotType;
  readonly namespace: string;
  readonly sourceName: string;
  readonly name: string;
  /** The §4.1 hash of the content, 40 hex characters. */
  readonly hash: string;
  readonly owner: SnapshotOwner;
}

function labelsOf(meta: SnapshotMeta): JsonObject {
  const labels: JsonObject = {
    [SNAPSHOT_LABELS.hash]: meta.hash.slice(0, SNAPSHOT_HASH_LENGTH),
    [SNAPSHOT_LABELS.workloadUid]: meta.owner.uid,
  };
  if (meta.sourceName.length <= MAX_LABEL_VALUE) labels[SNAPSHOT_LABELS.source] = meta.sourceName;
  return labels;
}

/**
 * The immutable copy of `source` (a ConfigMap or Secret as served): its content fields and, for a
 * Secret, its type; owned by the workload. The caller posts it and drops it.
 */
export function snapshotBody(source: JsonObject, meta: SnapshotMeta): JsonObject {
  const body: JsonObject = {
    apiVersion: 'v1',
    kind: meta.type === 'CONFIGMAP' ? 'ConfigMap' : 'Secret',
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      labels: labelsOf(meta),
      annotations: {
        [SNAPSHOT_SOURCE_ANNOTATION]: meta.sourceName,
        [SNAPSHOT_SOURCE_HASH_ANNOTATION]: meta.hash,
      },
      ownerReferences: [{ ...meta.owner, blockOwnerDeletion: false }],
    },
    immutable: true,
  };
  const fields = meta.type === 'CONFIGMAP' ? ['data', 'binaryData'] : ['data', 'type'];
  for (const field of fields) {
    const value = source[field];
    if (value !== undefined) body[field] = value;
  }
  return body;
}

/** The §4.1 hash of a ConfigMap's or Secret's content, as a snapshot's name and annotation hold it. */
export function contentHash(type: SnapshotType, object: JsonObject): string {
  return type === 'CONFIGMAP'
    ? hashConfigMap(stringMapAt(object, ['data']), stringMapAt(object, ['binaryData']))
    : hashSecret(stringMapAt(object, ['data']));
}

/** Whether an existing object is kreload's snapshot of exactly this content (reuse, not clash). */
export function isSnapshotOf(existing: JsonObject, sourceName: string, hash: string): boolean {
  const annotations = objectAt(existing, ['metadata', 'annotations']);
  return (
    annotations?.[SNAPSHOT_SOURCE_ANNOTATION] === sourceName &&
    annotations[SNAPSHOT_SOURCE_HASH_ANNOTATION] === hash
  );
}

/**
 * Why an existing object under a snapshot's name may not be pinned, or undefined when it may: it
 * must say it is kreload's snapshot of this source and content, hold exactly that content and be
 * immutable (so it cannot hold anything else later). Anyone who may create ConfigMaps in the
 * namespace can make an object with the right name and annotations.
 */
export function snapshotRefusal(
  existing: JsonObject,
  type: SnapshotType,
  expected: { readonly sourceName: string; readonly hash: string },
): string | undefined {
  const kind = type === 'CONFIGMAP' ? 'ConfigMap' : 'Secret';
  const name = stringAt(existing, ['metadata', 'name']) ?? '';
  const what = `${kind} ${name} exists and is not kreload's snapshot of ${expected.sourceName}`;
  if (!isSnapshotOf(existing, expected.sourceName, expected.hash)) {
    return `${what} (its snapshot annotations name other content)`;
  }
  if (contentHash(type, existing) !== expected.hash) {
    return `${what}: its content does not match the hash it claims; refusing to pin to it`;
  }
  if (existing.immutable !== true) {
    return `${what}: it is not immutable; refusing to pin to it`;
  }
  return undefined;
}
