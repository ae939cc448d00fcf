import { describe, expect, it } from 'vitest';
import { plainEqual } from './plain-equal.ts';

describe('plainEqual', () => {
  it.each([
    [1, 1, true],
    [1, 2, false],
    ['a', 'a', true],
    [undefined, undefined, true],
    [undefined, null, false],
    [null, {}, false],
    [{}, {}, true],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    [{ a: undefined }, { b: undefined }, false],
    [[1, 2], [1, 2], true],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [{ x: [{ y: 'z' }] }, { x: [{ y: 'z' }] }, true],
    [{ x: [{ y: 'z' }] }, { x: [{ y: 'w' }] }, false],
    [Number.NaN, Number.NaN, true],
    [{ a: 1, b: 2 }, { a: 1 }, false],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 3 }] } }, false],
    [[1, 2], [1, 2, 3], false],
    [{ 0: 1 }, [1], false],
    [Object.create({ inherited: 1 }) as object, {}, true],
    [{}, Object.create({ inherited: 1 }) as object, true],
    [Object.defineProperty({}, 'hidden', { value: 1 }), {}, true],
  ])('%o vs %o → %s', (a, b, expected) => {
    expect(plainEqual(a, b)).toBe(expected);
  });
});
