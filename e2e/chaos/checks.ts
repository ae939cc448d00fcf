// What one change window did to the fleet, from two snapshots (its start and its end) and the Job
// creations the audit log shows: one change of the ConfigMap must give every workload exactly one
// rollout. Pure: the suite reads the cluster, this file only counts.
import type { FleetSnapshot, WorkloadState } from './fleet.ts';

export interface WindowCounts {
  /** Workloads that did not reach the window's hash, or did without a new revision / Job / run. */
  readonly missed: number;
  /** Rollouts beyond one per workload (apps kinds: revisions; Jobs: recreations). */
  readonly duplicated: number;
  /** Jobs that were deleted and not created again. */
  readonly lostJobs: number;
  /** Jobs a CronJob got beyond one. */
  readonly duplicateRuns: number;
  /** One line per workload that missed or doubled, for the report. */
  readonly problems: readonly string[];
}

export interface WindowInput {
  readonly start: FleetSnapshot;
  readonly end: FleetSnapshot;
  /** The ConfigMap's hash after the window's change. */
  readonly hash: string;
  /** Job name → successful `create jobs <name>` requests of kreload in the window. */
  readonly jobCreates: ReadonlyMap<string, number>;
}

interface Verdict {
  readonly missed: boolean;
  readonly extra: number;
  readonly lost: boolean;
  readonly extraRuns: number;
}

const NONE: Verdict = { missed: false, extra: 0, lost: false, extraRuns: 0 };

function runsWith(state: WorkloadState | undefined, hash: string): number {
  return state?.runs.filter((run) => run === hash).length ?? 0;
}

/** One row per kind family: how a workload's start and end state are judged. */
function judge(
  before: WorkloadState | undefined,
  after: WorkloadState,
  input: WindowInput,
): Verdict {
  switch (after.kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet': {
      const added = after.revisions - (before?.revisions ?? 0);
      return {
        ...NONE,
        missed: after.applied !== input.hash || added < 1,
        extra: Math.max(0, added - 1),
      };
    }
    case 'Job': {
      // Lost in an earlier window: counted there; nothing is left to roll.
      if (before?.present === false) return NONE;
      if (!after.present) return { ...NONE, lost: true };
      const creates = input.jobCreates.get(after.name) ?? 0;
      return {
        ...NONE,
        missed: after.applied !== input.hash || after.uid === before?.uid,
        extra: Math.max(0, creates - 1),
      };
    }
    case 'CronJob': {
      const added = after.runs.length - (before?.runs.length ?? 0);
      const withHash = runsWith(after, input.hash) - runsWith(before, input.hash);
      return { ...NONE, missed: withHash < 1, extraRuns: Math.max(0, added - 1) };
    }
  }
}

function describe(state: WorkloadState, verdict: Verdict): string {
  const what = [
    verdict.missed ? 'missed' : '',
    verdict.extra > 0 ? `${verdict.extra} duplicated` : '',
    verdict.lost ? 'Job lost' : '',
    verdict.extraRuns > 0 ? `${verdict.extraRuns} duplicate run(s)` : '',
  ].filter(Boolean);
  return `${state.kind}/${state.name}: ${what.join(', ')}`;
}

export function countWindow(input: WindowInput): WindowCounts {
  let missed = 0;
  let duplicated = 0;
  let lostJobs = 0;
  let duplicateRuns = 0;
  const problems: string[] = [];
  for (const [key, after] of input.end) {
    const verdict = judge(input.start.get(key), after, input);
    missed += verdict.missed ? 1 : 0;
    duplicated += verdict.extra;
    lostJobs += verdict.lost ? 1 : 0;
    duplicateRuns += verdict.extraRuns;
    if (verdict.missed || verdict.extra > 0 || verdict.lost || verdict.extraRuns > 0) {
      problems.push(describe(after, verdict));
    }
  }
  return { missed, duplicated, lostJobs, duplicateRuns, problems };
}

/**
 * Every workload shows its rollout for `hash` (a new revision observed by kube-controller-manager,
 * a recreated Job, a new CronJob run): the window may end once duplicates had time to appear.
 */
export function converged(start: FleetSnapshot, end: FleetSnapshot, hash: string): boolean {
  for (const [key, after] of end) {
    const before = start.get(key);
    switch (after.kind) {
      case 'Deployment':
      case 'StatefulSet':
      case 'DaemonSet':
        if (after.applied !== hash || !after.settled || after.revisions <= (before?.revisions ?? 0))
          return false;
        break;
      case 'Job':
        if (before?.present === false) break;
        if (!after.present || after.applied !== hash) return false;
        break;
      case 'CronJob':
        if (runsWith(after, hash) <= runsWith(before, hash)) return false;
        break;
    }
  }
  return true;
}

/** A kreload PATCH of an apps workload, as the audit log has it. */
export interface RollPatch {
  /** `namespace/resource/name`. */
  readonly workload: string;
  /** The response code logged; 0 when none was. */
  readonly code: number;
  /** `ResponseComplete` or `Panic`. */
  readonly stage: string;
  /** When kube-apiserver received it, ms since the epoch. */
  readonly receivedAt: number;
}

export interface RollPatchCounts {
  /** Workloads with exactly one roll PATCH. */
  readonly once: number;
  /** Workloads with more than one PATCH answered 200, and how many each. */
  readonly twice: readonly (readonly [string, number])[];
  /** Workloads with neither, each with what the audit log shows of it. */
  readonly none: readonly string[];
  /** Of `once`, workloads whose one PATCH was cut by a SIGKILL of its sender. */
  readonly cut: readonly string[];
}

/**
 * A PATCH with no definite answer: the handler panicked, or answered 5xx (kube-apiserver answers
 * 504 when the client is gone before the write returned, which may still be applied after).
 */
function undecided(patch: RollPatch): boolean {
  return patch.stage === 'Panic' || patch.code === 0 || patch.code >= 500;
}

/** Where a PATCH was received relative to the first kill, if any. */
function describeAt(patch: RollPatch, kills: readonly number[]): string {
  const first = kills.length === 0 ? undefined : Math.min(...kills);
  if (first === undefined) return '';
  const seconds = (patch.receivedAt - first) / 1000;
  return ` ${seconds >= 0 ? '+' : ''}${seconds.toFixed(1)} s from the kill`;
}

/**
 * One roll PATCH per workload of `expected`: answered 200, or, with none answered 200, one
 * received before a SIGKILL of a replica (`kills`: when each kill had landed) that never got a
 * definite answer, its sender being dead. Such a PATCH is applied or not; had it not been, the
 * workload would have no roll and the window's `missed` count shows it; had a second one been
 * applied, `duplicated` does (every roll PATCH carries the resourceVersion it was based on).
 */
export function countRollPatches(input: {
  readonly patches: readonly RollPatch[];
  readonly expected: readonly string[];
  readonly kills: readonly number[];
}): RollPatchCounts {
  const byWorkload = new Map<string, RollPatch[]>();
  for (const patch of input.patches) {
    const list = byWorkload.get(patch.workload) ?? [];
    list.push(patch);
    byWorkload.set(patch.workload, list);
  }
  const cutByKill = (patch: RollPatch): boolean =>
    undecided(patch) && input.kills.some((killedAt) => patch.receivedAt <= killedAt);
  let once = 0;
  const twice: [string, number][] = [];
  const none: string[] = [];
  const cut: string[] = [];
  for (const workload of input.expected) {
    const patches = byWorkload.get(workload) ?? [];
    const answered = patches.filter(
      (patch) => patch.stage === 'ResponseComplete' && patch.code === 200,
    );
    if (answered.length === 1) once += 1;
    else if (answered.length > 1) twice.push([workload, answered.length]);
    else if (patches.filter(cutByKill).length === 1) {
      once += 1;
      cut.push(workload);
    } else {
      const seen = patches.map(
        (patch) =>
          `${patch.stage === 'Panic' ? 'panic' : String(patch.code)}${describeAt(patch, input.kills)}`,
      );
      none.push(`${workload} (${seen.length === 0 ? 'no PATCH' : `PATCH → ${seen.join(', ')}`})`);
    }
  }
  return { once, twice, none, cut };
}
