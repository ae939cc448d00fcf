import { describe, expect, it } from 'vitest';
import type { ContainerView, PodSpecView } from '../core/types.ts';
import { kindRow, WORKLOAD_KINDS } from './kinds.ts';
import type { JsonValue } from '../core/json.ts';
import type { WorkloadChanges } from './patch.ts';
import {
  buildPatch,
  buildRestartPatch,
  deploymentRequest,
  needsLiveContainers,
  rfc3339Seconds,
  UnsupportedPatchError,
} from './patch.ts';

const CM_HASH = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const SECRET_HASH = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';

function container(name: string): ContainerView {
  return { name, stakaterEnv: {}, envConfigMaps: [], envSecrets: [], volumeMounts: [] };
}

function view(...names: string[]): { resourceVersion: string; podSpec: PodSpecView } {
  return {
    resourceVersion: '48213',
    podSpec: { containers: names.map(container), initContainers: [], volumes: [] },
  };
}

/** The spec writes its examples over several lines; the wire form has no whitespace. */
function compact(json: string): string {
  return JSON.stringify(JSON.parse(json));
}

const deployment = kindRow('Deployment');

describe('buildPatch', () => {
  it('writes the §6.1 env-vars example byte for byte', () => {
    const changes: WorkloadChanges = {
      envWrites: [{ container: 'app', name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: CM_HASH }],
      baseline: `{"secret/db":"${SECRET_HASH}"}`,
    };
    const patch = buildPatch(deployment, view('app'), changes);
    expect(patch?.type).toBe('strategic');
    expect(JSON.stringify(patch?.body)).toBe(
      compact(`{"metadata":{"resourceVersion":"48213",
                "annotations":{"kreload.io/baseline":"{\\"secret/db\\":\\"d93dd00779cd04e2ec1db21fa3d0e20deea13f9c\\"}"}},
    "spec":{"template":{"spec":{"containers":[
      {"name":"app","env":[{"name":"STAKATER_APP_CONFIG_CONFIGMAP","value":"dc30e0faa89a70dec1033016a2309bbeb9efcbd0"}]}]}}}}`),
    );
  });

  it('writes the §6.2 annotations example byte for byte', () => {
    const lastReloadedFrom = `{"type":"CONFIGMAP","name":"app-config","namespace":"team-a","hash":"${CM_HASH}","containerRefs":["app"],"observedAt":1767225600}`;
    const changes: WorkloadChanges = {
      envWrites: [],
      baseline: null,
      lastReloadedFrom,
      templateSourceHashes: `{"configmap/app-config":"${CM_HASH}","secret/db":"${SECRET_HASH}"}`,
    };
    const patch = buildPatch(deployment, view('app'), changes);
    expect(patch?.type).toBe('strategic');
    expect(JSON.stringify(patch?.body)).toBe(
      compact(`{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/baseline":null}},
    "spec":{"template":{"metadata":{"annotations":{
      "reloader.stakater.com/last-reloaded-from":"{\\"type\\":\\"CONFIGMAP\\",\\"name\\":\\"app-config\\",\\"namespace\\":\\"team-a\\",\\"hash\\":\\"dc30e0faa89a70dec1033016a2309bbeb9efcbd0\\",\\"containerRefs\\":[\\"app\\"],\\"observedAt\\":1767225600}",
      "kreload.io/source-hashes":"{\\"configmap/app-config\\":\\"dc30e0faa89a70dec1033016a2309bbeb9efcbd0\\",\\"secret/db\\":\\"d93dd00779cd04e2ec1db21fa3d0e20deea13f9c\\"}"}}}}}`),
    );
  });

  it('sends a baseline alone as a metadata-only patch', () => {
    const patch = buildPatch(kindRow('StatefulSet'), view('app'), {
      envWrites: [],
      baseline: `{"configmap/a":"${CM_HASH}"}`,
    });
    expect(patch).toEqual({
      type: 'strategic',
      body: {
        metadata: {
          resourceVersion: '48213',
          annotations: { 'kreload.io/baseline': `{"configmap/a":"${CM_HASH}"}` },
        },
      },
    });
  });

  it('removes an emptied map with null', () => {
    const patch = buildPatch(kindRow('DaemonSet'), view('app'), { envWrites: [], baseline: null });
    expect(JSON.stringify(patch?.body)).toBe(
      '{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/baseline":null}}}',
    );
  });

  it('orders containers as in the pod spec and env vars by name, whatever the input order', () => {
    const patch = buildPatch(deployment, view('main', 'sidecar'), {
      envWrites: [
        { container: 'sidecar', name: 'STAKATER_B_SECRET', value: SECRET_HASH },
        { container: 'main', name: 'STAKATER_Z_CONFIGMAP', value: CM_HASH },
        { container: 'main', name: 'STAKATER_A_CONFIGMAP', value: CM_HASH },
      ],
    });
    expect(patch?.body).toEqual({
      metadata: { resourceVersion: '48213' },
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'main',
                env: [
                  { name: 'STAKATER_A_CONFIGMAP', value: CM_HASH },
                  { name: 'STAKATER_Z_CONFIGMAP', value: CM_HASH },
                ],
              },
              { name: 'sidecar', env: [{ name: 'STAKATER_B_SECRET', value: SECRET_HASH }] },
            ],
          },
        },
      },
    });
    expect(JSON.stringify(patch?.body)).toBe(
      JSON.stringify(
        buildPatch(deployment, view('main', 'sidecar'), {
          envWrites: [
            { container: 'main', name: 'STAKATER_A_CONFIGMAP', value: CM_HASH },
            { container: 'main', name: 'STAKATER_Z_CONFIGMAP', value: CM_HASH },
            { container: 'sidecar', name: 'STAKATER_B_SECRET', value: SECRET_HASH },
          ],
        })?.body,
      ),
    );
  });

  it('carries the collision state next to the env var in one template change (§6.3)', () => {
    const patch = buildPatch(deployment, view('app'), {
      envWrites: [{ container: 'app', name: 'STAKATER_MY_CONFIG_CONFIGMAP', value: CM_HASH }],
      templateSourceHashes: `{"configmap/my-config":"${CM_HASH}"}`,
    });
    expect(patch?.body).toEqual({
      metadata: { resourceVersion: '48213' },
      spec: {
        template: {
          metadata: {
            annotations: { 'kreload.io/source-hashes': `{"configmap/my-config":"${CM_HASH}"}` },
          },
          spec: {
            containers: [
              { name: 'app', env: [{ name: 'STAKATER_MY_CONFIG_CONFIGMAP', value: CM_HASH }] },
            ],
          },
        },
      },
    });
  });

  it('puts W source-hashes and baseline together in metadata', () => {
    const patch = buildPatch(deployment, view('app'), {
      envWrites: [],
      workloadSourceHashes: `{"configmap/a":"${CM_HASH}"}`,
      baseline: null,
    });
    expect(JSON.stringify(patch?.body)).toBe(
      `{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/baseline":null,"kreload.io/source-hashes":"{\\"configmap/a\\":\\"${CM_HASH}\\"}"}}}`,
    );
  });

  it('returns undefined when nothing changes', () => {
    expect(buildPatch(deployment, view('app'), { envWrites: [] })).toBeUndefined();
  });

  it('refuses env vars in a merge patch without the live containers, which it would replace', () => {
    expect(() =>
      buildPatch(kindRow('Rollout'), view('app'), {
        envWrites: [{ container: 'app', name: 'STAKATER_A_CONFIGMAP', value: CM_HASH }],
      }),
    ).toThrow(UnsupportedPatchError);
  });

  it('uses the kind template path', () => {
    const cronLike = { ...deployment, templatePath: ['spec', 'jobTemplate', 'spec', 'template'] };
    const patch = buildPatch(cronLike, view('app'), {
      envWrites: [],
      templateSourceHashes: null,
    });
    expect(patch?.body).toEqual({
      metadata: { resourceVersion: '48213' },
      spec: {
        jobTemplate: {
          spec: { template: { metadata: { annotations: { 'kreload.io/source-hashes': null } } } },
        },
      },
    });
  });
});

const ENV_ROLL: WorkloadChanges = {
  envWrites: [{ container: 'app', name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: CM_HASH }],
  baseline: `{"secret/db":"${SECRET_HASH}"}`,
};
const LRF = `{"type":"CONFIGMAP","name":"app-config","namespace":"team-a","hash":"${CM_HASH}","containerRefs":["app"],"observedAt":1767225600}`;
const ANNOTATIONS_ROLL: WorkloadChanges = {
  envWrites: [],
  lastReloadedFrom: LRF,
  templateSourceHashes: `{"configmap/app-config":"${CM_HASH}"}`,
  baseline: null,
};

/** The live containers a Rollout GET returns: every field must survive a merge patch. */
const LIVE_CONTAINERS: JsonValue[] = [
  {
    name: 'app',
    image: 'registry.example/app:1.2.3',
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: SECRET_HASH },
    ],
  },
  { name: 'sidecar', image: 'registry.example/proxy:2' },
];

const TEMPLATE_KINDS = WORKLOAD_KINDS.filter((row) => row.rollAction === 'template-patch');

describe('buildPatch: every template-patching kind × strategy', () => {
  it('covers Deployment, DaemonSet, StatefulSet, Rollout and DeploymentConfig', () => {
    expect(TEMPLATE_KINDS.map((row) => row.kind)).toEqual(
      expect.arrayContaining([
        'Deployment',
        'DaemonSet',
        'StatefulSet',
        'Rollout',
        'DeploymentConfig',
      ]),
    );
  });

  const expectedEnvContainers: Record<string, unknown[]> = {
    strategic: [{ name: 'app', env: [{ name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: CM_HASH }] }],
    // Merge patch: the whole live list, the variable replaced in place.
    merge: [
      {
        name: 'app',
        image: 'registry.example/app:1.2.3',
        env: [
          { name: 'LOG_LEVEL', value: 'info' },
          { name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: CM_HASH },
        ],
      },
      { name: 'sidecar', image: 'registry.example/proxy:2' },
    ],
  };

  it.each(TEMPLATE_KINDS)('$kind env-vars', (row) => {
    const patch = buildPatch(row, view('app', 'sidecar'), ENV_ROLL, {
      containers: LIVE_CONTAINERS,
    });
    expect(patch).toEqual({
      type: row.templatePatchType,
      body: {
        metadata: {
          resourceVersion: '48213',
          annotations: { 'kreload.io/baseline': `{"secret/db":"${SECRET_HASH}"}` },
        },
        spec: {
          template: { spec: { containers: expectedEnvContainers[row.templatePatchType] } },
        },
      },
    });
    expect(needsLiveContainers(row, ENV_ROLL)).toBe(row.templatePatchType === 'merge');
  });

  it.each(TEMPLATE_KINDS)('$kind annotations (no live containers needed)', (row) => {
    expect(needsLiveContainers(row, ANNOTATIONS_ROLL)).toBe(false);
    const patch = buildPatch(row, view('app'), ANNOTATIONS_ROLL);
    expect(patch?.type).toBe(row.templatePatchType);
    expect(JSON.stringify(patch?.body)).toBe(
      JSON.stringify({
        metadata: { resourceVersion: '48213', annotations: { 'kreload.io/baseline': null } },
        spec: {
          template: {
            metadata: {
              annotations: {
                'reloader.stakater.com/last-reloaded-from': LRF,
                'kreload.io/source-hashes': `{"configmap/app-config":"${CM_HASH}"}`,
              },
            },
          },
        },
      }),
    );
  });

  it.each(WORKLOAD_KINDS)('$kind baseline: metadata only, $metadataPatchType', (row) => {
    const patch = buildPatch(row, view('app'), {
      envWrites: [],
      baseline: `{"configmap/a":"${CM_HASH}"}`,
    });
    expect(patch).toEqual({
      type: row.metadataPatchType,
      body: {
        metadata: {
          resourceVersion: '48213',
          annotations: { 'kreload.io/baseline': `{"configmap/a":"${CM_HASH}"}` },
        },
      },
    });
  });

  it('appends a variable the live container lacks, after its other entries', () => {
    const patch = buildPatch(kindRow('Rollout'), view('app'), ENV_ROLL, {
      containers: [{ name: 'app', env: [{ name: 'A', valueFrom: { fieldRef: {} } }] }],
    });
    expect(patch?.body.spec).toEqual({
      template: {
        spec: {
          containers: [
            {
              name: 'app',
              env: [
                { name: 'A', valueFrom: { fieldRef: {} } },
                { name: 'STAKATER_APP_CONFIG_CONFIGMAP', value: CM_HASH },
              ],
            },
          ],
        },
      },
    });
  });
});

const PAUSED_AT = 'deployment.reloader.stakater.com/paused-at';

describe('buildPatch: pause period (§7.2)', () => {
  it('rule 1: the roll pauses in the same patch', () => {
    const patch = buildPatch(deployment, view('app'), {
      ...ENV_ROLL,
      pause: { action: 'pause', pausedAtKey: PAUSED_AT, pausedAt: '2026-01-02T03:04:05Z' },
    });
    expect(patch?.type).toBe('strategic');
    expect(JSON.stringify(patch?.body)).toBe(
      compact(`{"metadata":{"resourceVersion":"48213","annotations":{
        "kreload.io/baseline":"{\\"secret/db\\":\\"${SECRET_HASH}\\"}",
        "deployment.reloader.stakater.com/paused-at":"2026-01-02T03:04:05Z"}},
      "spec":{"paused":true,"template":{"spec":{"containers":[
        {"name":"app","env":[{"name":"STAKATER_APP_CONFIG_CONFIGMAP","value":"${CM_HASH}"}]}]}}}}`),
    );
  });

  it('rule 4: the resume body, exactly', () => {
    const patch = buildPatch(deployment, view('app'), {
      envWrites: [],
      pause: { action: 'resume', pausedAtKey: PAUSED_AT },
    });
    expect(patch?.type).toBe('strategic');
    expect(JSON.stringify(patch?.body)).toBe(
      '{"metadata":{"resourceVersion":"48213","annotations":{"deployment.reloader.stakater.com/paused-at":null}},"spec":{"paused":false}}',
    );
  });

  it('a resume that falls due with a roll travels in the roll patch', () => {
    const patch = buildPatch(deployment, view('app'), {
      envWrites: [],
      lastReloadedFrom: LRF,
      pause: { action: 'resume', pausedAtKey: 'custom/paused-at' },
    });
    expect(patch?.body).toEqual({
      metadata: { resourceVersion: '48213', annotations: { 'custom/paused-at': null } },
      spec: {
        paused: false,
        template: {
          metadata: { annotations: { 'reloader.stakater.com/last-reloaded-from': LRF } },
        },
      },
    });
  });
});

describe('buildRestartPatch (§7.5 restart)', () => {
  it('writes W state and spec.restartAt as a merge patch, the template untouched', () => {
    const patch = buildRestartPatch(
      kindRow('Rollout'),
      view('app'),
      { envWrites: [], workloadSourceHashes: `{"configmap/app-config":"${CM_HASH}"}` },
      '2026-01-02T03:04:05Z',
    );
    expect(patch.type).toBe('merge');
    expect(JSON.stringify(patch.body)).toBe(
      `{"metadata":{"resourceVersion":"48213","annotations":{"kreload.io/source-hashes":"{\\"configmap/app-config\\":\\"${CM_HASH}\\"}"}},"spec":{"restartAt":"2026-01-02T03:04:05Z"}}`,
    );
  });
});

describe('deploymentRequest (§7.6)', () => {
  it('is the instantiate body of the contract', () => {
    expect(JSON.stringify(deploymentRequest('web'))).toBe(
      '{"kind":"DeploymentRequest","apiVersion":"apps.openshift.io/v1","name":"web","latest":true,"force":true}',
    );
  });
});

describe('rfc3339Seconds', () => {
  it.each([
    [Date.UTC(2026, 0, 2, 3, 4, 5), '2026-01-02T03:04:05Z'],
    [Date.UTC(2026, 0, 2, 3, 4, 5, 999), '2026-01-02T03:04:05Z'],
    [0, '1970-01-01T00:00:00Z'],
  ])('%d → %s', (ms, text) => {
    expect(rfc3339Seconds(ms)).toBe(text);
  });
});
