import type { WorkloadKey } from '../core/types.ts';

/**
 * When kreload last wrote each workload's state, as the start time of the reconcile whose reads
 * the write was based on. Every source change observed before that moment has been accounted for
 * (rolled, or absorbed into a baseline), so R7 must not count it again: the workload store moves
 * `relevantSince` forward to it (its `writeBasis`).
 */
export class WriteLedger {
  readonly #basis = new Map<WorkloadKey, number>();

  record(key: WorkloadKey, basisAt: number): void {
    this.#basis.set(key, Math.max(basisAt, this.#basis.get(key) ?? basisAt));
  }

  basis(key: WorkloadKey): number | undefined {
    return this.#basis.get(key);
  }

  forget(key: WorkloadKey): void {
    this.#basis.delete(key);
  }
}
