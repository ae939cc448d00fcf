import { describe, expect, it } from 'vitest';
import {
  parseBool,
  parseExact,
  parseExcludeList,
  parseReloadList,
  RELOAD_LIST_LIMITS,
  ReloadListCache,
  reloadListMatches,
  splitList,
} from './annotation-values.ts';

describe('parseBool (Go ParseBool, §3.3)', () => {
  it.each([
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((v) => ({ v, expected: true })),
    ...['0', 'f', 'F', 'FALSE', 'false', 'False'].map((v) => ({ v, expected: false })),
    ...['', 'yes', 'no', ' true', 'true ', 'tRUE', 'on', '2', 'y'].map((v) => ({
      v,
      expected: undefined,
    })),
  ])('$v → $expected', ({ v, expected }) => {
    expect(parseBool(v)).toBe(expected);
  });
});

describe('parseExact (§3.3)', () => {
  it.each([
    { v: 'true', expected: 'true' },
    { v: 'false', expected: 'false' },
    { v: '', expected: 'empty' },
    { v: 'True', expected: 'invalid' },
    { v: '1', expected: 'invalid' },
    { v: 'yes', expected: 'invalid' },
    { v: ' true', expected: 'invalid' },
  ])('$v → $expected', ({ v, expected }) => {
    expect(parseExact(v)).toBe(expected);
  });
});

describe('splitList / parseExcludeList (§3.4)', () => {
  it.each([
    { v: '', expected: [] },
    { v: 'a', expected: ['a'] },
    { v: ' a , b ,, c,', expected: ['a', 'b', 'c'] },
    { v: '\ta\n,\u00a0b\u3000', expected: ['a', 'b'] },
    { v: ' , ,', expected: [] },
    { v: 'a b', expected: ['a b'] },
    // Go's TrimSpace removes U+0085 but not U+FEFF (JS trim does the opposite).
    { v: '\u0085a\u0085,\ufeffb', expected: ['a', '\ufeffb'] },
  ])('$v → $expected', ({ v, expected }) => {
    expect(splitList(v)).toEqual(expected);
    expect(parseExcludeList(v)).toEqual(expected);
  });
});

describe('parseReloadList (§3.4)', () => {
  it.each([
    { list: 'app-config', name: 'app-config', matches: true },
    { list: 'app-config', name: 'app-config-2', matches: false },
    { list: 'app-config', name: 'my-app-config', matches: false },
    { list: 'a|b', name: 'a', matches: true },
    { list: 'a|b', name: 'b', matches: true },
    { list: 'a|b', name: 'ab', matches: false },
    { list: 'a|b', name: 'axx', matches: false },
    { list: 'a|b', name: 'xxb', matches: false },
    { list: 'my.cm', name: 'myxcm', matches: true },
    { list: 'my.cm', name: 'my.cm', matches: true },
    { list: 'my\\.cm', name: 'myxcm', matches: false },
    { list: 'app-.*', name: 'app-x', matches: true },
    { list: 'app-.*', name: 'xapp-x', matches: false },
    { list: '.*', name: 'anything', matches: true },
    { list: 'a|ab', name: 'ab', matches: true },
    { list: ' one , two ', name: 'two', matches: true },
    { list: 'one,two', name: 'one,two', matches: false },
    { list: 'app-(,app-[0-9]+', name: 'app-12', matches: true },
    { list: '', name: '', matches: false },
    { list: '^a$', name: 'a', matches: true },
  ])('$list vs $name → $matches', ({ list, name, matches }) => {
    expect(reloadListMatches(parseReloadList(list), name)).toBe(matches);
  });

  it.each([
    { element: 'app-(', error: 'missing closing )' },
    { element: '[a', error: 'missing closing ]' },
    { element: '*', error: 'missing argument to repetition operator' },
    { element: 'a**', error: 'invalid nested repetition operator' },
    // Compiled alone, so it cannot break out of the anchoring group.
    { element: 'a)|(b', error: 'unexpected )' },
  ])('$element is invalid: $error', ({ element, error }) => {
    const parsed = parseReloadList(`ok, ${element} ,ok2`);
    expect(parsed.invalid).toEqual([{ element, error }]);
    expect(parsed.overLimit).toBeUndefined();
    expect(parsed.patterns.map((p) => p.source)).toEqual(['ok', 'ok2']);
  });

  it('lists each distinct element once', () => {
    const parsed = parseReloadList('app-(, app-( ,a,a');
    expect(parsed.invalid).toHaveLength(1);
    expect(parsed.patterns.map((p) => p.source)).toEqual(['a']);
  });
});

describe('parseReloadList limits (§3.4 item 5, ADR 0018)', () => {
  const limits = RELOAD_LIST_LIMITS;
  const hostileElement = `(?:${'[a-b][a-c]'.repeat(250)}){1000}`;
  const names = (count: number): string =>
    Array.from({ length: count }, (_, index) => `cm-${index}`).join(',');

  it.each([
    {
      name: 'an element longer than maxElementLength',
      value: `ok,${'a'.repeat(limits.maxElementLength + 1)}`,
      patterns: ['ok'],
      invalid: [
        { element: `${'a'.repeat(64)}…`, error: '1025 characters, more than the 1024 allowed' },
      ],
    },
    {
      name: 'an element of exactly maxElementLength',
      value: `ok,${'a'.repeat(limits.maxElementLength)}`,
      patterns: ['ok', 'a'.repeat(limits.maxElementLength)],
      invalid: [],
    },
    {
      name: 'a short element that expands beyond maxElementCost',
      value: 'ok,(?:(?:[a-z]{10}){10}){10}',
      patterns: ['ok'],
      invalid: [
        {
          element: '(?:(?:[a-z]{10}){10}){10}',
          error: 'too complex: estimated cost 4571, more than the 2000 allowed',
        },
      ],
    },
    {
      name: 'Unicode classes weigh more than one instruction',
      value: '\\pL{200},[a-z]{200}',
      patterns: ['[a-z]{200}'],
      invalid: [
        {
          element: '\\pL{200}',
          error: 'too complex: estimated cost 4472, more than the 2000 allowed',
        },
      ],
    },
    {
      name: 'four hostile elements in a 20 KiB value',
      value: [
        hostileElement,
        hostileElement + 'x',
        hostileElement + 'y',
        hostileElement + 'z',
        'ok',
      ].join(','),
      patterns: ['ok'],
      invalid: ['', 'x', 'y', 'z'].map((suffix) => ({
        element: `${hostileElement.slice(0, 64)}…`,
        error: `${hostileElement.length + (suffix === '' ? 0 : 1)} characters, more than the 1024 allowed`,
      })),
    },
  ])('$name', ({ value, patterns, invalid }) => {
    const parsed = parseReloadList(value);
    expect(parsed.patterns.map((p) => p.source)).toEqual(patterns);
    expect(parsed.invalid).toEqual(invalid);
    expect(parsed.overLimit).toBeUndefined();
  });

  it.each([
    {
      name: 'a value longer than maxValueLength is ignored whole',
      value: `ok,${'b,'.repeat(limits.maxValueLength / 2)}`,
      patterns: [],
      overLimit: {
        problem: 'reload list is 32771 characters long, more than the 32768 allowed',
        consequence: 'the whole list is ignored',
      },
    },
    {
      name: 'elements beyond maxElements are ignored',
      value: names(limits.maxElements + 5),
      patterns: names(limits.maxElements).split(','),
      overLimit: {
        problem: 'reload list has 105 distinct elements, more than the 100 allowed',
        consequence: 'the elements after the 100th are ignored',
      },
    },
    {
      name: 'repeated elements count once',
      value: `${names(limits.maxElements)},${names(limits.maxElements)}`,
      patterns: names(limits.maxElements).split(','),
      overLimit: undefined,
    },
    {
      name: 'elements that together exceed maxValueCost',
      value: Array.from({ length: 8 }, (_, index) => `e${index}[a-z]{600}`).join(','),
      patterns: ['e0', 'e1', 'e2', 'e3', 'e4'].map((prefix) => `${prefix}[a-z]{600}`),
      overLimit: {
        problem: 'reload list is too complex: estimated cost over the 10000 allowed',
        consequence: '"e5[a-z]{600}" and the elements after it are ignored',
      },
    },
  ])('$name', ({ value, patterns, overLimit }) => {
    const parsed = parseReloadList(value);
    expect(parsed.patterns.map((p) => p.source)).toEqual(patterns);
    expect(parsed.invalid).toEqual([]);
    expect(parsed.overLimit).toEqual(overLimit);
  });
});

describe('ReloadListCache', () => {
  it('returns the same parse for the same value', () => {
    const cache = new ReloadListCache();
    expect(cache.get('a,b')).toBe(cache.get('a,b'));
    expect(cache.get('a,b')).not.toBe(cache.get('a,c'));
  });

  it('drops the least recently used value beyond maxEntries', () => {
    const cache = new ReloadListCache({ maxEntries: 2 });
    const first = cache.get('one');
    cache.get('two');
    cache.get('one');
    cache.get('three');
    expect(cache.size).toBe(2);
    expect(cache.get('one')).toBe(first);
    const two = cache.get('two');
    expect(reloadListMatches(two, 'two')).toBe(true);
    expect(cache.size).toBe(2);
  });

  it('drops the least recently used values beyond maxBytes', () => {
    const heavy = (index: number): string => `h${index}[a-z]{200}`;
    const cache = new ReloadListCache({ maxBytes: 120_000 });
    const first = cache.get(heavy(0));
    cache.get(heavy(1));
    expect(cache.size).toBe(2);
    cache.get(heavy(2));
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBeLessThanOrEqual(120_000);
    expect(cache.get(heavy(0))).not.toBe(first);
  });

  it('keeps the newest value even when it alone exceeds maxBytes', () => {
    const cache = new ReloadListCache({ maxBytes: 10 });
    const parsed = cache.get('a,b');
    expect(cache.get('a,b')).toBe(parsed);
    expect(cache.size).toBe(1);
  });
});
