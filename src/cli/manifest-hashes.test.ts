import { describe, expect, it } from 'vitest';
import { formatManifestHash, hashManifestDocuments } from './manifest-hashes.ts';

const configMap = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app-config', namespace: 'team-a' },
  data,
  ...extra,
});

const secret = (fields: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db' },
  ...fields,
});

describe('hashManifestDocuments (§4.1 vectors)', () => {
  it.each<[string, unknown, string]>([
    [
      'empty ConfigMap (vector 1)',
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'app-config', namespace: 'team-a' },
      },
      'da39a3ee5e6b4b0d3255bfef95601890afd80709',
    ],
    [
      'key=value (vector 2)',
      configMap({ key: 'value' }),
      'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
    ],
    [
      'a=1;b=2 (vector 3)',
      configMap({ a: '1', b: '2' }),
      'f83e99e324ba68ccc373a58ef1eb42f8ab88646a',
    ],
    [
      'binaryData (vector 4)',
      configMap({ test: 'test' }, { binaryData: { bintest: 'dGVzdA==' } }),
      '0d58150de76a895b24f4ca213f590766160c4349',
    ],
    [
      'Secret data (vector 7)',
      secret({ data: { password: 'czNjcjN0' } }),
      'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c',
    ],
    [
      'Secret binary data (vector 8)',
      secret({ data: { user: 'YWRtaW4=', cert: '/wD+' } }),
      'e5d9c4c91abefb185dc0a772c7a94ad6da2ca3fe',
    ],
    [
      'Secret stringData is stored as data',
      secret({ stringData: { password: 's3cr3t' } }),
      'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c',
    ],
    [
      'stringData overrides data of the same key',
      secret({ data: { password: 'b2xk' }, stringData: { password: 's3cr3t' } }),
      'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c',
    ],
  ])('%s', (_name, document, hash) => {
    expect(hashManifestDocuments([document])).toEqual({
      hashes: [expect.objectContaining({ hash })],
      problems: [],
    });
  });

  it('names kind, namespace and name, defaulting the namespace, and walks Lists', () => {
    const result = hashManifestDocuments([
      null,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' } },
      configMap({ key: 'value' }),
      { apiVersion: 'v1', kind: 'List', items: [secret({ data: {} })] },
    ]);
    expect(result.problems).toEqual([]);
    expect(result.hashes.map(formatManifestHash)).toEqual([
      'ConfigMap team-a/app-config dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
      'Secret default/db da39a3ee5e6b4b0d3255bfef95601890afd80709',
    ]);
  });

  it.each<[string, unknown, string]>([
    [
      'missing name',
      { apiVersion: 'v1', kind: 'ConfigMap', data: {} },
      'document 1: ConfigMap: metadata.name is missing',
    ],
    [
      'non-string value',
      configMap({ port: 8080 }),
      'document 1: ConfigMap: data.port must be a string',
    ],
    ['data not a map', configMap({}, { data: ['a'] }), 'document 1: ConfigMap: data must be a map'],
    [
      'invalid base64 in Secret data',
      secret({ data: { a: 'not base64!' } }),
      'document 1: Secret: data.a is not valid base64',
    ],
    [
      'unpadded base64 in binaryData',
      configMap({}, { binaryData: { b: 'dGVzdA' } }),
      'document 1: ConfigMap: binaryData.b is not valid base64',
    ],
    [
      'problem inside a List',
      { apiVersion: 'v1', kind: 'List', items: [{}, secret({ data: { a: 1 } })] },
      'document 1, item 2: Secret: data.a must be a string',
    ],
  ])('reports %s', (_name, document, problem) => {
    expect(hashManifestDocuments([document])).toEqual({ hashes: [], problems: [problem] });
  });
});
