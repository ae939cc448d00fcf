/**
 * Jobs a roll deletes and has not created again (§7.4 item 4, docs/adr/0019): each is written to
 * the durable journal before its DELETE and dropped from it once the Job exists again, so the
 * recreation survives a crash or a failover. This process keeps the entries it journalled or
 * replayed; the resync enqueues their keys and each reconcile of one tries the next step.
 */
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { JournalEntry, RecreationJournal } from './ports.ts';

export type PendingRecreation = JournalEntry;

/**
 * A journal held in this process only: what a Job roll gets when kreload does not know its own
 * namespace (no `POD_NAMESPACE`). A crash between DELETE and CREATE then loses the Job.
 */
export class ProcessMemoryJournal implements RecreationJournal {
  readonly #entries = new Map<WorkloadKey, JournalEntry>();

  record(entry: JournalEntry): Promise<void> {
    this.#entries.set(workloadKey(entry.ref), entry);
    return Promise.resolve();
  }

  remove(ref: WorkloadRef): Promise<void> {
    this.#entries.delete(workloadKey(ref));
    return Promise.resolve();
  }

  entries(): Promise<readonly JournalEntry[]> {
    return Promise.resolve([...this.#entries.values()]);
  }
}

export class PendingRecreations {
  readonly #journal: RecreationJournal;
  readonly #entries = new Map<WorkloadKey, PendingRecreation>();

  constructor(journal: RecreationJournal) {
    this.#journal = journal;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Journals `entry`; rejects with ApiError when it is not durable, and then nothing is kept. */
  async record(entry: PendingRecreation): Promise<PendingRecreation> {
    await this.#journal.record(entry);
    this.#entries.set(workloadKey(entry.ref), entry);
    return entry;
  }

  get(key: WorkloadKey): PendingRecreation | undefined {
    return this.#entries.get(key);
  }

  /**
   * The Job exists again, or was never deleted: drops the entry from the journal, then here. A
   * failed removal rejects and keeps the entry, so the next reconcile of the key removes it.
   */
  async settle(key: WorkloadKey): Promise<void> {
    const entry = this.#entries.get(key);
    if (!entry) return;
    await this.#journal.remove(entry.ref);
    // A newer entry journalled meanwhile (another roll of the same Job) stays.
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
  }

  /**
   * Makes this process's entries those of the journal: adds the ones it does not hold, and drops
   * the ones the journal no longer holds (removed, edited into something kreload refuses, or the
   * whole journal deleted), unless journalled here while the journal was being read. Rejects with
   * ApiError when the journal cannot be read, and then changes nothing.
   */
  async replay(): Promise<{
    readonly pending: readonly WorkloadKey[];
    readonly withdrawn: readonly WorkloadKey[];
  }> {
    const held = new Map(this.#entries);
    const journalled = new Map(
      (await this.#journal.entries()).map((entry) => [workloadKey(entry.ref), entry] as const),
    );
    const withdrawn: WorkloadKey[] = [];
    for (const [key, entry] of held) {
      if (this.#entries.get(key) !== entry) continue;
      const current = journalled.get(key);
      if (current === undefined) {
        this.#entries.delete(key);
        withdrawn.push(key);
      } else if (!sameEntry(current, entry)) {
        this.#entries.set(key, current);
      }
    }
    for (const [key, entry] of journalled) {
      if (!this.#entries.has(key) && !held.has(key)) this.#entries.set(key, entry);
    }
    return { pending: this.keys(), withdrawn };
  }

  /**
   * The entry of `key` as the journal holds it now, read again before a Job is created from it:
   * undefined when the journal no longer holds one kreload may replay, and then it is dropped here
   * too. Rejects with ApiError when the journal cannot be read.
   */
  async confirm(key: WorkloadKey): Promise<PendingRecreation | undefined> {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    const current = (await this.#journal.entries()).find(
      (journalled) => workloadKey(journalled.ref) === key,
    );
    if (this.#entries.get(key) !== entry) return this.#entries.get(key);
    if (current === undefined) {
      this.#entries.delete(key);
      return undefined;
    }
    if (!sameEntry(current, entry)) this.#entries.set(key, current);
    return this.#entries.get(key);
  }

  keys(): readonly WorkloadKey[] {
    return [...this.#entries.keys()];
  }
}

function sameEntry(a: PendingRecreation, b: PendingRecreation): boolean {
  return (
    a.deletedUid === b.deletedUid &&
    a.since === b.since &&
    JSON.stringify(a.manifest) === JSON.stringify(b.manifest)
  );
}
