import { describe, expect, it } from 'vitest';
import type { HealthInput, RolloutHealth } from './health.ts';
import { isRolloutOver, judgeRollout, judgeStartedRollout } from './health.ts';
import { WORKLOAD_KINDS } from './kinds.ts';
import type {
  DaemonSetStatusView,
  ReplicaSetStatusView,
  RolloutPhaseStatusView,
  StatefulSetStatusView,
} from './rollout-status.ts';

const deployment = (s: Partial<ReplicaSetStatusView> = {}): ReplicaSetStatusView => ({
  model: 'replica-set',
  observedGeneration: 2,
  desired: 3,
  replicas: 3,
  updated: 3,
  available: 3,
  unavailable: 0,
  progressing: { status: 'True', reason: 'NewReplicaSetAvailable' },
  ...s,
});

const statefulSet = (s: Partial<StatefulSetStatusView> = {}): StatefulSetStatusView => ({
  model: 'stateful-set',
  observedGeneration: 2,
  desired: 3,
  updated: 3,
  ready: 3,
  currentRevision: 'web-2',
  updateRevision: 'web-2',
  partition: 0,
  onDelete: false,
  ...s,
});

const daemonSet = (s: Partial<DaemonSetStatusView> = {}): DaemonSetStatusView => ({
  model: 'daemon-set',
  observedGeneration: 2,
  desired: 3,
  updated: 3,
  available: 3,
  unavailable: 0,
  onDelete: false,
  ...s,
});

const rollout = (s: Partial<RolloutPhaseStatusView> = {}): RolloutPhaseStatusView => ({
  model: 'rollout-phase',
  observedGeneration: 2,
  phase: 'Healthy',
  message: undefined,
  ...s,
});

type Expected = RolloutHealth['state'] | `failed:${string}`;

const at = (status: HealthInput['status'], extra: Partial<HealthInput> = {}): HealthInput => ({
  generation: 2,
  paused: false,
  status,
  ...extra,
});

/** One line per kind and state; the detail text is checked for a few words, not verbatim. */
const CASES: readonly (readonly [string, HealthInput, Expected, RegExp])[] = [
  // Deployment (and DeploymentConfig: the same model)
  ['deployment: all updated and available', at(deployment()), 'complete', /3 of 3/],
  [
    'deployment: status not yet observed',
    at(deployment({ observedGeneration: 1 })),
    'progressing',
    /observe generation 2 \(observed 1\)/,
  ],
  [
    'deployment: new ReplicaSet scaling up',
    at(deployment({ updated: 1, replicas: 4, available: 3, unavailable: 1 })),
    'progressing',
    /1 of 3 replicas updated/,
  ],
  [
    'deployment: old replicas still terminating',
    at(deployment({ replicas: 4 })),
    'progressing',
    /1 old replicas pending termination/,
  ],
  [
    'deployment: updated but not yet available',
    at(deployment({ available: 2, unavailable: 1 })),
    'progressing',
    /2 of 3 updated replicas available/,
  ],
  [
    'deployment: paused (wins over a stale status)',
    at(deployment({ observedGeneration: 1, updated: 0 }), { paused: true }),
    'paused',
    /spec.paused/,
  ],
  [
    'deployment: progress deadline exceeded',
    at(
      deployment({
        updated: 1,
        replicas: 4,
        available: 3,
        unavailable: 1,
        progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' },
      }),
    ),
    'failed:ProgressDeadlineExceeded',
    /1 of 3 replicas updated, 3 available/,
  ],
  [
    'deployment: deadline exceeded for an older generation is not yet this one',
    at(
      deployment({
        observedGeneration: 1,
        progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' },
      }),
    ),
    'progressing',
    /observe generation 2/,
  ],
  [
    'deployment: scaled to zero',
    at(deployment({ desired: 0, replicas: 0, updated: 0, available: 0 })),
    'complete',
    /0 of 0/,
  ],
  [
    'deployment: no Progressing condition yet',
    at(deployment({ progressing: undefined, updated: 0, replicas: 0, available: 0 })),
    'progressing',
    /0 of 3 replicas updated/,
  ],
  // StatefulSet
  ['statefulset: all at the update revision', at(statefulSet()), 'complete', /revision web-2/],
  [
    'statefulset: status not yet observed',
    at(statefulSet({ observedGeneration: 1 })),
    'progressing',
    /observe generation 2/,
  ],
  [
    'statefulset: rolling',
    at(statefulSet({ updated: 1, currentRevision: 'web-1' })),
    'progressing',
    /1 of 3 replicas updated/,
  ],
  [
    'statefulset: updated, one not ready',
    at(statefulSet({ ready: 2 })),
    'progressing',
    /2 of 3 replicas ready/,
  ],
  [
    'statefulset: revisions not yet converged',
    at(statefulSet({ currentRevision: 'web-1' })),
    'progressing',
    /current revision/,
  ],
  [
    'statefulset: partitioned, replicas above the partition updating',
    at(statefulSet({ partition: 1, updated: 1, currentRevision: 'web-1' })),
    'progressing',
    /1 of 2 replicas above the partition/,
  ],
  [
    'statefulset: partitioned, replicas above the partition done',
    at(statefulSet({ partition: 1, updated: 2, currentRevision: 'web-1' })),
    'paused',
    /partition 1 keeps 1 replicas/,
  ],
  [
    'statefulset: partition at or above replicas holds every pod',
    at(statefulSet({ partition: 5, updated: 0, currentRevision: 'web-1' })),
    'paused',
    /partition 5 keeps 3 replicas/,
  ],
  ['statefulset: OnDelete', at(statefulSet({ onDelete: true, updated: 0 })), 'unknown', /OnDelete/],
  // DaemonSet
  ['daemonset: every node updated and available', at(daemonSet()), 'complete', /3 nodes/],
  [
    'daemonset: status not yet observed',
    at(daemonSet({ observedGeneration: 1 })),
    'progressing',
    /observe generation 2/,
  ],
  [
    'daemonset: maxUnavailable 2, two nodes down while rolling',
    at(daemonSet({ updated: 1, available: 1, unavailable: 2 })),
    'progressing',
    /1 of 3 nodes updated/,
  ],
  [
    'daemonset: all updated, one still unavailable',
    at(daemonSet({ available: 2, unavailable: 1 })),
    'progressing',
    /2 of 3 nodes available/,
  ],
  [
    'daemonset: no node to run on',
    at(daemonSet({ desired: 0, updated: 0, available: 0 })),
    'complete',
    /0 nodes/,
  ],
  ['daemonset: OnDelete', at(daemonSet({ onDelete: true })), 'unknown', /OnDelete/],
  // Argo Rollout
  ['rollout: Healthy', at(rollout()), 'complete', /Healthy/],
  ['rollout: Progressing', at(rollout({ phase: 'Progressing' })), 'progressing', /Progressing/],
  [
    'rollout: Paused at a canary step',
    at(rollout({ phase: 'Paused', message: 'CanaryPauseStep' })),
    'paused',
    /CanaryPauseStep/,
  ],
  [
    'rollout: Degraded',
    at(rollout({ phase: 'Degraded', message: 'ProgressDeadlineExceeded' })),
    'failed:Degraded',
    /ProgressDeadlineExceeded/,
  ],
  ['rollout: no phase yet', at(rollout({ phase: undefined })), 'unknown', /no status.phase/],
  [
    'rollout: status not yet observed',
    at(rollout({ observedGeneration: 1, phase: 'Healthy' })),
    'progressing',
    /observe generation 2/,
  ],
  [
    'rollout: observedGeneration not a number (old controllers): the phase decides',
    at(rollout({ observedGeneration: undefined })),
    'complete',
    /Healthy/,
  ],
];

describe('judgeRollout', () => {
  it.each(CASES)('%s', (_name, input, expected, detail) => {
    const health = judgeRollout(input);
    const got = health.state === 'failed' ? `failed:${health.reason}` : health.state;
    expect(got).toBe(expected);
    expect(health.detail).toMatch(detail);
  });

  it('covers every health model of the kind table, in every state it can report', () => {
    const models = new Set(WORKLOAD_KINDS.flatMap((row) => (row.health ? [row.health] : [])));
    const seen = new Map<string, Set<string>>();
    for (const [, input] of CASES) {
      const states = seen.get(input.status.model) ?? new Set<string>();
      states.add(judgeRollout(input).state);
      seen.set(input.status.model, states);
    }
    expect(new Set(seen.keys())).toEqual(models);
    expect([...(seen.get('replica-set') ?? [])].sort()).toEqual([
      'complete',
      'failed',
      'paused',
      'progressing',
    ]);
    expect([...(seen.get('stateful-set') ?? [])].sort()).toEqual([
      'complete',
      'paused',
      'progressing',
      'unknown',
    ]);
    expect([...(seen.get('rollout-phase') ?? [])].sort()).toEqual([
      'complete',
      'failed',
      'paused',
      'progressing',
      'unknown',
    ]);
  });

  it('has no health model for the batch kinds', () => {
    const batch = WORKLOAD_KINDS.filter((row) => row.group === 'batch');
    expect(batch.map((row) => [row.kind, row.health])).toEqual([
      ['CronJob', undefined],
      ['Job', undefined],
    ]);
  });
});

describe('judgeStartedRollout', () => {
  it('judges the rollout while the workload is at the generation the PATCH produced', () => {
    expect(judgeStartedRollout({ generation: 2 }, at(deployment()))).toMatchObject({
      state: 'complete',
    });
  });

  it('after a later spec change, waits for the status of that generation', () => {
    expect(
      judgeStartedRollout({ generation: 2 }, at(deployment(), { generation: 3 })),
    ).toMatchObject({
      state: 'progressing',
      detail: expect.stringMatching(/generation 3/) as unknown,
    });
    expect(
      judgeStartedRollout(
        { generation: 2 },
        at(deployment({ observedGeneration: 3 }), { generation: 3 }),
      ),
    ).toMatchObject({ state: 'complete' });
  });

  it('waits while the watch has not yet delivered the PATCH (an older generation)', () => {
    expect(
      judgeStartedRollout(
        { generation: 3 },
        at(deployment({ observedGeneration: 2 }), { generation: 2 }),
      ),
    ).toMatchObject({ state: 'progressing' });
  });
});

describe('isRolloutOver', () => {
  it.each([
    ['complete', true],
    ['failed', true],
    ['progressing', false],
    ['paused', false],
    ['unknown', false],
  ] as const)('%s → %s', (state, over) => {
    const health: RolloutHealth =
      state === 'failed' ? { state, reason: 'X', detail: '' } : { state, detail: '' };
    expect(isRolloutOver(health)).toBe(over);
  });
});
