/**
 * The marks of §5.4: one type for the mark store that makes them (watch/marks.ts), the planner that
 * reads them and the reconciler that consumes them (docs/adr/0027-planner-model-and-read-ports.md).
 */
import type { Annotations, SourceKey } from './types.ts';

/** `(create, K, uid)`: a source with this UID appeared after its type's initial sync, while W was associated with it. */
export interface CreateMark {
  readonly kind: 'create';
  readonly sourceKey: SourceKey;
  readonly uid: string;
  /** When the mark was made, ms since the epoch. */
  readonly at: number;
}

/** `(delete, K, uid, last ignore/match values)`: a cached source disappeared after the initial sync. */
export interface DeleteMark {
  readonly kind: 'delete';
  readonly sourceKey: SourceKey;
  readonly uid: string;
  readonly at: number;
  /** Its last `ignore`/`match` values: S for the decision while it is absent (§5.1). */
  readonly sourceAnnotations: Annotations;
}

/**
 * In memory only: creations and deletions nobody watched cannot be acted on as such. A workload's
 * marks are consumed by identity, so marks made while a reconcile ran survive it.
 */
export type Mark = CreateMark | DeleteMark;

/** The source as it is now: its UID when it exists, undefined when it is absent. */
export type CurrentSource = { readonly uid: string | undefined } | undefined;

/**
 * Whether a mark counts at consumption time (§5.4): a create mark only if the source exists with
 * that UID; a delete mark only if the source is still absent.
 */
export function markCounts(mark: Mark, current: CurrentSource): boolean {
  return mark.kind === 'create' ? current?.uid === mark.uid : current === undefined;
}

/** The create mark for `sourceKey` that counts now (R8), if any. */
export function countingCreateMark(
  marks: readonly Mark[],
  sourceKey: SourceKey,
  current: CurrentSource,
): CreateMark | undefined {
  return marks.find(
    (mark): mark is CreateMark =>
      mark.kind === 'create' && mark.sourceKey === sourceKey && markCounts(mark, current),
  );
}
