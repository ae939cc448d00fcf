import { describe, expect, it } from 'vitest';
import type { ContainerView, PodSpecView } from '../core/types.ts';
import { kindRow } from './kinds.ts';
import type { WorkloadChanges } from './patch.ts';
import { buildPatch, UnsupportedPatchError } from './patch.ts';

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

  it('refuses env vars in a merge patch, which would replace the container list', () => {
    const crd = { ...deployment, templatePatchType: 'merge' as const };
    expect(() =>
      buildPatch(crd, view('app'), {
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
