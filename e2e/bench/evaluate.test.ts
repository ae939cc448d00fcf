import { describe, expect, it } from 'vitest';
import {
  evaluate,
  pauseWindows,
  pendingDeliveries,
  type WorkloadHistory,
  type WriteRecord,
} from './evaluate.ts';

const CM = 'configmap/ns/cm';
const OTHER = 'configmap/ns/other';
const window = { graceBeforeMs: 1000, graceAfterMs: 3000 };

function write(
  id: number,
  at: number,
  hash: string | undefined,
  extra: Partial<WriteRecord> = {},
): WriteRecord {
  return { id, at, source: CM, hash, window: `w${id}`, ...extra };
}

function workload(
  rolls: [number, Record<string, string>][],
  extra: Partial<WorkloadHistory> = {},
): WorkloadHistory {
  return {
    key: 'Deployment/ns/app',
    sources: [CM],
    createdAt: -Infinity,
    baseline: new Map([[CM, 'h0']]),
    rolls: rolls.map(([at, signals]) => ({ at, signals: new Map(Object.entries(signals)) })),
    ...extra,
  };
}

describe('evaluate', () => {
  it.each([
    {
      name: 'one roll per write: all delivered, latency per write',
      writes: [write(0, 100, 'h1'), write(1, 200, 'h2')],
      rolls: [
        [130, { [CM]: 'h1' }],
        [260, { [CM]: 'h2' }],
      ] as [number, Record<string, string>][],
      expected: { expected: 2, delivered: 2, coalesced: 0, missed: 0, rolls: 2, extra: 0 },
      latencies: [30, 60],
    },
    {
      name: 'a write superseded before it was applied is coalesced, not missed',
      writes: [write(0, 100, 'h1'), write(1, 110, 'h2')],
      rolls: [[150, { [CM]: 'h2' }]] as [number, Record<string, string>][],
      expected: { expected: 2, delivered: 1, coalesced: 1, missed: 0, rolls: 1, extra: 0 },
      latencies: [40],
    },
    {
      name: 'the last write never applied is missed',
      writes: [write(0, 100, 'h1'), write(1, 200, 'h2')],
      rolls: [[130, { [CM]: 'h1' }]] as [number, Record<string, string>][],
      expected: { expected: 2, delivered: 1, coalesced: 0, missed: 1, rolls: 1, extra: 0 },
      latencies: [30],
    },
    {
      name: 'a roll that carries no new bench hash is extra',
      writes: [write(0, 100, undefined)],
      rolls: [[130, { [CM]: 'h0', other: 'x' }]] as [number, Record<string, string>][],
      expected: { expected: 0, delivered: 0, coalesced: 0, missed: 0, rolls: 1, extra: 1 },
      latencies: [],
    },
  ])('$name', ({ writes, rolls, expected, latencies }) => {
    const result = evaluate({ writes, workloads: [workload(rolls)], window });
    expect(result.correctness).toMatchObject(expected);
    expect(result.latenciesMs).toEqual(latencies);
  });

  it('counts every roll after the first in one change window as extra (K2: 3 writes, 3 rolls)', () => {
    const writes = [
      write(0, 100, 'a1', { window: 'round-0' }),
      write(1, 150, 'b1', { window: 'round-0', source: OTHER }),
    ];
    const separate = workload(
      [
        [120, { [CM]: 'a1', [OTHER]: 'b0' }],
        [170, { [CM]: 'a1', [OTHER]: 'b1' }],
      ],
      {
        sources: [CM, OTHER],
        baseline: new Map([
          [CM, 'a0'],
          [OTHER, 'b0'],
        ]),
      },
    );
    const together = workload([[2200, { [CM]: 'a1', [OTHER]: 'b1' }]], {
      sources: [CM, OTHER],
      baseline: new Map([
        [CM, 'a0'],
        [OTHER, 'b0'],
      ]),
    });
    expect(evaluate({ writes, workloads: [separate], window }).correctness).toMatchObject({
      delivered: 2,
      duplicate: 1,
      extra: 1,
    });
    expect(evaluate({ writes, workloads: [together], window }).correctness).toMatchObject({
      delivered: 2,
      duplicate: 0,
      extra: 0,
    });
  });

  it('does not expect workloads created just before or deleted just after a write to roll', () => {
    const writes = [write(0, 5000, 'h1')];
    const young = workload([], { createdAt: 4500 });
    const dying = workload([], { deletedAt: 6000 });
    const settled = workload([], { createdAt: 1000 });
    const result = evaluate({ writes, workloads: [young, dying, settled], window });
    expect(result.correctness).toMatchObject({ expected: 1, missed: 1 });
  });

  it('reports the completion time of a write once every dependent carries it', () => {
    const writes = [write(0, 100, 'h1')];
    const fast = workload([[120, { [CM]: 'h1' }]]);
    const slow = workload([[400, { [CM]: 'h1' }]], { key: 'Deployment/ns/slow' });
    expect(evaluate({ writes, workloads: [fast, slow], window }).completionsMs).toEqual([300]);
  });
});

describe('pauseWindows', () => {
  it.each([
    { changes: [], expected: 0 },
    { changes: [0, 2000, 14_000], expected: 1 },
    { changes: [0, 15_000, 16_000, 31_000], expected: 3 },
  ])('$changes → $expected windows of 15 s', ({ changes, expected }) => {
    expect(pauseWindows(changes, 15_000)).toBe(expected);
  });
});

describe('pendingDeliveries', () => {
  it('counts dependents whose current hash is not the last write of their source', () => {
    const lastWrites = [write(0, 5000, 'h1')];
    const workloads = [
      { sources: [CM], createdAt: -Infinity, current: new Map([[CM, 'h1']]) },
      { sources: [CM], createdAt: -Infinity, current: new Map([[CM, 'h0']]) },
      { sources: [CM], createdAt: 4800, current: new Map<string, string>() },
      { sources: [OTHER], createdAt: -Infinity, current: new Map<string, string>() },
    ];
    expect(pendingDeliveries({ lastWrites, workloads, window })).toBe(1);
  });
});
