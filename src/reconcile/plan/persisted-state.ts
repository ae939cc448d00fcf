/** The state kreload persisted on a workload (§3.2, §5.1), read back from its current view. */
import { sourceKey } from '../../core/keys.ts';
import { type HashMapCache, parseHashMap, parseLastReloadedFrom } from '../../core/state.ts';
import type { AnnotationProblem, Annotations, SourceKey, WorkloadView } from '../../core/types.ts';
import type { StoredBaseline } from './model.ts';
import {
  BASELINE,
  LAST_RELOADED_FROM,
  PENDING_ROLL,
  ROLLOUT_FAILED,
  SOURCE_HASHES,
} from '../../core/types.ts';

export type HashMap = ReadonlyMap<SourceKey, string>;

export interface PersistedState {
  /** PT `kreload.io/source-hashes`; empty when absent or malformed. */
  readonly templateHashes: HashMap;
  /** W `kreload.io/source-hashes`. */
  readonly workloadHashes: HashMap;
  /** B: W `kreload.io/baseline`, or the baseline store's record when W has none (`baselineHome`). */
  readonly baseline: HashMap;
  /**
   * Where B lives (docs/adr/0046): `workload` when W holds `kreload.io/baseline` (even `{}`, which
   * a roll writes to retire a store record) or the store is off or fell back; `store` otherwise.
   */
  readonly baselineHome: 'workload' | 'store';
  /**
   * The store fell back with a record of W it can no longer remove (docs/adr/0046). That record is
   * B only while W holds no `kreload.io/baseline`; once W does, W keeps it (`{}` at least, also
   * through a roll), so the record is never read as B again.
   */
  readonly keptRecord: boolean;
  /** W `kreload.io/pending-roll`: changes a hold owes a roll for (docs/adr/0043). */
  readonly pending: HashMap;
  /** The key and hash PT `last-reloaded-from` names, when it names a source of this namespace. */
  readonly lastReloadedFrom: { readonly key: SourceKey; readonly hash: string } | undefined;
  /** Raw values, to write only what differs. */
  readonly raw: {
    readonly templateHashes: string | undefined;
    readonly workloadHashes: string | undefined;
    readonly baseline: string | undefined;
    readonly pending: string | undefined;
    /** The store's record, when the store is in use and holds one. */
    readonly record: string | undefined;
    /** W `kreload.io/rollout-failed`: a failed rollout of this workload halted a change (ADR 0043). */
    readonly rolloutFailed: string | undefined;
  };
  readonly problems: readonly AnnotationProblem[];
}

const EMPTY: HashMap = new Map();

function malformed(key: string, value: string): AnnotationProblem {
  return {
    on: 'workload',
    key,
    value,
    problem: 'malformed value',
    consequence: 'treated as absent, rewritten at the next write',
  };
}

function readHashMap(
  annotations: Annotations,
  key: string,
  problems: AnnotationProblem[],
  cache: HashMapCache | undefined,
): { map: HashMap; raw: string | undefined } {
  const raw = annotations[key];
  const parsed = cache === undefined ? parseHashMap(raw) : cache.parse(raw);
  if (parsed.malformed && raw !== undefined) problems.push(malformed(key, raw));
  return { map: parsed.map ?? EMPTY, raw };
}

function readLastReloadedFrom(
  view: WorkloadView,
  problems: AnnotationProblem[],
): PersistedState['lastReloadedFrom'] {
  const raw = view.templateAnnotations[LAST_RELOADED_FROM];
  const parsed = parseLastReloadedFrom(raw);
  if (parsed.malformed && raw !== undefined) problems.push(malformed(LAST_RELOADED_FROM, raw));
  const value = parsed.value;
  if (value?.namespace !== view.ref.namespace) return undefined;
  return { key: sourceKey(value.type, value.name), hash: value.hash };
}

/**
 * A malformed record counts as absent, as a malformed annotation does; the store reports it, not the
 * workload, whose metadata holds nothing wrong.
 */
function readRecord(raw: string | undefined, cache: HashMapCache | undefined): HashMap {
  const parsed = cache === undefined ? parseHashMap(raw) : cache.parse(raw);
  return parsed.map ?? EMPTY;
}

/**
 * `cache`: parsed maps shared with other reconciles (the maps are read, never changed). `stored`:
 * the baseline store's record of the workload, when the store is on (docs/adr/0046); read-only
 * once it fell back, when B read from it goes to W.
 */
export function readPersistedState(
  view: WorkloadView,
  cache?: HashMapCache,
  stored?: StoredBaseline,
): PersistedState {
  const problems: AnnotationProblem[] = [];
  const template = readHashMap(view.templateAnnotations, SOURCE_HASHES, problems, cache);
  const workload = readHashMap(view.annotations, SOURCE_HASHES, problems, cache);
  const baseline = readHashMap(view.annotations, BASELINE, problems, cache);
  const pending = readHashMap(view.annotations, PENDING_ROLL, problems, cache);
  const fromRecord = stored !== undefined && baseline.raw === undefined;
  const readOnly = stored?.readOnly === true;
  return {
    templateHashes: template.map,
    workloadHashes: workload.map,
    baseline: fromRecord ? readRecord(stored.raw, cache) : baseline.map,
    baselineHome: fromRecord && !readOnly ? 'store' : 'workload',
    keptRecord: readOnly && stored.raw !== undefined,
    pending: pending.map,
    lastReloadedFrom: readLastReloadedFrom(view, problems),
    raw: {
      templateHashes: template.raw,
      workloadHashes: workload.raw,
      baseline: baseline.raw,
      pending: pending.raw,
      record: readOnly ? undefined : stored?.raw,
      rolloutFailed: view.annotations[ROLLOUT_FAILED],
    },
    problems,
  };
}

export function persistedKeys(state: PersistedState): SourceKey[] {
  const keys = [
    ...state.templateHashes.keys(),
    ...state.workloadHashes.keys(),
    ...state.baseline.keys(),
    ...state.pending.keys(),
  ];
  if (state.lastReloadedFrom) keys.push(state.lastReloadedFrom.key);
  return keys;
}
