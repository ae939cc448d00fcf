import { describe, expect, it } from 'vitest';
import type { WorkloadKey } from '../core/types.ts';
import type { RolloutHealth } from './health.ts';
import type { RolloutStatusView } from './rollout-status.ts';
import {
  type Admission,
  admitsEverything,
  canarySize,
  decideAdmission,
  type Member,
  type MemberFacts,
  type MemberState,
  memberStatus,
  orderMembers,
  parsePriority,
  rolloutDeadlineMs,
  type RolloutSettings,
  UNLIMITED_ROLLOUTS,
  waveOf,
  wavesOf,
  haltingMembers,
} from './waves.ts';

const WAVES: RolloutSettings = {
  ...UNLIMITED_ROLLOUTS,
  waves: true,
  maxConcurrent: 3,
  canary: { count: 1 },
};

const PENDING: MemberState = { state: 'pending' };
const PROGRESSING: MemberState = { state: 'progressing' };
const COMPLETE: MemberState = { state: 'complete' };
const FAILED: MemberState = {
  state: 'failed',
  reason: 'ProgressDeadlineExceeded',
  detail: 'progress deadline passed',
};

function member(name: string, status: MemberState = PENDING, priority = 0, ns = 'ns'): Member {
  const key = `Deployment/${ns}/${name}` as WorkloadKey;
  return { key, ref: { kind: 'Deployment', namespace: ns, name }, priority, status };
}

/** Ten members w0…w9 with the given states from the first; the rest pending. */
function ten(...states: MemberState[]): Member[] {
  return Array.from({ length: 10 }, (_, i) => member(`w${String(i)}`, states[i] ?? PENDING));
}

const key = (name: string, ns = 'ns'): WorkloadKey => `Deployment/${ns}/${name}` as WorkloadKey;
const NONE = { cluster: 0, namespace: 0 };

/** The answer without the members it names, and the names it waits on or is held by. */
function summary(admission: Admission): string {
  if (admission.answer === 'now') return 'now';
  if (admission.answer === 'held') {
    return `held ${admission.reason} by ${admission.failed.map((m) => m.ref.name).join(',')}`;
  }
  const on = admission.waitingOn.map((m) => m.ref.name).join(',');
  return `later ${admission.reason}${admission.wave === undefined ? '' : ` wave ${String(admission.wave)}`}${on ? ` on ${on}` : ''}`;
}

describe('decideAdmission', () => {
  it.each<
    [string, RolloutSettings, Member[], string, { cluster: number; namespace: number }, string]
  >([
    [
      'no flags: always now',
      UNLIMITED_ROLLOUTS,
      ten(FAILED),
      'w5',
      { cluster: 99, namespace: 99 },
      'now',
    ],
    ['the canary goes first', WAVES, ten(), 'w0', NONE, 'now'],
    ['wave 1 waits for the canary', WAVES, ten(), 'w1', NONE, 'later wave wave 1 on w0'],
    [
      'wave 1 waits while the canary progresses',
      WAVES,
      ten(PROGRESSING),
      'w3',
      NONE,
      'later wave wave 1 on w0',
    ],
    ['wave 1 starts once the canary is complete', WAVES, ten(COMPLETE), 'w3', NONE, 'now'],
    [
      'wave 2 waits for wave 1',
      WAVES,
      ten(COMPLETE, COMPLETE, PROGRESSING),
      'w4',
      NONE,
      'later wave wave 2 on w2,w3',
    ],
    ['a failed canary halts the change', WAVES, ten(FAILED), 'w9', NONE, 'held halted by w0'],
    [
      'a failed wave-1 member halts later waves',
      WAVES,
      ten(COMPLETE, COMPLETE, FAILED, COMPLETE),
      'w7',
      NONE,
      'held halted by w2',
    ],
    [
      'without halting a failure is just over',
      { ...WAVES, haltOnFailure: false },
      ten(FAILED),
      'w1',
      NONE,
      'now',
    ],
    [
      'the budget bounds a wave',
      WAVES,
      ten(COMPLETE),
      'w2',
      { cluster: 3, namespace: 3 },
      'later budget',
    ],
    [
      'the namespace budget bounds it too',
      { ...UNLIMITED_ROLLOUTS, maxPerNamespace: 2 },
      ten(),
      'w5',
      { cluster: 2, namespace: 2 },
      'later namespace_budget',
    ],
    [
      'budget alone, no waves',
      { ...UNLIMITED_ROLLOUTS, maxConcurrent: 3 },
      ten(),
      'w9',
      { cluster: 2, namespace: 0 },
      'now',
    ],
    [
      'budget alone, full',
      { ...UNLIMITED_ROLLOUTS, maxConcurrent: 3 },
      ten(),
      'w9',
      { cluster: 3, namespace: 0 },
      'later budget',
    ],
    ['a member that dropped out is not gated', WAVES, ten(), 'gone', NONE, 'now'],
  ])('%s', (_name, settings, members, asking, inFlight, expected) => {
    expect(summary(decideAdmission({ key: key(asking), members, settings, inFlight }))).toBe(
      expected,
    );
  });

  it('a member dropping out moves the others up a wave', () => {
    const members = ten(COMPLETE, COMPLETE, COMPLETE, COMPLETE).filter((m) => m.ref.name !== 'w2');
    // Without w2, w4 is in wave 1 (w1, w3, w4) behind the complete canary.
    expect(
      summary(decideAdmission({ key: key('w4'), members, settings: WAVES, inFlight: NONE })),
    ).toBe('now');
  });

  it('priorities order the waves: lower first, ties by namespace, kind and name', () => {
    const members = [
      member('bar', PENDING, 10),
      member('foo', PENDING, -5),
      member('b', PENDING, 0, 'ns-b'),
      member('a', PENDING, 0, 'ns-b'),
      member('z', PENDING, 0, 'ns-a'),
    ];
    expect(orderMembers(members).map((m) => m.ref.name)).toEqual(['foo', 'z', 'a', 'b', 'bar']);
    const asking = { members, settings: { ...WAVES, maxConcurrent: 1 }, inFlight: NONE };
    expect(summary(decideAdmission({ ...asking, key: key('foo') }))).toBe('now');
    expect(summary(decideAdmission({ ...asking, key: key('bar') }))).toBe(
      'later wave wave 4 on foo,z,a,b',
    );
  });
});

describe('canarySize and waveOf', () => {
  it.each<[string, RolloutSettings['canary'], number, number]>([
    ['a count', { count: 1 }, 10, 1],
    ['a count above the members', { count: 50 }, 10, 10],
    ['a percentage rounds up', { percent: 10 }, 15, 2],
    ['a small percentage is at least 1', { percent: 1 }, 3, 1],
    ['100% is every member', { percent: 100 }, 7, 7],
    ['no members', { count: 1 }, 0, 0],
  ])('%s', (_name, canary, total, size) => {
    expect(canarySize(canary, total)).toBe(size);
  });

  it('waves of the budget after the canary; all the rest without a budget', () => {
    const waves = Array.from({ length: 10 }, (_, i) => waveOf(i, 10, WAVES));
    expect(waves).toEqual([0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
    const unbounded = { ...WAVES, maxConcurrent: 0 };
    expect(Array.from({ length: 4 }, (_, i) => waveOf(i, 4, unbounded))).toEqual([0, 1, 1, 1]);
  });
});

describe('memberStatus', () => {
  const progressing: RolloutHealth = { state: 'progressing', detail: '0 of 1 updated' };
  const failed: RolloutHealth = {
    state: 'failed',
    reason: 'ProgressDeadlineExceeded',
    detail: 'progress deadline passed',
  };
  const base: MemberFacts = {
    rolled: true,
    health: progressing,
    rolledAt: 1_000,
    haltMarked: false,
    resumed: false,
  };
  it.each<[string, MemberFacts, number, string]>([
    ['not rolled yet', { ...base, rolled: false }, 2_000, 'pending'],
    ['rolled, progressing within the deadline', base, 2_000, 'progressing'],
    [
      'rolled, progressing past the deadline',
      base,
      1_000 + 60_001,
      'failed RolloutDeadlineExceeded',
    ],
    [
      'roll time unknown: only health fails it',
      { ...base, rolledAt: undefined },
      1e12,
      'progressing',
    ],
    [
      'rolled and complete',
      { ...base, health: { state: 'complete', detail: '' } },
      2_000,
      'complete',
    ],
    ['rolled and failed', { ...base, health: failed }, 2_000, 'failed ProgressDeadlineExceeded'],
    [
      'failed, but resumed by the user',
      { ...base, health: failed, resumed: true },
      2_000,
      'complete',
    ],
    ['a kind without a health model', { ...base, health: undefined }, 1e12, 'complete'],
    ['the halt marker', { ...base, rolled: false, haltMarked: true }, 2_000, 'failed Halted'],
  ])('%s', (_name, facts, now, expected) => {
    const status = memberStatus(facts, 60_000, now);
    expect(status.state === 'failed' ? `failed ${status.reason}` : status.state).toBe(expected);
  });
});

describe('rolloutDeadlineMs', () => {
  const deployment = (progressDeadlineSeconds: number | undefined): RolloutStatusView => ({
    model: 'replica-set',
    observedGeneration: 1,
    desired: 1,
    replicas: 1,
    updated: 1,
    available: 1,
    unavailable: 0,
    progressing: undefined,
    progressDeadlineSeconds,
  });
  const statefulSet: RolloutStatusView = {
    model: 'stateful-set',
    observedGeneration: 1,
    desired: 1,
    updated: 1,
    ready: 1,
    currentRevision: 'a',
    updateRevision: 'a',
    partition: 0,
    onDelete: false,
  };
  const argoRollout = (progressDeadlineSeconds: number | undefined): RolloutStatusView => ({
    model: 'rollout-phase',
    observedGeneration: 1,
    phase: 'Healthy',
    message: undefined,
    progressDeadlineSeconds,
  });
  it.each<[string, RolloutStatusView | undefined, number]>([
    ['a Deployment: its own progressDeadlineSeconds + 30 s', deployment(60), 90_000],
    ['a Deployment without one: 600 s + 30 s', deployment(undefined), 630_000],
    ['an Argo Rollout: its own progressDeadlineSeconds + 30 s', argoRollout(120), 150_000],
    ['a StatefulSet has none: 600 s + 30 s', statefulSet, 630_000],
    ['a kind without a health model: 600 s + 30 s', undefined, 630_000],
    ['zero is not a deadline: the default', deployment(0), 630_000],
    ['a negative value: the default', deployment(-5), 630_000],
    ['a fraction is rounded up', deployment(1.5), 32_000],
    // Kubernetes' "no progress deadline" (MaxInt32): bounded by the longest timer.
    ['MaxInt32 is bounded to 2^31-1 ms', deployment(2_147_483_647), 2_147_483_647],
  ])('%s', (_name, status, expected) => {
    expect(rolloutDeadlineMs(status)).toBe(expected);
  });
});

describe('parsePriority', () => {
  it.each<[string | undefined, number, boolean]>([
    [undefined, 0, false],
    ['5', 5, false],
    ['-3', -3, false],
    [' 7 ', 7, false],
    ['first', 0, true],
    ['1e3', 0, true],
    ['99999999999999999999', 0, true],
    ['', 0, true],
  ])('%j → %d', (value, priority, problem) => {
    const parsed = parsePriority(value);
    expect(parsed.priority).toBe(priority);
    expect(parsed.problem !== undefined).toBe(problem);
  });
});

describe('admitsEverything', () => {
  it.each<[string, RolloutSettings, boolean]>([
    ['no flags', UNLIMITED_ROLLOUTS, true],
    ['waves', { ...UNLIMITED_ROLLOUTS, waves: true }, false],
    ['a budget', { ...UNLIMITED_ROLLOUTS, maxConcurrent: 1 }, false],
    ['a namespace budget', { ...UNLIMITED_ROLLOUTS, maxPerNamespace: 1 }, false],
  ])('%s', (_name, settings, expected) => {
    expect(admitsEverything(settings)).toBe(expected);
  });
});

describe('per-policy canary, budget and halting', () => {
  const inGroup = (m: Member, group: string, canary: number): Member => ({
    ...m,
    canary: { group, size: { count: canary } },
  });

  it('wave 0 holds the first of the flags group and the first of each policy group', () => {
    const order = [
      member('a'),
      inGroup(member('b'), 'ns/p', 2),
      member('c'),
      inGroup(member('d'), 'ns/p', 2),
      inGroup(member('e'), 'ns/p', 2),
    ];
    expect(wavesOf(order, WAVES)).toEqual([0, 0, 1, 0, 1]);
    expect(
      wavesOf([member('a'), member('b'), member('c'), member('d'), member('e')], WAVES),
    ).toEqual([0, 1, 1, 1, 2]);
  });

  it('a policy canary of 1 over 3 lets only the canary roll first', () => {
    const members = ['x', 'y', 'z'].map((name) => inGroup(member(name), 'ns/p', 1));
    expect(decideAdmission({ key: key('x'), members, settings: WAVES, inFlight: NONE })).toEqual({
      answer: 'now',
    });
    expect(
      decideAdmission({ key: key('y'), members, settings: WAVES, inFlight: NONE }).answer,
    ).toBe('later');
  });

  it("a policy's maxConcurrent counts its members in flight and reserved, never raising the flags'", () => {
    const budget = { group: 'ns/p', size: 2 };
    const members = [
      { ...member('a', PROGRESSING), maxConcurrent: budget },
      { ...member('b'), maxConcurrent: budget },
      { ...member('c'), maxConcurrent: budget },
      member('d', PROGRESSING),
    ];
    const settings = { ...UNLIMITED_ROLLOUTS, maxConcurrent: 10 };
    const ask = (name: string, reserved: readonly string[] = [], cluster = 0) =>
      decideAdmission({
        key: key(name),
        members,
        settings,
        inFlight: { cluster, namespace: 0 },
        reserved: (k) => reserved.map((n) => key(n)).includes(k),
      });
    expect(ask('b')).toEqual({ answer: 'now' });
    expect(ask('c', ['b'])).toMatchObject({ answer: 'later', reason: 'policy_budget' });
    expect(ask('b', [], 10)).toMatchObject({ answer: 'later', reason: 'budget' });
    const big = members.map((m) =>
      m.maxConcurrent ? { ...m, maxConcurrent: { ...budget, size: 99 } } : m,
    );
    expect(
      decideAdmission({
        key: key('b'),
        members: big,
        settings,
        inFlight: { cluster: 10, namespace: 0 },
      }),
    ).toMatchObject({ answer: 'later', reason: 'budget' });
  });

  it("a member's own haltOnFailure decides whether its failure halts the change", () => {
    const quiet = { ...member('a', FAILED), haltOnFailure: false };
    expect(haltingMembers([quiet, member('b')], WAVES)).toEqual([]);
    const loud = { ...member('a', FAILED), haltOnFailure: true };
    expect(haltingMembers([loud], { ...WAVES, haltOnFailure: false })).toEqual([loud]);
  });

  const HALTED: MemberState = { state: 'failed', reason: 'Halted', detail: 'marker' };
  it.each<[string, MemberState[], string[]]>([
    ['a failed canary, nothing else rolled', [FAILED], ['w0']],
    ['a failed canary, wave 1 rolled: accepted before', [FAILED, COMPLETE, PROGRESSING], []],
    ['the marker halts whatever rolled after', [HALTED, COMPLETE], ['w0']],
    ['a failure in wave 1 beside a complete member of it', [COMPLETE, FAILED, COMPLETE], ['w1']],
    ['a failure in wave 1, wave 2 rolled', [COMPLETE, FAILED, COMPLETE, COMPLETE, PROGRESSING], []],
  ])('%s', (_name, states, expected) => {
    expect(haltingMembers(ten(...states), WAVES).map((m) => m.ref.name)).toEqual(expected);
  });
});
