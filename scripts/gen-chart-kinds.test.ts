import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WORKLOAD_KINDS } from '../src/rollout/kinds.ts';
import { KIND_RULES_URL, chartKindRules, kindSwitch, renderKindRules } from './gen-chart-kinds.ts';

describe('helm/kreload/templates/_kind-rules.tpl', () => {
  it('is up to date (run `npm run chart:kinds`)', () => {
    expect(readFileSync(KIND_RULES_URL, 'utf8')).toBe(renderKindRules());
  });

  it.each(WORKLOAD_KINDS.map((row) => [row.kind, row] as const))(
    'grants %s its verbs and its further grants under the switch of its option',
    (_, row) => {
      const rules = chartKindRules();
      const own = rules.filter(
        (rule) => rule.apiGroup === row.group && rule.resources.includes(row.plural),
      );
      expect(own).toContainEqual(
        expect.objectContaining({ verbs: row.rbac.verbs, ...kindSwitch(row) }),
      );
      for (const grant of row.rbac.also) {
        expect(
          rules.some(
            (rule) =>
              rule.apiGroup === grant.group &&
              rule.resources.includes(grant.resource) &&
              grant.verbs.every((verb) => rule.verbs.includes(verb)),
          ),
        ).toBe(true);
      }
    },
  );

  it('switches the optional and ignorable kinds by their chart values', () => {
    const switches = Object.fromEntries(WORKLOAD_KINDS.map((row) => [row.kind, kindSwitch(row)]));
    expect(switches).toMatchObject({
      Deployment: { when: [], unless: [] },
      DaemonSet: { when: [], unless: [] },
      StatefulSet: { when: [], unless: [] },
      CronJob: { when: [], unless: ['ignoreCronJobs'] },
      Job: { when: [], unless: ['ignoreJobs'] },
      Rollout: { when: ['isArgoRollouts'], unless: [] },
      DeploymentConfig: { when: ['isOpenshift'], unless: [] },
    });
  });

  it('grants the Job a CronJob creates only while Jobs themselves are not granted', () => {
    expect(chartKindRules()).toContainEqual({
      apiGroup: 'batch',
      resources: ['jobs'],
      verbs: ['create'],
      when: ['ignoreJobs'],
      unless: ['ignoreCronJobs'],
    });
  });
});
