import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LEASE_TIMINGS,
  canWriteAt,
  claimDurationMs,
  claimRecord,
  decideLeaseAction,
  observeLease,
  releaseRecord,
} from './lease-decision.ts';
import type { LeaseAction, LeaseObservation } from './lease-decision.ts';
import type { LeaseRecord, ObservedLease } from './ports.ts';

const T0 = new Date('2026-01-02T03:04:05.123Z');
const T1 = new Date('2026-01-02T03:05:00.000Z');

function lease(
  holder: string | undefined,
  overrides: Partial<LeaseRecord> = {},
  rv = '10',
): ObservedLease {
  return {
    resourceVersion: rv,
    record: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: T0,
      renewTime: T0,
      leaseTransitions: 3,
      ...overrides,
    },
  };
}

const seenAt = (ms: number, l: ObservedLease): LeaseObservation => observeLease(undefined, l, ms);

describe('decideLeaseAction', () => {
  it.each<
    [
      string,
      ObservedLease | undefined | 'unreadable',
      LeaseObservation | undefined,
      number,
      LeaseAction,
    ]
  >([
    ['unreadable lease', 'unreadable', undefined, 0, 'wait'],
    ['no lease', undefined, undefined, 0, 'acquire'],
    ['held by us', lease('me'), seenAt(0, lease('me')), 60_000, 'renew'],
    ['held by nobody (released)', lease(undefined), seenAt(0, lease(undefined)), 0, 'takeover'],
    ['held by nobody (empty string)', lease(''), seenAt(0, lease('')), 0, 'takeover'],
    ['held by other, just seen', lease('other'), seenAt(0, lease('other')), 0, 'follow'],
    [
      'held by other, seen 14.999 s ago',
      lease('other'),
      seenAt(0, lease('other')),
      14_999,
      'follow',
    ],
    ['held by other, seen 15 s ago', lease('other'), seenAt(0, lease('other')), 15_000, 'takeover'],
    [
      'held by other with a 1 s claim, seen 1 s ago',
      lease('other', { leaseDurationSeconds: 1 }),
      seenAt(0, lease('other', { leaseDurationSeconds: 1 })),
      1_000,
      'takeover',
    ],
    [
      'held by other without duration: ours applies',
      lease('other', { leaseDurationSeconds: undefined }),
      seenAt(0, lease('other', { leaseDurationSeconds: undefined })),
      14_000,
      'follow',
    ],
    ['held by other, never observed before', lease('other'), undefined, 99_000, 'follow'],
  ])('%s → %s', (_case, observed, observation, nowMs, expected) => {
    expect(
      decideLeaseAction({
        lease: observed,
        observation,
        identity: 'me',
        nowMs,
        timings: DEFAULT_LEASE_TIMINGS,
      }),
    ).toBe(expected);
  });

  it('judges expiry by the local clock, not by the renewTime in the Lease', () => {
    // renewTime is hours in the past by the lease's clock, but we only just saw it: still live.
    const stale = lease('other', { renewTime: new Date('2020-01-01T00:00:00Z') });
    const observation = seenAt(5_000, stale);
    expect(
      decideLeaseAction({
        lease: stale,
        observation,
        identity: 'me',
        nowMs: 6_000,
        timings: DEFAULT_LEASE_TIMINGS,
      }),
    ).toBe('follow');
  });
});

describe('observeLease', () => {
  it.each<[string, ObservedLease, number]>([
    ['unchanged lease keeps the first moment', lease('other'), 1_000],
    ['new resourceVersion', lease('other', {}, '11'), 9_000],
    ['new holder', lease('third'), 9_000],
    ['new renewTime', lease('other', { renewTime: T1 }), 9_000],
    ['new transition count', lease('other', { leaseTransitions: 4 }), 9_000],
  ])('%s → observed at %i', (_case, next, expected) => {
    const first = observeLease(undefined, lease('other'), 1_000);
    expect(observeLease(first, next, 9_000).observedAtMs).toBe(expected);
  });
});

describe('claimDurationMs', () => {
  it.each<[number | undefined, number]>([
    [15, 15_000],
    [1, 1_000],
    [0, 15_000],
    [undefined, 15_000],
  ])('leaseDurationSeconds %s → %i ms', (seconds, expected) => {
    expect(
      claimDurationMs(lease('x', { leaseDurationSeconds: seconds }).record, DEFAULT_LEASE_TIMINGS),
    ).toBe(expected);
  });
});

describe('canWriteAt', () => {
  it.each<[number | undefined, number, boolean]>([
    [undefined, 0, false],
    [1_000, 1_000, true],
    [1_000, 10_999, true],
    [1_000, 11_000, false],
  ])('last renewal %s, now %i → %s', (lastRenewAtMs, nowMs, expected) => {
    expect(canWriteAt({ lastRenewAtMs, nowMs, timings: DEFAULT_LEASE_TIMINGS })).toBe(expected);
  });
});

describe('claimRecord', () => {
  it.each<[string, 'acquire' | 'takeover' | 'renew', LeaseRecord | undefined, LeaseRecord]>([
    [
      'acquire a new lease',
      'acquire',
      undefined,
      {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: T1,
        renewTime: T1,
        leaseTransitions: 0,
      },
    ],
    [
      'take over from another holder',
      'takeover',
      lease('other').record,
      {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: T1,
        renewTime: T1,
        leaseTransitions: 4,
      },
    ],
    [
      'take over a released lease',
      'takeover',
      lease(undefined, { leaseDurationSeconds: 1 }).record,
      {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: T1,
        renewTime: T1,
        leaseTransitions: 4,
      },
    ],
    [
      'renew keeps acquireTime and transitions',
      'renew',
      lease('me').record,
      {
        holderIdentity: 'me',
        leaseDurationSeconds: 15,
        acquireTime: T0,
        renewTime: T1,
        leaseTransitions: 3,
      },
    ],
  ])('%s', (_case, action, previous, expected) => {
    expect(
      claimRecord({ action, previous, identity: 'me', now: T1, timings: DEFAULT_LEASE_TIMINGS }),
    ).toEqual(expected);
  });
});

describe('releaseRecord', () => {
  it('clears the holder, sets a 1 s duration and keeps the transition count', () => {
    expect(releaseRecord(lease('me').record, T1)).toEqual({
      holderIdentity: undefined,
      leaseDurationSeconds: 1,
      acquireTime: T1,
      renewTime: T1,
      leaseTransitions: 3,
    });
  });
});
