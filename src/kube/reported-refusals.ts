/**
 * Which refused journal entries were reported already. The journal is replayed at every resync and
 * a refused entry is left in place, so without this the same refusal would be logged and counted at
 * each replay. Only a digest of each refusal (data key, stored text and reason) is kept, never the
 * entry itself, and only for the entries of the last read: an entry removed and written again is
 * reported again.
 */
import { createHash } from 'node:crypto';

/** One refusal of a read: the data key, its stored value, and why it is refused. */
export interface Refusal<Reason extends string> {
  readonly key: string;
  readonly stored: unknown;
  readonly reason: Reason;
}

/** Digests kept at most: a journal with more refused entries reports the rest at every read. */
export const REPORTED_REFUSALS_LIMIT = 1024;

function digestOf(refusal: Refusal<string>): string {
  const stored =
    typeof refusal.stored === 'string' ? refusal.stored : JSON.stringify(refusal.stored);
  return createHash('sha256')
    .update(JSON.stringify([refusal.key, refusal.reason, stored]), 'utf8')
    .digest('base64');
}

export class ReportedRefusals {
  #reported: ReadonlySet<string> = new Set();

  /**
   * The refusals of one whole read that the previous read did not have; remembers this read's
   * refusals (up to REPORTED_REFUSALS_LIMIT) for the next.
   */
  unreported<R extends Refusal<string>>(refusals: readonly R[]): R[] {
    const digests = refusals.map(digestOf);
    const fresh = refusals.filter((_refusal, index) => !this.#reported.has(digests[index] ?? ''));
    this.#reported = new Set(digests.slice(0, REPORTED_REFUSALS_LIMIT));
    return fresh;
  }
}
