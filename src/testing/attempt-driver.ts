/**
 * Drives a Reconciler as the work queue does (docs/adr/0023): one attempt per call, the next one
 * with the continuation the previous one returned, until the reconcile is over. The waits the
 * attempts ask for are reported instead of slept; a wait for the watch lasts until it settles.
 */
import type { WorkloadKey } from '../core/types.ts';
import type { ReconcileResult, ReconcileTrigger } from '../reconcile/attempt.ts';
import type { Reconciler } from '../reconcile/reconciler.ts';

export interface AttemptHooks {
  /** A backoff or `Retry-After` wait before the next attempt, in ms (never a wait for the watch). */
  readonly onWait?: ((ms: number) => void) | undefined;
}

export async function reconcileToEnd(
  reconciler: Reconciler,
  key: WorkloadKey,
  trigger: ReconcileTrigger = {},
  hooks: AttemptHooks = {},
): Promise<ReconcileResult> {
  let result = await reconciler.reconcile(key, trigger);
  while (result.retry) {
    const { afterMs, wakeEarly, resume } = result.retry;
    if (wakeEarly) await wakeEarly;
    else if (afterMs > 0) hooks.onWait?.(afterMs);
    result = await reconciler.reconcile(key, trigger, resume);
  }
  return result;
}

/** The reconciler's API with `reconcile` running every attempt: what tests of one reconcile use. */
export interface DrivenReconciler {
  reconcile(key: WorkloadKey, trigger?: ReconcileTrigger): Promise<ReconcileResult>;
  pendingRecreations(): readonly WorkloadKey[];
  replayRecreations(): Promise<readonly WorkloadKey[]>;
}

export function driven(reconciler: Reconciler, hooks: AttemptHooks = {}): DrivenReconciler {
  return {
    reconcile: (key, trigger) => reconcileToEnd(reconciler, key, trigger, hooks),
    pendingRecreations: () => reconciler.pendingRecreations(),
    replayRecreations: () => reconciler.replayRecreations(),
  };
}
