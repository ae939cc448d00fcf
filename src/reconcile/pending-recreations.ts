/**
 * Jobs deleted by a roll whose creation finally failed (§7.4 item 4): the built manifest is kept in
 * memory and creation is retried at every resync until it succeeds, the Job appears, or the process
 * exits. One entry per workload key; a later failure replaces it.
 */
import type { WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { JsonObject } from '../rollout/json.ts';

export interface PendingRecreation {
  readonly ref: WorkloadRef;
  /** The Job to create, as built before the deletion. */
  readonly manifest: JsonObject;
  /** UID of the deleted Job: a cached Job with another UID means the Job has appeared. */
  readonly deletedUid: string;
  /** When creation first failed, ms since the epoch. */
  readonly since: number;
}

export class PendingRecreations {
  readonly #entries = new Map<WorkloadKey, PendingRecreation>();

  get size(): number {
    return this.#entries.size;
  }

  keep(key: WorkloadKey, entry: PendingRecreation): void {
    this.#entries.set(key, entry);
  }

  get(key: WorkloadKey): PendingRecreation | undefined {
    return this.#entries.get(key);
  }

  drop(key: WorkloadKey): void {
    this.#entries.delete(key);
  }

  keys(): readonly WorkloadKey[] {
    return [...this.#entries.keys()];
  }
}
