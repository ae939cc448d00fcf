import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import type { PodFacts } from './evict.ts';
import {
  evictBeforeOf,
  evictionScopeOf,
  labelSelectorOf,
  MARKER_SETTLE_MS,
  nextEvictions,
  ownedPods,
  podFactsOf,
} from './evict.ts';
import { kindRow } from './kinds.ts';

const T0 = Date.parse('2026-12-06T10:00:00Z');
const MARK = T0 + 60_000;
const LATER = MARK + MARKER_SETTLE_MS;

function pod(name: string, createdAt: number, extra: Partial<PodFacts> = {}): PodFacts {
  return { name, uid: `uid-${name}`, createdAt, ready: true, terminating: false, ...extra };
}

const OLD_A = pod('a', T0);
const OLD_B = pod('b', T0 + 1_000);
const OLD_C = pod('c', T0 + 2_000);
const NEW_D = pod('d', MARK + 1_000);
const NEW_E = pod('e', MARK + 3_000);

interface Case {
  readonly name: string;
  readonly pods: readonly PodFacts[];
  readonly desired?: number;
  readonly maxUnavailable?: number;
  readonly now?: number;
  readonly expected:
    | { readonly step: 'evict'; readonly pods: readonly string[] }
    | { readonly step: 'wait'; readonly reason: string }
    | { readonly step: 'done' };
}

const CASES: readonly Case[] = [
  {
    name: 'all old and Ready: the oldest goes first, one at a time',
    pods: [OLD_C, OLD_A, OLD_B],
    expected: { step: 'evict', pods: ['a'] },
  },
  {
    name: 'a budget of two evicts the two oldest',
    pods: [OLD_C, OLD_A, OLD_B],
    maxUnavailable: 2,
    expected: { step: 'evict', pods: ['a', 'b'] },
  },
  {
    name: 'the replacement is not Ready yet: wait',
    pods: [OLD_B, OLD_C, pod('a2', MARK + 5_000, { ready: false })],
    expected: { step: 'wait', reason: 'waiting for pods to be Ready (2 of 3)' },
  },
  {
    name: 'the evicted pod is still terminating and its replacement is Ready: the next goes',
    pods: [pod('a', T0, { terminating: true }), OLD_B, OLD_C, NEW_D],
    expected: { step: 'evict', pods: ['b'] },
  },
  {
    name: 'the replacement is missing altogether: wait',
    pods: [OLD_B, OLD_C],
    expected: { step: 'wait', reason: 'waiting for pods to be Ready (2 of 3)' },
  },
  {
    name: 'a pod of the marker second itself is old',
    pods: [pod('m', MARK), NEW_D, NEW_E],
    expected: { step: 'evict', pods: ['m'] },
  },
  {
    name: 'pods created after the marker are never evicted: done',
    pods: [NEW_D, NEW_E, pod('f', MARK + 4_000)],
    expected: { step: 'done' },
  },
  {
    name: 'old pods only terminating: done',
    pods: [pod('a', T0, { terminating: true }), NEW_D, NEW_E],
    expected: { step: 'done' },
  },
  {
    name: 'no pods at all: done',
    pods: [],
    expected: { step: 'done' },
  },
  {
    name: 'within the marker second (and the skew margin): wait',
    pods: [OLD_A, OLD_B, OLD_C],
    now: MARK + MARKER_SETTLE_MS - 1,
    expected: { step: 'wait', reason: 'waiting for the change to settle' },
  },
  {
    name: 'an old pod that is not Ready does not block itself when the budget allows',
    pods: [pod('a', T0, { ready: false }), OLD_B, OLD_C, NEW_D],
    desired: 3,
    expected: { step: 'evict', pods: ['a'] },
  },
  {
    name: 'more unavailable than the budget: wait',
    pods: [pod('a', T0, { ready: false }), pod('b', T0, { ready: false }), OLD_C],
    maxUnavailable: 1,
    expected: { step: 'wait', reason: 'waiting for pods to be Ready (1 of 3)' },
  },
];

describe('nextEvictions', () => {
  it.each(CASES)('$name', (row) => {
    const step = nextEvictions({
      pods: row.pods,
      evictBefore: MARK,
      scope: { desired: row.desired ?? 3, maxUnavailable: row.maxUnavailable ?? 1 },
      now: row.now ?? LATER,
    });
    const actual =
      step.step === 'evict'
        ? { step: step.step, pods: step.pods.map((p) => p.name) }
        : step.step === 'wait'
          ? { step: step.step, reason: step.reason }
          : { step: step.step };
    expect(actual).toEqual(row.expected);
  });

  it('counts the progress', () => {
    const step = nextEvictions({
      pods: [pod('a', T0, { terminating: true }), OLD_B, NEW_D],
      evictBefore: MARK,
      scope: { desired: 2, maxUnavailable: 1 },
      now: LATER,
    });
    expect(step.progress).toEqual({ old: 1, current: 1, desired: 2 });
  });
});

describe('evictBeforeOf', () => {
  it.each([
    { name: 'the newest pod', pods: [OLD_A, OLD_C, OLD_B], expected: OLD_C.createdAt },
    { name: 'now, to the second, without pods', pods: [], expected: MARK },
  ])('$name', ({ pods, expected }) => {
    expect(evictBeforeOf(pods, MARK + 999)).toBe(expected);
  });
});

const DEPLOYMENT = kindRow('Deployment').podEviction;
const DAEMON_SET = kindRow('DaemonSet').podEviction;

function wirePod(
  name: string,
  controllerUid: string | undefined,
  extra: JsonObject = {},
): JsonObject {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      creationTimestamp: '2026-12-06T10:00:00Z',
      ...(controllerUid === undefined
        ? {}
        : { ownerReferences: [{ kind: 'X', name: 'x', uid: controllerUid, controller: true }] }),
      ...extra,
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('ownedPods: the owner chain', () => {
  const replicaSets = [
    { metadata: { uid: 'rs-1', ownerReferences: [{ uid: 'deploy', controller: true }] } },
    { metadata: { uid: 'rs-2', ownerReferences: [{ uid: 'other', controller: true }] } },
    { metadata: { uid: 'rs-3', ownerReferences: [{ uid: 'deploy', controller: false }] } },
  ];
  const pods = [
    wirePod('mine', 'rs-1'),
    wirePod('theirs', 'rs-2'),
    wirePod('not-controlled', 'rs-3'),
    wirePod('orphan', undefined),
    wirePod('direct', 'deploy'),
  ];

  it.each([
    { name: 'Deployment: pods of its ReplicaSets', facts: DEPLOYMENT, expected: ['mine'] },
    { name: 'DaemonSet: pods it controls', facts: DAEMON_SET, expected: ['direct'] },
  ])('$name', ({ facts, expected }) => {
    if (facts === undefined) throw new Error('kind without eviction');
    const owned = ownedPods({ facts, workloadUid: 'deploy', pods, replicaSets });
    expect(owned.map((p) => p.name)).toEqual(expected);
  });

  it('reads a terminating, unready pod', () => {
    const facts = podFactsOf({
      metadata: {
        name: 'p',
        uid: 'u',
        creationTimestamp: '2026-12-06T10:00:00Z',
        deletionTimestamp: '2026-12-06T10:01:00Z',
      },
      status: { conditions: [{ type: 'Ready', status: 'False' }] },
    });
    expect(facts).toEqual({ name: 'p', uid: 'u', createdAt: T0, ready: false, terminating: true });
  });

  it('skips a pod without a creationTimestamp', () => {
    expect(podFactsOf({ metadata: { name: 'p', uid: 'u' } })).toBeUndefined();
  });
});

describe('labelSelectorOf', () => {
  it.each([
    {
      name: 'matchLabels',
      selector: { matchLabels: { app: 'api', tier: 'web' } },
      expected: 'app=api,tier=web',
    },
    {
      name: 'expressions',
      selector: {
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['a', 'b'] },
          { key: 'x', operator: 'NotIn', values: ['c'] },
          { key: 'y', operator: 'Exists' },
          { key: 'z', operator: 'DoesNotExist' },
        ],
      },
      expected: 'env in (a,b),x notin (c),y,!z',
    },
    { name: 'empty: never everything', selector: {}, expected: undefined },
    { name: 'missing', selector: undefined, expected: undefined },
    {
      name: 'an unknown operator',
      selector: { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] },
      expected: undefined,
    },
  ])('$name', ({ selector, expected }) => {
    expect(labelSelectorOf(selector as JsonObject | undefined)).toBe(expected);
  });
});

describe('evictionScopeOf', () => {
  const base = { spec: { selector: { matchLabels: { app: 'api' } }, replicas: 8 } };
  it.each([
    { name: 'no maxUnavailable: one at a time', strategy: undefined, expected: 1 },
    { name: 'an int', strategy: 3, expected: 3 },
    { name: '25% of 8', strategy: '25%', expected: 2 },
    { name: '10% of 8 rounds down, but at least 1', strategy: '10%', expected: 1 },
    { name: 'zero still makes progress', strategy: 0, expected: 1 },
    { name: 'garbage: one at a time', strategy: 'lots', expected: 1 },
  ])('$name', ({ strategy, expected }) => {
    if (DEPLOYMENT === undefined) throw new Error('kind without eviction');
    const object: JsonObject = structuredClone(base);
    if (strategy !== undefined) {
      object.spec = { ...base.spec, strategy: { rollingUpdate: { maxUnavailable: strategy } } };
    }
    expect(evictionScopeOf(DEPLOYMENT, object)).toEqual({
      selector: 'app=api',
      desired: 8,
      maxUnavailable: expected,
    });
  });

  it('a workload without a selector has a problem', () => {
    if (DEPLOYMENT === undefined) throw new Error('kind without eviction');
    expect(evictionScopeOf(DEPLOYMENT, { spec: {} })).toEqual({
      problem: 'spec.selector is empty or not understood',
    });
  });

  it('a DaemonSet wants what its status says', () => {
    if (DAEMON_SET === undefined) throw new Error('kind without eviction');
    const object = {
      spec: { selector: { matchLabels: { app: 'a' } } },
      status: { desiredNumberScheduled: 4 },
    };
    expect(evictionScopeOf(DAEMON_SET, object)).toMatchObject({ desired: 4 });
  });
});
