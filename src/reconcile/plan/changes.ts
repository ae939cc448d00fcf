/** The writes of §5.6 and §6 for one planned reconcile: roll, baselines and pruning in one change. */
import { formatHashMap, formatLastReloadedFrom } from '../../core/state.ts';
import type { ReloadStrategy, SourceKey, WorkloadView } from '../../core/types.ts';
import type { EnvWrite, WorkloadChanges } from '../../rollout/patch.ts';
import { envVarOf } from './collisions.ts';
import type { EnvVarCollision, KeyPlan, PlannedChanges, StateMode } from './model.ts';
import type { PersistedState } from './persisted-state.ts';
import { compareKeys } from './tracking.ts';

type RollingKey = KeyPlan & { readonly desired: string; readonly container: string };

export interface ChangeContext {
  readonly view: WorkloadView;
  readonly mode: StateMode;
  readonly keys: readonly KeyPlan[];
  readonly state: PersistedState;
  readonly collisions: readonly EnvVarCollision[];
  readonly now: number;
  /** CronJob: the strategy whose template change goes into the Job the roll creates (§7.3). */
  readonly jobStrategy?: ReloadStrategy | undefined;
}

function isRolling(key: KeyPlan): key is RollingKey {
  return key.outcome === 'roll' && key.desired !== undefined && key.container !== undefined;
}

function observedAt(key: KeyPlan, now: number): number {
  return key.facts.observedAt ?? now;
}

/** Rolling keys, the one observed last at the end; ties put the smallest key last (§6.2, §6.3). */
function byObservation(context: ChangeContext): RollingKey[] {
  return context.keys
    .filter(isRolling)
    .sort(
      (a, b) =>
        observedAt(a, context.now) - observedAt(b, context.now) || compareKeys(b.key, a.key),
    );
}

/** §6.1: one env var per rolling key; a shared (colliding) variable takes the last observed key. */
function envWrites(ordered: readonly RollingKey[]): EnvWrite[] {
  const writes = new Map<string, EnvWrite>();
  for (const key of ordered) {
    const name = envVarOf(key);
    writes.set(JSON.stringify([key.container, name]), {
      container: key.container,
      name,
      value: key.desired,
    });
  }
  return [...writes.values()];
}

function lastReloadedFrom(context: ChangeContext, ordered: readonly RollingKey[]): string {
  const winner = ordered.at(-1);
  if (!winner) throw new Error('a roll needs a rolling key');
  return formatLastReloadedFrom({
    type: winner.type,
    name: winner.name,
    namespace: context.view.ref.namespace,
    hash: winner.desired,
    containerRefs: [winner.container],
    observedAt: Math.floor(observedAt(winner, context.now) / 1000),
  });
}

interface ModeWriter {
  /** Tracked keys that get a `source-hashes` entry in a roll. */
  readonly hashedKeys: (context: ChangeContext) => ReadonlySet<SourceKey>;
  readonly templateChange: (
    context: ChangeContext,
    ordered: readonly RollingKey[],
  ) => Pick<WorkloadChanges, 'envWrites' | 'lastReloadedFrom'>;
  readonly hashesField: 'templateSourceHashes' | 'workloadSourceHashes';
  readonly rawHashes: (state: PersistedState) => string | undefined;
  readonly heldHashes: (state: PersistedState) => ReadonlyMap<SourceKey, string>;
}

function allTracked(context: ChangeContext): ReadonlySet<SourceKey> {
  return new Set(context.keys.map((key) => key.key));
}

/** env-vars: keys already in PT source-hashes, plus every key of a colliding group that rolls (§6.3). */
function envVarHashedKeys(context: ChangeContext): ReadonlySet<SourceKey> {
  const rolling = new Set(context.keys.filter(isRolling).map((key) => key.key));
  const keys = new Set(context.state.templateHashes.keys());
  for (const group of context.collisions) {
    if (group.keys.some((key) => rolling.has(key))) group.keys.forEach((key) => keys.add(key));
  }
  return keys;
}

const MODE_WRITERS: Readonly<Record<StateMode, ModeWriter>> = {
  'env-vars': {
    hashedKeys: envVarHashedKeys,
    templateChange: (_context, ordered) => ({ envWrites: envWrites(ordered) }),
    hashesField: 'templateSourceHashes',
    rawHashes: (state) => state.raw.templateHashes,
    heldHashes: (state) => state.templateHashes,
  },
  annotations: {
    hashedKeys: allTracked,
    templateChange: (context, ordered) => ({
      envWrites: [],
      lastReloadedFrom: lastReloadedFrom(context, ordered),
    }),
    hashesField: 'templateSourceHashes',
    rawHashes: (state) => state.raw.templateHashes,
    heldHashes: (state) => state.templateHashes,
  },
  workload: {
    hashedKeys: allTracked,
    templateChange: () => ({ envWrites: [] }),
    hashesField: 'workloadSourceHashes',
    rawHashes: (state) => state.raw.workloadHashes,
    heldHashes: (state) => state.workloadHashes,
  },
};

/** New source-hashes: D, or the previous A or B when D is unknown (§6.2 item 2). */
function nextSourceHashes(
  keys: readonly KeyPlan[],
  hashed: ReadonlySet<SourceKey>,
): Map<SourceKey, string> {
  const next = new Map<SourceKey, string>();
  for (const key of keys) {
    const value = key.desired ?? key.applied ?? key.baseline;
    if (hashed.has(key.key) && value !== undefined) next.set(key.key, value);
  }
  return next;
}

/**
 * New baseline: R9 keys record D; other tracked keys keep B, except that a roll removes B of every
 * key that has A afterwards. Untracked keys are pruned (§5.6 item 3).
 */
function nextBaseline(
  keys: readonly KeyPlan[],
  hashes: ReadonlyMap<SourceKey, string>,
  rolls: boolean,
): Map<SourceKey, string> {
  const next = new Map<SourceKey, string>();
  for (const key of keys) {
    const hasApplied = key.outcome === 'roll' || key.applied !== undefined || hashes.has(key.key);
    const value = key.outcome === 'baseline' ? key.desired : key.baseline;
    if (value !== undefined && !(rolls && hasApplied)) next.set(key.key, value);
  }
  return next;
}

/**
 * Held changes still owed after this write (docs/adr/0043): only those of keys whose D is unknown
 * now (R1), which no rule can decide yet. A roll covers the rest, and a key that needs no roll
 * (reverted, rolled by someone else, no longer tracked) owes nothing. A hold writes the map
 * itself; the planner only ever shrinks it.
 */
function nextPending(
  keys: readonly KeyPlan[],
  held: ReadonlyMap<SourceKey, string>,
): Map<SourceKey, string> {
  const next = new Map<SourceKey, string>();
  for (const key of keys) {
    const hash = held.get(key.key);
    if (hash !== undefined && key.rule === 'R1') next.set(key.key, hash);
  }
  return next;
}

/** The formatted value when it differs from what the workload holds; undefined = leave it. */
function changed(next: string | null, raw: string | undefined): string | null | undefined {
  return next === (raw ?? null) ? undefined : next;
}

/**
 * Whether `raw`, read as `held`, already is `next` in its compact form: then nothing is formatted.
 * A workload bound to hundreds of sources holds tens of KiB in each map, re-planned at every pass.
 * Parsed keys and hashes need no JSON escaping, so the compact length is known without formatting.
 */
function holds(
  next: ReadonlyMap<SourceKey, string>,
  held: ReadonlyMap<SourceKey, string>,
  raw: string | undefined,
): boolean {
  if (raw === undefined || next.size === 0 || next.size !== held.size) return false;
  let length = 1;
  for (const [key, hash] of next) {
    if (held.get(key) !== hash) return false;
    length += key.length + hash.length + 6;
  }
  return raw.length === length;
}

function changedMap(
  next: ReadonlyMap<SourceKey, string>,
  held: ReadonlyMap<SourceKey, string>,
  raw: string | undefined,
): string | null | undefined {
  return holds(next, held, raw) ? undefined : changed(formatHashMap(next), raw);
}

/**
 * Where a roll-less baseline goes when B lives in the store (docs/adr/0046): the store's record,
 * never W, so a first sight writes nothing to the workload.
 */
function recordChange(
  next: ReadonlyMap<SourceKey, string>,
  state: PersistedState,
): string | null | undefined {
  return changedMap(next, state.baseline, state.raw.record);
}

/**
 * A roll writes B into W, as it always did. When the store holds a record, W gets the map even
 * empty (`{}`): from then on W owns B, so the record, removed after the roll, can never come back
 * as a stale B if the removal is lost. A later roll keeps that `{}`, for the same reason: the
 * store hides a record whose removal is not sent yet, and a kill -9 would bring it back. (Only a
 * roll over a store record writes `{}`; other W baselines go as they always did.)
 */
function rollBaseline(
  next: ReadonlyMap<SourceKey, string>,
  state: PersistedState,
): string | null | undefined {
  if ((state.baselineHome === 'store' && state.raw.record !== undefined) || state.keptRecord) {
    return changed(formatHashMap(next) ?? '{}', state.raw.baseline);
  }
  return workloadBaseline(next, state);
}

/**
 * W's B as planned. W's `{}` says W owns B, so an empty B keeps it; and while the store keeps a
 * record it can no longer remove (it fell back, docs/adr/0046), W's B, once written, is emptied to
 * `{}`, never removed: with no B of its own, W would have its stale record read as B again.
 */
function workloadBaseline(
  next: ReadonlyMap<SourceKey, string>,
  state: PersistedState,
): string | null | undefined {
  const raw = state.raw.baseline;
  if (next.size === 0 && raw !== undefined && (raw === '{}' || state.keptRecord)) {
    return changed('{}', raw);
  }
  return changedMap(next, state.baseline, raw);
}

/** The store's record goes once W owns B: after a roll, or when W holds an older version's B. */
function retiredRecord(state: PersistedState, rolls: boolean): { baselineRecord?: null } {
  const retire = state.raw.record !== undefined && (rolls || state.baselineHome === 'workload');
  return retire ? { baselineRecord: null } : {};
}

export function planChanges(context: ChangeContext): PlannedChanges {
  const ordered = byObservation(context);
  const pendingRoll = changedMap(
    nextPending(context.keys, context.state.pending),
    context.state.pending,
    context.state.raw.pending,
  );
  // W state needs no container to write into: a kind without a pod template rolls by eviction.
  const rolls =
    context.mode === 'workload'
      ? context.keys.some((key) => key.outcome === 'roll' && key.desired !== undefined)
      : ordered.length > 0;
  if (!rolls) {
    // W's `{}`, left by a roll while the store held a record, says W owns B (docs/adr/0046): an
    // empty B keeps it. Removing it would be a second write after every such roll, and a write
    // in the middle of a roll by eviction.
    const baseline = nextBaseline(context.keys, new Map(), false);
    if (context.state.baselineHome === 'store') {
      const baselineRecord = recordChange(baseline, context.state);
      return {
        envWrites: [],
        ...(baselineRecord !== undefined && { baselineRecord }),
        ...(pendingRoll !== undefined && { pendingRoll }),
      };
    }
    return {
      envWrites: [],
      baseline: workloadBaseline(baseline, context.state),
      ...retiredRecord(context.state, false),
      ...(pendingRoll !== undefined && { pendingRoll }),
    };
  }
  const writer = MODE_WRITERS[context.mode];
  const hashes = nextSourceHashes(context.keys, writer.hashedKeys(context));
  const baseline = nextBaseline(context.keys, hashes, true);
  const jobStrategy = context.jobStrategy;
  return {
    ...writer.templateChange(context, ordered),
    ...(jobStrategy && { jobTemplate: MODE_WRITERS[jobStrategy].templateChange(context, ordered) }),
    [writer.hashesField]: changedMap(
      hashes,
      writer.heldHashes(context.state),
      writer.rawHashes(context.state),
    ),
    baseline: rollBaseline(baseline, context.state),
    ...retiredRecord(context.state, true),
    ...(pendingRoll !== undefined && { pendingRoll }),
    // The failure it records was of an earlier roll: this roll's own failure must halt again.
    ...(context.state.raw.rolloutFailed !== undefined && { rolloutFailed: null }),
  };
}
