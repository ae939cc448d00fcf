import { describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import type { WatchPlanOptions } from './watch-plan.ts';
import {
  namespaceWatchTarget,
  plannedKinds,
  sourceWatchTargets,
  watchedSourceResources,
  workloadWatchTargets,
} from './watch-plan.ts';

const GLOBAL: WatchPlanOptions = {
  scope: { mode: 'global', namespaces: [], ignoreNamespaces: [], namespaceSelector: '' },
  resourceLabelSelector: '',
  resourcesToIgnore: [],
  includeHelmSecrets: false,
};

const HELM_AND_SA = 'type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token';

describe('sourceWatchTargets', () => {
  it.each([
    [
      'global configmaps',
      GLOBAL,
      'configmaps',
      [{ namespace: undefined, labelSelector: undefined, fieldSelector: undefined }],
    ],
    [
      'global secrets exclude helm and SA tokens (D1)',
      GLOBAL,
      'secrets',
      [{ namespace: undefined, labelSelector: undefined, fieldSelector: HELM_AND_SA }],
    ],
    [
      '--include-helm-secrets',
      { ...GLOBAL, includeHelmSecrets: true },
      'secrets',
      [{ namespace: undefined, labelSelector: undefined, fieldSelector: undefined }],
    ],
    [
      'ignored namespaces become field selector terms',
      { ...GLOBAL, scope: { ...GLOBAL.scope, ignoreNamespaces: ['kube-system', 'a'] } },
      'secrets',
      [
        {
          namespace: undefined,
          labelSelector: undefined,
          fieldSelector: `metadata.namespace!=kube-system,metadata.namespace!=a,${HELM_AND_SA}`,
        },
      ],
    ],
    [
      'scoped: one watch per namespace, label selector applies',
      {
        ...GLOBAL,
        resourceLabelSelector: 'app=x',
        scope: {
          mode: 'scoped',
          namespaces: ['a', 'b'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
      'configmaps',
      [
        { namespace: 'a', labelSelector: 'app=x', fieldSelector: undefined },
        { namespace: 'b', labelSelector: 'app=x', fieldSelector: undefined },
      ],
    ],
  ] as const)('%s', (_name, options, resource, expected) => {
    expect(sourceWatchTargets(options, resource)).toEqual(expected);
  });
});

describe('workload and namespace watches', () => {
  it('never label-filters workloads', () => {
    expect(workloadWatchTargets({ ...GLOBAL, resourceLabelSelector: 'app=x' })).toEqual([
      { namespace: undefined, labelSelector: undefined, fieldSelector: undefined },
    ]);
  });

  it('watches namespaces only for a selector in global mode', () => {
    expect(namespaceWatchTarget(GLOBAL)).toBeUndefined();
    const selected = { ...GLOBAL, scope: { ...GLOBAL.scope, namespaceSelector: 'team=a' } };
    expect(namespaceWatchTarget(selected)).toEqual({
      namespace: undefined,
      labelSelector: 'team=a',
      fieldSelector: undefined,
    });
    const scoped = {
      ...selected,
      scope: { ...selected.scope, mode: 'scoped' as const, namespaces: ['x'] },
    };
    expect(namespaceWatchTarget(scoped)).toBeUndefined();
  });

  it.each([
    [[], ['configmaps', 'secrets']],
    [['Secrets'], ['configmaps']],
    [['configmaps'], ['secrets']],
  ])('resources-to-ignore %j', (ignored, expected) => {
    expect(watchedSourceResources({ ...GLOBAL, resourcesToIgnore: ignored })).toEqual(expected);
  });

  it.each([
    [
      { ignoredWorkloadTypes: [], isArgoRollouts: false, isOpenshift: 'auto' as const },
      ['Deployment', 'DaemonSet', 'StatefulSet', 'CronJob', 'Job'],
      ['DeploymentConfig'],
    ],
    [
      {
        ignoredWorkloadTypes: ['jobs', 'cronjobs'],
        isArgoRollouts: true,
        isOpenshift: 'true' as const,
      },
      ['Deployment', 'DaemonSet', 'StatefulSet'],
      ['Rollout', 'DeploymentConfig'],
    ],
    [
      { ignoredWorkloadTypes: [], isArgoRollouts: true, isOpenshift: 'false' as const },
      ['Deployment', 'DaemonSet', 'StatefulSet', 'CronJob', 'Job'],
      ['Rollout'],
    ],
  ])('kinds %j', (options, always, ifServed) => {
    // Only the kinds of this table: a kind added later is checked from its row (kind-rows.test.ts).
    const tabled = new Set<string>([
      ...['Deployment', 'DaemonSet', 'StatefulSet', 'CronJob', 'Job'],
      ...['Rollout', 'DeploymentConfig'],
    ]);
    const planned = plannedKinds(options, BUILT_IN_KIND_TABLE);
    expect({
      always: planned.always.filter((kind) => tabled.has(kind)),
      ifServed: planned.ifServed.filter((kind) => tabled.has(kind)),
    }).toEqual({ always, ifServed });
  });
});
