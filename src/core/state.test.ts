import { describe, expect, it } from 'vitest';
import {
  compareUtf8,
  formatHashMap,
  formatLastReloadedFrom,
  HashMapCache,
  type LastReloadedFrom,
  parseHashMap,
  parseLastReloadedFrom,
} from './state.ts';
import type { SourceKey } from './types.ts';

const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H2 = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';

describe('formatHashMap (§3.2)', () => {
  it('writes the spec example exactly', () => {
    const map = new Map<SourceKey, string>([
      ['secret/db', H2],
      ['configmap/app-config', H1],
    ]);
    expect(formatHashMap(map)).toBe(`{"configmap/app-config":"${H1}","secret/db":"${H2}"}`);
  });

  it('sorts keys byte-wise (upper case first, UTF-8 order for non-ASCII)', () => {
    const map = new Map<SourceKey, string>([
      ['configmap/b', H1],
      ['configmap/\u{1F600}', H1],
      ['configmap/\uFF5E', H1],
      ['configmap/B', H1],
      ['configmap/a', H1],
    ]);
    expect(Object.keys(JSON.parse(formatHashMap(map) ?? '') as object)).toEqual([
      'configmap/B',
      'configmap/a',
      'configmap/b',
      'configmap/\uFF5E',
      'configmap/\u{1F600}',
    ]);
  });

  it('is null for an empty map', () => {
    expect(formatHashMap(new Map())).toBeNull();
  });

  it('round-trips through parseHashMap', () => {
    const map = new Map<SourceKey, string>([
      ['secretproviderclass/vault', H2],
      ['configmap/x', H1],
    ]);
    expect(parseHashMap(formatHashMap(map) ?? undefined)).toEqual({ map, malformed: false });
  });
});

describe('parseHashMap (§5.1: malformed counts as absent)', () => {
  it.each([
    { v: undefined, map: undefined, malformed: false },
    { v: '{}', map: new Map(), malformed: false },
    { v: `{"configmap/a":"${H1}"}`, map: new Map([['configmap/a', H1]]), malformed: false },
    { v: ` { "secret/a" : "${H2}" } `, map: new Map([['secret/a', H2]]), malformed: false },
    { v: '', map: undefined, malformed: true },
    { v: 'not json', map: undefined, malformed: true },
    { v: '[]', map: undefined, malformed: true },
    { v: 'null', map: undefined, malformed: true },
    { v: '"x"', map: undefined, malformed: true },
    { v: `{"configmap/a":"${H1.toUpperCase()}"}`, map: undefined, malformed: true },
    { v: `{"configmap/a":"${H1.slice(1)}"}`, map: undefined, malformed: true },
    { v: `{"configmap/a":"${H1}0"}`, map: undefined, malformed: true },
    {
      v: '{"configmap/a":"zz30e0faa89a70dec1033016a2309bbeb9efcbd0"}',
      map: undefined,
      malformed: true,
    },
    { v: '{"configmap/a":1}', map: undefined, malformed: true },
    { v: '{"configmap/a":null}', map: undefined, malformed: true },
    { v: `{"deployment/a":"${H1}"}`, map: undefined, malformed: true },
    { v: `{"configmap/":"${H1}"}`, map: undefined, malformed: true },
    { v: `{"noslash":"${H1}"}`, map: undefined, malformed: true },
    { v: `{"configmap/a":"${H1}","secret/b":"bad"}`, map: undefined, malformed: true },
  ])('$v', ({ v, map, malformed }) => {
    expect(parseHashMap(v)).toEqual({ map, malformed });
  });
});

const example: LastReloadedFrom = {
  type: 'CONFIGMAP',
  name: 'app-config',
  namespace: 'team-a',
  hash: H1,
  containerRefs: ['app'],
  observedAt: 1767225600,
};

const EXAMPLE_JSON = `{"type":"CONFIGMAP","name":"app-config","namespace":"team-a","hash":"${H1}","containerRefs":["app"],"observedAt":1767225600}`;

describe('formatLastReloadedFrom (§6.2)', () => {
  it('writes the spec example exactly', () => {
    expect(formatLastReloadedFrom(example)).toBe(EXAMPLE_JSON);
  });

  it('escapes < > & U+2028 U+2029 as Go does', () => {
    expect(
      formatLastReloadedFrom({ ...example, name: 'a<b>&c\u2028\u2029', containerRefs: ['x&y'] }),
    ).toBe(
      `{"type":"CONFIGMAP","name":"a\\u003cb\\u003e\\u0026c\\u2028\\u2029","namespace":"team-a","hash":"${H1}","containerRefs":["x\\u0026y"],"observedAt":1767225600}`,
    );
  });

  it('writes several and no container refs', () => {
    expect(formatLastReloadedFrom({ ...example, containerRefs: ['a', 'b'] })).toContain(
      '"containerRefs":["a","b"]',
    );
    expect(formatLastReloadedFrom({ ...example, containerRefs: [] })).toContain(
      '"containerRefs":[]',
    );
  });

  it('writes observedAt as an integer', () => {
    expect(formatLastReloadedFrom({ ...example, observedAt: 1767225600.9 })).toContain(
      '"observedAt":1767225600}',
    );
  });
});

describe('parseLastReloadedFrom (§5.1, §6.2)', () => {
  it.each([
    { rule: 'absent', v: undefined, value: undefined, malformed: false },
    { rule: 'the spec example', v: EXAMPLE_JSON, value: example, malformed: false },
    {
      rule: 'a Reloader document with null containerRefs',
      v: `{"type":"SECRET","name":"db","namespace":"ns","hash":"${H2}","containerRefs":null,"observedAt":1}`,
      value: {
        type: 'SECRET',
        name: 'db',
        namespace: 'ns',
        hash: H2,
        containerRefs: [],
        observedAt: 1,
      },
      malformed: false,
    },
    {
      rule: 'optional fields absent',
      v: `{"type":"SECRETPROVIDERCLASS","name":"v","namespace":"ns","hash":"${H2}"}`,
      value: {
        type: 'SECRETPROVIDERCLASS',
        name: 'v',
        namespace: 'ns',
        hash: H2,
        containerRefs: [],
        observedAt: 0,
      },
      malformed: false,
    },
    {
      rule: 'escaped names decode',
      v: `{"type":"CONFIGMAP","name":"a\\u003cb","namespace":"ns","hash":"${H1}","containerRefs":["app"],"observedAt":5}`,
      value: { ...example, name: 'a<b', namespace: 'ns', observedAt: 5 },
      malformed: false,
    },
    { rule: 'empty', v: '', value: undefined, malformed: true },
    { rule: 'not JSON', v: '{', value: undefined, malformed: true },
    { rule: 'an array', v: '[]', value: undefined, malformed: true },
    {
      rule: 'unknown type',
      v: EXAMPLE_JSON.replace('CONFIGMAP', 'configmap'),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'hash not hex',
      v: EXAMPLE_JSON.replace(H1, 'x'.repeat(40)),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'hash upper case',
      v: EXAMPLE_JSON.replace(H1, H1.toUpperCase()),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'name missing',
      v: EXAMPLE_JSON.replace('"name":"app-config",', ''),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'namespace not a string',
      v: EXAMPLE_JSON.replace('"team-a"', '1'),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'containerRefs not strings',
      v: EXAMPLE_JSON.replace('["app"]', '[1]'),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'containerRefs not an array',
      v: EXAMPLE_JSON.replace('["app"]', '"app"'),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'observedAt fractional',
      v: EXAMPLE_JSON.replace('1767225600', '1.5'),
      value: undefined,
      malformed: true,
    },
    {
      rule: 'observedAt a string',
      v: EXAMPLE_JSON.replace('1767225600', '"1767225600"'),
      value: undefined,
      malformed: true,
    },
  ])('$rule', ({ v, value, malformed }) => {
    expect(parseLastReloadedFrom(v)).toEqual({ value, malformed });
  });

  it('round-trips', () => {
    const odd: LastReloadedFrom = { ...example, name: 'a<&>\u2028', containerRefs: ['c1', 'c2'] };
    expect(parseLastReloadedFrom(formatLastReloadedFrom(odd))).toEqual({
      value: odd,
      malformed: false,
    });
  });
});

describe('compareUtf8', () => {
  const samples = [
    '',
    'a',
    'ab',
    'b',
    'configmap/app',
    'configmap/app-config',
    'configmap/app.config',
    'secret/app',
    'Z',
    '\u00e9',
    '\u07ff',
    '\u0800',
    '\ud7ff',
    '\ue000',
    '\uffff',
    '\u{10000}',
    '\u{1f600}',
    'a\u{1f600}',
    'a\uffff',
  ];
  it('orders as Buffer.compare of the UTF-8 bytes, for every pair', () => {
    for (const a of samples) {
      for (const b of samples) {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        expect([a, b, Math.sign(compareUtf8(a, b))]).toEqual([a, b, bytes]);
      }
    }
  });
});

describe('HashMapCache', () => {
  const value = (n: number): string => `{"configmap/c${String(n)}":"${'a'.repeat(40)}"}`;

  it('parses each distinct value once, as parseHashMap does', () => {
    const cache = new HashMapCache();
    const first = cache.parse(value(1));
    // An equal value read from another workload: the same parsed map.
    expect(cache.parse(value(1).slice(0))).toBe(first);
    expect(first).toEqual(parseHashMap(value(1)));
    expect(cache.parse('{bad')).toEqual({ map: undefined, malformed: true });
    expect(cache.parse(undefined)).toEqual({ map: undefined, malformed: false });
  });

  it('keeps the 16 most recently used values', () => {
    const cache = new HashMapCache();
    const kept = cache.parse(value(0));
    const oldest = cache.parse(value(1));
    for (let n = 2; n <= 20; n += 1) {
      cache.parse(value(n));
      expect(cache.parse(value(0))).toBe(kept);
    }
    expect(cache.size).toBe(16);
    expect(cache.parse(value(1))).not.toBe(oldest);
    expect(cache.parse(value(20))).toBe(cache.parse(value(20)));
  });
});
