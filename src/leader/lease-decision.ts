import type { LeaseRecord, ObservedLease } from './ports.ts';

export interface LeaseTimings {
  /** How long a holder's claim stays valid after a renewal is observed (15 s). */
  readonly leaseDurationMs: number;
  /** The holder stops writing and gives up this long after its last successful renewal (10 s). */
  readonly renewDeadlineMs: number;
  /** Pause between two attempts to acquire or renew (2 s). */
  readonly retryPeriodMs: number;
}

/** §13.4: 15 s / 10 s / 2 s. */
export const DEFAULT_LEASE_TIMINGS: LeaseTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/**
 * When this process last saw the Lease change. Expiry is judged from this local, monotonic moment,
 * never from the timestamps in the Lease, which come from another machine's clock.
 */
export interface LeaseObservation {
  readonly fingerprint: string;
  readonly observedAtMs: number;
}

/**
 * - `acquire`: no Lease exists; create it.
 * - `renew`: we hold it; write a fresh renewTime.
 * - `takeover`: nobody holds it, or the holder was not seen renewing for a lease duration.
 * - `follow`: another holder is live.
 * - `wait`: the Lease could not be read; nothing can be decided.
 */
export type LeaseAction = 'acquire' | 'renew' | 'takeover' | 'follow' | 'wait';

export interface LeaseDecisionInput {
  /** `unreadable` when the read failed. */
  readonly lease: ObservedLease | undefined | 'unreadable';
  /** The observation after taking `lease` into account (see `observeLease`). */
  readonly observation: LeaseObservation | undefined;
  readonly identity: string;
  readonly nowMs: number;
  readonly timings: LeaseTimings;
}

function fingerprintOf(lease: ObservedLease): string {
  const { holderIdentity, renewTime, leaseTransitions } = lease.record;
  return JSON.stringify([
    lease.resourceVersion,
    holderIdentity ?? '',
    renewTime?.getTime() ?? null,
    leaseTransitions ?? 0,
  ]);
}

/** Remembers `nowMs` as the observation moment only when the Lease changed since last time. */
export function observeLease(
  previous: LeaseObservation | undefined,
  lease: ObservedLease,
  nowMs: number,
): LeaseObservation {
  const fingerprint = fingerprintOf(lease);
  return previous?.fingerprint === fingerprint ? previous : { fingerprint, observedAtMs: nowMs };
}

/** The holder's own duration when it wrote one (a release writes 1 s), else ours. */
export function claimDurationMs(record: LeaseRecord, timings: LeaseTimings): number {
  const seconds = record.leaseDurationSeconds;
  return seconds !== undefined && seconds > 0 ? seconds * 1000 : timings.leaseDurationMs;
}

export function decideLeaseAction(input: LeaseDecisionInput): LeaseAction {
  const { lease, observation, identity, nowMs, timings } = input;
  if (lease === 'unreadable') return 'wait';
  if (lease === undefined) return 'acquire';
  const holder = lease.record.holderIdentity;
  if (holder === identity) return 'renew';
  if (holder === undefined || holder === '') return 'takeover';
  const observedAtMs = observation?.observedAtMs ?? nowMs;
  const expired = nowMs >= observedAtMs + claimDurationMs(lease.record, timings);
  return expired ? 'takeover' : 'follow';
}

/** §13.4 item 4: a write starts only while now < last successful renewal + renew deadline. */
export function canWriteAt(input: {
  readonly nowMs: number;
  readonly lastRenewAtMs: number | undefined;
  readonly timings: LeaseTimings;
}): boolean {
  return (
    input.lastRenewAtMs !== undefined &&
    input.nowMs < input.lastRenewAtMs + input.timings.renewDeadlineMs
  );
}

function durationSeconds(timings: LeaseTimings): number {
  return Math.ceil(timings.leaseDurationMs / 1000);
}

/** The record to write for `acquire`, `takeover` and `renew`. */
export function claimRecord(input: {
  readonly action: 'acquire' | 'takeover' | 'renew';
  readonly previous: LeaseRecord | undefined;
  readonly identity: string;
  readonly now: Date;
  readonly timings: LeaseTimings;
}): LeaseRecord {
  const { action, previous, identity, now, timings } = input;
  const transitions = previous?.leaseTransitions ?? 0;
  const keepsHolder = action === 'renew' && previous?.holderIdentity === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds: durationSeconds(timings),
    acquireTime: keepsHolder ? (previous.acquireTime ?? now) : now,
    renewTime: now,
    leaseTransitions: action === 'takeover' ? transitions + 1 : transitions,
  };
}

/** §13.5 step 3: clear the holder and shorten the claim so a successor need not wait 15 s. */
export function releaseRecord(previous: LeaseRecord, now: Date): LeaseRecord {
  return {
    holderIdentity: undefined,
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: previous.leaseTransitions,
  };
}
