/**
 * `--undo-failed-rollouts` (docs/safe-rollouts.md): the halt of a failed wave member also puts
 * back the pod template of the revision before the failed roll, as `kubectl rollout undo` would,
 * in the same PATCH as the halt marker. Only for workloads opted in to config revisions: their
 * earlier template names the snapshot of the earlier content, so the undo restores the config
 * too. A revision from before the opt-in (or before the first roll under it) references the live
 * source and would come back on the bad content: such a workload is halted, not undone.
 */
import type { SourceKey, WorkloadView } from '../../core/types.ts';
import type { KindTable } from '../../rollout/kinds.ts';
import type { Patch } from '../../rollout/patch.ts';
import { planUndo } from '../../rollout/revisions.ts';
import { parseSnapshotMap } from '../../rollout/snapshots.ts';
import { ROLLOUT_HALTED, SNAPSHOTS } from '../../core/types.ts';
import { objectAt, stringAt } from '../../core/json.ts';
import { parseHaltMarker } from '../../rollout/waves.ts';
import { revisionSettings } from '../plan/revisions.ts';
import type { SnapshotApi, WorkloadWriter } from '../ports.ts';

export interface UndoDeps {
  readonly writer: Pick<WorkloadWriter, 'getObject'>;
  readonly revisions: Pick<SnapshotApi, 'revisions'>;
  /** `--enable-config-revisions`. */
  readonly configRevisions: boolean;
  readonly kinds: KindTable;
}

/** The halt PATCH that also undoes, and what it restores; or why this workload is not undone. */
export type UndoAnswer =
  | {
      readonly patch: Patch;
      readonly revision: { readonly object: string; readonly number: number };
      readonly snapshots: readonly string[];
    }
  | { readonly notUndone: string }
  /**
   * The workload already carries this change's halt marker: an earlier PATCH of it (with its undo)
   * went through and its answer was lost. Nothing is written again: the live revision is now the
   * undone one, and undoing it would put back the failed roll.
   */
  | { readonly halted: true };

export class FailedRolloutUndo {
  readonly #deps: UndoDeps;

  constructor(deps: UndoDeps) {
    this.#deps = deps;
  }

  /**
   * Reads the workload and its revisions and plans the undo, carrying `annotations` (the halt
   * marker). Rejects with what the API answered; a workload gone answers `notUndone`.
   */
  async plan(
    view: WorkloadView,
    source: SourceKey,
    annotations: Readonly<Record<string, string>>,
  ): Promise<UndoAnswer> {
    const row = this.#deps.kinds.row(view.ref.kind);
    const settings = revisionSettings(view, row, this.#deps.configRevisions);
    if (!settings.optedIn) return { notUndone: 'not opted in to config revisions' };
    const revisionKind = row.revisionKind;
    if (revisionKind === undefined) return { notUndone: `a ${row.kind} keeps no revisions` };
    const object = await this.#deps.writer.getObject(view.ref);
    if (object === undefined) return { notUndone: 'gone' };
    const served = objectAt(object, ['metadata', 'annotations'])?.[ROLLOUT_HALTED];
    if (sameChange(typeof served === 'string' ? served : undefined, annotations[ROLLOUT_HALTED])) {
      return { halted: true };
    }
    const items = await this.#deps.revisions.revisions(revisionKind, view.ref.namespace);
    const plan = planUndo(row, object, { items: [...items] }, annotations);
    if (plan.state === 'impossible') return { notUndone: plan.why };
    const pinned = parseSnapshotMap(
      stringAt(plan.to.template, ['metadata', 'annotations', SNAPSHOTS]),
    );
    // A revision that references the live source would come back on the bad content.
    if (!pinned.has(source)) {
      return {
        notUndone: `revision ${String(plan.to.revision)} runs the live ${source}, not a snapshot of it`,
      };
    }
    const snapshots = [...pinned.values()];
    return {
      patch: { type: 'strategic', body: plan.patch },
      revision: { object: plan.to.object, number: plan.to.revision },
      snapshots,
    };
  }
}

/** Two halt markers of the same change (source and hash); their times and reasons may differ. */
function sameChange(served: string | undefined, planned: string | undefined): boolean {
  const a = parseHaltMarker(served);
  const b = parseHaltMarker(planned);
  return a !== undefined && a.source === b?.source && a.hash === b.hash;
}
