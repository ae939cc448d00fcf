import { describe, expect, it } from 'vitest';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import type { SourceView } from '../core/types.ts';
import type { ViewSink } from './ports.ts';
import { aConfigMap, aSecret } from '../testing/builders.ts';
import { hashSecret } from '../core/hash.ts';
import { NO_ANNOTATIONS, projectSecret } from '../kube/projections.ts';
import {
  SourceCache,
  SourceCaches,
  sameAnnotations,
  type SourceCacheEvent,
} from './source-cache.ts';

const H1 = '1111111111111111111111111111111111111111';
const H2 = '2222222222222222222222222222222222222222';
const IGNORE = DEFAULT_ANNOTATION_KEYS.ignore;

function setup() {
  let now = 1_000;
  const events: SourceCacheEvent[] = [];
  const cache = new SourceCache({
    type: 'CONFIGMAP',
    clock: { now: () => now },
    notify: (event) => events.push(event),
  });
  const summary = (): string[] =>
    events.map((e) => `${e.kind} ${e.ref.namespace}/${e.ref.name} ${e.uid} @${e.observedAt}`);
  return {
    cache,
    events,
    summary,
    at: (t: number) => {
      now = t;
    },
  };
}

const app = aConfigMap('ns', 'app').withUid('u1').withHash(H1);

describe('SourceCache initial list', () => {
  it('seeds without events, all first seen at the time of the list', () => {
    const { cache, events, at } = setup();
    cache.upsert(app.build()); // before the list: stored silently
    expect(cache.isSynced).toBe(false);
    at(5_000);
    cache.replace([app.build(), aConfigMap('ns', 'other').withUid('u2').build()]);
    expect(events).toEqual([]);
    expect(cache.isSynced).toBe(true);
    expect(cache.get('ns', 'app')).toEqual({
      view: app.build(),
      firstObserved: 5_000,
      lastChange: undefined,
    });
    expect(cache.namesInNamespace('ns')).toEqual(['app', 'other']);
    expect(cache.namesInNamespace('elsewhere')).toEqual([]);
    expect(cache.size).toBe(2);
  });
});

describe('SourceCache namespace joining after sync (ADR 0021)', () => {
  it('seeds the namespace without creations; later changes there are events', () => {
    const { cache, events, at, summary } = setup();
    cache.replace([app.build()]);
    at(7_000);
    const late = aConfigMap('late', 'app').withUid('u9').withHash(H1);
    cache.seedNamespace('late', [late.build()]);
    expect(events).toEqual([]);
    expect(cache.get('late', 'app')).toEqual({
      view: late.build(),
      firstObserved: 7_000,
      lastChange: undefined,
    });
    expect(cache.get('ns', 'app')?.firstObserved).toBe(1_000);
    at(8_000);
    cache.upsert(late.withHash(H2).withResourceVersion('2').build());
    expect(summary()).toEqual(['updated late/app u9 @8000']);
  });

  it('before the initial sync it is the initial list', () => {
    const { cache, events } = setup();
    cache.seedNamespace('ns', [app.build()]);
    expect(cache.isSynced).toBe(true);
    expect(events).toEqual([]);
  });
});

describe('SourceCache after sync', () => {
  it.each([
    ['hash change', app.withHash(H2).withResourceVersion('2'), 'updated', 2_000],
    [
      'hash and ignore change',
      app.withHash(H2).withAnnotation(IGNORE, 'true').withResourceVersion('2'),
      'updated',
      2_000,
    ],
    [
      'ignore/match change only',
      app.withAnnotation(IGNORE, 'true').withResourceVersion('2'),
      'annotations',
      undefined,
    ],
    ['no data change (labels)', app.withResourceVersion('2'), 'unchanged', undefined],
  ] as const)('%s → %s', (_name, next, kind, lastChange) => {
    const { cache, events, at } = setup();
    cache.replace([app.build()]);
    at(2_000);
    cache.upsert(next.build());
    expect(events.map((e) => e.kind)).toEqual([kind]);
    expect(cache.get('ns', 'app')).toEqual({
      view: next.build(),
      firstObserved: 1_000,
      lastChange,
    });
  });

  it('reports before and after ignore/match values', () => {
    const { cache, events } = setup();
    cache.replace([app.withAnnotation(IGNORE, 'true').build()]);
    cache.upsert(app.withHash(H2).withResourceVersion('2').build());
    expect(events).toEqual([
      {
        kind: 'updated',
        ref: { type: 'CONFIGMAP', namespace: 'ns', name: 'app' },
        uid: 'u1',
        hash: H2,
        observedAt: 1_000,
        annotations: {},
        prevAnnotations: { [IGNORE]: 'true' },
      },
    ]);
  });

  it.each<[string, Record<string, string> | undefined, Record<string, string> | undefined, string]>(
    [
      ['kept labels changed (--enable-reload-policies) → labels', {}, { team: 'web' }, 'labels'],
      ['kept labels removed → labels', { team: 'web' }, {}, 'labels'],
      ['kept labels the same → unchanged', { team: 'web' }, { team: 'web' }, 'unchanged'],
      ['labels not kept → unchanged', undefined, undefined, 'unchanged'],
    ],
  )('%s', (_title, before, after, kind) => {
    const { cache, events, at } = setup();
    const labelled = (labels: Record<string, string> | undefined, rv: string) => ({
      ...app.withResourceVersion(rv).build(),
      ...(labels === undefined ? {} : { labels }),
    });
    cache.replace([labelled(before, '1')]);
    at(2_000);
    cache.upsert(labelled(after, '2'));
    expect(events.map((e) => e.kind)).toEqual([kind]);
    if (kind === 'labels') {
      expect(events[0]).toEqual({
        kind: 'labels',
        ref: { type: 'CONFIGMAP', namespace: 'ns', name: 'app' },
        uid: 'u1',
        observedAt: 2_000,
        labels: after,
        prevLabels: before,
      });
    }
    // Labels are not content: lastChange stays unset.
    expect(cache.get('ns', 'app')?.lastChange).toBeUndefined();
  });

  it('ignores a re-delivered identical object', () => {
    const { cache, events } = setup();
    cache.replace([app.build()]);
    cache.upsert(app.build());
    expect(events).toEqual([]);
  });

  it('keeps lastChange across updates that do not change the hash', () => {
    const { cache, at } = setup();
    cache.replace([app.build()]);
    at(2_000);
    cache.upsert(app.withHash(H2).withResourceVersion('2').build());
    at(3_000);
    cache.upsert(app.withHash(H2).withResourceVersion('3').build());
    expect(cache.get('ns', 'app')?.lastChange).toBe(2_000);
  });

  it('a creation is not a change; a delete reports the last hash and ignore/match values', () => {
    const { cache, events, at } = setup();
    cache.replace([]);
    at(2_000);
    const created = app.withAnnotation(DEFAULT_ANNOTATION_KEYS.match, 'true').build();
    cache.upsert(created);
    expect(cache.get('ns', 'app')).toEqual({
      view: created,
      firstObserved: 2_000,
      lastChange: undefined,
    });
    at(3_000);
    cache.removeNamed('ns', 'app');
    cache.removeNamed('ns', 'app');
    expect(events).toEqual([
      {
        kind: 'created',
        ref: created.ref,
        uid: 'u1',
        hash: H1,
        observedAt: 2_000,
        annotations: created.annotations,
        prevAnnotations: {},
      },
      {
        kind: 'deleted',
        ref: created.ref,
        uid: 'u1',
        hash: H1,
        observedAt: 3_000,
        annotations: created.annotations,
        prevAnnotations: created.annotations,
      },
    ]);
    expect(cache.get('ns', 'app')).toBeUndefined();
    expect(cache.namesInNamespace('ns')).toEqual([]);
  });

  it('an object recreated under the same name is a deletion and a creation', () => {
    const { cache, summary, at } = setup();
    cache.replace([app.build()]);
    at(2_000);
    cache.upsert(app.withUid('u9').build());
    expect(summary()).toEqual(['deleted ns/app u1 @2000', 'created ns/app u9 @2000']);
    expect(cache.get('ns', 'app')?.firstObserved).toBe(2_000);
  });
});

describe('SourceCache relist (§9.1 item 4)', () => {
  it('diffs by UID: new → created, missing → deleted, same UID new hash → updated', () => {
    const { cache, summary, events, at } = setup();
    const keep = aConfigMap('ns', 'keep').withUid('k');
    const change = aConfigMap('ns', 'change').withUid('c').withHash(H1);
    const gone = aConfigMap('other', 'gone').withUid('g');
    const recreated = aConfigMap('ns', 'recreated').withUid('r1');
    const labelled = aConfigMap('ns', 'labelled').withUid('l');
    cache.replace([keep, change, gone, recreated, labelled].map((b) => b.build()));
    at(7_000);
    cache.replace([
      keep.build(),
      change.withHash(H2).withResourceVersion('2').build(),
      recreated.withUid('r2').build(),
      labelled.withResourceVersion('5').build(),
      aConfigMap('ns', 'new').withUid('n').build(),
    ]);
    expect(summary().sort()).toEqual(
      [
        'deleted other/gone g @7000',
        'deleted ns/recreated r1 @7000',
        'created ns/recreated r2 @7000',
        'updated ns/change c @7000',
        'unchanged ns/labelled l @7000',
        'created ns/new n @7000',
      ].sort(),
    );
    const kinds = events.map((e) => `${e.kind} ${e.ref.name}`);
    expect(kinds.indexOf('deleted recreated')).toBeLessThan(kinds.indexOf('created recreated'));
    expect(cache.get('ns', 'keep')?.firstObserved).toBe(1_000);
    expect(cache.get('ns', 'new')?.firstObserved).toBe(7_000);
    expect(cache.get('ns', 'change')?.lastChange).toBe(7_000);
    expect(cache.get('other', 'gone')).toBeUndefined();
  });
});

describe('SourceCache as a list-watch sink', () => {
  it('takes the list-watch operations of its type', () => {
    const { cache, summary } = setup();
    const sink: ViewSink<SourceView> = cache;
    sink.replace([app.build()]);
    sink.upsert(app.withHash(H2).build());
    sink.remove(app.build());
    expect(summary()).toEqual(['updated ns/app u1 @1000', 'deleted ns/app u1 @1000']);
  });
});

describe('SourceCaches', () => {
  it('looks up by type and reports unwatched types as never synced', () => {
    const { cache } = setup();
    cache.replace([app.build()]);
    const caches = new SourceCaches({ caches: { CONFIGMAP: cache }, isTypeHealthy: () => true });
    expect(caches.entry('ns', 'CONFIGMAP', 'app')?.view.uid).toBe('u1');
    expect(caches.get('ns', 'CONFIGMAP', 'app')?.uid).toBe('u1');
    expect(caches.get('ns', 'SECRET', 'app')).toBeUndefined();
    expect(caches.namesInNamespace('ns', 'CONFIGMAP')).toEqual(['app']);
    expect(caches.namesInNamespace('ns', 'SECRET')).toEqual([]);
    expect(caches.isSynced('CONFIGMAP')).toBe(true);
    expect(caches.isSynced('SECRET')).toBe(false);
    expect(caches.cache('CONFIGMAP')).toBe(cache);
    expect(aSecret('ns', 'x').build().ref.type).toBe('SECRET');
  });

  it('is healthy for a type only while it is synced and its watch of the namespace is', () => {
    const { cache } = setup();
    const forbidden = new Set(['CONFIGMAP/scoped']);
    const caches = new SourceCaches({
      caches: { CONFIGMAP: cache },
      isTypeHealthy: (type, namespace) => !forbidden.has(`${type}/${namespace}`),
    });
    expect(caches.isHealthy('CONFIGMAP', 'ns')).toBe(false); // not listed yet
    cache.replace([app.build()]);
    expect(caches.isHealthy('CONFIGMAP', 'ns')).toBe(true);
    expect(caches.isHealthy('CONFIGMAP', 'scoped')).toBe(false);
    expect(caches.isHealthy('SECRET', 'ns')).toBe(false); // not watched
  });

  it('gives the §5.4 times of a source by its key', () => {
    const { cache, at } = setup();
    cache.replace([app.build()]);
    at(4_000);
    cache.upsert(app.withHash(H2).build());
    const caches = new SourceCaches({ caches: { CONFIGMAP: cache }, isTypeHealthy: () => true });
    expect(caches.firstObserved('ns', 'configmap/app')).toBe(1_000);
    expect(caches.lastChange('ns', 'configmap/app')).toBe(4_000);
    expect(caches.firstObserved('ns', 'configmap/other')).toBeUndefined();
    expect(caches.lastChange('ns', 'secret/app')).toBeUndefined();
  });
});

describe('sameAnnotations', () => {
  it.each([
    [{}, {}, true],
    [{ a: '1' }, { a: '1' }, true],
    [{ a: '1' }, { a: '2' }, false],
    [{ a: '1' }, {}, false],
    [{}, { a: '1' }, false],
    [{ a: '' }, { b: '' }, false],
  ])('%o vs %o → %s', (a, b, expected) => {
    expect(sameAnnotations(a, b)).toBe(expected);
  });
});

describe('SourceCache cached form', () => {
  const plain = 'hunter2-super-secret-value';
  const wire = Buffer.from(plain, 'utf8').toString('base64');

  /** Every string reachable from `value`, keys included. */
  function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
    if (typeof value === 'string') return [value];
    if (value === null || typeof value !== 'object' || seen.has(value)) return [];
    seen.add(value);
    return Object.entries(value).flatMap(([key, inner]) => [key, ...stringsIn(inner, seen)]);
  }

  it('holds a Secret by digest: neither its wire nor its decoded bytes, nor other metadata', () => {
    const cache = new SourceCache({
      type: 'SECRET',
      clock: { now: () => 1 },
      notify: () => undefined,
    });
    const wireSecret = {
      metadata: {
        name: 'db',
        namespace: 'ns',
        uid: 'u1',
        resourceVersion: '7',
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': `{"data":{"k":"${wire}"}}`,
        },
        managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': { 'f:k': {} } } }],
      },
      data: { k: wire },
      type: 'Opaque',
    };
    const view = projectSecret(wireSecret, { ...DEFAULT_ANNOTATION_KEYS, keepLabels: false });
    if (view === undefined) throw new Error('expected a view');
    cache.replace([view]);
    const strings = stringsIn(cache.get('ns', 'db'));
    expect(strings.some((s) => s.includes(wire) || s.includes(plain))).toBe(false);
    expect(strings.some((s) => s.includes('kubectl'))).toBe(false);
    expect(cache.get('ns', 'db')?.view.hash).toBe(hashSecret({ k: wire }));
  });

  it('shares one frozen empty map for the objects that keep no annotation', () => {
    const keys = { ...DEFAULT_ANNOTATION_KEYS, keepLabels: false };
    const one = projectSecret({ metadata: { name: 'a', namespace: 'ns', uid: 'u1' } }, keys);
    const two = projectSecret({ metadata: { name: 'b', namespace: 'ns', uid: 'u2' } }, keys);
    expect(one?.annotations).toBe(NO_ANNOTATIONS);
    expect(two?.annotations).toBe(NO_ANNOTATIONS);
    expect(Object.isFrozen(NO_ANNOTATIONS)).toBe(true);
  });
});
