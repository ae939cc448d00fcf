import { sourceKeyOf, workloadKey } from '../core/keys.ts';
import type { SourceRef, WorkloadKey, WorkloadRef } from '../core/types.ts';
import { workloadsReloadedEvent } from './event-messages.ts';
import type { EventRequest } from './event-recorder.ts';
import { sourceObjectRef } from './object-refs.ts';
import type { EventClock } from './ports.ts';

/** How one workload of a fan-out ended. `skipped`: it needed no roll for this change. */
export type FanoutOutcome = 'rolled' | 'failed' | 'skipped';

export interface FanoutTrackerDeps {
  readonly events: { record(request: EventRequest): void };
  readonly clock: EventClock;
  /**
   * A fan-out still open after this long is closed with what has finished (a workload may have
   * been deleted or gone out of scope before its reconcile). Default 15 minutes.
   */
  readonly maxOpenMs?: number;
}

export interface FanoutStart {
  readonly source: SourceRef;
  readonly uid: string;
  /** The new hash of the source. */
  readonly hash: string;
  /** Every workload this change was fanned out to. */
  readonly workloads: readonly WorkloadRef[];
}

export interface FanoutFinish {
  readonly source: SourceRef;
  /** The source hash the workload's reconcile applied (or found already applied). */
  readonly hash: string;
  readonly workload: WorkloadRef;
  readonly outcome: FanoutOutcome;
}

interface Fanout {
  readonly source: SourceRef;
  readonly uid: string;
  readonly hash: string;
  readonly openedAtMs: number;
  readonly pending: Set<WorkloadKey>;
  readonly finished: Set<WorkloadKey>;
  readonly rolled: WorkloadRef[];
  failed: number;
}

const FIFTEEN_MINUTES_MS = 15 * 60_000;

function fanoutKey(source: SourceRef): string {
  return `${source.namespace}/${sourceKeyOf(source)}`;
}

/** How many workloads the change fanned out to, finished or not. */
function fanoutSize(fanout: Fanout): number {
  return fanout.pending.size + fanout.finished.size;
}

/**
 * Follows one source change to the workloads it fanned out to and writes `WorkloadsReloaded` on
 * the source once all of them have finished, if one failed, or if it fanned out to two or more and
 * at least one rolled (§13.3). A change of one workload that rolled gets no summary: that
 * workload's `Reloaded` Event names the source, and a second Event request per roll is the cost
 * the common one-source-one-workload case would pay for nothing. A newer change of the same
 * source closes the older fan-out with what had finished by then.
 */
export class FanoutTracker {
  readonly #deps: FanoutTrackerDeps;
  readonly #open = new Map<string, Fanout>();

  constructor(deps: FanoutTrackerDeps) {
    this.#deps = deps;
  }

  begin(start: FanoutStart): void {
    this.sweep();
    const key = fanoutKey(start.source);
    const current = this.#open.get(key);
    if (current?.hash === start.hash) {
      for (const workload of start.workloads) {
        const wk = workloadKey(workload);
        if (!current.finished.has(wk)) current.pending.add(wk);
      }
      return;
    }
    if (current) this.#close(key, current);
    if (start.workloads.length === 0) return;
    this.#open.set(key, {
      source: start.source,
      uid: start.uid,
      hash: start.hash,
      openedAtMs: this.#deps.clock.now(),
      pending: new Set(start.workloads.map(workloadKey)),
      finished: new Set(),
      rolled: [],
      failed: 0,
    });
  }

  finish(finish: FanoutFinish): void {
    const key = fanoutKey(finish.source);
    const fanout = this.#open.get(key);
    const wk = workloadKey(finish.workload);
    if (fanout?.hash !== finish.hash || !fanout.pending.delete(wk)) {
      this.sweep();
      return;
    }
    fanout.finished.add(wk);
    if (finish.outcome === 'rolled') fanout.rolled.push(finish.workload);
    if (finish.outcome === 'failed') fanout.failed += 1;
    if (fanout.pending.size === 0) this.#close(key, fanout);
    this.sweep();
  }

  /** Closes fan-outs open for longer than `maxOpenMs`. */
  sweep(): void {
    const nowMs = this.#deps.clock.now();
    const maxOpenMs = this.#deps.maxOpenMs ?? FIFTEEN_MINUTES_MS;
    for (const [key, fanout] of this.#open) {
      if (nowMs - fanout.openedAtMs >= maxOpenMs) this.#close(key, fanout);
    }
  }

  /** Number of fan-outs still waiting for workloads. */
  get openCount(): number {
    return this.#open.size;
  }

  #close(key: string, fanout: Fanout): void {
    this.#open.delete(key);
    if (fanout.failed === 0 && (fanout.rolled.length === 0 || fanoutSize(fanout) < 2)) return;
    this.#deps.events.record({
      object: sourceObjectRef(fanout.source, fanout.uid),
      ...workloadsReloadedEvent({
        source: fanout.source,
        hash: fanout.hash,
        rolled: fanout.rolled,
        failed: fanout.failed,
      }),
    });
  }
}
