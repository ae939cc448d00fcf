import { describe, expect, it } from 'vitest';
import type { LeaseTimings } from '../leader/lease-decision.ts';
import { nextRoundDelayMs, suspectedMembers, type ObservedClaim } from './round-timing.ts';

const TIMINGS: LeaseTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

/** A Lease of c with `seconds` of duration, last seen changing at `observedAtMs`. */
function claim(observedAtMs: number, seconds?: number): ObservedClaim {
  return {
    lease: {
      record: {
        holderIdentity: 'c',
        leaseDurationSeconds: seconds,
        acquireTime: new Date(0),
        renewTime: new Date(0),
        leaseTransitions: 0,
      },
      resourceVersion: String(observedAtMs),
    },
    observation: { fingerprint: String(observedAtMs), observedAtMs },
  };
}

describe('nextRoundDelayMs', () => {
  const cases: {
    readonly name: string;
    readonly nowMs: number;
    /** When the round read its list; default `nowMs`. */
    readonly judgedAtMs?: number;
    /** When the round started; default `nowMs`. */
    readonly startedAtMs?: number;
    readonly claims: readonly ObservedClaim[];
    readonly delayMs: number;
  }[] = [
    { name: 'nothing observed: the retry period', nowMs: 50_000, claims: [], delayMs: 2_000 },
    {
      name: 'a live member renewing: the retry period',
      nowMs: 50_000,
      claims: [claim(49_000)],
      delayMs: 2_000,
    },
    {
      name: 'a claim running out before the next round: at its expiry',
      nowMs: 50_000,
      claims: [claim(36_300), claim(49_000)],
      delayMs: 1_300,
    },
    {
      name: 'the earliest of two expiries',
      nowMs: 50_000,
      claims: [claim(35_900), claim(35_400)],
      delayMs: 400,
    },
    {
      name: 'a fraction of a millisecond: rounded up, never early',
      nowMs: 50_000.25,
      claims: [claim(35_400)],
      delayMs: 400,
    },
    {
      name: 'already expired: acted on this round, the retry period',
      nowMs: 50_000,
      claims: [claim(30_000)],
      delayMs: 2_000,
    },
    {
      name: 'run out while the round wrote its Leases, after it judged: at once',
      nowMs: 50_000,
      judgedAtMs: 49_700,
      claims: [claim(34_800)],
      delayMs: 0,
    },
    {
      name: 'run out before the round judged: acted on, the retry period',
      nowMs: 50_000,
      judgedAtMs: 49_700,
      claims: [claim(34_600)],
      delayMs: 2_000,
    },
    {
      name: 'expiring exactly now: the retry period',
      nowMs: 50_000,
      claims: [claim(35_000)],
      delayMs: 2_000,
    },
    {
      name: 'a released Lease (1 s): its own duration',
      nowMs: 50_000,
      claims: [claim(49_500, 1)],
      delayMs: 500,
    },
    {
      name: 'no duration written: ours',
      nowMs: 50_000,
      claims: [claim(36_500)],
      delayMs: 1_500,
    },
    {
      name: 'a round that took 700 ms: a retry period after it started',
      nowMs: 50_000,
      startedAtMs: 49_300,
      claims: [claim(49_000)],
      delayMs: 1_300,
    },
    {
      name: 'a round that took 1.9 s: a quarter of the retry period after it ended',
      nowMs: 50_000,
      startedAtMs: 48_100,
      claims: [],
      delayMs: 500,
    },
    {
      name: 'a round longer than the retry period: a quarter of it after it ended',
      nowMs: 50_000,
      startedAtMs: 46_000,
      claims: [],
      delayMs: 500,
    },
    {
      name: 'a long round, a claim running out sooner than the gap: at its expiry',
      nowMs: 50_000,
      startedAtMs: 46_000,
      judgedAtMs: 47_000,
      claims: [claim(35_200)],
      delayMs: 200,
    },
  ];
  it.each(cases)('$name', ({ nowMs, startedAtMs, judgedAtMs, claims, delayMs }) => {
    expect(
      nextRoundDelayMs({
        nowMs,
        startedAtMs: startedAtMs ?? nowMs,
        judgedAtMs: judgedAtMs ?? nowMs,
        claims,
        timings: TIMINGS,
      }),
    ).toBe(delayMs);
  });
});

describe('suspectedMembers', () => {
  const cases: {
    readonly name: string;
    readonly observedAgoMs: number;
    readonly suspected: boolean;
  }[] = [
    { name: 'renewed a retry period ago', observedAgoMs: 2_000, suspected: false },
    { name: 'just short of the renew deadline', observedAgoMs: 9_999, suspected: false },
    { name: 'at the renew deadline', observedAgoMs: 10_000, suspected: true },
    { name: 'about to expire', observedAgoMs: 14_999, suspected: true },
    { name: 'expired (no longer live, not a suspect)', observedAgoMs: 15_000, suspected: false },
  ];
  it.each(cases)('$name: $suspected', ({ observedAgoMs, suspected }) => {
    const nowMs = 100_000;
    const members = new Map([
      ['c', claim(nowMs - observedAgoMs)],
      ['a', claim(nowMs - 500)],
    ]);
    expect(suspectedMembers({ nowMs, members, timings: TIMINGS })).toEqual(suspected ? ['c'] : []);
  });
});
