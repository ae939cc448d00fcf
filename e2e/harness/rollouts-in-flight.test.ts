import { describe, expect, it } from 'vitest';
import {
  countInFlight,
  InFlightSampler,
  isInFlight,
  replicaSetState,
  summariseInFlight,
  type ReplicaSetState,
} from './rollouts-in-flight.ts';

/** ReplicaSet `uid` of Deployment `d`: revision, desired, pods, available. */
function rs(
  deployment: string,
  uid: string,
  [revision, desired, replicas, available]: [number, number, number, number],
): ReplicaSetState {
  return { uid, deployment, revision, desired, replicas, available };
}

describe('isInFlight', () => {
  it.each([
    { name: 'no ReplicaSet yet', sets: [], expected: false },
    { name: 'one ReplicaSet, all available', sets: [rs('d', 'a', [1, 3, 3, 3])], expected: false },
    {
      name: 'first rollout, pods not yet available',
      sets: [rs('d', 'a', [1, 3, 3, 1])],
      expected: true,
    },
    {
      name: 'new ReplicaSet created, no pod yet',
      sets: [rs('d', 'a', [1, 1, 1, 1]), rs('d', 'b', [2, 1, 0, 0])],
      expected: true,
    },
    {
      name: 'new pod available, old pod still there',
      sets: [rs('d', 'a', [1, 1, 1, 1]), rs('d', 'b', [2, 1, 1, 1])],
      expected: true,
    },
    {
      name: 'old ReplicaSet scaled to zero: complete',
      sets: [rs('d', 'a', [1, 1, 0, 0]), rs('d', 'b', [2, 1, 1, 1])],
      expected: false,
    },
    {
      name: 'the newest by revision, not by order, decides',
      sets: [rs('d', 'b', [3, 1, 1, 0]), rs('d', 'a', [2, 1, 0, 0])],
      expected: true,
    },
    {
      name: 'rolled back to an older template: its ReplicaSet gets the highest revision',
      sets: [rs('d', 'a', [3, 1, 1, 1]), rs('d', 'b', [2, 1, 0, 0])],
      expected: false,
    },
    { name: 'scaled to zero', sets: [rs('d', 'a', [1, 0, 0, 0])], expected: false },
    {
      name: 'stuck: new pods never available (crash loop)',
      sets: [rs('d', 'a', [1, 2, 2, 2]), rs('d', 'b', [2, 2, 1, 0])],
      expected: true,
    },
  ])('$name → $expected', ({ sets, expected }) => {
    expect(isInFlight(sets)).toBe(expected);
  });
});

it('countInFlight groups ReplicaSets by Deployment', () => {
  const sets = [
    rs('ns/a', 'a1', [1, 1, 1, 1]),
    rs('ns/a', 'a2', [2, 1, 0, 0]),
    rs('ns/b', 'b1', [1, 1, 1, 1]),
    rs('other/a', 'c1', [1, 1, 1, 0]),
  ];
  expect(countInFlight(sets)).toBe(2);
  expect(countInFlight([])).toBe(0);
});

describe('replicaSetState', () => {
  const wire = {
    metadata: {
      name: 'app-7d9f',
      namespace: 'ns',
      uid: 'u1',
      annotations: {
        'deployment.kubernetes.io/revision': '4',
        'deployment.kubernetes.io/desired-replicas': '3',
      },
      ownerReferences: [{ kind: 'Deployment', name: 'app' }],
    },
    spec: { replicas: 1 },
    status: { replicas: 2, availableReplicas: 1 },
  };

  it.each([
    {
      name: 'reads the annotations and status',
      object: wire,
      expected: {
        uid: 'u1',
        deployment: 'ns/app',
        revision: 4,
        desired: 3,
        replicas: 2,
        available: 1,
      },
    },
    {
      name: 'falls back to spec.replicas without the desired-replicas annotation',
      object: { ...wire, metadata: { ...wire.metadata, annotations: {} }, status: {} },
      expected: {
        uid: 'u1',
        deployment: 'ns/app',
        revision: 0,
        desired: 1,
        replicas: 0,
        available: 0,
      },
    },
    {
      name: 'ignores a malformed annotation',
      object: {
        ...wire,
        metadata: { ...wire.metadata, annotations: { 'deployment.kubernetes.io/revision': 'x' } },
      },
      expected: {
        uid: 'u1',
        deployment: 'ns/app',
        revision: 0,
        desired: 1,
        replicas: 2,
        available: 1,
      },
    },
    {
      name: 'no Deployment owner',
      object: {
        ...wire,
        metadata: { ...wire.metadata, ownerReferences: [{ kind: 'Foo', name: 'x' }] },
      },
      expected: undefined,
    },
    { name: 'not an object', object: 'nope', expected: undefined },
  ])('$name', ({ object, expected }) => {
    expect(replicaSetState(object)).toEqual(expected);
  });
});

describe('summariseInFlight', () => {
  it.each([
    { counts: [], max: 0, p95: 0 },
    { counts: [0, 0, 0], max: 0, p95: 0 },
    // 20 samples: nearest rank 19 of the sorted counts.
    { counts: [...Array.from({ length: 18 }, () => 5), 9, 20], max: 20, p95: 9 },
    { counts: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], max: 10, p95: 10 },
  ])('max $max, p95 $p95 of $counts', ({ counts, max, p95 }) => {
    const samples = counts.map((inFlight, i) => ({ at: 1000 + i * 250, inFlight }));
    expect(summariseInFlight(samples, { intervalMs: 250, origin: 1000 })).toMatchObject({
      samples: counts.length,
      max,
      p95,
    });
  });

  it('keeps the changes and the last sample, relative to the origin', () => {
    const samples = [0, 0, 3, 3, 3, 1, 1].map((inFlight, i) => ({ at: 100 + i * 250, inFlight }));
    expect(summariseInFlight(samples, { intervalMs: 250, origin: 600 }).series).toEqual([
      { atMs: -500, inFlight: 0 },
      { atMs: 0, inFlight: 3 },
      { atMs: 750, inFlight: 1 },
      { atMs: 1000, inFlight: 1 },
    ]);
  });
});

it('InFlightSampler follows ADDED, MODIFIED and DELETED events', () => {
  let now = 0;
  const sampler = new InFlightSampler({ clock: () => now, intervalMs: 250 });
  const object = (uid: string, revision: number, replicas: number, available: number) => ({
    metadata: {
      namespace: 'ns',
      name: uid,
      uid,
      annotations: {
        'deployment.kubernetes.io/revision': String(revision),
        'deployment.kubernetes.io/desired-replicas': '1',
      },
      ownerReferences: [{ kind: 'Deployment', name: 'app' }],
    },
    status: { replicas, availableReplicas: available },
  });
  sampler.apply('ADDED', object('old', 1, 1, 1));
  sampler.sample();
  sampler.apply('ADDED', object('new', 2, 0, 0));
  now = 250;
  sampler.sample();
  sampler.apply('MODIFIED', object('new', 2, 1, 1));
  sampler.apply('DELETED', object('old', 1, 1, 1));
  now = 500;
  sampler.sample();
  expect(sampler.stop(0)).toEqual({
    intervalMs: 250,
    samples: 3,
    max: 1,
    p95: 1,
    series: [
      { atMs: 0, inFlight: 0 },
      { atMs: 250, inFlight: 1 },
      { atMs: 500, inFlight: 0 },
    ],
  });
});
