import { describe, expect, it } from 'vitest';
import { readTestFailpoint } from './test-failpoint.ts';

describe('readTestFailpoint', () => {
  it.each([
    { value: undefined, read: {} },
    { value: '', read: {} },
    { value: 'baseline-store-write', read: { failpoint: 'baseline-store-write' } },
    { value: 'toString', read: { unknown: 'toString' } },
    { value: 'baseline-store', read: { unknown: 'baseline-store' } },
  ])('$value → $read', ({ value, read }) => {
    expect(readTestFailpoint({ KRELOAD_TEST_FAILPOINT: value })).toEqual(read);
  });
});
