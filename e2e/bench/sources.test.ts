import { describe, expect, it } from 'vitest';
import { hashConfigMap, hashSecret } from '../../src/core/hash.ts';
import {
  dataPatch,
  sourceHash,
  sourceManifest,
  valueOf,
  wireData,
  type SourceSpec,
} from './sources.ts';

const configMap: SourceSpec = {
  type: 'configmap',
  namespace: 'ns',
  name: 'cm',
  keys: [
    { key: 'a', bytes: 100 },
    { key: 'b', bytes: 5 },
  ],
};
const secret: SourceSpec = { ...configMap, type: 'secret', name: 'db' };

describe('source content', () => {
  it('is a fixed-size value per version, unique per version', () => {
    const key = { key: 'a', bytes: 100 };
    expect(valueOf(configMap, key, 3)).toHaveLength(100);
    expect(valueOf(configMap, key, 3).startsWith('cm.a.v3.')).toBe(true);
    expect(valueOf(configMap, key, 3)).not.toBe(valueOf(configMap, key, 4));
    // Shorter than the prefix: the prefix alone, so versions still differ.
    expect(valueOf(configMap, { key: 'b', bytes: 5 }, 12)).toBe('cm.b.v12.');
  });

  it('hashes like the controller will (spec §4.1), Secrets from their base64 wire form', () => {
    const versions = new Map([['a', 2]]);
    expect(sourceHash(configMap, versions)).toBe(
      hashConfigMap(wireData(configMap, versions), undefined),
    );
    expect(sourceHash(secret, versions)).toBe(hashSecret(wireData(secret, versions)));
    expect(Buffer.from(wireData(secret, versions).a ?? '', 'base64').toString()).toBe(
      valueOf(secret, { key: 'a', bytes: 100 }, 2),
    );
    expect(sourceHash(configMap, versions)).not.toBe(sourceHash(configMap, new Map()));
  });

  it('a data patch reproduces the content the hash was computed for', () => {
    const versions = new Map([['b', 7]]);
    expect(sourceManifest(configMap, { versions: new Map(), labels: { run: 'x' } })).toMatchObject({
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'ns', labels: { run: 'x' } },
      data: wireData(configMap, new Map()),
    });
    expect(dataPatch(configMap, 'b', 7)).toEqual({ data: { b: 'cm.b.v7.' } });
    const patched = { ...wireData(configMap, new Map()), b: 'cm.b.v7.' };
    expect(hashConfigMap(patched, undefined)).toBe(sourceHash(configMap, versions));
    expect(() => dataPatch(configMap, 'zzz', 1)).toThrow(/no data key/);
  });
});
