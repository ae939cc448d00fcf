import { describe, expect, it } from 'vitest';
import { distribution, median, percentile, ratio, relativeSpread } from './stats.ts';

describe('percentile (nearest rank)', () => {
  it.each([
    { p: 50, expected: 5 },
    { p: 95, expected: 10 },
    { p: 99, expected: 10 },
    { p: 100, expected: 10 },
    { p: 0, expected: 1 },
  ])('p$p of 1..10 is $expected', ({ p, expected }) => {
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p)).toBe(expected);
  });

  it('is null without samples', () => {
    expect(percentile([], 50)).toBeNull();
  });
});

it('distribution sorts, rounds and counts', () => {
  expect(distribution([30.04, 10, 20])).toEqual({
    count: 3,
    p50: 20,
    p95: 30,
    p99: 30,
    max: 30,
    mean: 20,
  });
  expect(distribution([])).toEqual({
    count: 0,
    p50: null,
    p95: null,
    p99: null,
    max: null,
    mean: null,
  });
});

it.each([
  { a: 3, b: 2, expected: 1.5 },
  { a: 3, b: 0, expected: null },
  { a: null, b: 2, expected: null },
])('ratio($a, $b) = $expected', ({ a, b, expected }) => {
  expect(ratio(a, b)).toBe(expected);
});

it('relativeSpread is (max − min) ÷ median, null for one value', () => {
  expect(relativeSpread([90, 100, 110])).toBe(0.2);
  expect(relativeSpread([100])).toBeNull();
  expect(median([3, 1, 2])).toBe(2);
});
