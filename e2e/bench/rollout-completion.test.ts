import { describe, expect, it } from 'vitest';
import {
  completedAt,
  expectedRollouts,
  inFlightProfile,
  mergeOverlapping,
  pendingRollouts,
  rolloutCompletion,
  type DependentDeployment,
  type ExpectedRollout,
  type Interval,
  type ReplicaSetHistory,
} from './rollout-completion.ts';

/** `[at, replicas, ready, available]` rows. */
function rs(uid: string, rows: readonly [number, number, number, number][]): ReplicaSetHistory {
  return {
    uid,
    firstSeenAt: rows[0]?.[0] ?? 0,
    snapshots: rows.map(([at, replicas, ready, available]) => ({ at, replicas, ready, available })),
  };
}

const OLD = rs('old', [
  [0, 3, 3, 3],
  [120, 2, 2, 2],
  [150, 1, 1, 1],
  [180, 0, 0, 0],
]);
const NEW = rs('new', [
  [100, 0, 0, 0],
  [110, 1, 0, 0],
  [130, 2, 1, 1],
  [160, 3, 3, 2],
  [170, 3, 3, 3],
]);
const carriesNew = (replicaSet: ReplicaSetHistory): boolean => replicaSet.uid === 'new';

describe('completedAt', () => {
  it.each([
    {
      name: 'new pods all available and the old ReplicaSet empty: the later of the two',
      replicaSets: [OLD, NEW],
      desired: 3,
      after: 50,
      expected: 180,
    },
    {
      name: 'the old ReplicaSet empties before the new one is available',
      replicaSets: [
        rs('old', [
          [0, 3, 3, 3],
          [105, 0, 0, 0],
        ]),
        NEW,
      ],
      desired: 3,
      after: 50,
      expected: 170,
    },
    {
      name: 'ready but not yet available is not complete',
      replicaSets: [rs('new', [[100, 3, 3, 2]])],
      desired: 3,
      after: 50,
      expected: undefined,
    },
    {
      name: 'no ReplicaSet carries the change: never complete',
      replicaSets: [OLD],
      desired: 3,
      after: 50,
      expected: undefined,
    },
    {
      name: 'an old ReplicaSet keeping one pod: never complete',
      replicaSets: [
        rs('old', [
          [0, 3, 3, 3],
          [120, 1, 1, 1],
        ]),
        NEW,
      ],
      desired: 3,
      after: 50,
      expected: undefined,
    },
    {
      name: 'a later rollout supersedes the change before it completes',
      replicaSets: [
        OLD,
        rs('new', [
          [100, 0, 0, 0],
          [110, 1, 1, 1],
        ]),
        rs('newer', [[140, 1, 0, 0]]),
      ],
      desired: 3,
      after: 50,
      expected: undefined,
    },
    {
      name: 'moments before the change do not count',
      replicaSets: [rs('new', [[10, 3, 3, 3]])],
      desired: 3,
      after: 50,
      expected: undefined,
    },
  ])('$name', ({ replicaSets, desired, after, expected }) => {
    expect(completedAt({ replicaSets, carries: carriesNew, desired, after })).toBe(expected);
  });
});

describe('inFlightProfile', () => {
  const table: { name: string; intervals: Interval[]; until: number; max: number; p95: number }[] =
    [
      { name: 'none', intervals: [], until: 100, max: 0, p95: 0 },
      {
        name: 'one after the other, touching ends: never two at once',
        intervals: [
          { start: 0, end: 10 },
          { start: 10, end: 20 },
        ],
        until: 100,
        max: 1,
        p95: 1,
      },
      {
        name: 'all at once',
        intervals: [
          { start: 0, end: 10 },
          { start: 0, end: 10 },
          { start: 0, end: 10 },
        ],
        until: 100,
        max: 3,
        p95: 3,
      },
      {
        name: 'a brief peak of 3 in a long run of 1: max 3, p95 1',
        intervals: [
          { start: 0, end: 1000 },
          { start: 500, end: 510 },
          { start: 500, end: 510 },
        ],
        until: 2000,
        max: 3,
        p95: 1,
      },
      {
        name: 'two at once for 10 % of the time: p95 2',
        intervals: [
          { start: 0, end: 100 },
          { start: 90, end: 100 },
        ],
        until: 200,
        max: 2,
        p95: 2,
      },
      {
        name: 'zero-length intervals count for nothing',
        intervals: [
          { start: 5, end: 5 },
          { start: 0, end: 10 },
        ],
        until: 100,
        max: 1,
        p95: 1,
      },
      {
        name: 'an open interval counts until the end of observation',
        intervals: [
          { start: 0, end: undefined },
          { start: 50, end: 60 },
        ],
        until: 100,
        max: 2,
        p95: 2,
      },
      {
        name: 'a gap with none in flight lowers the percentile',
        intervals: [
          { start: 0, end: 4 },
          { start: 0, end: 4 },
          { start: 100, end: 196 },
        ],
        until: 1000,
        max: 2,
        p95: 1,
      },
    ];
  it.each(table)('$name', ({ intervals, until, max, p95 }) => {
    expect(inFlightProfile(intervals, until)).toEqual({ max, p95 });
  });
});

describe('mergeOverlapping', () => {
  it.each([
    { name: 'none', intervals: [], merged: [] },
    {
      name: 'apart stay apart, sorted',
      intervals: [
        { start: 30, end: 40 },
        { start: 0, end: 10 },
      ],
      merged: [
        { start: 0, end: 10 },
        { start: 30, end: 40 },
      ],
    },
    {
      name: 'overlapping and touching merge',
      intervals: [
        { start: 0, end: 10 },
        { start: 5, end: 8 },
        { start: 10, end: 20 },
      ],
      merged: [{ start: 0, end: 20 }],
    },
    {
      name: 'an open interval absorbs what follows',
      intervals: [
        { start: 0, end: undefined },
        { start: 5, end: 8 },
      ],
      merged: [{ start: 0, end: undefined }],
    },
    {
      name: 'a later open interval overlapping a closed one',
      intervals: [
        { start: 0, end: 10 },
        { start: 5, end: undefined },
      ],
      merged: [{ start: 0, end: undefined }],
    },
  ])('$name', ({ intervals, merged }) => {
    expect(mergeOverlapping(intervals)).toEqual(merged);
  });
});

describe('rolloutCompletion', () => {
  const rollout = (changedAt: number, replicaSets: ReplicaSetHistory[]): ExpectedRollout => ({
    changedAt,
    desired: 3,
    replicaSets,
    carries: carriesNew,
  });

  it('measures change → complete, counts the incomplete and the rollouts in flight', () => {
    const done = rollout(50, [OLD, NEW]);
    const never = rollout(50, [OLD]);
    const stuck = rollout(50, [rs('new', [[150, 1, 0, 0]])]);
    const summary = rolloutCompletion([done, never, stuck], 300);

    expect(summary.expected).toBe(3);
    expect(summary.incomplete).toBe(2);
    expect(summary.changeToCompleteMs).toMatchObject({ count: 1, p50: 130, max: 130 });
    // done: [100, 180); stuck: [150, 300): two at once for 30 of 200 ms.
    expect(summary.inFlight).toEqual({ max: 2, p95: 2 });
    expect(pendingRollouts([done, never, stuck])).toBe(2);
    expect(pendingRollouts([done])).toBe(0);
  });

  it('counts a Deployment rolled for two sources once in flight', () => {
    const replicaSets = [OLD, NEW];
    const twoSources = [rollout(50, replicaSets), rollout(60, replicaSets)];
    expect(rolloutCompletion(twoSources, 300).inFlight).toEqual({ max: 1, p95: 1 });
  });

  it.each([
    { name: 'none expected', rollouts: () => [], expected: null },
    {
      name: 'one incomplete',
      rollouts: () => [rollout(50, [OLD, NEW]), rollout(50, [OLD])],
      expected: null,
    },
    // Complete at 180 (NEW fully available at 170, OLD without pods at 180); 180 − 20.
    {
      name: 'all complete: first change to last completion',
      rollouts: () => [rollout(50, [OLD, NEW]), rollout(20, [OLD, NEW])],
      expected: 160,
    },
  ])('time until all complete: $name → $expected', ({ rollouts, expected }) => {
    expect(rolloutCompletion(rollouts(), 300).allCompleteMs).toBe(expected);
  });
});

describe('expectedRollouts', () => {
  const lookup = { envNames: new Map([['STAKATER_SHARED_CONFIGMAP', 'configmap/shared']]) };
  const withEnv = (uid: string, value: string | undefined) => ({
    ...rs(uid, [[100, 3, 3, 3]]),
    template: {
      spec: {
        containers: [
          {
            name: 'app',
            env: value === undefined ? [] : [{ name: 'STAKATER_SHARED_CONFIGMAP', value }],
          },
        ],
      },
    },
  });
  const deployment = (uses: string[]): DependentDeployment => ({
    sources: new Map(uses.map((source) => [`configmap/ns/${source}`, `configmap/${source}`])),
    lookup,
    desired: 3,
    replicaSets: [withEnv('first', undefined), withEnv('h1', 'h1'), withEnv('h2', 'h2')],
  });
  const write = (id: number, at: number, hash: string | undefined, source = 'shared') => ({
    id,
    at,
    source: `configmap/ns/${source}`,
    hash,
    window: `write-${id}`,
  });

  it.each([
    {
      name: 'one write: every dependent, carried by the ReplicaSet naming its hash',
      writes: [write(0, 10, 'h1')],
      deployments: [deployment(['shared']), deployment(['shared', 'other']), deployment(['other'])],
      expected: [
        { changedAt: 10, carrying: ['h1'] },
        { changedAt: 10, carrying: ['h1'] },
      ],
    },
    {
      name: 'two writes to one source: only the last is measured',
      writes: [write(0, 10, 'h1'), write(1, 20, 'h2')],
      deployments: [deployment(['shared'])],
      expected: [{ changedAt: 20, carrying: ['h2'] }],
    },
    {
      name: 'a write that left the content alone expects nothing',
      writes: [write(0, 10, undefined)],
      deployments: [deployment(['shared'])],
      expected: [],
    },
    {
      name: 'a hash no ReplicaSet names: expected, carried by none',
      writes: [write(0, 10, 'h9')],
      deployments: [deployment(['shared'])],
      expected: [{ changedAt: 10, carrying: [] }],
    },
  ])('$name', ({ writes, deployments, expected }) => {
    const rollouts = expectedRollouts(writes, deployments);
    expect(
      rollouts.map((rollout) => ({
        changedAt: rollout.changedAt,
        carrying: rollout.replicaSets.filter((r) => rollout.carries(r)).map((r) => r.uid),
      })),
    ).toEqual(expected);
  });
});
