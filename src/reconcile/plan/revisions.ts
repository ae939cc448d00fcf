/**
 * Config revisions in the planner (docs/adr/0036): whether a workload pins its sources to snapshots,
 * which sources a roll pins, A(K) from W `kreload.io/revision-hashes`, and the one restoring roll
 * after an opt-out.
 */
import { referencedSources } from '../../core/references.ts';
import { formatHashMap, parseHashMap } from '../../core/state.ts';
import type { AnnotationProblem, SourceKey, WorkloadView } from '../../core/types.ts';
import {
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  REVISION_HASHES,
  SNAPSHOTS,
} from '../../core/types.ts';
import type { WorkloadKindRow } from '../../rollout/kinds.ts';
import type { SnapshotMap, SnapshotType } from '../../rollout/snapshots.ts';
import { parseSnapshotMap } from '../../rollout/snapshots.ts';
import type { KeyPlan, PinnedSource, RevisionPlan } from './model.ts';

export interface RevisionSettings {
  /** The workload pins ConfigMaps (and, with `secrets`, Secrets) at each roll. */
  readonly optedIn: boolean;
  readonly types: ReadonlySet<SnapshotType>;
  /** W `kreload.io/revision-hashes` (only read when opted in). */
  readonly applied: ReadonlyMap<SourceKey, string>;
  /** PT `kreload.io/snapshots`: what the template references instead of the live sources. */
  readonly current: SnapshotMap;
  readonly problems: readonly AnnotationProblem[];
}

const NONE: ReadonlySet<SnapshotType> = new Set();
const EMPTY: ReadonlyMap<SourceKey, string> = new Map();

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
  const off = { optedIn: false, types: NONE, applied: EMPTY, current };
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
  const applied = parseHashMap(view.annotations[REVISION_HASHES]).map ?? EMPTY;
  return { optedIn: true, types, applied, current, problems: [] };
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
 * W `kreload.io/revision-hashes` after a write: at a roll of an opted-in workload, D of every tracked
 * key (its A until the live source changes again, whatever the template says after an undo); removed
 * once the workload has opted out. Undefined: leave it.
 */
export function nextRevisionHashes(
  settings: RevisionSettings,
  keys: readonly KeyPlan[],
  rolls: boolean,
  raw: string | undefined,
): string | null | undefined {
  if (!settings.optedIn) return raw === undefined ? undefined : null;
  if (!rolls) return undefined;
  const hashes = new Map<SourceKey, string>();
  for (const key of keys) {
    const value = key.desired ?? key.applied;
    if (value !== undefined) hashes.set(key.key, value);
  }
  const next = formatHashMap(hashes);
  return next === (raw ?? null) ? undefined : next;
}
