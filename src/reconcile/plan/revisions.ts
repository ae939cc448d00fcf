/**
 * Config revisions in the planner (docs/adr/0036): whether a workload pins its sources to snapshots,
 * which sources a roll pins, A(K) from W `kreload.io/revision-hashes`, and the one restoring roll
 * after an opt-out.
 */
import { referencedSources } from '../../core/references.ts';
import { sha1Hex } from '../../core/hash.ts';
import { formatHashMap } from '../../core/state.ts';
import type { AnnotationProblem, SourceKey, WorkloadView } from '../../core/types.ts';
import { CONFIG_REVISIONS, CONFIG_REVISIONS_SECRETS, SNAPSHOTS } from '../../core/types.ts';
import type { WorkloadKindRow } from '../../rollout/kinds.ts';
import type { SnapshotMap, SnapshotType } from '../../rollout/snapshots.ts';
import { parseSnapshotMap } from '../../rollout/snapshots.ts';
import type { KeyPlan, PinnedSource, RevisionPlan, TrackedSource } from './model.ts';

export interface RevisionSettings {
  /** The workload pins ConfigMaps (and, with `secrets`, Secrets) at each roll. */
  readonly optedIn: boolean;
  readonly types: ReadonlySet<SnapshotType>;
  /** W label `kreload.io/revision-digest` (only read when opted in). */
  readonly digest: string | undefined;
  /** PT `kreload.io/snapshots`: what the template references instead of the live sources. */
  readonly current: SnapshotMap;
  readonly problems: readonly AnnotationProblem[];
}

const NONE: ReadonlySet<SnapshotType> = new Set();

function ignored(value: string, problem: string): AnnotationProblem {
  return { on: 'workload', key: CONFIG_REVISIONS, value, problem, consequence: 'ignored' };
}

/**
 * The workload's opt-in (W `kreload.io/config-revisions: "true"`), honoured on kinds with a revision
 * history and only with `--enable-config-revisions`; any other value is reported and ignored.
 */
export function revisionSettings(
  view: WorkloadView,
  row: WorkloadKindRow,
  enabled: boolean,
): RevisionSettings {
  const current = parseSnapshotMap(view.templateAnnotations[SNAPSHOTS]);
  const value = view.annotations[CONFIG_REVISIONS];
  const off = { optedIn: false, types: NONE, digest: undefined, current };
  if (value === undefined || value === 'false') return { ...off, problems: [] };
  if (value !== 'true') {
    return { ...off, problems: [ignored(value, 'not "true" or "false"')] };
  }
  if (row.revisionKind === undefined) {
    const problem = `config revisions need a Deployment, StatefulSet or DaemonSet, not a ${row.kind}`;
    return { ...off, problems: [ignored(value, problem)] };
  }
  if (!enabled) {
    return {
      ...off,
      problems: [ignored(value, 'config revisions are off (--enable-config-revisions)')],
    };
  }
  const types = new Set<SnapshotType>(['CONFIGMAP']);
  if (view.annotations[CONFIG_REVISIONS_SECRETS] === 'true') types.add('SECRET');
  return { optedIn: true, types, digest: view.revisionDigest, current, problems: [] };
}

/**
 * Opted out while the template still references snapshots: every tracked key the map names rolls
 * once, so the restoring patch carries the strategy's usual change (ADR 0036).
 */
export function restoring(settings: RevisionSettings): boolean {
  return !settings.optedIn && settings.current.size > 0;
}

export function withRestore(settings: RevisionSettings, keys: readonly KeyPlan[]): KeyPlan[] {
  if (!restoring(settings)) return [...keys];
  return keys.map((key) =>
    settings.current.has(key.key) && key.outcome === 'nothing' && key.desired !== undefined
      ? { ...key, outcome: 'roll' }
      : key,
  );
}

function isSnapshotType(type: string, types: ReadonlySet<SnapshotType>): type is SnapshotType {
  return types.has(type as SnapshotType);
}

/** The sources a roll pins: tracked, of an opted-in type, present, and referenced by the pod spec. */
function pinnedSources(
  settings: RevisionSettings,
  keys: readonly KeyPlan[],
  referenced: ReadonlySet<SourceKey>,
): PinnedSource[] {
  const pinned: PinnedSource[] = [];
  for (const key of keys) {
    const status = key.facts.status;
    if (!isSnapshotType(key.type, settings.types) || status.state !== 'present') continue;
    if (!referenced.has(key.key)) continue;
    pinned.push({ key: key.key, type: key.type, name: key.name, hash: status.hash });
  }
  return pinned;
}

/** What the roll's write does about revisions; undefined when the workload has nothing to do with them. */
export function revisionPlan(
  settings: RevisionSettings,
  view: WorkloadView,
  keys: readonly KeyPlan[],
): RevisionPlan | undefined {
  if (!settings.optedIn && settings.current.size === 0) return undefined;
  const referenced = new Set(referencedSources(view.podSpec));
  return {
    optedIn: settings.optedIn,
    pinned: settings.optedIn ? pinnedSources(settings, keys, referenced) : [],
    current: settings.current,
  };
}

/**
 * SHA-1 of D of every tracked key, as `kreload.io/source-hashes` formats them; undefined while any
 * D is unknown (the rules then decide as usual).
 */
export function liveDigest(tracked: readonly TrackedSource[]): string | undefined {
  const hashes = new Map<SourceKey, string>();
  for (const source of tracked) {
    if (source.desired === undefined) return undefined;
    hashes.set(source.key, source.desired);
  }
  return sha1Hex(formatHashMap(hashes) ?? '');
}

/**
 * Whether the live sources are exactly those the last config-revisions roll pinned: then whatever
 * the template holds — after `rollout undo`, an older revision's state — is the user's choice,
 * and every key counts as applied (R2). The next live change breaks the match and rolls.
 */
export function pinnedByLastRoll(
  settings: RevisionSettings,
  tracked: readonly TrackedSource[],
): boolean {
  return (
    settings.optedIn && settings.digest !== undefined && settings.digest === liveDigest(tracked)
  );
}

/**
 * W label `kreload.io/revision-digest` after a write: for an opted-in workload, the digest of the
 * live sources whenever the write leaves the template in agreement with them — after a roll, and
 * equally when the rules find nothing to roll (the template already runs that content, e.g. a live
 * source reverted to what an undone-to revision holds); removed once the workload has opted out.
 * Undefined: leave it.
 */
export function nextRevisionDigest(
  settings: RevisionSettings,
  tracked: readonly TrackedSource[],
  raw: string | undefined,
): string | null | undefined {
  if (!settings.optedIn) return raw === undefined ? undefined : null;
  const next = liveDigest(tracked);
  return next === undefined || next === raw ? undefined : next;
}
