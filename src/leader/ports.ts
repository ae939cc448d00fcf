import { ApiError } from '../core/api-error.ts';

/** Which Lease the election runs on. */
export interface LeaseId {
  readonly namespace: string;
  readonly name: string;
}

/**
 * The fields of a `coordination.k8s.io/v1` Lease spec that the election reads and writes. Times are
 * plain `Date`s here; writing them as MicroTime (six fractional digits) is the kube adapter's job.
 */
export interface LeaseRecord {
  /** Undefined when nobody holds the lease (never created with one, or released). */
  readonly holderIdentity: string | undefined;
  readonly leaseDurationSeconds: number | undefined;
  readonly acquireTime: Date | undefined;
  readonly renewTime: Date | undefined;
  readonly leaseTransitions: number | undefined;
}

export interface ObservedLease {
  readonly record: LeaseRecord;
  readonly resourceVersion: string;
}

/**
 * Thrown by `create` when the Lease already exists and by `replace` on a stale resourceVersion: the
 * 409 `ApiError` of a Lease write, typed apart because for the election it is no failure at all —
 * another replica wrote first, and the next read shows who.
 */
export class LeaseConflictError extends ApiError {
  constructor(
    message: string,
    options: { readonly reason?: string | undefined; readonly cause?: unknown } = {},
  ) {
    const { reason = 'Conflict', cause } = options;
    super(message, { status: 409, reason, retryable: true, cause });
    this.name = 'LeaseConflictError';
  }
}

/** Lease access, implemented by kube/ (get, create, update on leases) and in memory for tests. */
export interface LeaseStore {
  /** Undefined when the Lease does not exist. */
  get(id: LeaseId): Promise<ObservedLease | undefined>;
  /** Rejects with `LeaseConflictError` when the Lease exists. */
  create(id: LeaseId, record: LeaseRecord): Promise<ObservedLease>;
  /** Rejects with `LeaseConflictError` when `resourceVersion` is no longer current. */
  replace(id: LeaseId, record: LeaseRecord, resourceVersion: string): Promise<ObservedLease>;
}
