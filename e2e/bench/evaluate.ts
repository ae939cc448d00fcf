/**
 * Correctness and latency from the outside: the bench's writes (with the hash each produced) against
 * the template changes its watch saw. Pure: the runner gathers the inputs.
 */
import type { Signals } from './signals.ts';

export interface WriteRecord {
  readonly id: number;
  /** Bench clock (ms) just before the request was sent. */
  readonly at: number;
  /** `configmap/ns/name`. */
  readonly source: string;
  /** The content hash after the write; undefined when the write left the content alone (S4). */
  readonly hash: string | undefined;
  /** Writes in one change window should roll each dependent once (K2); usually one per write. */
  readonly window: string;
}

export interface RollRecord {
  readonly at: number;
  /** Signals after this template change, keyed like WriteRecord.source. */
  readonly signals: Signals;
}

export interface WorkloadHistory {
  readonly key: string;
  /** Sources the workload depends on, keyed like WriteRecord.source. */
  readonly sources: readonly string[];
  /** When the bench created it; -Infinity for workloads created during setup. */
  readonly createdAt: number;
  readonly deletedAt?: number;
  readonly baseline: Signals;
  /** Template changes in order (each one is a rollout). */
  readonly rolls: readonly RollRecord[];
}

export interface ExpectationWindow {
  /** A workload created less than this before a write is not expected to roll for it. */
  readonly graceBeforeMs: number;
  /** Nor one deleted less than this after the write. */
  readonly graceAfterMs: number;
}

export interface Correctness {
  /** (write, dependent) pairs that should roll. */
  readonly expected: number;
  /** ...whose hash reached the dependent's template. */
  readonly delivered: number;
  /** ...superseded by a later write to the same source that was delivered (coalesced). */
  readonly coalesced: number;
  /** ...never delivered nor superseded: the dependent did not end up with the content. */
  readonly missed: number;
  readonly rolls: number;
  /** Rolls that carried no new bench-written hash, plus second rolls in one change window. */
  readonly extra: number;
  readonly unattributed: number;
  readonly duplicate: number;
}

export interface Evaluation {
  readonly correctness: Correctness;
  /** Write → dependent's template carries the hash, per delivered pair. */
  readonly latenciesMs: number[];
  /** Write → the last of its expected dependents carries the hash, per fully delivered write. */
  readonly completionsMs: number[];
}

interface WorkloadOutcome {
  readonly delivered: Map<number, number>;
  readonly unattributed: number;
  readonly duplicate: number;
}

function hashIndex(writes: readonly WriteRecord[]): Map<string, Map<string, WriteRecord>> {
  const index = new Map<string, Map<string, WriteRecord>>();
  for (const write of writes) {
    if (write.hash === undefined) continue;
    let bySource = index.get(write.source);
    if (bySource === undefined) {
      bySource = new Map();
      index.set(write.source, bySource);
    }
    bySource.set(write.hash, write);
  }
  return index;
}

/** Which writes each roll delivered (a signal that moved to a bench-written hash). */
function attributeRolls(
  workload: WorkloadHistory,
  index: ReadonlyMap<string, ReadonlyMap<string, WriteRecord>>,
): WorkloadOutcome {
  const delivered = new Map<number, number>();
  const rollsPerWindow = new Map<string, number>();
  let unattributed = 0;
  let previous = workload.baseline;
  for (const roll of workload.rolls) {
    const carried: WriteRecord[] = [];
    for (const source of workload.sources) {
      const hash = roll.signals.get(source);
      if (hash === undefined || hash === previous.get(source)) continue;
      const write = index.get(source)?.get(hash);
      if (write !== undefined) carried.push(write);
    }
    if (carried.length === 0) unattributed += 1;
    for (const window of new Set(carried.map((write) => write.window))) {
      rollsPerWindow.set(window, (rollsPerWindow.get(window) ?? 0) + 1);
    }
    for (const write of carried) if (!delivered.has(write.id)) delivered.set(write.id, roll.at);
    previous = roll.signals;
  }
  let duplicate = 0;
  for (const count of rollsPerWindow.values()) duplicate += Math.max(0, count - 1);
  return { delivered, unattributed, duplicate };
}

function isExpected(
  workload: WorkloadHistory,
  write: WriteRecord,
  window: ExpectationWindow,
): boolean {
  if (write.hash === undefined || !workload.sources.includes(write.source)) return false;
  if (workload.createdAt + window.graceBeforeMs > write.at) return false;
  return workload.deletedAt === undefined || workload.deletedAt >= write.at + window.graceAfterMs;
}

export function evaluate(input: {
  readonly writes: readonly WriteRecord[];
  readonly workloads: readonly WorkloadHistory[];
  readonly window: ExpectationWindow;
}): Evaluation {
  const writes = [...input.writes].sort((a, b) => a.at - b.at);
  const index = hashIndex(writes);
  const counts = { expected: 0, delivered: 0, coalesced: 0, missed: 0 };
  const totals = { rolls: 0, unattributed: 0, duplicate: 0 };
  const latenciesMs: number[] = [];
  const perWrite = new Map<number, { expected: number; delivered: number; lastAt: number }>();
  for (const workload of input.workloads) {
    const outcome = attributeRolls(workload, index);
    totals.rolls += workload.rolls.length;
    totals.unattributed += outcome.unattributed;
    totals.duplicate += outcome.duplicate;
    const relevant = writes.filter((write) => isExpected(workload, write, input.window));
    for (const write of relevant) {
      counts.expected += 1;
      const tally = perWrite.get(write.id) ?? { expected: 0, delivered: 0, lastAt: write.at };
      tally.expected += 1;
      perWrite.set(write.id, tally);
      const deliveredAt = outcome.delivered.get(write.id);
      if (deliveredAt !== undefined) {
        counts.delivered += 1;
        tally.delivered += 1;
        tally.lastAt = Math.max(tally.lastAt, deliveredAt);
        latenciesMs.push(deliveredAt - write.at);
        continue;
      }
      const superseded = writes.some(
        (later) =>
          later.source === write.source && later.at > write.at && outcome.delivered.has(later.id),
      );
      if (superseded) counts.coalesced += 1;
      else counts.missed += 1;
    }
  }
  const completionsMs: number[] = [];
  for (const write of writes) {
    const tally = perWrite.get(write.id);
    if (tally !== undefined && tally.delivered === tally.expected) {
      completionsMs.push(tally.lastAt - write.at);
    }
  }
  return {
    correctness: {
      ...counts,
      ...totals,
      extra: totals.unattributed + totals.duplicate,
    },
    latenciesMs,
    completionsMs,
  };
}

/**
 * Rollouts a pause period allows (S12): each template change outside a running pause starts a
 * pause of `periodMs`, and the changes inside it become one rollout when it ends.
 */
export function pauseWindows(changeTimes: readonly number[], periodMs: number): number {
  let windows = 0;
  let windowEnd = -Infinity;
  for (const at of [...changeTimes].sort((a, b) => a - b)) {
    if (at < windowEnd) continue;
    windows += 1;
    windowEnd = at + periodMs;
  }
  return windows;
}

/**
 * Dependents that do not carry the latest write of their source yet: what a drain waits for.
 * Workloads created too shortly before that write are not expected to roll for it.
 */
export function pendingDeliveries(input: {
  readonly lastWrites: readonly WriteRecord[];
  readonly workloads: readonly {
    readonly sources: readonly string[];
    readonly createdAt: number;
    readonly current: Signals;
  }[];
  readonly window: ExpectationWindow;
}): number {
  let pending = 0;
  for (const write of input.lastWrites) {
    if (write.hash === undefined) continue;
    for (const workload of input.workloads) {
      if (!workload.sources.includes(write.source)) continue;
      if (workload.createdAt + input.window.graceBeforeMs > write.at) continue;
      if (workload.current.get(write.source) !== write.hash) pending += 1;
    }
  }
  return pending;
}
