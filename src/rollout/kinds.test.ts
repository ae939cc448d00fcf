import { describe, expect, it } from 'vitest';
import {
  appliedStatePlacement,
  findKindRow,
  findKindRowByPlural,
  kindRow,
  UnsupportedKindError,
  WORKLOAD_KINDS,
} from './kinds.ts';

const ROLLOUT_STRATEGY = 'reloader.stakater.com/rollout-strategy';

describe('WORKLOAD_KINDS', () => {
  it.each([
    ['Deployment', 'deployments', true],
    ['DaemonSet', 'daemonsets', false],
    ['StatefulSet', 'statefulsets', false],
  ] as const)('%s is an apps/v1 template-patching kind (%s)', (kind, plural, pause) => {
    expect(kindRow(kind)).toEqual({
      kind,
      group: 'apps',
      version: 'v1',
      apiVersion: 'apps/v1',
      plural,
      templatePath: ['spec', 'template'],
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: pause,
    });
    expect(findKindRowByPlural(plural)?.kind).toBe(kind);
  });

  it('has one row per kind', () => {
    const kinds = WORKLOAD_KINDS.map((row) => row.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it('reports kinds without a row', () => {
    expect(findKindRow('CronJob')).toBeUndefined();
    expect(() => kindRow('Job')).toThrow(UnsupportedKindError);
    expect(findKindRowByPlural('jobs')).toBeUndefined();
  });
});

describe('appliedStatePlacement', () => {
  const deployment = kindRow('Deployment');
  const rollout = { ...deployment, kind: 'Rollout' as const, supportsRestartStrategy: true };

  it.each([
    ['Deployment ignores rollout-strategy', deployment, { [ROLLOUT_STRATEGY]: 'restart' }, 'PT'],
    ['Rollout default strategy', rollout, {}, 'PT'],
    ['Rollout rollout strategy', rollout, { [ROLLOUT_STRATEGY]: 'rollout' }, 'PT'],
    ['Rollout restart strategy', rollout, { [ROLLOUT_STRATEGY]: 'restart' }, 'W'],
    ['CronJob-like W kind', { ...deployment, appliedState: 'W' as const }, {}, 'W'],
  ])('%s', (_name, row, annotations, expected) => {
    expect(appliedStatePlacement(row, annotations, ROLLOUT_STRATEGY)).toBe(expected);
  });
});
