import { describe, expect, it } from 'vitest';
import { splitListValue } from './list-values.ts';

describe('splitListValue (§12.3)', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['a', ['a']],
    ['a,b', ['a', 'b']],
    [' a , b ', ['a', 'b']],
    ['a,,b,', ['a', 'b']],
    ['"a,b",c', ['a,b', 'c']],
    ['"a""b"', ['a"b']],
    ['"a"', ['a']],
    ['k in (a,b),!x', ['k in (a,b)', '!x']],
    ['k in (a,(b,c)),d', ['k in (a,(b,c))', 'd']],
    ['a),b', ['a)', 'b']],
  ])('%j → %j', (value, items) => {
    expect(splitListValue(value)).toEqual({ ok: true, items });
  });

  it('rejects an unterminated quote', () => {
    expect(splitListValue('"a,b')).toEqual({ ok: false, problem: 'unterminated quote in ""a,b"' });
  });
});
