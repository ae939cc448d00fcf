import { describe, expect, it } from 'vitest';
import { byCodeUnit } from './order.ts';

describe('byCodeUnit', () => {
  it.each([
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['same', 'same', 0],
    ['Z', 'a', -1],
    ['ä', 'z', 1],
    ['policy-10', 'policy-9', -1],
  ])('%s against %s → %i', (a, b, expected) => {
    expect(byCodeUnit(a, b)).toBe(expected);
  });
});
