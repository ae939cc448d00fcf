import { describe, expect, it } from 'vitest';
import { NO_BINDING } from '../core/reload-policy.ts';
import { aWorkload } from '../testing/builders.ts';
import { UNLIMITED_ROLLOUTS } from './waves.ts';
import {
  parseBooleanSetting,
  parseCanarySetting,
  parseCountSetting,
  parseFlapDuration,
  workloadFlapLimits,
  workloadRollout,
} from './workload-settings.ts';

describe('setting parsers', () => {
  it.each([
    ['1', { value: { count: 1 } }],
    [' 25% ', { value: { percent: 25 } }],
    ['100%', { value: { percent: 100 } }],
    ['101%', { problem: 'canary 101% is out of range 1%–100%' }],
    ['0%', { problem: 'canary 0% is out of range 1%–100%' }],
    ['0', { problem: 'canary 0 is out of range 1–100000' }],
    ['100001', { problem: 'canary 100001 is out of range 1–100000' }],
    ['99999999999', { problem: expect.stringContaining('invalid canary') as unknown }],
    ['-1', { problem: expect.stringContaining('invalid canary') as unknown }],
    ['1.5', { problem: expect.stringContaining('invalid canary') as unknown }],
    ['ten', { problem: expect.stringContaining('invalid canary') as unknown }],
  ])('canary %j', (raw, expected) => {
    expect(parseCanarySetting(raw)).toEqual(expected);
  });

  it.each([
    ['true', { value: true }],
    ['false', { value: false }],
    ['yes', { problem: 'invalid value "yes": expected "true" or "false"' }],
    ['', { problem: 'invalid value "": expected "true" or "false"' }],
  ])('boolean %j', (raw, expected) => {
    expect(parseBooleanSetting(raw)).toEqual(expected);
  });

  it.each([
    ['0', 0, 10, { value: 0 }],
    ['10', 0, 10, { value: 10 }],
    ['11', 0, 10, { problem: '11 is out of range 0–10' }],
    ['-3', 0, 10, { problem: 'invalid value "-3": expected an integer' }],
    ['1e3', 0, 10, { problem: 'invalid value "1e3": expected an integer' }],
    ['9999999999999', 0, 10, { problem: 'invalid value "9999999999999": expected an integer' }],
  ])('count %j within %d–%d', (raw, min, max, expected) => {
    expect(parseCountSetting(raw, min, max)).toEqual(expected);
  });

  it.each([
    ['1s', { value: 1000 }],
    ['10m', { value: 600_000 }],
    ['24h', { value: 86_400_000 }],
    ['25h', { problem: 'duration 25h is out of range 1s–24h' }],
    // Past 2^31 ms (about 24.8 days): refused, never handed to a timer.
    ['600h', { problem: 'duration 600h is out of range 1s–24h' }],
    ['2562047h', { problem: 'duration 2562047h is out of range 1s–24h' }],
    ['500ms', { problem: 'duration 500ms is out of range 1s–24h' }],
    ['-1m', { problem: 'duration -1m is out of range 1s–24h' }],
    ['soon', { problem: expect.stringContaining('invalid duration') as unknown }],
  ])('flap duration %j', (raw, expected) => {
    expect(parseFlapDuration(raw)).toEqual(expected);
  });
});

describe('workloadRollout and workloadFlapLimits', () => {
  const FLAGS = { ...UNLIMITED_ROLLOUTS, waves: true, haltOnFailure: true, undoOnFailure: false };
  const LIMITS = { maxChanges: 10, periodMs: 60_000, coolDownMs: 120_000 };

  it('the annotations win over the flags', () => {
    const view = {
      ...aWorkload('Deployment', 'ns', 'web').build(),
      annotations: {
        'kreload.io/halt-on-failed-rollout': 'false',
        'kreload.io/undo-failed-rollout': 'true',
        'kreload.io/flap-max-changes': '3',
        'kreload.io/flap-cool-down': '30s',
      },
    };
    expect(workloadRollout(view, NO_BINDING, FLAGS)).toEqual({
      settings: {
        haltOnFailure: false,
        undoOnFailure: true,
        canary: undefined,
        maxConcurrent: undefined,
      },
      problems: [],
    });
    expect(workloadFlapLimits(view, LIMITS)).toEqual({
      settings: { maxChanges: 3, periodMs: 60_000, coolDownMs: 30_000 },
      problems: [],
    });
  });

  it("a bad value is a problem on the workload and reads as the flag's", () => {
    const view = {
      ...aWorkload('Deployment', 'ns', 'web').build(),
      annotations: {
        'kreload.io/halt-on-failed-rollout': 'maybe',
        'kreload.io/flap-period': '900h',
      },
    };
    expect(workloadRollout(view, NO_BINDING, FLAGS)).toEqual({
      settings: {
        haltOnFailure: true,
        undoOnFailure: false,
        canary: undefined,
        maxConcurrent: undefined,
      },
      problems: [
        {
          on: 'workload',
          key: 'kreload.io/halt-on-failed-rollout',
          value: 'maybe',
          problem: 'invalid value "maybe": expected "true" or "false"',
          consequence: 'read as true (--halt-on-failed-rollout)',
        },
      ],
    });
    expect(workloadFlapLimits(view, LIMITS)).toEqual({
      settings: LIMITS,
      problems: [
        {
          on: 'workload',
          key: 'kreload.io/flap-period',
          value: '900h',
          problem: 'duration 900h is out of range 1s–24h',
          consequence: 'read as --flap-period',
        },
      ],
    });
  });

  it("a policy's canary and maxConcurrent name the policy's group", () => {
    const view = aWorkload('Deployment', 'ns', 'web').build();
    const policy = { namespace: 'ns', name: 'payments' };
    const binding = {
      ...NO_BINDING,
      policySettings: {
        rolloutCanary: { value: '25%', policy },
        rolloutMaxConcurrent: { value: 2, policy },
      },
    };
    expect(workloadRollout(view, binding, FLAGS).settings).toMatchObject({
      canary: { group: 'ns/payments', size: { percent: 25 } },
      maxConcurrent: { group: 'ns/payments', size: 2 },
    });
  });
});
