import { stringAt } from '../core/json.ts';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey } from '../core/types.ts';
import type { WorkloadWriter } from '../reconcile/ports.ts';

/** A PATCH of kreload's that carried a resourceVersion precondition, as the API server answered. */
export interface OwnPatch {
  /** The precondition: the version the patch was planned on. */
  readonly from: string;
  /** The version the API server returned for the patched object. */
  readonly to: string;
}

/** What the ledger knows about one workload. */
interface LedgerEntry {
  /** See `basis`. */
  readonly basis: number | undefined;
  /** kreload's acknowledged patches whose watch event has not come yet, oldest first. */
  readonly patches: readonly OwnPatch[];
}

/** A PATCH sent with a resourceVersion precondition and not answered yet. */
interface PatchInFlight {
  readonly key: WorkloadKey;
  /** The precondition. */
  readonly from: string;
  /** Settles once the answer is in the ledger (recorded, or refused and so never an echo). */
  readonly answered: Promise<void>;
}

/** More unmatched patches than this per workload means their events were coalesced: forget them. */
const MAX_PENDING_PATCHES = 4;

/**
 * What kreload itself last wrote to each workload.
 *
 * The basis: the start time of the reconcile whose reads the write was based on. Every source
 * change observed before that moment has been accounted for (rolled, or absorbed into a baseline),
 * so R7 must not count it again: the workload store moves `relevantSince` forward to it (its
 * `writeBasis`).
 *
 * The patches: a watch event that moves a workload from exactly the version a patch was planned on
 * to exactly the version the API server returned for it shows nothing but that patch (the
 * precondition guarantees no other write came between), and the reconcile that sent it already
 * accounted for it: planning again would find nothing to do. The watch may deliver that event
 * before the PATCH's answer is read: a change from the precondition of a patch still in flight is
 * decided once the answer is in, so whether an echo is planned never depends on that race.
 */
export class WriteLedger {
  readonly #entries = new Map<WorkloadKey, LedgerEntry>();
  readonly #inFlight = new Set<PatchInFlight>();

  record(key: WorkloadKey, basisAt: number): void {
    const entry = this.#entries.get(key);
    const basis = Math.max(basisAt, entry?.basis ?? basisAt);
    this.#entries.set(key, { basis, patches: entry?.patches ?? [] });
  }

  basis(key: WorkloadKey): number | undefined {
    return this.#entries.get(key)?.basis;
  }

  /** An acknowledged PATCH of `key` with a resourceVersion precondition. */
  recordPatch(key: WorkloadKey, patch: OwnPatch): void {
    const entry = this.#entries.get(key);
    const patches = [...(entry?.patches ?? []), patch].slice(-MAX_PENDING_PATCHES);
    this.#entries.set(key, { basis: entry?.basis, patches });
  }

  /**
   * Whether a watched change of `key` from version `from` to version `to` is the echo of one of
   * kreload's own patches. A match is consumed, and so are the patches older than it. While a
   * patch of `key` planned on `from` awaits its answer, the verdict is a promise of it.
   */
  isOwnEcho(key: WorkloadKey, from: string, to: string): boolean | Promise<boolean> {
    if (this.#consumeEcho(key, from, to)) return true;
    for (const patch of this.#inFlight) {
      if (patch.key === key && patch.from === from) {
        return patch.answered.then(() => this.#consumeEcho(key, from, to));
      }
    }
    return false;
  }

  /**
   * `answer` settles with the version the API server returned for a PATCH of `key` planned on
   * version `from`, or with undefined when it was refused. Until then a change from `from` waits.
   */
  patchSent(key: WorkloadKey, from: string, answer: Promise<string | undefined>): void {
    const patch: PatchInFlight = {
      key,
      from,
      answered: answer.then((to) => {
        this.#inFlight.delete(patch);
        if (to !== undefined) this.recordPatch(key, { from, to });
      }),
    };
    this.#inFlight.add(patch);
  }

  #consumeEcho(key: WorkloadKey, from: string, to: string): boolean {
    const entry = this.#entries.get(key);
    const index = entry?.patches.findIndex((p) => p.from === from && p.to === to) ?? -1;
    if (entry === undefined || index < 0) return false;
    this.#entries.set(key, { basis: entry.basis, patches: entry.patches.slice(index + 1) });
    return true;
  }

  forget(key: WorkloadKey): void {
    this.#entries.delete(key);
  }
}

/** `writer`, with each acknowledged PATCH that carried a resourceVersion precondition recorded. */
export function recordingOwnPatches(writer: WorkloadWriter, ledger: WriteLedger): WorkloadWriter {
  return {
    patch: (ref, patch) => {
      const sent = writer.patch(ref, patch);
      const from = stringAt(patch.body, ['metadata', 'resourceVersion']);
      if (from !== undefined) {
        const answer = sent.then(
          (result) => result.resourceVersion,
          () => undefined,
        );
        ledger.patchSent(workloadKey(ref), from, answer);
      }
      return sent;
    },
    get: (ref) => writer.get(ref),
    getObject: (ref) => writer.getObject(ref),
    create: (row, namespace, body) => writer.create(row, namespace, body),
    delete: (ref, preconditions) => writer.delete(ref, preconditions),
    instantiate: (ref, body) => writer.instantiate(ref, body),
  };
}
