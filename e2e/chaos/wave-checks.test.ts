import { describe, expect, it } from 'vitest';
import {
  deploymentComplete,
  judgeWaves,
  wavesByName,
  type RollSample,
  type RollState,
} from './wave-checks.ts';

// Canary a, then waves of 2: b c, d.
const WAVES = wavesByName(['d', 'c', 'b', 'a'], 1, 2);

function sample(at: number, states: Record<string, RollState>): RollSample {
  return { at, states: new Map(Object.entries(states)) };
}

describe('wavesByName', () => {
  it('puts the canary first, then waves of the budget, in name order', () => {
    expect([...WAVES]).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 1],
      ['d', 2],
    ]);
  });
});

describe('deploymentComplete', () => {
  const done = {
    generation: 3,
    observedGeneration: 3,
    replicas: 0,
    updatedReplicas: 0,
    statusReplicas: 0,
    availableReplicas: 0,
  };

  it('calls a 0-replica Deployment complete once the controller observed its generation', () => {
    expect(deploymentComplete(done)).toBe(true);
    expect(deploymentComplete({ ...done, observedGeneration: 2 })).toBe(false);
  });

  it('waits for every replica updated and available, and the old ones gone', () => {
    const two = { ...done, replicas: 2, updatedReplicas: 2, statusReplicas: 2 };
    expect(deploymentComplete({ ...two, availableReplicas: 2 })).toBe(true);
    expect(deploymentComplete({ ...two, availableReplicas: 1 })).toBe(false);
    expect(deploymentComplete({ ...two, availableReplicas: 2, statusReplicas: 3 })).toBe(false);
    expect(deploymentComplete({ ...two, availableReplicas: 1, updatedReplicas: 1 })).toBe(false);
  });
});

describe('judgeWaves', () => {
  const inOrder = new Map([
    ['a', 100],
    ['b', 300],
    ['c', 310],
    ['d', 600],
  ]);
  const samples = [
    sample(150, { a: 'progressing', b: 'pending', c: 'pending', d: 'pending' }),
    sample(250, { a: 'complete', b: 'pending', c: 'pending', d: 'pending' }),
    sample(400, { a: 'complete', b: 'progressing', c: 'progressing', d: 'pending' }),
    sample(550, { a: 'complete', b: 'complete', c: 'complete', d: 'pending' }),
    sample(700, { a: 'complete', b: 'complete', c: 'complete', d: 'complete' }),
  ];

  it('finds nothing when every wave started after the earlier ones were complete', () => {
    expect(judgeWaves({ waves: WAVES, firstPatchAt: inOrder, samples })).toEqual({
      violations: [],
      maxInFlight: 2,
      patched: 4,
    });
  });

  it('flags a member PATCHed before a member of an earlier wave', () => {
    const early = new Map([...inOrder, ['d', 305]]);
    const verdict = judgeWaves({ waves: WAVES, firstPatchAt: early, samples });
    expect(verdict.violations).toContain('c (wave 1) PATCHed after d (wave 2)');
  });

  it('flags a wave started while a sample after its PATCH saw the previous wave unfinished', () => {
    // d's PATCH at 380: in order, but the sample at 400 still saw b and c progressing.
    const gateSkipped = new Map([...inOrder, ['d', 380]]);
    const verdict = judgeWaves({ waves: WAVES, firstPatchAt: gateSkipped, samples });
    expect(verdict.violations).toEqual([
      'd (wave 2) PATCHed at +0.28 s while b (wave 1) was still progressing at +0.30 s',
    ]);
  });

  it('counts the most Deployments rolled and not complete in one sample', () => {
    const crowded = [
      ...samples,
      sample(800, { a: 'progressing', b: 'progressing', c: 'progressing' }),
    ];
    expect(judgeWaves({ waves: WAVES, firstPatchAt: inOrder, samples: crowded }).maxInFlight).toBe(
      3,
    );
  });

  it('flags a PATCH of a workload outside the change', () => {
    const stranger = new Map([...inOrder, ['z', 650]]);
    expect(judgeWaves({ waves: WAVES, firstPatchAt: stranger, samples }).violations).toEqual([
      'z: PATCHed but not a member of the change',
    ]);
  });
});
