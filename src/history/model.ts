/**
 * `kreload history` (docs/config-revisions.md "History"), the pure part: a workload's revisions
 * (ReplicaSets or ControllerRevisions) with the snapshots each template names, which one is live,
 * and the keys that changed against the previous revision. Key contents arrive as digests; a value
 * is only ever present for a ConfigMap key and only when the user asked for values.
 */
import { parseSourceKey } from '../core/keys.ts';
import type { SourceKey } from '../core/types.ts';
import type { SnapshotMap } from '../rollout/snapshots.ts';
import { SNAPSHOT_HASH_LENGTH } from '../rollout/snapshots.ts';
import { byCodeUnit } from '../core/order.ts';

/** One key of a snapshot: its digest, and its value when it may be shown (ConfigMaps only). */
export interface KeyContent {
  readonly digest: string;
  readonly value?: string;
}

/** A snapshot as the reads found it. */
export type SnapshotRead =
  | {
      readonly state: 'present';
      /** `kreload.io/snapshot-source-hash`: the §4.1 hash of the copied content. */
      readonly hash: string | undefined;
      readonly keys: ReadonlyMap<string, KeyContent>;
    }
  | { readonly state: 'gone' }
  | { readonly state: 'forbidden'; readonly message: string };

/** One ReplicaSet or ControllerRevision of the workload, as listed. */
export interface RevisionInput {
  readonly object: string;
  readonly revision: number;
  readonly createdAt: string | undefined;
  /** PT `kreload.io/snapshots` of the revision's template. */
  readonly snapshots: SnapshotMap;
}

export interface HistoryInput {
  readonly workload: { readonly kind: string; readonly namespace: string; readonly name: string };
  /** W `kreload.io/config-revisions` and `…-secrets` as set now. */
  readonly optedIn: { readonly configMaps: boolean; readonly secrets: boolean };
  readonly revisionKind: 'ReplicaSet' | 'ControllerRevision';
  readonly revisions: readonly RevisionInput[];
  /** The revision that is live now, by object name; undefined when none can be told. */
  readonly liveObject: string | undefined;
  /** Snapshot reads by `<type>/<snapshot name>` (the source key's type prefix). */
  readonly reads: ReadonlyMap<string, SnapshotRead>;
}

export type SnapshotState = 'present' | 'gone' | 'forbidden';

/** A value change of a ConfigMap key; absent sides are an added or removed key. */
export interface ValueChange {
  readonly key: string;
  readonly before?: string;
  readonly after?: string;
}

/** What changed in one source against the previous revision. */
export type Comparison =
  | { readonly state: 'first' }
  | { readonly state: 'same-snapshot' }
  | { readonly state: 'previously-live' }
  | {
      readonly state: 'compared';
      readonly added: readonly string[];
      readonly removed: readonly string[];
      readonly changed: readonly string[];
      /** Only with --show-values, only for ConfigMaps. */
      readonly values?: readonly ValueChange[];
    }
  | { readonly state: 'cannot-compare'; readonly why: string };

export interface PinnedSnapshot {
  readonly source: SourceKey;
  readonly snapshot: string;
  /** The full hash when the snapshot could be read, else the 10 characters of its name. */
  readonly hash: string;
  readonly state: SnapshotState;
  readonly comparison: Comparison;
}

export interface HistoryRevision {
  readonly revision: number;
  readonly object: string;
  readonly createdAt: string | undefined;
  readonly live: boolean;
  /** Empty: the template references the live sources (before the opt-in, or opted out). */
  readonly snapshots: readonly PinnedSnapshot[];
  /** Sources the previous revision pinned and this one references live again. */
  readonly unpinned: readonly SourceKey[];
}

export interface HistoryReport {
  readonly workload: HistoryInput['workload'];
  readonly configRevisions: 'off' | 'configmaps' | 'configmaps-and-secrets';
  readonly revisionKind: HistoryInput['revisionKind'];
  /** Oldest first. */
  readonly revisions: readonly HistoryRevision[];
  /** Some snapshot could not be read: the report is incomplete. */
  readonly incomplete: boolean;
}

/** `<type prefix>/<snapshot name>`, the key of a snapshot read. */
export function readKey(source: SourceKey, snapshot: string): string {
  const prefix = source.slice(0, source.indexOf('/'));
  return `${prefix}/${snapshot}`;
}

/** Keys added, removed and changed from `before` to `after`, each sorted. */
export function keyChanges(
  before: ReadonlyMap<string, KeyContent>,
  after: ReadonlyMap<string, KeyContent>,
  showValues: boolean,
): Extract<Comparison, { state: 'compared' }> {
  const added = [...after.keys()].filter((key) => !before.has(key)).sort(byCodeUnit);
  const removed = [...before.keys()].filter((key) => !after.has(key)).sort(byCodeUnit);
  const changed = [...after.keys()]
    .filter((key) => before.has(key) && before.get(key)?.digest !== after.get(key)?.digest)
    .sort(byCodeUnit);
  if (!showValues) return { state: 'compared', added, removed, changed };
  const values: ValueChange[] = [...new Set([...added, ...removed, ...changed])]
    .sort(byCodeUnit)
    .map((key) => {
      const was = before.get(key)?.value;
      const now = after.get(key)?.value;
      return {
        key,
        ...(was === undefined ? {} : { before: was }),
        ...(now === undefined ? {} : { after: now }),
      };
    })
    .filter((change) => change.before !== undefined || change.after !== undefined);
  return { state: 'compared', added, removed, changed, values };
}

const WHY_UNREADABLE: Readonly<Record<'gone' | 'forbidden', string>> = {
  gone: 'garbage-collected',
  forbidden: 'may not be read',
};

function readOf(input: HistoryInput, source: SourceKey, snapshot: string): SnapshotRead {
  return input.reads.get(readKey(source, snapshot)) ?? { state: 'gone' };
}

function comparison(
  input: HistoryInput,
  previous: RevisionInput | undefined,
  pinned: { readonly source: SourceKey; readonly snapshot: string },
  showValues: boolean,
): Comparison {
  if (previous === undefined) return { state: 'first' };
  const before = previous.snapshots.get(pinned.source);
  if (before === undefined) return { state: 'previously-live' };
  if (before === pinned.snapshot) return { state: 'same-snapshot' };
  const was = readOf(input, pinned.source, before);
  const now = readOf(input, pinned.source, pinned.snapshot);
  if (was.state !== 'present') {
    return { state: 'cannot-compare', why: `${before} ${WHY_UNREADABLE[was.state]}` };
  }
  if (now.state !== 'present') {
    return { state: 'cannot-compare', why: `${pinned.snapshot} ${WHY_UNREADABLE[now.state]}` };
  }
  const values = showValues && parseSourceKey(pinned.source)?.type === 'CONFIGMAP';
  return keyChanges(was.keys, now.keys, values);
}

function pinnedOf(
  input: HistoryInput,
  revision: RevisionInput,
  previous: RevisionInput | undefined,
  showValues: boolean,
): PinnedSnapshot[] {
  return [...revision.snapshots]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([source, snapshot]) => {
      const read = readOf(input, source, snapshot);
      const hash =
        (read.state === 'present' ? read.hash : undefined) ?? snapshot.slice(-SNAPSHOT_HASH_LENGTH);
      return {
        source,
        snapshot,
        hash,
        state: read.state,
        comparison: comparison(input, previous, { source, snapshot }, showValues),
      };
    });
}

function configRevisionsOf(optedIn: HistoryInput['optedIn']): HistoryReport['configRevisions'] {
  if (!optedIn.configMaps) return 'off';
  return optedIn.secrets ? 'configmaps-and-secrets' : 'configmaps';
}

/** The report: revisions oldest first, each compared with the one before it. */
export function buildHistory(input: HistoryInput, showValues: boolean): HistoryReport {
  const ordered = [...input.revisions].sort((a, b) => a.revision - b.revision);
  const revisions = ordered.map((revision, index): HistoryRevision => {
    const previous = index === 0 ? undefined : ordered[index - 1];
    return {
      revision: revision.revision,
      object: revision.object,
      createdAt: revision.createdAt,
      live: revision.object === input.liveObject,
      snapshots: pinnedOf(input, revision, previous, showValues),
      unpinned: [...(previous?.snapshots.keys() ?? [])]
        .filter((source) => !revision.snapshots.has(source))
        .sort(byCodeUnit),
    };
  });
  return {
    workload: input.workload,
    configRevisions: configRevisionsOf(input.optedIn),
    revisionKind: input.revisionKind,
    revisions,
    incomplete: revisions.some((revision) =>
      revision.snapshots.some((pinned) => pinned.state === 'forbidden'),
    ),
  };
}
