import { parseCustomKinds } from '../config/custom-kinds.ts';
import { describe, expect, it } from 'vitest';
import { kindRow } from '../rollout/kinds.ts';
import type { WorkloadKind } from '../core/types.ts';
import {
  BASELINE,
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  SNAPSHOTS,
  RESTART_WINDOW,
  PENDING_ROLL,
  ROLLOUT_HALTED,
  ROLLOUT_FAILED,
  ROLLOUT_PRIORITY,
  POD_ROLLOUT_STRATEGY,
  EVICT_BEFORE,
  FLAP_COOL_DOWN,
  FLAP_MAX_CHANGES,
  FLAP_PERIOD,
  HALT_ON_FAILED_ROLLOUT,
  UNDO_FAILED_ROLLOUT,
  CRONJOB_INSTANTIATE,
  DEFAULT_ANNOTATION_KEYS,
  INSTANTIATE_PENDING,
  LAST_RELOADED_FROM,
  SOURCE_HASHES,
} from '../core/types.ts';
import { projectWorkload } from './workload-projection.ts';
import { keptWorkloadKeys } from '../core/annotations.ts';

const KEYS = DEFAULT_ANNOTATION_KEYS;
const SETTINGS = { keys: KEYS, keepLabels: false };
const KEY_VALUES = Object.values(KEYS).filter((v: unknown): v is string => typeof v === 'string');

const POD_SPEC = {
  initContainers: [
    {
      name: 'init',
      envFrom: [{ secretRef: { name: 'init-secret' } }],
    },
  ],
  containers: [
    {
      name: 'app',
      image: 'nginx',
      env: [
        { name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: 'abc' },
        { name: 'STAKATER_FROM_FIELD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'PLAIN', value: 'x' },
        { name: 'CM_KEY', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k' } } },
        { name: 'SECRET_KEY', valueFrom: { secretKeyRef: { name: 'secret-env', key: 'k' } } },
        { name: 'CM_KEY2', valueFrom: { configMapKeyRef: { name: 'cm-env', key: 'k2' } } },
      ],
      envFrom: [{ configMapRef: { name: 'cm-from' } }, { secretRef: { name: 'secret-from' } }],
      volumeMounts: [
        { name: 'config', mountPath: '/etc/config' },
        { name: 'creds', mountPath: '/etc/creds' },
      ],
    },
    { name: 'sidecar' },
  ],
  volumes: [
    { name: 'config', configMap: { name: 'cm-vol' } },
    { name: 'creds', secret: { secretName: 'secret-vol' } },
    {
      name: 'bundle',
      projected: {
        sources: [
          { configMap: { name: 'cm-proj' } },
          { secret: { name: 'secret-proj' } },
          { downwardAPI: { items: [] } },
        ],
      },
    },
    {
      name: 'vault',
      csi: { driver: 'secrets-store.csi.k8s.io', volumeAttributes: { secretProviderClass: 'spc' } },
    },
    { name: 'scratch', emptyDir: {} },
  ],
};

const EXPECTED_POD_SPEC = {
  initContainers: [
    {
      name: 'init',
      stakaterEnv: {},
      envConfigMaps: [],
      envSecrets: ['init-secret'],
      volumeMounts: [],
    },
  ],
  containers: [
    {
      name: 'app',
      stakaterEnv: { STAKATER_APP_CONFIG_CONFIGMAP: 'abc' },
      envConfigMaps: ['cm-env', 'cm-from'],
      envSecrets: ['secret-env', 'secret-from'],
      volumeMounts: ['config', 'creds'],
    },
    { name: 'sidecar', stakaterEnv: {}, envConfigMaps: [], envSecrets: [], volumeMounts: [] },
  ],
  volumes: [
    { name: 'config', configMaps: ['cm-vol'], secrets: [], secretProviderClass: undefined },
    { name: 'creds', configMaps: [], secrets: ['secret-vol'], secretProviderClass: undefined },
    {
      name: 'bundle',
      configMaps: ['cm-proj'],
      secrets: ['secret-proj'],
      secretProviderClass: undefined,
    },
    { name: 'vault', configMaps: [], secrets: [], secretProviderClass: 'spc' },
    { name: 'scratch', configMaps: [], secrets: [], secretProviderClass: undefined },
  ],
};

const ANNOTATIONS = {
  [KEYS.auto]: 'true',
  [KEYS.configmapReload]: 'a,b',
  [KEYS.pausePeriod]: '5m',
  [KEYS.pausedAt]: '2026-01-02T03:04:05Z',
  [SOURCE_HASHES]: '{}',
  [BASELINE]: '{}',
  'kubectl.kubernetes.io/last-applied-configuration': '{"big":"blob"}',
  'deployment.kubernetes.io/revision': '3',
};

const KEPT_ANNOTATIONS = {
  [KEYS.auto]: 'true',
  [KEYS.configmapReload]: 'a,b',
  [KEYS.pausePeriod]: '5m',
  [KEYS.pausedAt]: '2026-01-02T03:04:05Z',
  [SOURCE_HASHES]: '{}',
  [BASELINE]: '{}',
};

const TEMPLATE = {
  metadata: {
    labels: { app: 'x' },
    annotations: {
      [LAST_RELOADED_FROM]: '{"type":"CONFIGMAP"}',
      [KEYS.search]: 'true',
      other: 'y',
    },
  },
  spec: POD_SPEC,
};

function metadata(): Record<string, unknown> {
  return {
    name: 'w',
    namespace: 'ns',
    uid: 'uid-w',
    resourceVersion: '7',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: ANNOTATIONS,
    managedFields: [{ manager: 'kubectl' }],
    ownerReferences: [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-controller', uid: 'o-0' },
      { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'o-1', controller: true },
    ],
  };
}

const NO_STATUS_YET = { observedGeneration: undefined, updated: 0 } as const;

const KIND_CASES: readonly [WorkloadKind, Record<string, unknown>, Record<string, unknown>][] = [
  [
    'Deployment',
    { paused: true, replicas: 3, template: TEMPLATE },
    {
      paused: true,
      rolloutStatus: {
        model: 'replica-set',
        ...NO_STATUS_YET,
        desired: 3,
        replicas: 3,
        available: 0,
        unavailable: 0,
        progressing: undefined,
      },
    },
  ],
  [
    'DaemonSet',
    { paused: true, template: TEMPLATE },
    {
      paused: false,
      rolloutStatus: {
        model: 'daemon-set',
        ...NO_STATUS_YET,
        desired: 0,
        available: 0,
        unavailable: 0,
        onDelete: false,
      },
    },
  ],
  [
    'StatefulSet',
    { template: TEMPLATE },
    {
      rolloutStatus: {
        model: 'stateful-set',
        ...NO_STATUS_YET,
        desired: 1,
        ready: 0,
        currentRevision: undefined,
        updateRevision: undefined,
        partition: 0,
        onDelete: false,
      },
    },
  ],
  [
    'CronJob',
    { suspend: true, schedule: '* * * * *', jobTemplate: { spec: { template: TEMPLATE } } },
    { suspended: true },
  ],
  ['Job', { manualSelector: true, template: TEMPLATE }, { manualSelector: true }],
  [
    'Rollout',
    { template: TEMPLATE },
    {
      rolloutStatus: {
        model: 'rollout-phase',
        observedGeneration: undefined,
        phase: undefined,
        message: undefined,
      },
    },
  ],
  [
    'DeploymentConfig',
    {
      paused: true,
      triggers: [{ type: 'ImageChange' }, { type: 'ConfigChange' }],
      template: TEMPLATE,
    },
    {
      paused: true,
      hasConfigChangeTrigger: true,
      rolloutStatus: {
        model: 'replica-set',
        ...NO_STATUS_YET,
        desired: 1,
        replicas: 3,
        available: 0,
        unavailable: 0,
        progressing: undefined,
      },
    },
  ],
];

describe('projectWorkload: rollout status', () => {
  it('keeps the Deployment counts and the Progressing condition, nothing else', () => {
    const view = projectWorkload(
      kindRow('Deployment'),
      {
        metadata: metadata(),
        spec: { replicas: 2, progressDeadlineSeconds: 120, template: TEMPLATE },
        status: {
          observedGeneration: 3,
          replicas: 3,
          updatedReplicas: 1,
          readyReplicas: 2,
          availableReplicas: 2,
          unavailableReplicas: 1,
          conditions: [
            { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'x',
            },
          ],
        },
      },
      SETTINGS,
    );
    expect(view?.rolloutStatus).toEqual({
      model: 'replica-set',
      observedGeneration: 3,
      desired: 2,
      replicas: 3,
      updated: 1,
      available: 2,
      unavailable: 1,
      progressing: { status: 'False', reason: 'ProgressDeadlineExceeded' },
      progressDeadlineSeconds: 120,
    });
  });

  it('reads a StatefulSet partition and an OnDelete strategy', () => {
    const view = projectWorkload(
      kindRow('StatefulSet'),
      {
        metadata: metadata(),
        spec: {
          replicas: 3,
          updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 2 } },
          template: TEMPLATE,
        },
        status: { currentRevision: 'a', updateRevision: 'b', updatedReplicas: 1, readyReplicas: 3 },
      },
      SETTINGS,
    );
    expect(view?.rolloutStatus).toMatchObject({ partition: 2, onDelete: true, ready: 3 });
  });

  it('keeps at most 256 characters of a status text another controller wrote', () => {
    const huge = 'x'.repeat(1_000_000);
    const view = projectWorkload(
      kindRow('Rollout'),
      {
        metadata: metadata(),
        spec: { template: TEMPLATE },
        status: { phase: 'Degraded', message: huge },
      },
      SETTINGS,
    );
    expect(view?.rolloutStatus).toMatchObject({
      phase: 'Degraded',
      message: `${'x'.repeat(256)}…`,
    });
    const deployment = projectWorkload(
      kindRow('Deployment'),
      {
        metadata: metadata(),
        spec: { template: TEMPLATE },
        status: { conditions: [{ type: 'Progressing', status: 'False', reason: huge }] },
      },
      SETTINGS,
    );
    expect(deployment?.rolloutStatus).toMatchObject({
      progressing: { status: 'False', reason: `${'x'.repeat(256)}…` },
    });
  });

  it.each([
    ['7', 7],
    [7, 7],
    ['abc', undefined],
    ['1e400', undefined],
  ])('reads an Argo Rollout observedGeneration %j as %j', (observed, expected) => {
    const view = projectWorkload(
      kindRow('Rollout'),
      {
        metadata: metadata(),
        spec: { template: TEMPLATE },
        status: { observedGeneration: observed },
      },
      SETTINGS,
    );
    expect(view?.rolloutStatus).toMatchObject({ observedGeneration: expected });
  });
});

describe('projectWorkload', () => {
  it.each(KIND_CASES)('%s', (kind, spec, flags) => {
    const view = projectWorkload(
      kindRow(kind),
      { metadata: metadata(), spec, status: { replicas: 3 } },
      SETTINGS,
    );
    expect(view).toEqual({
      ref: { kind, namespace: 'ns', name: 'w' },
      uid: 'uid-w',
      resourceVersion: '7',
      generation: 3,
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations: KEPT_ANNOTATIONS,
      templateAnnotations: { [LAST_RELOADED_FROM]: '{"type":"CONFIGMAP"}', [KEYS.search]: 'true' },
      podSpec: EXPECTED_POD_SPEC,
      controller: { apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'o-1' },
      paused: false,
      suspended: false,
      manualSelector: false,
      hasWorkloadRef: false,
      hasConfigChangeTrigger: false,
      ...flags,
    });
  });

  it('a Rollout with workloadRef has no containers', () => {
    const view = projectWorkload(
      kindRow('Rollout'),
      {
        metadata: metadata(),
        spec: { workloadRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' } },
      },
      SETTINGS,
    );
    expect(view).toMatchObject({
      hasWorkloadRef: true,
      podSpec: { containers: [], initContainers: [], volumes: [] },
      templateAnnotations: {},
    });
  });

  it('a DeploymentConfig without a ConfigChange trigger says so', () => {
    const view = projectWorkload(
      kindRow('DeploymentConfig'),
      { metadata: metadata(), spec: { triggers: [{ type: 'ImageChange' }], template: TEMPLATE } },
      SETTINGS,
    );
    expect(view?.hasConfigChangeTrigger).toBe(false);
  });

  it('keeps overridden annotation keys and drops the defaults they replace', () => {
    const keys = { ...KEYS, auto: 'example.com/auto' };
    const wire = {
      metadata: { ...metadata(), annotations: { 'example.com/auto': 'true', [KEYS.auto]: 'true' } },
      spec: { template: TEMPLATE },
    };
    expect(
      projectWorkload(kindRow('Deployment'), wire, { keys, keepLabels: false })?.annotations,
    ).toEqual({
      'example.com/auto': 'true',
    });
  });

  it('carries no ownerReference that is not a controller, and tolerates missing fields', () => {
    const view = projectWorkload(
      kindRow('StatefulSet'),
      { metadata: { name: 'w', namespace: 'ns', uid: 'u' } },
      SETTINGS,
    );
    expect(view).toMatchObject({
      resourceVersion: '',
      generation: undefined,
      controller: undefined,
      annotations: {},
      podSpec: { containers: [], initContainers: [], volumes: [] },
    });
  });

  it('names the live sources of the snapshots the template references (ADR 0036)', () => {
    const template = {
      metadata: {
        annotations: { [SNAPSHOTS]: '{"configmap/cm":"cm-0123456789","secret/s":"s-0123456789"}' },
      },
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm-0123456789', key: 'k' } } },
            ],
            envFrom: [{ secretRef: { name: 's-0123456789' } }, { configMapRef: { name: 'other' } }],
            volumeMounts: [{ name: 'v' }],
          },
        ],
        initContainers: [{ name: 'init', envFrom: [{ configMapRef: { name: 's-0123456789' } }] }],
        volumes: [
          {
            name: 'v',
            projected: {
              sources: [
                { configMap: { name: 'cm-0123456789' } },
                { secret: { name: 's-0123456789' } },
              ],
            },
          },
        ],
      },
    };
    const view = projectWorkload(
      kindRow('Deployment'),
      { metadata: metadata(), spec: { template } },
      SETTINGS,
    );
    expect(view?.podSpec).toEqual({
      containers: [
        {
          name: 'app',
          stakaterEnv: {},
          envConfigMaps: ['cm', 'other'],
          envSecrets: ['s'],
          volumeMounts: ['v'],
        },
      ],
      // A ConfigMap named like a Secret's snapshot is not that snapshot.
      initContainers: [
        {
          name: 'init',
          stakaterEnv: {},
          envConfigMaps: ['s-0123456789'],
          envSecrets: [],
          volumeMounts: [],
        },
      ],
      volumes: [{ name: 'v', configMaps: ['cm'], secrets: ['s'], secretProviderClass: undefined }],
    });
    expect(view?.templateAnnotations[SNAPSHOTS]).toBeDefined();
    expect(view?.revisionDigest).toBeUndefined();
    const labelled = projectWorkload(
      kindRow('Deployment'),
      {
        metadata: { ...metadata(), labels: { 'kreload.io/revision-digest': 'abc' } },
        spec: { template },
      },
      SETTINGS,
    );
    expect(labelled?.revisionDigest).toBe('abc');
  });

  it('is undefined without a uid', () => {
    expect(
      projectWorkload(
        kindRow('Deployment'),
        { metadata: { name: 'w', namespace: 'ns' } },
        SETTINGS,
      ),
    ).toBeUndefined();
  });
});

describe('keptWorkloadKeys', () => {
  it('is every configured key plus the keys kreload writes', () => {
    const kept = keptWorkloadKeys(KEYS);
    expect(kept).toEqual(
      expect.arrayContaining([
        ...KEY_VALUES,
        LAST_RELOADED_FROM,
        SOURCE_HASHES,
        BASELINE,
        CRONJOB_INSTANTIATE,
        INSTANTIATE_PENDING,
        CONFIG_REVISIONS,
        CONFIG_REVISIONS_SECRETS,
        SNAPSHOTS,
        RESTART_WINDOW,
        PENDING_ROLL,
        ROLLOUT_PRIORITY,
        ROLLOUT_HALTED,
        ROLLOUT_FAILED,
        POD_ROLLOUT_STRATEGY,
        EVICT_BEFORE,
        HALT_ON_FAILED_ROLLOUT,
        UNDO_FAILED_ROLLOUT,
        FLAP_MAX_CHANGES,
        FLAP_PERIOD,
        FLAP_COOL_DOWN,
      ]),
    );
    expect(kept).toHaveLength(KEY_VALUES.length + 20);
  });
});

describe('a configured kind (docs/custom-kinds.md)', () => {
  const WIDGET = parseCustomKinds(
    JSON.stringify([
      {
        group: 'example.kreload.io',
        version: 'v1',
        kind: 'Widget',
        resource: 'widgets',
        podTemplatePath: 'spec.pod',
        replicasPath: 'spec.size',
        status: {
          observedGeneration: 'status.seen',
          updatedReplicas: 'status.counts.updated',
          availableReplicas: 'status.counts.ready',
        },
      },
    ]),
  )[0];

  it('reads its template and its status where its row says', () => {
    if (WIDGET === undefined) throw new Error('no Widget row');
    const view = projectWorkload(
      WIDGET,
      {
        metadata: { name: 'w', namespace: 'ns', uid: 'u', resourceVersion: '3', generation: 4 },
        spec: {
          size: 3,
          pod: {
            spec: { containers: [{ name: 'app', envFrom: [{ configMapRef: { name: 'cfg' } }] }] },
          },
        },
        status: { seen: 4, counts: { updated: 2, ready: 1 } },
      },
      SETTINGS,
    );
    expect(view?.ref).toEqual({ kind: 'Widget', namespace: 'ns', name: 'w' });
    expect(view?.podSpec.containers[0]?.envConfigMaps).toEqual(['cfg']);
    expect(view?.rolloutStatus).toEqual({
      model: 'replica-set',
      observedGeneration: 4,
      desired: 3,
      replicas: 2,
      updated: 2,
      available: 1,
      unavailable: 2,
      progressing: undefined,
    });
  });
});
