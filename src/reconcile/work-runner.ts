/**
 * The work queue's handler: one reconcile attempt per dequeued key. An attempt that asks for a
 * retry goes back to the queue with its continuation (docs/adr/0023); the reconcile is measured and
 * reported once, when its last attempt ends (§13.2), with the fan-outs of the source changes it
 * carried closed, and a pause resume triggered by the queue when the reconciler asks for one (§7.2).
 */
import { parseWorkloadKey } from '../core/keys.ts';
import type { SourceKey, WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { FanoutFinish, FanoutOutcome } from '../events/fanout-tracker.ts';
import type { Metrics, ReconcileResult as ReconcileLabel } from '../metrics/metrics.ts';
import type { PendingEntry } from '../queue/debouncer.ts';
import type { WorkContext, WorkResult } from '../queue/work-queue.ts';
import type {
  Continuation,
  ReconcileOutcome,
  ReconcileResult,
  ReconcileTrigger,
} from './attempt.ts';

/** What the queue keeps between the attempts of one reconcile. */
export interface ReconcileResume {
  /** When the reconcile's first attempt started: its duration spans every attempt. */
  readonly startedAt: number;
  readonly continuation: Continuation;
}

export interface WorkRunnerDeps {
  readonly reconcile: (
    key: WorkloadKey,
    trigger: ReconcileTrigger,
    resume: Continuation | undefined,
  ) => Promise<ReconcileResult>;
  readonly metrics: Metrics;
  readonly onFanoutFinish: (finish: FanoutFinish) => void;
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
  /**
   * Awaited before each attempt. A reconcile that needs no API call completes without I/O, and a
   * queue of hundreds of them would otherwise hold the event loop (probes, watches) for seconds.
   */
  readonly pause?: (() => Promise<void>) | undefined;
}

const RESULT_LABEL: Readonly<Record<Exclude<ReconcileOutcome, 'retrying'>, ReconcileLabel>> = {
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

  readonly handle = async (
    key: WorkloadKey,
    entry: PendingEntry,
    context: WorkContext<ReconcileResume>,
  ): Promise<WorkResult<ReconcileResume>> => {
    await this.#deps.pause?.();
    const attemptStarted = this.#deps.now();
    const started = context.resume?.startedAt ?? attemptStarted;
    const observedAt = new Map(entry.changes.map((c) => [c.sourceKey, c.observedAt]));
    const trigger: ReconcileTrigger = { observedAt, retriggered: context.retriggered };
    const result = await this.#deps.reconcile(key, trigger, context.resume?.continuation);
    if (result.retry) {
      const { afterMs, wakeEarly, resume } = result.retry;
      return {
        kind: 'requeue',
        afterMs,
        wakeEarly,
        resume: { startedAt: started, continuation: resume },
      };
    }
    // Not admitted yet (roll admission): the same entry runs again, nothing is reported yet.
    // A new trigger (the source changed again) may be what it waits for.
    if (result.wait) return { kind: 'requeue', ...result.wait, wakeOnTrigger: true };
    this.#finish(key, entry, result, { started, attemptStarted });
    if (result.resumeAt !== undefined) context.triggerAt(result.resumeAt);
    // Triggers came in that this attempt did not plan for: reconcile the key afresh.
    return { kind: 'done', rerun: result.rerun === true };
  };

  #finish(
    key: WorkloadKey,
    entry: PendingEntry,
    result: ReconcileResult,
    times: { readonly started: number; readonly attemptStarted: number },
  ): void {
    const finished = this.#deps.now();
    const label = result.outcome === 'retrying' ? 'error' : RESULT_LABEL[result.outcome];
    this.#deps.metrics.recordReconcile(label, (finished - times.started) / 1000);
    this.#remember(key, result, times.attemptStarted);
    const ref = parseWorkloadKey(key);
    if (ref !== undefined && result.plan !== undefined) {
      this.#deps.metrics.recordScanned(ref.kind);
      if (result.outcome === 'rolled' && entry.changes.length > 0) {
        const earliest = Math.min(...entry.changes.map((c) => c.observedAt));
        this.#deps.metrics.recordReloadLatency(ref.kind, (finished - earliest) / 1000);
      }
      this.#closeFanouts(ref, entry, result);
    }
  }

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
