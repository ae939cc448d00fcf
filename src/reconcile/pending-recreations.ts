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

  /** Adds the journal's entries that this process does not hold; returns every pending key. */
  async replay(): Promise<readonly WorkloadKey[]> {
    for (const entry of await this.#journal.entries()) {
      const key = workloadKey(entry.ref);
      if (!this.#entries.has(key)) this.#entries.set(key, entry);
    }
    return this.keys();
  }

  keys(): readonly WorkloadKey[] {
    return [...this.#entries.keys()];
  }
}
