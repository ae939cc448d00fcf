import { describe, expect, it } from 'vitest';
import {
  parseBool,
  parseExact,
  parseExcludeList,
  parseReloadList,
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
    expect(parsed.patterns.map((p) => p.source)).toEqual(['ok', 'ok2']);
  });

  it('lists each distinct element once', () => {
    const parsed = parseReloadList('app-(, app-( ,a,a');
    expect(parsed.invalid).toHaveLength(1);
    expect(parsed.patterns.map((p) => p.source)).toEqual(['a']);
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
});
