/**
 * In-memory RecreationJournal standing for the ConfigMap in the cluster: it outlives the Reconciler
 * instances of a test (a crash, a restart, a new leader), adds each write to a RecordingWriter's
 * `writes` so a test sees journal writes and API writes in one order, and can be scripted to fail.
 */
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { JournalEntry, RecreationJournal } from '../reconcile/ports.ts';
import type { ApiError } from '../core/api-error.ts';
import type { RecordingWriter } from './recording-writer.ts';

export class RecordingJournal implements RecreationJournal {
  readonly #writer: RecordingWriter;
  readonly #entries = new Map<WorkloadKey, JournalEntry>();
  readonly #failures: { record: ApiError[]; remove: ApiError[]; entries: ApiError[] } = {
    record: [],
    remove: [],
    entries: [],
  };

  constructor(writer: RecordingWriter) {
    this.#writer = writer;
  }

  /** The next calls of `method` fail with these errors, in order. */
  failNext(method: 'record' | 'remove' | 'entries', ...errors: ApiError[]): void {
    this.#failures[method].push(...errors);
  }

  /** What the journal holds now. */
  stored(): readonly JournalEntry[] {
    return [...this.#entries.values()];
  }

  /** Someone else edits the journal: the entry of `key` is gone (all of them without a key). */
  withdraw(key?: WorkloadKey): void {
    if (key === undefined) this.#entries.clear();
    else this.#entries.delete(key);
  }

  record(entry: JournalEntry): Promise<void> {
    const key = workloadKey(entry.ref);
    this.#writer.note({ verb: 'journal', key, entry: structuredClone(entry) });
    const failure = this.#failures.record.shift();
    if (failure) return Promise.reject(failure);
    this.#entries.set(key, structuredClone(entry));
    return Promise.resolve();
  }

  remove(ref: WorkloadRef): Promise<void> {
    const key = workloadKey(ref);
    this.#writer.note({ verb: 'unjournal', key });
    const failure = this.#failures.remove.shift();
    if (failure) return Promise.reject(failure);
    this.#entries.delete(key);
    return Promise.resolve();
  }

  entries(): Promise<readonly JournalEntry[]> {
    const failure = this.#failures.entries.shift();
    if (failure) return Promise.reject(failure);
    return Promise.resolve(this.stored().map((entry) => structuredClone(entry)));
  }
}
