import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import {
  contentHash,
  formatSnapshotMap,
  isSnapshotOf,
  liveNameOf,
  parseSnapshotMap,
  renameReferences,
  snapshotBody,
  snapshotName,
  snapshotRefusal,
} from './snapshots.ts';

const HASH = '0123456789abcdef0123456789abcdef01234567';

describe('snapshotName', () => {
  it.each([
    ['app-config', 'app-config-0123456789'],
    ['a'.repeat(242), `${'a'.repeat(242)}-0123456789`],
  ])('%s → %s', (source, expected) => {
    expect(snapshotName(source, HASH)).toEqual({ ok: true, name: expected });
  });

  it('refuses a name over 253 characters and says why', () => {
    const result = snapshotName('a'.repeat(243), HASH);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toContain('254 characters, over 253');
      expect(result.reason).toContain('at most 242');
    }
  });
});

describe('snapshot map', () => {
  it.each<[string | undefined, [string, string][]]>([
    [undefined, []],
    ['not json', []],
    ['[]', []],
    ['{"configmap/a":"a-0123456789"}', [['configmap/a', 'a-0123456789']]],
    ['{"configmap/a":""}', []],
    ['{"secretproviderclass/a":"x"}', []],
    ['{"bogus/a":"x"}', []],
  ])('parses %s', (raw, entries) => {
    expect([...parseSnapshotMap(raw)]).toEqual(entries);
  });

  it('formats sorted, null when empty, and parses back', () => {
    const map = new Map([
      ['secret/s', 's-1'],
      ['configmap/a', 'a-1'],
    ] as const);
    const text = formatSnapshotMap(map);
    expect(text).toBe('{"configmap/a":"a-1","secret/s":"s-1"}');
    expect([...parseSnapshotMap(text ?? undefined)]).toEqual([...map].reverse());
    expect(formatSnapshotMap(new Map())).toBeNull();
  });

  it('maps a snapshot name back to its live source, per type', () => {
    const live = liveNameOf(parseSnapshotMap('{"configmap/a":"a-1","secret/s":"s-1"}'));
    expect(live('CONFIGMAP', 'a-1')).toBe('a');
    expect(live('SECRET', 's-1')).toBe('s');
    expect(live('SECRET', 'a-1')).toBe('a-1');
    expect(live('CONFIGMAP', 'other')).toBe('other');
  });
});

describe('renameReferences', () => {
  const spec: JsonObject = {
    containers: [
      {
        name: 'app',
        image: 'x',
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'k' } } },
          { name: 'B', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } },
          { name: 'C', value: 'literal' },
        ],
        envFrom: [{ configMapRef: { name: 'cm' } }, { secretRef: { name: 'sec' } }],
      },
    ],
    initContainers: [{ name: 'init', envFrom: [{ configMapRef: { name: 'cm', optional: true } }] }],
    volumes: [
      { name: 'v1', configMap: { name: 'cm', defaultMode: 420 } },
      { name: 'v2', secret: { secretName: 'sec' } },
      {
        name: 'v3',
        projected: { sources: [{ configMap: { name: 'cm' } }, { secret: { name: 'sec' } }] },
      },
      { name: 'v4', emptyDir: {} },
    ],
  };
  const rename = (type: string, name: string): string =>
    type === 'CONFIGMAP' && name === 'cm' ? 'cm-snap' : name;

  it('renames every ConfigMap reference site and keeps everything else', () => {
    const lists = renameReferences(spec, rename);
    expect(lists).toEqual({
      containers: [
        {
          name: 'app',
          image: 'x',
          env: [
            { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm-snap', key: 'k' } } },
            { name: 'B', valueFrom: { secretKeyRef: { name: 'sec', key: 'k' } } },
            { name: 'C', value: 'literal' },
          ],
          envFrom: [{ configMapRef: { name: 'cm-snap' } }, { secretRef: { name: 'sec' } }],
        },
      ],
      initContainers: [
        { name: 'init', envFrom: [{ configMapRef: { name: 'cm-snap', optional: true } }] },
      ],
      volumes: [
        { name: 'v1', configMap: { name: 'cm-snap', defaultMode: 420 } },
        { name: 'v2', secret: { secretName: 'sec' } },
        {
          name: 'v3',
          projected: {
            sources: [{ configMap: { name: 'cm-snap' } }, { secret: { name: 'sec' } }],
          },
        },
        { name: 'v4', emptyDir: {} },
      ],
    });
  });

  it('renames Secrets at their sites and never edits the input', () => {
    const before = JSON.stringify(spec);
    const lists = renameReferences(spec, (type, name) => (type === 'SECRET' ? `${name}-s` : name));
    expect(JSON.stringify(spec)).toBe(before);
    expect(JSON.stringify(lists)).toContain('"secretName":"sec-s"');
    expect(JSON.stringify(lists)).toContain('"secretKeyRef":{"name":"sec-s"');
    expect(JSON.stringify(lists)).toContain('"secret":{"name":"sec-s"}');
    expect(JSON.stringify(lists)).not.toContain('cm-s');
  });

  it('leaves absent lists absent', () => {
    expect(renameReferences({ containers: [{ name: 'a' }] }, rename)).toEqual({
      containers: [{ name: 'a' }],
    });
  });
});

describe('snapshotBody', () => {
  const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-1' };

  it('copies a ConfigMap immutably, labelled and owned by the workload', () => {
    const source: JsonObject = {
      metadata: { name: 'cm', resourceVersion: '7', uid: 'src', labels: { team: 'x' } },
      data: { a: '1' },
      binaryData: { b: 'AA==' },
    };
    const body = snapshotBody(source, {
      type: 'CONFIGMAP',
      namespace: 'ns',
      sourceName: 'cm',
      name: 'cm-0123456789',
      hash: HASH,
      owner,
    });
    expect(body).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm-0123456789',
        namespace: 'ns',
        labels: {
          'kreload.io/snapshot-hash': '0123456789',
          'kreload.io/snapshot-workload-uid': 'u-1',
          'kreload.io/snapshot-of': 'cm',
        },
        annotations: {
          'kreload.io/snapshot-source': 'cm',
          'kreload.io/snapshot-source-hash': HASH,
        },
        ownerReferences: [{ ...owner, blockOwnerDeletion: false }],
      },
      immutable: true,
      data: { a: '1' },
      binaryData: { b: 'AA==' },
    });
    expect(isSnapshotOf(body, 'cm', HASH)).toBe(true);
    expect(isSnapshotOf(body, 'cm', HASH.replace('0', 'f'))).toBe(false);
    expect(isSnapshotOf(source, 'cm', HASH)).toBe(false);
  });

  it('copies a Secret with its type; a long source name is not a label', () => {
    const long = 'n'.repeat(64);
    const body = snapshotBody(
      { data: { p: 'cw==' }, type: 'kubernetes.io/tls', stringData: { ignored: 'x' } },
      { type: 'SECRET', namespace: 'ns', sourceName: long, name: 'x', hash: HASH, owner },
    );
    expect(body.kind).toBe('Secret');
    expect(body.type).toBe('kubernetes.io/tls');
    expect(body.data).toEqual({ p: 'cw==' });
    expect(body.stringData).toBeUndefined();
    expect(JSON.stringify(body.metadata)).not.toContain('"kreload.io/snapshot-of"');
  });
});

function withoutImmutable(object: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([key]) => key !== 'immutable'));
}

describe('snapshotRefusal', () => {
  const data = { a: '1' };
  const hash = contentHash('CONFIGMAP', { data });
  const owner = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-1' };
  const genuine = snapshotBody(
    { data },
    { type: 'CONFIGMAP', namespace: 'ns', sourceName: 'cm', name: 'cm-x', hash, owner },
  );
  const expected = { sourceName: 'cm', hash };

  it.each<[string, JsonObject, RegExp | undefined]>([
    ['kreload’s immutable copy of this content', genuine, undefined],
    ['other data under the right annotations', { ...genuine, data: { a: '2' } }, /does not match/],
    ['extra binaryData', { ...genuine, binaryData: { b: 'AA==' } }, /does not match/],
    ['the right data, not immutable', { ...genuine, immutable: false }, /not immutable/],
    ['the right data, immutable absent', withoutImmutable(genuine), /not immutable/],
    ['the annotations of other content', { ...genuine, metadata: {} }, /other content/],
  ])('%s', (_case, existing, reason) => {
    const refusal = snapshotRefusal(existing, 'CONFIGMAP', expected);
    if (reason === undefined) expect(refusal).toBeUndefined();
    else expect(refusal).toMatch(reason);
  });

  it('hashes a Secret as §4.1 does: data only, not the type', () => {
    const secret = { data: { p: 'cw==' }, type: 'Opaque', immutable: true };
    const secretHash = contentHash('SECRET', secret);
    const body = snapshotBody(secret, {
      type: 'SECRET',
      namespace: 'ns',
      sourceName: 's',
      name: 's-x',
      hash: secretHash,
      owner,
    });
    expect(snapshotRefusal(body, 'SECRET', { sourceName: 's', hash: secretHash })).toBeUndefined();
    expect(
      snapshotRefusal({ ...body, data: { p: 'eA==' } }, 'SECRET', {
        sourceName: 's',
        hash: secretHash,
      }),
    ).toMatch(/Secret s-x exists/);
  });
});
