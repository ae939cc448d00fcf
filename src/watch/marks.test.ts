import { describe, expect, it } from 'vitest';
import type { SourceType } from '../core/types.ts';
import { aCreateMark, aDeleteMark } from '../testing/marks.ts';
import { isMarkExpired, markForChange, markMaxAgeMs, MarkStore } from './marks.ts';
import type { SourceChange, SourceChangeKind } from './source-cache.ts';

const HASH = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const MATCH = { 'reloader.stakater.com/match': 'true' };

function change(kind: SourceChangeKind, type: SourceType = 'CONFIGMAP'): SourceChange {
  return {
    kind,
    ref: { type, namespace: 'ns', name: 'app' },
    uid: 'u1',
    hash: HASH,
    observedAt: 500,
    annotations: MATCH,
    prevAnnotations: {},
  };
}

const create = (uid: string, at = 0) => aCreateMark('configmap/app', uid, at);
const remove = (uid: string, at = 0) => aDeleteMark('configmap/app', uid, {}, at);

describe('markForChange', () => {
  it.each([
    ['created', 'CONFIGMAP', { kind: 'create', sourceKey: 'configmap/app', uid: 'u1', at: 500 }],
    [
      'deleted',
      'SECRET',
      { kind: 'delete', sourceKey: 'secret/app', uid: 'u1', at: 500, sourceAnnotations: MATCH },
    ],
    ['updated', 'CONFIGMAP', undefined],
    ['annotations', 'SECRET', undefined],
    ['created', 'SECRETPROVIDERCLASS', undefined],
    ['deleted', 'SECRETPROVIDERCLASS', undefined],
  ] as const)('%s %s', (kind, type, expected) => {
    expect(markForChange(change(kind, type))).toEqual(expected);
  });
});

describe('expiry (HA)', () => {
  it.each([
    [0, 60_000, false],
    [0, 60_001, true],
    [1_000, 61_000, false],
  ])('made at %i, now %i → expired %s', (at, now, expected) => {
    expect(isMarkExpired(create('u', at), now, markMaxAgeMs(30_000))).toBe(expected);
  });
});

describe('MarkStore', () => {
  const A = 'Deployment/ns/a';
  const B = 'Deployment/ns/b';

  it('gives a mark to every associated workload and replaces an equal older one', () => {
    const store = new MarkStore();
    store.add([A, B], create('u1', 1));
    store.add([A], create('u1', 2));
    store.add([A], remove('u1', 3));
    expect(store.marksOf(A)).toEqual([create('u1', 2), remove('u1', 3)]);
    expect(store.marksOf(B)).toEqual([create('u1', 1)]);
    expect(store.marksOf('Deployment/ns/none')).toEqual([]);
    expect(store.size).toBe(3);
  });

  it('records the marks of creations and deletions only', () => {
    const store = new MarkStore();
    expect(store.record(change('updated'), [A])).toBeUndefined();
    expect(store.record(change('created', 'SECRETPROVIDERCLASS'), [A])).toBeUndefined();
    expect(store.record(change('created'), [A])).toEqual(create('u1', 500));
    expect(store.marksOf(A)).toEqual([create('u1', 500)]);
  });

  it('consumes exactly the marks a reconcile saw when it started', () => {
    const store = new MarkStore();
    store.add([A], create('u1'));
    const seen = store.marksOf(A);
    store.add([A], remove('u1', 5)); // made while the reconcile ran
    store.consume(A, seen);
    expect(store.marksOf(A)).toEqual([remove('u1', 5)]);
    store.consume(A, store.marksOf(A));
    expect(store.marksOf(A)).toEqual([]);
    expect(store.size).toBe(0);
  });

  it('expires old marks and drops a deleted workload’s marks', () => {
    const store = new MarkStore();
    store.add([A], create('u1', 0));
    store.add([A, B], remove('u2', 50_000));
    expect(store.expire(60_001, 60_000)).toBe(1);
    expect(store.marksOf(A)).toEqual([remove('u2', 50_000)]);
    store.dropWorkload(A);
    expect(store.marksOf(A)).toEqual([]);
    expect(store.marksOf(B)).toHaveLength(1);
  });
});
