/**
 * From a change to the rollout being complete, measured on ReplicaSet state only (what kube-
 * controller-manager reports), never from a controller's own account. Pure.
 *
 * A rollout is complete at the first moment when a ReplicaSet carrying the change has every
 * desired replica ready and available and every other ReplicaSet of the Deployment has no pod left
 * (terminating pods are not counted, as in the ReplicaSet's own `status.replicas`): what
 * `kubectl rollout status` waits for.
 */
import type { WriteRecord } from './evaluate.ts';
import { hashesNamed, type SignalLookup } from './signals.ts';
import { distribution, type Distribution } from './stats.ts';

/** One observed status of a ReplicaSet, stamped with the bench clock. */
export interface ReplicaSetSnapshot {
  readonly at: number;
  readonly replicas: number;
  readonly ready: number;
  readonly available: number;
}

export interface ReplicaSetHistory {
  readonly uid: string;
  /** When the bench first saw it: the start of the rollout it belongs to. */
  readonly firstSeenAt: number;
  /** Ascending by `at`; the first one is the status seen at `firstSeenAt`. */
  readonly snapshots: readonly ReplicaSetSnapshot[];
}

export interface Interval {
  readonly start: number;
  /** Undefined: still in flight when observation ended. */
  readonly end: number | undefined;
}

/**
 * The first moment at or after `after` when a ReplicaSet for which `carries` holds is fully ready
 * and available with `desired` replicas while every other ReplicaSet has none; undefined if never.
 */
export function completedAt(input: {
  readonly replicaSets: readonly ReplicaSetHistory[];
  readonly carries: (replicaSet: ReplicaSetHistory) => boolean;
  readonly desired: number;
  readonly after: number;
}): number | undefined {
  const moments = input.replicaSets
    .flatMap((rs) => rs.snapshots.map((snapshot) => snapshot.at))
    .filter((at) => at >= input.after)
    .sort((a, b) => a - b);
  const stateAt = (rs: ReplicaSetHistory, at: number): ReplicaSetSnapshot | undefined =>
    rs.snapshots.findLast((snapshot) => snapshot.at <= at);
  for (const at of new Set(moments)) {
    const done = input.replicaSets.every((rs) => {
      const state = stateAt(rs, at);
      if (state === undefined) return true;
      return input.carries(rs)
        ? state.ready >= input.desired && state.available >= input.desired
        : state.replicas === 0;
    });
    const target = input.replicaSets.some((rs) => input.carries(rs) && stateAt(rs, at));
    if (done && target) return at;
  }
  return undefined;
}

export interface InFlightProfile {
  /** Most rollouts in flight at any moment. */
  readonly max: number;
  /**
   * Time-weighted 95th percentile over the span from the first start to the last end: rollouts were
   * in flight at most this many at once during 95 % of that time.
   */
  readonly p95: number;
}

/**
 * How many rollouts were in flight at once. An interval counts over [start, end): one that ends
 * when another starts never overlaps it, and one of zero length counts for nothing. Intervals still
 * open count until `until`.
 */
export function inFlightProfile(intervals: readonly Interval[], until: number): InFlightProfile {
  const edges = intervals
    .map((interval) => ({ start: interval.start, end: interval.end ?? until }))
    .filter((interval) => interval.end > interval.start)
    .flatMap((interval) => [
      { at: interval.start, delta: 1 },
      { at: interval.end, delta: -1 },
    ])
    // Ends before starts at the same moment.
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  const first = edges[0];
  if (first === undefined) return { max: 0, p95: 0 };
  const timeAt = new Map<number, number>();
  let count = 0;
  let max = 0;
  let previous = first.at;
  for (const edge of edges) {
    if (edge.at > previous) timeAt.set(count, (timeAt.get(count) ?? 0) + edge.at - previous);
    count += edge.delta;
    max = Math.max(max, count);
    previous = edge.at;
  }
  const span = (edges.at(-1)?.at ?? first.at) - first.at;
  let covered = 0;
  for (const level of [...timeAt.keys()].sort((a, b) => a - b)) {
    covered += timeAt.get(level) ?? 0;
    if (covered >= 0.95 * span) return { max, p95: level };
  }
  return { max, p95: max };
}

/** Overlapping or touching intervals as one; open intervals (no end) absorb every later one. */
export function mergeOverlapping(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const merged: Interval[] = [];
  for (const interval of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && (last.end === undefined || interval.start <= last.end)) {
      const end =
        last.end === undefined || interval.end === undefined
          ? undefined
          : Math.max(last.end, interval.end);
      merged[merged.length - 1] = { start: last.start, end };
    } else merged.push(interval);
  }
  return merged;
}

/** One Deployment that had to roll for a change. */
export interface ExpectedRollout {
  readonly changedAt: number;
  readonly desired: number;
  readonly replicaSets: readonly ReplicaSetHistory[];
  readonly carries: (replicaSet: ReplicaSetHistory) => boolean;
}

/** A Deployment of the run as the bench sees it. */
export interface DependentDeployment {
  /** The sources it uses: `configmap/ns/name` (as in WriteRecord.source) → `configmap/name`. */
  readonly sources: ReadonlyMap<string, string>;
  readonly lookup: SignalLookup;
  readonly desired: number;
  readonly replicaSets: readonly (ReplicaSetHistory & { readonly template: unknown })[];
}

/**
 * One expected rollout per dependent Deployment of each source's last content change (earlier
 * changes may be superseded: they are not measured); it is carried by the ReplicaSets whose
 * template names that content's hash.
 */
export function expectedRollouts(
  writes: readonly WriteRecord[],
  deployments: readonly DependentDeployment[],
): ExpectedRollout[] {
  const lastWrites = new Map<string, { at: number; hash: string }>();
  for (const write of writes) {
    if (write.hash !== undefined) lastWrites.set(write.source, { at: write.at, hash: write.hash });
  }
  // Indexed by source: a storm of thousands of sources over thousands of Deployments stays linear.
  const dependents = new Map<string, DependentDeployment[]>();
  for (const deployment of deployments) {
    for (const source of deployment.sources.keys()) {
      dependents.set(source, [...(dependents.get(source) ?? []), deployment]);
    }
  }
  const rollouts: ExpectedRollout[] = [];
  for (const [source, write] of lastWrites) {
    for (const deployment of dependents.get(source) ?? []) {
      const local = deployment.sources.get(source);
      if (local === undefined) continue;
      const carrying = new Set(
        deployment.replicaSets
          .filter((rs) => hashesNamed(rs.template, deployment.lookup, local).has(write.hash))
          .map((rs) => rs.uid),
      );
      rollouts.push({
        changedAt: write.at,
        desired: deployment.desired,
        replicaSets: deployment.replicaSets,
        carries: (replicaSet) => carrying.has(replicaSet.uid),
      });
    }
  }
  return rollouts;
}

export interface RolloutCompletion {
  /** Rollouts expected: one per dependent Deployment of each source's last change. */
  readonly expected: number;
  /** Change → the rollout complete, ms. */
  readonly changeToCompleteMs: Distribution;
  /** Rollouts never completed before observation ended (a missing roll included). */
  readonly incomplete: number;
  /**
   * From the first measured write to the moment the last rollout was complete, ms; null while any
   * is incomplete or none was expected (absent from summaries written before it was measured).
   */
  readonly allCompleteMs?: number | null;
  readonly inFlight: InFlightProfile;
}

/** A rollout starts when the first ReplicaSet carrying its change appears. */
function startOf(rollout: ExpectedRollout): number | undefined {
  const starts = rollout.replicaSets
    .filter((rs) => rollout.carries(rs))
    .map((rs) => rs.firstSeenAt);
  return starts.length === 0 ? undefined : Math.min(...starts);
}

export function rolloutCompletion(
  rollouts: readonly ExpectedRollout[],
  until: number,
): RolloutCompletion {
  const durations: number[] = [];
  // Rollouts of one Deployment (one per source it uses) share its ReplicaSet list: one Deployment
  // is one rollout in flight, however many of its sources changed.
  const intervalsByDeployment = new Map<readonly ReplicaSetHistory[], Interval[]>();
  let incomplete = 0;
  let lastEnd = -Infinity;
  for (const rollout of rollouts) {
    const end = completedAt({
      replicaSets: rollout.replicaSets,
      carries: rollout.carries,
      desired: rollout.desired,
      after: rollout.changedAt,
    });
    const start = startOf(rollout);
    if (end === undefined) incomplete += 1;
    else {
      durations.push(end - rollout.changedAt);
      lastEnd = Math.max(lastEnd, end);
    }
    if (start !== undefined) {
      const intervals = intervalsByDeployment.get(rollout.replicaSets) ?? [];
      intervals.push({ start, end });
      intervalsByDeployment.set(rollout.replicaSets, intervals);
    }
  }
  const firstChange = Math.min(...rollouts.map((rollout) => rollout.changedAt));
  return {
    expected: rollouts.length,
    changeToCompleteMs: distribution(durations),
    incomplete,
    allCompleteMs:
      rollouts.length === 0 || incomplete > 0 ? null : Math.round(lastEnd - firstChange),
    inFlight: inFlightProfile([...intervalsByDeployment.values()].flatMap(mergeOverlapping), until),
  };
}

/** How many expected rollouts have not completed yet (the bench waits for none). */
export function pendingRollouts(rollouts: readonly ExpectedRollout[]): number {
  return rollouts.filter(
    (rollout) =>
      completedAt({
        replicaSets: rollout.replicaSets,
        carries: rollout.carries,
        desired: rollout.desired,
        after: rollout.changedAt,
      }) === undefined,
  ).length;
}
