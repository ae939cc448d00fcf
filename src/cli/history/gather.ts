/**
 * `kreload history`'s reads, read-only with the user's credentials: the workload, its ReplicaSets or
 * ControllerRevisions, and each snapshot their templates name. A snapshot's content is turned into
 * per-key digests on arrival and dropped; only a ConfigMap's values, and only with --show-values,
 * are kept for the report. Secret bytes never leave this module's local variables.
 */
import { ApiError } from '../../core/api-error.ts';
import { sha1Hex } from '../../core/hash.ts';
import type { JsonObject } from '../../core/json.ts';
import { isJsonObject, stringAt, stringMapAt } from '../../core/json.ts';
import { parseSourceKey } from '../../core/keys.ts';
import type { WorkloadKind } from '../../core/types.ts';
import { CONFIG_REVISIONS, CONFIG_REVISIONS_SECRETS, SNAPSHOTS } from '../../core/types.ts';
import type {
  HistoryInput,
  HistoryReport,
  KeyContent,
  RevisionInput,
  SnapshotRead,
} from '../../history/model.ts';
import { buildHistory, readKey } from '../../history/model.ts';
import {
  OTHER_RESOURCES,
  REVISION_RESOURCES,
  resourcePath,
  workloadResource,
} from '../../kube/resources.ts';
import type { KubeTransport } from '../../kube/transport.ts';
import { HttpMethod } from '../../kube/transport.ts';
import type { RevisionKind } from '../../rollout/kinds.ts';
import { kindRow } from '../../rollout/kinds.ts';
import { liveRevision, ownedRevisions } from '../../rollout/revisions.ts';
import type { SnapshotType } from '../../rollout/snapshots.ts';
import { SNAPSHOT_SOURCE_HASH_ANNOTATION, parseSnapshotMap } from '../../rollout/snapshots.ts';
import type { ObjectRead } from '../explain/reader.ts';

/** What history reads; the Kubernetes edge is KubeHistoryReads, tests pass their own. */
export interface HistoryReads {
  workload(kind: WorkloadKind, namespace: string, name: string): Promise<ObjectRead>;
  /** The namespace's ReplicaSets or ControllerRevisions (a list object). */
  revisions(kind: RevisionKind, namespace: string): Promise<ObjectRead>;
  snapshot(type: SnapshotType, namespace: string, name: string): Promise<ObjectRead>;
}

const SNAPSHOT_RESOURCES = {
  CONFIGMAP: OTHER_RESOURCES.configMaps,
  SECRET: OTHER_RESOURCES.secrets,
} as const;

function isStatus(error: unknown, status: number): error is ApiError {
  return error instanceof ApiError && error.status === status;
}

export class KubeHistoryReads implements HistoryReads {
  readonly #transport: KubeTransport;

  constructor(deps: { readonly transport: KubeTransport }) {
    this.#transport = deps.transport;
  }

  async #get(path: string): Promise<ObjectRead> {
    try {
      const answer = await this.#transport.request({ method: HttpMethod.GET, path });
      if (!isJsonObject(answer))
        throw new ApiError(`unexpected answer to GET ${path}`, { retryable: false });
      return { state: 'found', object: answer };
    } catch (error) {
      if (isStatus(error, 404)) return { state: 'not-found' };
      if (isStatus(error, 403)) return { state: 'forbidden', message: error.message };
      throw error;
    }
  }

  workload(kind: WorkloadKind, namespace: string, name: string): Promise<ObjectRead> {
    return this.#get(resourcePath(workloadResource(kindRow(kind)), { namespace, name }));
  }

  revisions(kind: RevisionKind, namespace: string): Promise<ObjectRead> {
    return this.#get(resourcePath(REVISION_RESOURCES[kind], { namespace }));
  }

  snapshot(type: SnapshotType, namespace: string, name: string): Promise<ObjectRead> {
    return this.#get(resourcePath(SNAPSHOT_RESOURCES[type], { namespace, name }));
  }
}

/** The history cannot be shown: the workload is not there, or it or its revisions may not be read. */
export class HistoryTargetError extends Error {
  readonly reason: 'not-found' | 'forbidden';
  constructor(message: string, reason: HistoryTargetError['reason'], options?: ErrorOptions) {
    super(message, options);
    this.name = 'HistoryTargetError';
    this.reason = reason;
  }
}

export interface HistoryTarget {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
}

function revisionInputs(list: JsonObject, kind: RevisionKind, uid: string): RevisionInput[] {
  return ownedRevisions(list, kind, uid).map(({ object, revision, createdAt, template }) => ({
    object,
    revision,
    createdAt,
    snapshots: parseSnapshotMap(stringAt(template, ['metadata', 'annotations', SNAPSHOTS])),
  }));
}

function digests(
  values: Readonly<Record<string, string>>,
  keep: boolean,
  into: Map<string, KeyContent>,
): void {
  for (const [key, value] of Object.entries(values)) {
    into.set(key, keep ? { digest: sha1Hex(value), value } : { digest: sha1Hex(value) });
  }
}

/** Digests per key; values only of a ConfigMap's `data` and only when asked for. */
function snapshotRead(type: SnapshotType, read: ObjectRead, showValues: boolean): SnapshotRead {
  if (read.state === 'not-found') return { state: 'gone' };
  if (read.state === 'forbidden') return { state: 'forbidden', message: read.message };
  const keys = new Map<string, KeyContent>();
  digests(stringMapAt(read.object, ['data']) ?? {}, type === 'CONFIGMAP' && showValues, keys);
  if (type === 'CONFIGMAP') digests(stringMapAt(read.object, ['binaryData']) ?? {}, false, keys);
  return {
    state: 'present',
    hash: stringAt(read.object, ['metadata', 'annotations', SNAPSHOT_SOURCE_HASH_ANNOTATION]),
    keys,
  };
}

async function readSnapshots(
  reads: HistoryReads,
  namespace: string,
  revisions: readonly RevisionInput[],
  showValues: boolean,
): Promise<Map<string, SnapshotRead>> {
  const found = new Map<string, SnapshotRead>();
  for (const revision of revisions) {
    for (const [source, snapshot] of revision.snapshots) {
      const key = readKey(source, snapshot);
      const type = parseSourceKey(source)?.type;
      if (found.has(key) || (type !== 'CONFIGMAP' && type !== 'SECRET')) continue;
      found.set(
        key,
        snapshotRead(type, await reads.snapshot(type, namespace, snapshot), showValues),
      );
    }
  }
  return found;
}

const KIND_WORD: Readonly<Record<RevisionKind, string>> = {
  ReplicaSet: 'ReplicaSets',
  ControllerRevision: 'ControllerRevisions',
};

/** Reads what one history needs and builds the report; HistoryTargetError when it cannot. */
export async function gatherHistory(
  reads: HistoryReads,
  target: HistoryTarget,
  showValues: boolean,
): Promise<HistoryReport> {
  const { kind, namespace, name } = target;
  const row = kindRow(kind);
  const revisionKind = row.revisionKind;
  const where = `${kind} ${namespace}/${name}`;
  if (revisionKind === undefined) {
    throw new HistoryTargetError(`${where}: a ${kind} keeps no revision history`, 'not-found');
  }
  const workload = await reads.workload(kind, namespace, name);
  if (workload.state === 'not-found')
    throw new HistoryTargetError(`${where} not found`, 'not-found');
  if (workload.state === 'forbidden') {
    throw new HistoryTargetError(`${where} may not be read (${workload.message})`, 'forbidden');
  }
  const list = await reads.revisions(revisionKind, namespace);
  if (list.state !== 'found') {
    const why = list.state === 'forbidden' ? `forbidden (${list.message})` : 'not served';
    throw new HistoryTargetError(
      `the ${KIND_WORD[revisionKind]} of ${where} may not be listed: ${why}`,
      'forbidden',
    );
  }
  const uid = stringAt(workload.object, ['metadata', 'uid']) ?? '';
  const revisions = revisionInputs(list.object, revisionKind, uid);
  const annotations = stringMapAt(workload.object, ['metadata', 'annotations']) ?? {};
  const input: HistoryInput = {
    workload: { kind, namespace, name },
    optedIn: {
      configMaps: annotations[CONFIG_REVISIONS] === 'true',
      secrets:
        annotations[CONFIG_REVISIONS] === 'true' &&
        annotations[CONFIG_REVISIONS_SECRETS] === 'true',
    },
    revisionKind,
    revisions,
    liveObject: liveRevision(row, workload.object, revisions)?.object,
    reads: await readSnapshots(reads, namespace, revisions, showValues),
  };
  return buildHistory(input, showValues);
}
