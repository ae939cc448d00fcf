import { describe, expect, it } from 'vitest';
import { rolledBy } from './rolled-by.ts';

describe('rolledBy', () => {
  it.each([
    {
      name: 'env vars in the template',
      plan: { rollAction: 'template-patch', mode: 'env-vars' },
      expected: 'env-vars',
    },
    {
      name: 'annotations in the template',
      plan: { rollAction: 'template-patch', mode: 'annotations' },
      expected: 'annotations',
    },
    {
      name: 'a Job re-created',
      plan: { rollAction: 'recreate-job', mode: 'annotations' },
      expected: 'annotations',
    },
    {
      name: 'an Argo Rollout restarted',
      plan: { rollAction: 'rollout-restart', mode: 'workload' },
      expected: 'restart',
    },
    {
      name: 'pods evicted',
      plan: { rollAction: 'evict-pods', mode: 'workload' },
      expected: 'evict',
    },
    {
      name: 'a CronJob run with env vars',
      plan: {
        rollAction: 'create-job-from-cronjob',
        mode: 'workload',
        jobTemplate: { envWrites: [] },
      },
      expected: 'env-vars',
    },
    {
      name: 'a CronJob run with annotations',
      plan: {
        rollAction: 'create-job-from-cronjob',
        mode: 'workload',
        jobTemplate: { envWrites: [], lastReloadedFrom: '{}' },
      },
      expected: 'annotations',
    },
  ] as const)('$name', ({ plan, expected }) => {
    expect(rolledBy(plan)).toBe(expected);
  });
});
