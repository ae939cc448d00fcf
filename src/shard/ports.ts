import type { LeaseStore, ObservedLease } from '../leader/ports.ts';

export interface NamedLease {
  readonly name: string;
  readonly lease: ObservedLease;
}

/** The Lease access of active-active mode: the leader election's, and a list of the shard's Leases. */
export interface ShardLeaseStore extends LeaseStore {
  /** Every Lease in `namespace` whose name starts with `prefix`. */
  list(namespace: string, prefix: string): Promise<readonly NamedLease[]>;
}
