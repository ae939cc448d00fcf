import { describe, expect, it } from 'vitest';
import { parseGoDuration } from './go-duration.ts';

describe('parseGoDuration (§12.4)', () => {
  it.each([
    { v: '300ms', ms: 300 },
    { v: '1.5h', ms: 5_400_000 },
    { v: '2h45m', ms: 9_900_000 },
    { v: '0', ms: 0 },
    { v: '-0', ms: 0 },
    { v: '+0', ms: 0 },
    { v: '-1m', ms: -60_000 },
    { v: '+5s', ms: 5_000 },
    { v: '0s', ms: 0 },
    { v: '.5s', ms: 500 },
    { v: '5.s', ms: 5_000 },
    { v: '1us', ms: 0.001 },
    { v: '1\u00b5s', ms: 0.001 },
    { v: '1\u03bcs', ms: 0.001 },
    { v: '1000000ns', ms: 1 },
    { v: '1h1m1s1ms', ms: 3_661_001 },
    { v: '1m1m', ms: 120_000 },
    { v: '0.3333333333333333333h', ms: 1_200_000 },
    { v: '9223372036854775807ns', ms: 9_223_372_036_854.775 },
    { v: '-9223372036854775808ns', ms: -9_223_372_036_854.775 },
    { v: '2562047h47m16.854775807s', ms: 9_223_372_036_854.775 },
  ])('$v → $ms ms', ({ v, ms }) => {
    expect(parseGoDuration(v)).toBeCloseTo(ms, 6);
  });

  it.each([
    '5',
    '1d',
    '1 m',
    '',
    '5M',
    '-',
    '+',
    '.',
    's',
    '.s',
    '-.s',
    '00',
    '1.5',
    '1s2',
    '5 minutes',
    ' 1s',
    '1s ',
    '1S',
    '3000000h',
    '9223372036854775808ns',
    '-9223372036854775809ns',
    '2562047h47m16.854775808s',
    '99999999999999999999s',
  ])('%j is invalid', (v) => {
    expect(parseGoDuration(v)).toBeUndefined();
  });
});
