import { describe, expect, it } from 'vitest';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import {
  keptAnnotations,
  NO_ANNOTATIONS,
  projectConfigMap,
  projectNamespaceName,
  projectSecret,
  projectSecretProviderClass,
  projectSecretProviderClassPodStatus,
} from './projections.ts';

const KEYS = { ...DEFAULT_ANNOTATION_KEYS, keepLabels: false };
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function meta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'app',
    namespace: 'ns',
    uid: 'u-1',
    resourceVersion: '42',
    creationTimestamp: '2026-01-02T03:04:05Z',
    managedFields: [{ manager: 'kubectl' }],
    ...extra,
  };
}

/** Every object reachable from `view`. */
function reachable(value: unknown, seen = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null && !seen.has(value)) {
    seen.add(value);
    for (const child of Object.values(value)) reachable(child, seen);
  }
  return seen;
}

function sharesNoObjectWith(view: unknown, wire: unknown): boolean {
  const wireObjects = reachable(wire);
  return [...reachable(view)].every((o) => !wireObjects.has(o));
}

describe('projectConfigMap', () => {
  it.each([
    ['empty', {}, 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
    ['data', { data: { key: 'value' } }, 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0'],
    ['two keys', { data: { a: '1', b: '2' } }, 'f83e99e324ba68ccc373a58ef1eb42f8ab88646a'],
    [
      'binaryData',
      { data: { test: 'test' }, binaryData: { bintest: 'dGVzdA==' } },
      '0d58150de76a895b24f4ca213f590766160c4349',
    ],
  ])('%s hashes as §4.2 says', (_name, body, hash) => {
    const view = projectConfigMap({ metadata: meta(), ...body }, KEYS);
    expect(view?.hash).toBe(hash);
  });

  it('keeps identity and only the ignore/match annotations', () => {
    const wire = {
      metadata: meta({
        annotations: {
          [KEYS.ignore]: 'true',
          [KEYS.match]: 'false',
          [LAST_APPLIED]: '{"data":{"key":"value"}}',
          [KEYS.auto]: 'true',
        },
      }),
      data: { key: 'value' },
    };
    expect(projectConfigMap(wire, KEYS)).toEqual({
      ref: { type: 'CONFIGMAP', namespace: 'ns', name: 'app' },
      uid: 'u-1',
      resourceVersion: '42',
      creationTimestamp: '2026-01-02T03:04:05Z',
      hash: 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
      annotations: { [KEYS.ignore]: 'true', [KEYS.match]: 'false' },
    });
  });

  it('honours overridden ignore/match keys', () => {
    const keys = { ignore: 'example.com/skip', match: 'example.com/pick', keepLabels: false };
    const wire = {
      metadata: meta({ annotations: { 'example.com/skip': 'true', [KEYS.ignore]: 'true' } }),
    };
    expect(projectConfigMap(wire, keys)?.annotations).toEqual({ 'example.com/skip': 'true' });
  });

  it.each([
    ['no metadata', {}],
    ['no uid', { metadata: { name: 'a', namespace: 'ns' } }],
    ['no namespace', { metadata: { name: 'a', uid: 'u' } }],
    ['not an object', 'nonsense'],
  ])('is undefined for a malformed object (%s)', (_name, wire) => {
    expect(projectConfigMap(wire, KEYS)).toBeUndefined();
  });
});

describe('projectSecret', () => {
  it.each([
    ['password', { password: 'czNjcjN0' }, 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c'],
    ['binary', { user: 'YWRtaW4=', cert: '/wD+' }, 'e5d9c4c91abefb185dc0a772c7a94ad6da2ca3fe'],
    ['none', undefined, 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
  ])('%s hashes the decoded bytes', (_name, data, hash) => {
    expect(projectSecret({ metadata: meta(), type: 'Opaque', data }, KEYS)?.hash).toBe(hash);
  });

  it('holds no reference to the wire object and no value from it besides the hash', () => {
    const wire = {
      metadata: meta({
        annotations: { [LAST_APPLIED]: '{"data":{"password":"czNjcjN0"}}', [KEYS.match]: 'true' },
        labels: { app: 'x' },
      }),
      data: { password: 'czNjcjN0' },
    };
    const view = projectSecret(wire, KEYS);
    expect(sharesNoObjectWith(view, wire)).toBe(true);
    expect(JSON.stringify(view)).not.toContain('czNjcjN0');
    expect(JSON.stringify(view)).not.toContain('last-applied');
    wire.data.password = 'changed';
    (wire.metadata.annotations as Record<string, string>)[KEYS.match] = 'false';
    expect(view?.annotations).toEqual({ [KEYS.match]: 'true' });
  });
});

describe('projectSecretProviderClassPodStatus', () => {
  const base = { metadata: meta({ name: 'pod-1-ns-spc' }) };

  it('hashes the objects with the class name (§4.2 vector 9)', () => {
    const view = projectSecretProviderClassPodStatus({
      ...base,
      status: {
        secretProviderClassName: 'my-spc',
        podName: 'pod-1',
        mounted: true,
        objects: [
          { id: 'secret/db-pass', version: 'v2' },
          { id: 'secret/api-key', version: 'v1' },
        ],
      },
    });
    expect(view).toEqual({
      namespace: 'ns',
      name: 'pod-1-ns-spc',
      uid: 'u-1',
      resourceVersion: '42',
      creationTimestamp: '2026-01-02T03:04:05Z',
      className: 'my-spc',
      hash: 'c695e5b2d20998c25dce659e5b19e52936c3591e',
    });
  });

  it('an SPCPS without objects hashes the class name alone (vector 10)', () => {
    const view = projectSecretProviderClassPodStatus({
      ...base,
      status: { secretProviderClassName: 'my-spc' },
    });
    expect(view?.hash).toBe('40c125ef6cd81879ba7d9bf324830530eaee9893');
  });

  it.each([
    ['no status', {}],
    ['empty class name', { status: { secretProviderClassName: '' } }],
  ])('is undefined without a class name (%s)', (_name, extra) => {
    expect(projectSecretProviderClassPodStatus({ ...base, ...extra })).toBeUndefined();
  });
});

describe('projectSecretProviderClass and projectNamespaceName', () => {
  it('keeps name, namespace and the ignore/match values', () => {
    const wire = {
      metadata: meta({ annotations: { [KEYS.ignore]: 'true', other: 'x' } }),
      spec: { provider: 'vault', parameters: { roleName: 'r' } },
    };
    expect(projectSecretProviderClass(wire, KEYS)).toEqual({
      namespace: 'ns',
      name: 'app',
      annotations: { [KEYS.ignore]: 'true' },
    });
  });

  it('keeps its labels only when asked (--enable-reload-policies: policy selectors)', () => {
    const wire = { metadata: meta({ labels: { team: 'payments' } }) };
    expect(projectSecretProviderClass(wire, { ...KEYS, keepLabels: true })).toEqual({
      namespace: 'ns',
      name: 'app',
      annotations: {},
      labels: { team: 'payments' },
    });
    expect(projectSecretProviderClass(wire, KEYS)).not.toHaveProperty('labels');
  });

  it.each([
    [{ metadata: { name: 'team-a', labels: { x: 'y' } } }, 'team-a'],
    [{ metadata: { name: '' } }, undefined],
    [{}, undefined],
  ])('namespace %j → %s', (wire, name) => {
    expect(projectNamespaceName(wire)).toBe(name);
  });
});

describe('keptAnnotations', () => {
  const KEPT = ['a', 'b', 'constructor'];
  it.each<[string, unknown, Record<string, string>]>([
    ['no metadata', {}, {}],
    ['no annotations', { metadata: {} }, {}],
    ['annotations not an object', { metadata: { annotations: ['a'] } }, {}],
    ['only the kept keys', { metadata: { annotations: { a: '1', c: '3' } } }, { a: '1' }],
    ['a non-string value is dropped', { metadata: { annotations: { a: 1, b: '2' } } }, { b: '2' }],
    ['an inherited name is not an annotation', { metadata: { annotations: { c: '3' } } }, {}],
    [
      'an own key named like an inherited one is kept',
      JSON.parse('{"metadata":{"annotations":{"constructor":"x"}}}'),
      { constructor: 'x' },
    ],
  ])('%s', (_case, obj, expected) => {
    const kept = keptAnnotations(obj, KEPT);
    expect({ ...kept }).toEqual(expected);
    if (Object.keys(expected).length === 0) expect(kept).toBe(NO_ANNOTATIONS);
  });

  it('shares no object with the wire object', () => {
    const wire = { metadata: { annotations: { a: '1', [LAST_APPLIED]: '{}' } } };
    const kept = keptAnnotations(wire, KEPT);
    expect(kept).not.toBe(wire.metadata.annotations);
    expect(kept).toEqual({ a: '1' });
  });
});
