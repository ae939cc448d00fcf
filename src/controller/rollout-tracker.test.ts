import { WatchedWorkloads } from '../testing/watched-workloads.ts';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadKey, WorkloadView } from '../core/types.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import type { RolloutResult } from '../metrics/metrics.ts';
import type { RolledEvent } from '../reconcile/ports.ts';
import type { ReplicaSetStatusView } from '../rollout/rollout-status.ts';
import { aWorkload } from '../testing/builders.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { RolloutTracker } from './rollout-tracker.ts';

const STEADY: ReplicaSetStatusView = {
  model: 'replica-set',
  observedGeneration: 4,
  desired: 3,
  replicas: 3,
  updated: 3,
  available: 3,
  unavailable: 0,
  progressing: { status: 'True', reason: 'NewReplicaSetAvailable' },
};

function setup(marked: ReadonlySet<WorkloadKey> = new Set()) {
  let now = 1_000_000;
  const workloads = new WatchedWorkloads();
  const gauge: number[] = [];
  const ended: { kind: string; result: RolloutResult; seconds: number }[] = [];
  const events: EventRequest[] = [];
  const tracker = new RolloutTracker({
    kinds: BUILT_IN_KIND_TABLE,
    workloads,
    now: () => now,
    metrics: {
      setRolloutsInProgress: (count) => gauge.push(count),
      recordRolloutEnded: (kind, result, seconds) => ended.push({ kind, result, seconds }),
    },
    events: { record: (request) => events.push(request) },
    logger: new RecordingLogger(),
    carriesRollMarker: (key) => marked.has(key),
  });
  const base = aWorkload('Deployment', 'team-a', 'web').build();
  const view = (generation: number, status: Partial<ReplicaSetStatusView>): WorkloadView => ({
    ...base,
    generation,
    rolloutStatus: { ...STEADY, ...status },
  });
  const rolled = (generation: number | undefined, at = base): RolledEvent =>
    ({ view: at, plan: {}, attempts: 1, durationMs: 5, generation }) as unknown as RolledEvent;
  const key = workloadKey(base.ref);
  const advance = (ms: number): void => {
    now += ms;
  };
  return { tracker, workloads, gauge, ended, events, view, rolled, key, advance };
}

const NEW_RS_SCALING = { observedGeneration: 5, updated: 1, replicas: 4 } as const;
const DEADLINE_EXCEEDED = {
  ...NEW_RS_SCALING,
  unavailable: 1,
  progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' },
} as const;

describe('RolloutTracker', () => {
  it('follows a rollout from the PATCH to complete', () => {
    const t = setup();
    t.workloads.put(t.view(4, {}));
    t.tracker.started(t.rolled(5));
    expect(t.gauge.at(-1)).toBe(1);
    // The watch still shows generation 4, whose status was complete: not this rollout's.
    expect(t.tracker.lastRollout(t.key)?.health?.state).toBe('progressing');
    t.advance(2_000);
    t.workloads.put(t.view(5, NEW_RS_SCALING));
    expect(t.tracker.lastRollout(t.key)).toMatchObject({
      generation: 5,
      health: { state: 'progressing', detail: '1 of 3 replicas updated' },
      ended: undefined,
    });
    t.advance(3_000);
    t.workloads.put(t.view(5, { observedGeneration: 5 }));
    expect(t.tracker.lastRollout(t.key)).toMatchObject({
      health: { state: 'complete' },
      ended: { result: 'complete', at: 1_005_000 },
    });
    expect(t.ended).toEqual([{ kind: 'Deployment', result: 'complete', seconds: 5 }]);
    expect(t.gauge.at(-1)).toBe(0);
    expect(t.events).toEqual([]);
  });

  it('a failed rollout: the duration, a RolloutFailed Warning Event, and nothing after', () => {
    const t = setup();
    t.workloads.put(t.view(4, {}));
    t.tracker.started(t.rolled(5));
    t.advance(10_000);
    t.workloads.put(t.view(5, DEADLINE_EXCEEDED));
    expect(t.tracker.lastRollout(t.key)).toMatchObject({
      health: { state: 'failed', reason: 'ProgressDeadlineExceeded' },
      ended: { result: 'failed' },
    });
    expect(t.ended).toEqual([{ kind: 'Deployment', result: 'failed', seconds: 10 }]);
    expect(t.events).toMatchObject([
      {
        reason: 'RolloutFailed',
        type: 'Warning',
        object: { kind: 'Deployment', name: 'web', namespace: 'team-a' },
        message: expect.stringContaining(
          '(generation 5) failed: ProgressDeadlineExceeded',
        ) as unknown,
      },
    ]);
    t.workloads.put(t.view(5, { ...DEADLINE_EXCEEDED, available: 2 }));
    expect(t.events).toHaveLength(1);
    expect(t.ended).toHaveLength(1);
    expect(t.gauge.at(-1)).toBe(0);
  });

  it('a second roll before the first ended supersedes it', () => {
    const t = setup();
    t.workloads.put(t.view(4, {}));
    t.tracker.started(t.rolled(5));
    t.advance(1_000);
    t.tracker.started(t.rolled(6));
    expect(t.ended).toEqual([{ kind: 'Deployment', result: 'superseded', seconds: 1 }]);
    expect(t.gauge.at(-1)).toBe(1);
    expect(t.tracker.lastRollout(t.key)?.generation).toBe(6);
    expect(t.workloads.listeners(t.key)).toBe(1);
  });

  it('forgets a workload that is deleted, mid-rollout or after', () => {
    const t = setup();
    const current = t.view(5, NEW_RS_SCALING);
    t.workloads.put(current);
    t.tracker.started(t.rolled(5));
    t.workloads.remove(current);
    expect(t.tracker.lastRollout(t.key)).toBeUndefined();
    expect(t.gauge.at(-1)).toBe(0);
    expect(t.ended).toEqual([]);
    expect(t.workloads.listeners(t.key)).toBe(0);

    t.workloads.put(t.view(5, { observedGeneration: 5 }));
    t.tracker.started(t.rolled(5));
    expect(t.tracker.lastRollout(t.key)?.ended?.result).toBe('complete');
    t.workloads.remove(current);
    expect(t.tracker.lastRollout(t.key)).toBeUndefined();
    expect(t.workloads.listeners(t.key)).toBe(0);
  });

  it('a new object under the same name is not the rollout kreload started', () => {
    const t = setup();
    t.workloads.put(t.view(5, NEW_RS_SCALING));
    t.tracker.started(t.rolled(5));
    t.workloads.put({ ...t.view(1, { observedGeneration: 1 }), uid: 'another-uid' });
    expect(t.tracker.lastRollout(t.key)).toBeUndefined();
    expect(t.gauge.at(-1)).toBe(0);
  });

  it.each([
    [
      'a roll whose answer had no generation',
      undefined,
      aWorkload('Deployment', 'team-a', 'web').build(),
    ],
    ['a Job (no health model)', 5, aWorkload('Job', 'team-a', 'batch').build()],
    ['a CronJob (no health model)', 5, aWorkload('CronJob', 'team-a', 'nightly').build()],
  ])('ignores %s', (_name, generation, at) => {
    const t = setup();
    t.tracker.started(t.rolled(generation, at));
    expect(t.gauge).toEqual([]);
    expect(t.tracker.lastRollout(workloadKey(at.ref))).toBeUndefined();
  });

  it('close() stops following and zeroes the gauge', () => {
    const t = setup();
    t.workloads.put(t.view(5, NEW_RS_SCALING));
    t.tracker.started(t.rolled(5));
    t.tracker.close();
    expect(t.gauge.at(-1)).toBe(0);
    expect(t.workloads.listeners(t.key)).toBe(0);
  });

  describe("after a restart: rollouts in progress that carry kreload's marker", () => {
    const WEB = workloadKey(aWorkload('Deployment', 'team-a', 'web').build().ref);

    it('adopts one and reports its failure: gauge, duration since adoption, Event', () => {
      const t = setup(new Set([WEB]));
      t.workloads.put(t.view(5, NEW_RS_SCALING));
      expect(t.tracker.adoptInProgress([t.key])).toBe(1);
      expect(t.gauge.at(-1)).toBe(1);
      expect(t.tracker.lastRollout(t.key)).toMatchObject({
        generation: 5,
        adopted: true,
        startedAt: 1_000_000,
        health: { state: 'progressing' },
        ended: undefined,
      });
      expect(t.workloads.listeners(t.key)).toBe(1);
      t.advance(7_000);
      t.workloads.put(t.view(5, DEADLINE_EXCEEDED));
      expect(t.ended).toEqual([{ kind: 'Deployment', result: 'failed', seconds: 7 }]);
      expect(t.gauge.at(-1)).toBe(0);
      expect(t.events).toMatchObject([
        {
          reason: 'RolloutFailed',
          type: 'Warning',
          message: expect.stringContaining('failed: ProgressDeadlineExceeded') as unknown,
        },
      ]);
    });

    it('adopts one whose new generation the controller has not observed yet', () => {
      const t = setup(new Set([WEB]));
      t.workloads.put(t.view(5, { observedGeneration: 4 }));
      expect(t.tracker.adoptInProgress([t.key])).toBe(1);
      t.workloads.put(t.view(5, { observedGeneration: 5 }));
      expect(t.ended).toEqual([{ kind: 'Deployment', result: 'complete', seconds: 0 }]);
    });

    it.each([
      ['a complete rollout', new Set([WEB]), { observedGeneration: 5 }, false],
      ['a failed one (its Event may already exist)', new Set([WEB]), DEADLINE_EXCEEDED, false],
      ['a paused Deployment', new Set([WEB]), NEW_RS_SCALING, true],
      [
        "one without kreload's marker (someone else rolled it)",
        new Set<WorkloadKey>(),
        NEW_RS_SCALING,
        false,
      ],
    ] as const)('leaves %s alone', (_name, marked, status, paused) => {
      const t = setup(marked);
      t.workloads.put({ ...t.view(5, status), paused });
      expect(t.tracker.adoptInProgress([t.key])).toBe(0);
      expect(t.tracker.lastRollout(t.key)).toBeUndefined();
      expect(t.workloads.listeners(t.key)).toBe(0);
      expect(t.gauge).toEqual([]);
    });

    it('leaves a workload without a status, a Job, and one that is gone alone', () => {
      const job = aWorkload('Job', 'team-a', 'batch').build();
      const t = setup(new Set([WEB, workloadKey(job.ref)]));
      t.workloads.put({ ...t.view(5, {}), rolloutStatus: undefined });
      t.workloads.put(job);
      expect(
        t.tracker.adoptInProgress([
          t.key,
          workloadKey(job.ref),
          workloadKey(aWorkload('Deployment', 'team-a', 'gone').build().ref),
        ]),
      ).toBe(0);
      expect(t.gauge).toEqual([]);
    });

    it('keeps a rollout it already follows, and counts each workload once', () => {
      const t = setup(new Set([WEB]));
      t.workloads.put(t.view(4, {}));
      t.tracker.started(t.rolled(5));
      t.workloads.put(t.view(5, NEW_RS_SCALING));
      expect(t.tracker.adoptInProgress([t.key, t.key])).toBe(0);
      expect(t.tracker.lastRollout(t.key)).toMatchObject({ adopted: false, generation: 5 });
      expect(t.gauge.at(-1)).toBe(1);
      expect(t.workloads.listeners(t.key)).toBe(1);
    });

    it("an adopted rollout is superseded by kreload's next roll", () => {
      const t = setup(new Set([WEB]));
      t.workloads.put(t.view(5, NEW_RS_SCALING));
      t.tracker.adoptInProgress([t.key]);
      t.advance(1_000);
      t.tracker.started(t.rolled(6));
      expect(t.ended).toEqual([{ kind: 'Deployment', result: 'superseded', seconds: 1 }]);
      expect(t.tracker.lastRollout(t.key)).toMatchObject({ adopted: false, generation: 6 });
      expect(t.gauge.at(-1)).toBe(1);
    });
  });
});
