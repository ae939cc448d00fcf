/**
 * The shard's Leases in memory (active-active tests): optimistic concurrency on a resourceVersion,
 * every write recorded, and the faults a busy API server or a starved process shows: a write that
 * fails, one applied with its answer lost, one applied with its answer held back until the test
 * delivers it. And a monotonic clock the test moves by hand.
 */
import { ApiError } from '../core/api-error.ts';
import { LeaseConflictError } from '../leader/ports.ts';
import type { LeaseId, LeaseRecord, ObservedLease } from '../leader/ports.ts';
import type { NamedLease, ShardLeaseStore } from '../shard/ports.ts';
import type { Clock } from '../time/timers.ts';

export interface LeaseWrite {
  readonly op: 'create' | 'replace';
  readonly name: string;
  readonly holder: string | undefined;
  readonly by: string;
}

/**
 * What the next write of a Lease does: fails with an error; is applied with its answer lost; or is
 * applied and answered only once `deliverLateAnswers()` is called (a process too starved to read it).
 */
export type LeaseFault = 'lost-answer' | 'late-answer' | Error;

export class InMemoryShardLeases {
  readonly leases = new Map<string, ObservedLease>();
  readonly writes: LeaseWrite[] = [];
  /** Lease name → what its next write does. */
  readonly faults = new Map<string, LeaseFault>();
  /** Lease name → what its next release (a write clearing the holder) does; other writes pass. */
  readonly releaseFaults = new Map<string, LeaseFault>();
  readonly #prefix: string;
  readonly #lateAnswers: (() => void)[] = [];
  #version = 0;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  storeFor(identity: string): ShardLeaseStore {
    return {
      get: (id) => Promise.resolve(this.leases.get(id.name)),
      list: (_namespace, prefix) =>
        Promise.resolve(
          [...this.leases]
            .filter(([name]) => name.startsWith(prefix))
            .map(([name, lease]): NamedLease => ({ name, lease })),
        ),
      create: (id, record) =>
        this.#write(id, record, { by: identity, op: 'create', rv: undefined }),
      replace: (id, record, rv) => this.#write(id, record, { by: identity, op: 'replace', rv }),
    };
  }

  holder(bucket: number): string | undefined {
    return this.leases.get(`${this.#prefix}-bucket-${String(bucket)}`)?.record.holderIdentity;
  }

  /** Writes applied whose answers `late-answer` faults hold back. */
  get lateAnswersHeld(): number {
    return this.#lateAnswers.length;
  }

  /** The answers held back by `late-answer` faults reach their callers now. */
  deliverLateAnswers(): void {
    for (const deliver of this.#lateAnswers.splice(0)) deliver();
  }

  #write(
    id: LeaseId,
    record: LeaseRecord,
    write: {
      readonly by: string;
      readonly op: 'create' | 'replace';
      readonly rv: string | undefined;
    },
  ): Promise<ObservedLease> {
    const { by, op, rv } = write;
    const releasing = record.holderIdentity === undefined || record.holderIdentity === '';
    const faults = releasing && this.releaseFaults.has(id.name) ? this.releaseFaults : this.faults;
    const fault = faults.get(id.name);
    faults.delete(id.name);
    if (fault instanceof Error) return Promise.reject(fault);
    const current = this.leases.get(id.name);
    if (op === 'create' ? current !== undefined : current?.resourceVersion !== rv) {
      return Promise.reject(new LeaseConflictError('conflict'));
    }
    this.#version += 1;
    const lease = { record, resourceVersion: String(this.#version) };
    this.leases.set(id.name, lease);
    this.writes.push({ op, name: id.name, holder: record.holderIdentity, by });
    if (fault === 'lost-answer')
      return Promise.reject(new ApiError('connection reset', { retryable: true }));
    if (fault === 'late-answer') {
      return new Promise((resolve) => {
        this.#lateAnswers.push(() => {
          resolve(lease);
        });
      });
    }
    return Promise.resolve(lease);
  }
}

export class ManualClock implements Clock {
  monotonic = 1_000;
  wall = Date.parse('2026-12-06T12:00:00Z');
  now(): number {
    return this.wall;
  }
  monotonicMs(): number {
    return this.monotonic;
  }
  advance(ms: number): void {
    this.monotonic += ms;
    this.wall += ms;
  }
}
