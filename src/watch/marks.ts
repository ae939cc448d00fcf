import { sourceKeyOf } from '../core/keys.ts';
import type { Mark } from '../core/marks.ts';
import type { SourceType, WorkloadKey } from '../core/types.ts';
import type { MarkLedger } from '../reconcile/ports.ts';
import type { SourceChange } from './source-cache.ts';

/** SPC sources never get marks: SPCPS creation and deletion are not events, as in Reloader. */
const MARKED_TYPES: ReadonlySet<SourceType> = new Set<SourceType>(['CONFIGMAP', 'SECRET']);

/** The mark a source change gives the workloads associated with it, if any. */
export function markForChange(change: SourceChange): Mark | undefined {
  if (!MARKED_TYPES.has(change.ref.type)) return undefined;
  const key = sourceKeyOf(change.ref);
  switch (change.kind) {
    case 'created':
      return { kind: 'create', sourceKey: key, uid: change.uid, at: change.observedAt };
    case 'deleted':
      return {
        kind: 'delete',
        sourceKey: key,
        uid: change.uid,
        at: change.observedAt,
        sourceAnnotations: change.annotations,
      };
    case 'updated':
    case 'annotations':
      return undefined;
  }
}

/** Followers discard marks older than 2 × `--sync-max-delay` (§5.4 HA). */
export function markMaxAgeMs(syncMaxDelayMs: number): number {
  return 2 * syncMaxDelayMs;
}

export function isMarkExpired(mark: Mark, now: number, maxAgeMs: number): boolean {
  return now - mark.at > maxAgeMs;
}

function sameMark(a: Mark, b: Mark): boolean {
  return a.kind === b.kind && a.sourceKey === b.sourceKey && a.uid === b.uid;
}

/**
 * The marks each workload holds. A reconcile reads `marksOf(W)` when it starts and, once it has
 * completed, `consume(W, thoseMarks)`: marks made while it ran survive for the next one.
 */
export class MarkStore implements MarkLedger {
  readonly #byWorkload = new Map<WorkloadKey, readonly Mark[]>();

  /** Number of marks held, all workloads together. */
  get size(): number {
    let size = 0;
    for (const marks of this.#byWorkload.values()) size += marks.length;
    return size;
  }

  /** Gives `mark` to every workload in `workloads`; an equal older mark is replaced. */
  add(workloads: Iterable<WorkloadKey>, mark: Mark): void {
    for (const workload of workloads) {
      const kept = (this.#byWorkload.get(workload) ?? []).filter((held) => !sameMark(held, mark));
      this.#byWorkload.set(workload, [...kept, mark]);
    }
  }

  /** Makes the mark of `change` (§5.4) for the workloads the index associates with it now. */
  record(change: SourceChange, workloads: Iterable<WorkloadKey>): Mark | undefined {
    const mark = markForChange(change);
    if (mark !== undefined) this.add(workloads, mark);
    return mark;
  }

  marksOf(workload: WorkloadKey): readonly Mark[] {
    return this.#byWorkload.get(workload) ?? [];
  }

  /** Removes exactly `consumed` (by identity) from the workload's marks. */
  consume(workload: WorkloadKey, consumed: readonly Mark[]): void {
    if (consumed.length === 0) return;
    const gone = new Set(consumed);
    this.#set(
      workload,
      this.marksOf(workload).filter((mark) => !gone.has(mark)),
    );
  }

  /** Drops marks older than `maxAgeMs`; returns how many. */
  expire(now: number, maxAgeMs: number): number {
    let expired = 0;
    for (const [workload, marks] of this.#byWorkload) {
      const kept = marks.filter((mark) => !isMarkExpired(mark, now, maxAgeMs));
      expired += marks.length - kept.length;
      this.#set(workload, kept);
    }
    return expired;
  }

  /** The workload is gone: its marks go with it. */
  dropWorkload(workload: WorkloadKey): void {
    this.#byWorkload.delete(workload);
  }

  #set(workload: WorkloadKey, marks: readonly Mark[]): void {
    if (marks.length === 0) this.#byWorkload.delete(workload);
    else this.#byWorkload.set(workload, marks);
  }
}
