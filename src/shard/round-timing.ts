/**
 * When an active-active replica runs its next round, and which members it prepares to replace
 * (docs/adr/0051-active-active-sharding.md, "Takeover"). Pure: the coordinator hands in what it
 * observed, on its monotonic clock.
 *
 * A round runs every retry period; a Lease of another member (its member Lease, or a bucket it
 * holds) that runs out before the next one moves the round to that moment, so a dead member's
 * buckets are claimed as soon as their lease duration has passed, not up to a retry period (plus
 * the round's own duration) later. A member not seen renewing for the renew deadline has stopped
 * writing or is about to; its buckets' namespaces are listed into the caches while its Leases run
 * out, so the claim at expiry does not wait for that list.
 */
import { claimDurationMs } from '../leader/lease-decision.ts';
import type { LeaseObservation, LeaseTimings } from '../leader/lease-decision.ts';
import type { ObservedLease } from '../leader/ports.ts';

/** A Lease held by another member, and when this replica last saw it change. */
export interface ObservedClaim {
  readonly lease: ObservedLease;
  readonly observation: LeaseObservation;
}

/** When the claim runs out on this replica's clock: seen unchanged for its duration. */
export function expiresAtMs(claim: ObservedClaim, timings: LeaseTimings): number {
  return claim.observation.observedAtMs + claimDurationMs(claim.lease.record, timings);
}

/** A round that took longer than the retry period is followed by this share of it, at least. */
const MIN_GAP_SHARE = 4;

/**
 * Delay before the next round, counted from `nowMs` (the end of this one): a retry period after
 * this round started (`startedAtMs`), so the rounds, and the lists that observe the other members'
 * renewals, keep one retry period apart however long each takes to write its Leases (at least a
 * quarter of the period after the end of one that took longer); or less when one of `claims` runs
 * out sooner. A claim that had run out when this round judged the Leases (`judgedAtMs`, when its
 * list was read) was acted on, or could not be (a cache still filling nudges a round of its own);
 * one that ran out since, while the round wrote its Leases, calls for the next round at once.
 */
export function nextRoundDelayMs(input: {
  readonly nowMs: number;
  readonly startedAtMs: number;
  readonly judgedAtMs: number;
  readonly claims: readonly ObservedClaim[];
  readonly timings: LeaseTimings;
}): number {
  const { nowMs, startedAtMs, judgedAtMs, claims, timings } = input;
  const minGapMs = timings.retryPeriodMs / MIN_GAP_SHARE;
  let delayMs = Math.max(minGapMs, startedAtMs + timings.retryPeriodMs - nowMs);
  for (const claim of claims) {
    const expiresAt = expiresAtMs(claim, timings);
    if (expiresAt > judgedAtMs) delayMs = Math.min(delayMs, Math.max(0, expiresAt - nowMs));
  }
  return Math.ceil(delayMs);
}

/**
 * Members seen live whose member Lease has not changed for the renew deadline: their own fence
 * stops their writes about now, and their Leases run out within `leaseDuration − renewDeadline`.
 */
export function suspectedMembers(input: {
  readonly nowMs: number;
  readonly members: ReadonlyMap<string, ObservedClaim>;
  readonly timings: LeaseTimings;
}): readonly string[] {
  const { nowMs, members, timings } = input;
  return [...members]
    .filter(
      ([, claim]) =>
        nowMs >= claim.observation.observedAtMs + timings.renewDeadlineMs &&
        nowMs < expiresAtMs(claim, timings),
    )
    .map(([member]) => member)
    .sort();
}
