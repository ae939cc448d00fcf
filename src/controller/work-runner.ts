/**
 * The work queue's handler: one reconcile per dequeued key, measured and reported once (§13.2),
 * with the fan-outs of the source changes it carried closed, and a pause resume scheduled when the
 * reconciler asks for one (§7.2).
 */
import { parseWorkloadKey } from '../core/keys.ts';
import type { SourceKey, WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { FanoutFinish, FanoutOutcome } from '../events/fanout-tracker.ts';
import type { Metrics, ReconcileResult as ReconcileLabel } from '../metrics/metrics.ts';
import type { PendingEntry } from '../queue/debouncer.ts';
import type { WorkResult } from '../queue/work-queue.ts';
import type {
  ReconcileOutcome,
  ReconcileResult,
  ReconcileTrigger,
} from '../reconcile/reconciler.ts';

export interface WorkRunnerDeps {
  readonly reconcile: (key: WorkloadKey, trigger: ReconcileTrigger) => Promise<ReconcileResult>;
  readonly metrics: Metrics;
  readonly onFanoutFinish: (finish: FanoutFinish) => void;
  /** Re-triggers the key at an absolute time (ms since the epoch), e.g. a pause resume. */
  readonly scheduleAt: (key: WorkloadKey, at: number) => void;
  readonly now: () => number;
  /** Records when a write's reads were made, so R7 never counts an accounted change twice. */
  readonly writes?: {
    record(key: WorkloadKey, basisAt: number): void;
    forget(key: WorkloadKey): void;
  };
  readonly tally?: {
    record(key: WorkloadKey, tracked: readonly SourceKey[]): void;
    forget(key: WorkloadKey): void;
  };
}

const RESULT_LABEL: Readonly<Record<ReconcileOutcome, ReconcileLabel>> = {
  rolled: 'success',
  baselined: 'success',
  failed: 'error',
  gone: 'skipped',
  unchanged: 'skipped',
  skipped: 'skipped',
  'dry-run': 'skipped',
  resumed: 'success',
  recreated: 'success',
  ignored: 'skipped',
  'not-leader': 'skipped',
};

const WROTE_STATE: ReadonlySet<ReconcileOutcome> = new Set(['rolled', 'baselined', 'resumed']);

function fanoutOutcome(result: ReconcileResult, key: SourceKey): FanoutOutcome {
  if (result.outcome === 'failed') return 'failed';
  const rolled = result.outcome === 'rolled' || result.outcome === 'recreated';
  if (rolled && result.plan?.rolling.includes(key) === true) return 'rolled';
  return 'skipped';
}

export class WorkRunner {
  readonly #deps: WorkRunnerDeps;

  constructor(deps: WorkRunnerDeps) {
    this.#deps = deps;
  }

  readonly handle = async (key: WorkloadKey, entry: PendingEntry): Promise<WorkResult> => {
    const started = this.#deps.now();
    const observedAt = new Map(entry.changes.map((c) => [c.sourceKey, c.observedAt]));
    const result = await this.#deps.reconcile(key, { observedAt });
    const finished = this.#deps.now();
    this.#deps.metrics.recordReconcile(RESULT_LABEL[result.outcome], (finished - started) / 1000);
    this.#remember(key, result, started);
    const ref = parseWorkloadKey(key);
    if (ref !== undefined && result.plan !== undefined) {
      this.#deps.metrics.recordScanned(ref.kind);
      if (result.outcome === 'rolled' && entry.changes.length > 0) {
        const earliest = Math.min(...entry.changes.map((c) => c.observedAt));
        this.#deps.metrics.recordReloadLatency(ref.kind, (finished - earliest) / 1000);
      }
      this.#closeFanouts(ref, entry, result);
    }
    if (result.resumeAt !== undefined) this.#deps.scheduleAt(key, result.resumeAt);
    return 'done';
  };

  #remember(key: WorkloadKey, result: ReconcileResult, started: number): void {
    if (result.outcome === 'gone') {
      this.#deps.tally?.forget(key);
      this.#deps.writes?.forget(key);
    }
    if (WROTE_STATE.has(result.outcome)) this.#deps.writes?.record(key, started);
    if (result.plan)
      this.#deps.tally?.record(
        key,
        result.plan.keys.map((k) => k.key),
      );
  }

  #closeFanouts(ref: WorkloadRef, entry: PendingEntry, result: ReconcileResult): void {
    for (const change of entry.changes) {
      const planned = result.plan?.keys.find((k) => k.key === change.sourceKey);
      if (planned?.desired === undefined) continue;
      this.#deps.onFanoutFinish({
        source: { type: planned.type, namespace: ref.namespace, name: planned.name },
        hash: planned.desired,
        workload: ref,
        outcome: fanoutOutcome(result, change.sourceKey),
      });
    }
  }
}
