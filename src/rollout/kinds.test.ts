import { describe, expect, it } from 'vitest';
import type { OwnerView, WorkloadKind } from '../core/types.ts';
import { POD_ROLLOUT_STRATEGY } from '../core/types.ts';
import type { WorkloadKindRow } from './kinds.ts';
import {
  appliedStatePlacement,
  isReconciled,
  kindRow,
  recreatedKindRow,
  rollActionOf,
  rollsByRecreation,
  UnsupportedKindError,
  WORKLOAD_KINDS,
} from './kinds.ts';

const ROLLOUT_STRATEGY = 'reloader.stakater.com/rollout-strategy';

type Axes = Omit<WorkloadKindRow, 'kind' | 'group' | 'version' | 'plural'>;

const TEMPLATE = ['spec', 'template'];

/** §2.2 and §7, one line per kind: the table the code must match. */
const EXPECTED: readonly (readonly [WorkloadKind, string, Axes])[] = [
  [
    'Deployment',
    'deployments',
    {
      liveRevision: 'revision-annotation',
      absentApiWarning: undefined,
      shortNames: ['deploy'],
      apiVersion: 'apps/v1',
      templatePath: TEMPLATE,
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: true,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: undefined,
      notReconciledWhenControlledBy: undefined,
      specFlags: ['paused'],
      optionalApi: false,
      enabledByOption: undefined,
      ignorable: false,
      revisionKind: 'ReplicaSet',
      health: 'replica-set',
      statusPaths: undefined,
      configured: false,
      podEviction: {
        owners: 'replica-sets',
        selectorPath: ['spec', 'selector'],
        desiredPath: ['spec', 'replicas'],
        maxUnavailablePath: ['spec', 'strategy', 'rollingUpdate', 'maxUnavailable'],
      },
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          { group: '', resource: 'pods', verbs: ['get', 'list'], onlyFor: 'evict-pods' },
          { group: '', resource: 'pods/eviction', verbs: ['create'], onlyFor: 'evict-pods' },
          { group: 'apps', resource: 'replicasets', verbs: ['list'], onlyFor: 'evict-pods' },
        ],
      },
    },
  ],
  [
    'DaemonSet',
    'daemonsets',
    {
      liveRevision: 'newest',
      absentApiWarning: undefined,
      shortNames: ['ds'],
      apiVersion: 'apps/v1',
      templatePath: TEMPLATE,
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: undefined,
      notReconciledWhenControlledBy: undefined,
      specFlags: [],
      optionalApi: false,
      enabledByOption: undefined,
      ignorable: false,
      revisionKind: 'ControllerRevision',
      health: 'daemon-set',
      statusPaths: undefined,
      configured: false,
      podEviction: {
        owners: 'direct',
        selectorPath: ['spec', 'selector'],
        desiredPath: ['status', 'desiredNumberScheduled'],
        maxUnavailablePath: ['spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable'],
      },
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          { group: '', resource: 'pods', verbs: ['get', 'list'], onlyFor: 'evict-pods' },
          { group: '', resource: 'pods/eviction', verbs: ['create'], onlyFor: 'evict-pods' },
        ],
      },
    },
  ],
  [
    'StatefulSet',
    'statefulsets',
    {
      liveRevision: 'update-revision',
      absentApiWarning: undefined,
      shortNames: ['sts'],
      apiVersion: 'apps/v1',
      templatePath: TEMPLATE,
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: undefined,
      notReconciledWhenControlledBy: undefined,
      specFlags: [],
      optionalApi: false,
      enabledByOption: undefined,
      ignorable: false,
      revisionKind: 'ControllerRevision',
      health: 'stateful-set',
      statusPaths: undefined,
      configured: false,
      podEviction: {
        owners: 'direct',
        selectorPath: ['spec', 'selector'],
        desiredPath: ['spec', 'replicas'],
        maxUnavailablePath: ['spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable'],
      },
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          { group: '', resource: 'pods', verbs: ['get', 'list'], onlyFor: 'evict-pods' },
          { group: '', resource: 'pods/eviction', verbs: ['create'], onlyFor: 'evict-pods' },
        ],
      },
    },
  ],
  [
    'CronJob',
    'cronjobs',
    {
      liveRevision: 'newest',
      absentApiWarning: undefined,
      shortNames: ['cj'],
      apiVersion: 'batch/v1',
      templatePath: ['spec', 'jobTemplate', 'spec', 'template'],
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'W',
      supportsRestartStrategy: false,
      rollAction: 'create-job-from-cronjob',
      rollsOnDelete: false,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: 'Job',
      notReconciledWhenControlledBy: undefined,
      specFlags: ['suspended'],
      optionalApi: false,
      enabledByOption: undefined,
      ignorable: true,
      revisionKind: undefined,
      health: undefined,
      statusPaths: undefined,
      configured: false,
      podEviction: undefined,
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [{ group: 'batch', resource: 'jobs', verbs: ['create'] }],
      },
    },
  ],
  [
    'Job',
    'jobs',
    {
      liveRevision: 'newest',
      absentApiWarning: undefined,
      shortNames: [],
      apiVersion: 'batch/v1',
      templatePath: TEMPLATE,
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'recreate-job',
      rollsOnDelete: false,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: undefined,
      notReconciledWhenControlledBy: 'CronJob',
      specFlags: ['manualSelector'],
      optionalApi: false,
      enabledByOption: undefined,
      ignorable: true,
      revisionKind: undefined,
      health: undefined,
      statusPaths: undefined,
      configured: false,
      podEviction: undefined,
      rbac: { verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'], also: [] },
    },
  ],
  [
    'Rollout',
    'rollouts',
    {
      liveRevision: 'newest',
      absentApiWarning: 'Argo Rollouts API is not served; Rollouts are not watched until it is',
      shortNames: ['ro'],
      apiVersion: 'argoproj.io/v1alpha1',
      templatePath: TEMPLATE,
      templatePatchType: 'merge',
      metadataPatchType: 'merge',
      appliedState: 'PT',
      supportsRestartStrategy: true,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: false,
      runKind: undefined,
      notReconciledWhenControlledBy: undefined,
      specFlags: ['hasWorkloadRef'],
      optionalApi: true,
      enabledByOption: 'isArgoRollouts',
      ignorable: false,
      revisionKind: undefined,
      health: 'rollout-phase',
      statusPaths: undefined,
      configured: false,
      podEviction: {
        owners: 'replica-sets',
        selectorPath: ['spec', 'selector'],
        desiredPath: ['spec', 'replicas'],
        maxUnavailablePath: ['spec', 'strategy', 'canary', 'maxUnavailable'],
      },
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          { group: '', resource: 'pods', verbs: ['get', 'list'], onlyFor: 'evict-pods' },
          { group: '', resource: 'pods/eviction', verbs: ['create'], onlyFor: 'evict-pods' },
          { group: 'apps', resource: 'replicasets', verbs: ['list'], onlyFor: 'evict-pods' },
        ],
      },
    },
  ],
  [
    'DeploymentConfig',
    'deploymentconfigs',
    {
      liveRevision: 'newest',
      absentApiWarning: undefined,
      shortNames: ['dc'],
      apiVersion: 'apps.openshift.io/v1',
      templatePath: TEMPLATE,
      templatePatchType: 'strategic',
      metadataPatchType: 'strategic',
      appliedState: 'PT',
      supportsRestartStrategy: false,
      rollAction: 'template-patch',
      rollsOnDelete: true,
      supportsPausePeriod: false,
      instantiatesWithoutConfigChangeTrigger: true,
      runKind: undefined,
      notReconciledWhenControlledBy: undefined,
      specFlags: ['paused', 'hasConfigChangeTrigger'],
      optionalApi: true,
      enabledByOption: 'isOpenshift',
      ignorable: false,
      revisionKind: undefined,
      health: 'replica-set',
      statusPaths: undefined,
      configured: false,
      podEviction: undefined,
      rbac: {
        verbs: ['get', 'list', 'watch', 'patch'],
        also: [
          {
            group: 'apps.openshift.io',
            resource: 'deploymentconfigs/instantiate',
            verbs: ['create'],
          },
        ],
      },
    },
  ],
];

describe('WORKLOAD_KINDS', () => {
  it.each(EXPECTED)('%s (%s)', (kind, plural, axes) => {
    const row = kindRow(kind);
    const [group = '', version = ''] = axes.apiVersion.split('/');
    expect(row).toEqual({ kind, plural, group, version, ...axes });
  });

  it('has one row per kind, in the order of this table for the kinds it lists', () => {
    const kinds = WORKLOAD_KINDS.map((row) => row.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    const listed = new Set<string>(EXPECTED.map(([kind]) => kind));
    expect(kinds.filter((kind) => listed.has(kind))).toEqual(EXPECTED.map(([kind]) => kind));
  });

  it('reports unknown kinds', () => {
    // A value outside the union can only come from a wiring bug.
    expect(() => kindRow('ReplicaSet' as WorkloadKind)).toThrow(UnsupportedKindError);
  });
});

describe('appliedStatePlacement and rollActionOf', () => {
  it.each([
    ['Deployment ignores rollout-strategy', 'Deployment', 'restart', 'PT', 'template-patch'],
    ['Rollout default strategy', 'Rollout', undefined, 'PT', 'template-patch'],
    ['Rollout rollout strategy', 'Rollout', 'rollout', 'PT', 'template-patch'],
    ['Rollout unknown strategy', 'Rollout', 'Restart', 'PT', 'template-patch'],
    ['Rollout restart strategy', 'Rollout', 'restart', 'W', 'rollout-restart'],
    ['CronJob', 'CronJob', undefined, 'W', 'create-job-from-cronjob'],
    ['Job', 'Job', 'restart', 'PT', 'recreate-job'],
  ] as const)('%s', (_name, kind, strategy, placement, action) => {
    const annotations: Record<string, string> =
      strategy === undefined ? {} : { [ROLLOUT_STRATEGY]: strategy };
    expect(appliedStatePlacement(kindRow(kind), annotations, ROLLOUT_STRATEGY)).toBe(placement);
    expect(rollActionOf(kindRow(kind), annotations, ROLLOUT_STRATEGY)).toBe(action);
  });

  it.each([
    ['Deployment', 'evict', 'W', 'evict-pods'],
    ['StatefulSet', 'evict', 'W', 'evict-pods'],
    ['DaemonSet', 'evict', 'W', 'evict-pods'],
    ['Rollout', 'evict', 'W', 'evict-pods'],
    ['Deployment', 'Evict', 'PT', 'template-patch'],
    ['CronJob', 'evict', 'W', 'create-job-from-cronjob'],
    ['Job', 'evict', 'PT', 'recreate-job'],
    ['DeploymentConfig', 'evict', 'PT', 'template-patch'],
  ] as const)('kreload.io/rollout-strategy: %s with %s', (kind, value, placement, action) => {
    const annotations = { [POD_ROLLOUT_STRATEGY]: value };
    expect(appliedStatePlacement(kindRow(kind), annotations, ROLLOUT_STRATEGY)).toBe(placement);
    expect(rollActionOf(kindRow(kind), annotations, ROLLOUT_STRATEGY)).toBe(action);
  });
});

describe('isReconciled', () => {
  const owner = (kind: string): OwnerView => ({
    apiVersion: 'batch/v1',
    kind,
    name: 'o',
    uid: 'u',
  });

  it.each([
    ['Job without controller', 'Job', undefined, true],
    ['Job controlled by a CronJob', 'Job', owner('CronJob'), false],
    ['Job controlled by something else', 'Job', owner('Workflow'), true],
    ['Deployment controlled by a CronJob-named kind', 'Deployment', owner('CronJob'), true],
  ] as const)('%s', (_name, kind, controller, expected) => {
    expect(isReconciled(kindRow(kind), controller)).toBe(expected);
  });
});

describe('rollsByRecreation and recreatedKindRow', () => {
  it.each([
    ['Deployment', false],
    ['DaemonSet', false],
    ['StatefulSet', false],
    ['CronJob', false],
    ['Job', true],
    ['Rollout', false],
    ['DeploymentConfig', false],
  ] as const)('%s rolls by re-creation: %s', (kind, expected) => {
    expect(rollsByRecreation(kindRow(kind))).toBe(expected);
  });

  it('the journal holds entries of the one kind rolled by re-creation', () => {
    expect(WORKLOAD_KINDS.filter(rollsByRecreation)).toEqual([recreatedKindRow()]);
    expect(recreatedKindRow()).toMatchObject({ kind: 'Job', apiVersion: 'batch/v1' });
  });
});
