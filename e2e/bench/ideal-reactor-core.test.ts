import { describe, expect, it } from 'vitest';
import { hashConfigMap, hashSecret } from '../../src/core/hash.ts';
import {
  hashOfSource,
  parseReactorArgs,
  projectWorkload,
  rollPatch,
} from './ideal-reactor-core.ts';
import { isKubeObject } from './list-watch.ts';
import { workloadManifest, type WorkloadSpec } from './workloads.ts';

function object(spec: WorkloadSpec) {
  const manifest = workloadManifest(spec, { run: 'r' });
  if (!isKubeObject(manifest)) throw new Error('not an object');
  return manifest;
}

const complex: WorkloadSpec = {
  kind: 'Deployment',
  namespace: 'ns',
  name: 'app',
  uses: [
    { type: 'configmap', name: 'init-only', via: 'envFrom', container: 'init' },
    { type: 'configmap', name: 'keys', via: 'valueFrom', container: 'app' },
    { type: 'secret', name: 'files', via: 'volume', container: 'sidecar' },
    { type: 'configmap', name: 'proj', via: 'projected', container: 'sidecar' },
  ],
  presetEnv: { STAKATER_KEYS_CONFIGMAP: 'old' },
};

describe('parseReactorArgs', () => {
  it.each([
    { argv: [], expected: { namespaces: [], strategy: 'env-vars', workers: 3 } },
    {
      argv: [
        '--namespaces=a,b',
        '--log-format=json',
        '--reload-strategy',
        'annotations',
        '--worker-threads=5',
        '--sync-delay=0',
      ],
      expected: { namespaces: ['a', 'b'], strategy: 'annotations', workers: 5 },
    },
    {
      argv: ['--worker-threads=zero'],
      expected: { namespaces: [], strategy: 'env-vars', workers: 3 },
    },
  ])('$argv', ({ argv, expected }) => {
    expect(parseReactorArgs(argv)).toEqual(expected);
  });
});

describe('projectWorkload', () => {
  it('finds every reference and the container each env var goes into', () => {
    const projection = projectWorkload('Deployment', object(complex));
    expect(projection.auto).toBe(true);
    expect(Object.fromEntries(projection.targets)).toEqual({
      'configmap/keys': 'app',
      'secret/files': 'sidecar',
      'configmap/proj': 'sidecar',
      // Referenced by the init container only: the first regular container, as Reloader does.
      'configmap/init-only': 'app',
    });
    expect(Object.fromEntries(projection.stakaterEnv)).toEqual({ STAKATER_KEYS_CONFIGMAP: 'old' });
  });
});

describe('rollPatch', () => {
  const workload = projectWorkload('Deployment', object(complex));
  const changes = [
    { type: 'configmap' as const, name: 'keys', hash: 'h1' },
    { type: 'secret' as const, name: 'files', hash: 'h2' },
  ];

  it('env-vars: one strategic merge patch with an env var per change, in its container', () => {
    expect(rollPatch({ strategy: 'env-vars', workload, changes, nowSeconds: 1 })).toEqual({
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'app', env: [{ name: 'STAKATER_KEYS_CONFIGMAP', value: 'h1' }] },
              { name: 'sidecar', env: [{ name: 'STAKATER_FILES_SECRET', value: 'h2' }] },
            ],
          },
        },
      },
    });
  });

  it('annotations: last-reloaded-from names the latest change', () => {
    const patch = rollPatch({ strategy: 'annotations', workload, changes, nowSeconds: 7 });
    expect(patch).toEqual({
      spec: {
        template: {
          metadata: {
            annotations: {
              'reloader.stakater.com/last-reloaded-from':
                '{"type":"SECRET","name":"files","namespace":"ns","hash":"h2","containerRefs":["sidecar"],"observedAt":7}',
            },
          },
        },
      },
    });
  });
});

it('hashOfSource hashes ConfigMaps (data and binaryData) and Secrets as spec §4.1 says', () => {
  const cm = { metadata: { name: 'c' }, data: { a: '1' }, binaryData: { b: 'dGVzdA==' } };
  const secret = { metadata: { name: 's' }, data: { password: 'czNjcjN0' } };
  expect(hashOfSource('configmap', cm)).toBe(hashConfigMap({ a: '1' }, { b: 'dGVzdA==' }));
  expect(hashOfSource('secret', secret)).toBe(hashSecret({ password: 'czNjcjN0' }));
  expect(hashOfSource('secret', secret)).toBe('d93dd00779cd04e2ec1db21fa3d0e20deea13f9c');
});
