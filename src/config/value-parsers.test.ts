import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  parseAddressValue,
  parseDurationValue,
  parseIntValue,
  parseUrlValue,
} from './value-parsers.ts';

describe('parseDurationValue (§12.4)', () => {
  it.each<[string, number]>([
    ['300ms', 300],
    ['1.5h', 5_400_000],
    ['2h45m', 9_900_000],
    ['0', 0],
    ['1us', 0.001],
    ['1µs', 0.001],
    ['1μs', 0.001],
    ['+5s', 5000],
  ])('%j → %d ms', (raw, ms) => {
    expect(parseDurationValue(raw, { min: 0, max: Infinity })).toEqual({ ok: true, value: ms });
  });

  it.each(['5', '1d', '1 m', '', '5M', ' 1s', 's', '.s'])('%j is invalid', (raw) => {
    expect(parseDurationValue(raw, { min: 0, max: Infinity }).ok).toBe(false);
  });

  it.each<[string, number, string]>([
    ['-1m', 0, '-1m must not be negative'],
    ['10s', 30_000, '10s is below the minimum of 30s'],
  ])('%j with minimum %d: %s', (raw, min, problem) => {
    expect(parseDurationValue(raw, { min, max: Infinity })).toEqual({ ok: false, problem });
  });

  it('accepts the maximum itself', () => {
    expect(parseDurationValue('1h', { min: 0, max: 3_600_000 })).toEqual({
      ok: true,
      value: 3_600_000,
    });
  });

  it.each<[string, number, string]>([
    ['1h0m0.001s', 3_600_000, '1h0m0.001s is above the maximum of 1h'],
    ['1000h', 86_400_000, '1000h is above the maximum of 24h'],
    // Beyond Go's range is a parse error, not a bound.
    [
      '3000000h',
      86_400_000,
      'invalid duration "3000000h": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
    ],
  ])('%j with maximum %d: %s', (raw, max, problem) => {
    expect(parseDurationValue(raw, { min: 0, max })).toEqual({ ok: false, problem });
  });
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0s'],
    [1500, '1500ms'],
    [2000, '2s'],
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [3_661_000, '1h1m1s'],
    [0.5, '0.5ms'],
  ])('%d → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('parseIntValue', () => {
  it.each<[string, number]>([
    ['1', 1],
    ['+2', 2],
    ['064', 64],
  ])('%j → %d', (raw, value) => {
    expect(parseIntValue(raw, { min: 1, max: 64 })).toEqual({ ok: true, value });
  });

  it.each(['', '1.0', '0x10', ' 3', '3 ', 'three'])('%j is not an integer', (raw) => {
    expect(parseIntValue(raw, { min: 1, max: 64 })).toEqual({
      ok: false,
      problem: `invalid value "${raw}": expected an integer`,
    });
  });
});

describe('parseAddressValue', () => {
  it.each([
    [':6060', { host: undefined, port: 6060 }],
    ['0.0.0.0:1', { host: '0.0.0.0', port: 1 }],
    ['localhost:6060', { host: 'localhost', port: 6060 }],
    ['[::]:6060', { host: '::', port: 6060 }],
    ['[]:6060', { host: undefined, port: 6060 }],
  ])('%j', (raw, address) => {
    expect(parseAddressValue(raw)).toEqual({ ok: true, value: address });
  });

  it.each(['6060', '::1:6060', 'host:', ':0', 'a:b:1', '[::1]6060'])('%j is invalid', (raw) => {
    expect(parseAddressValue(raw).ok).toBe(false);
  });
});

describe('parseUrlValue', () => {
  it.each(['http://a', 'https://hooks.slack.com/services/T/B/X?x=1', 'http://[::1]:8080/p'])(
    '%j',
    (raw) => {
      expect(parseUrlValue(raw)).toEqual({ ok: true, value: raw });
    },
  );

  it.each<[string, string]>([
    ['example.com', 'invalid URL: expected an absolute http(s) URL'],
    ['mailto:a@b', 'invalid URL: scheme must be http or https, not mailto'],
    ['file:///x', 'invalid URL: scheme must be http or https, not file'],
  ])('%j: %s', (raw, problem) => {
    expect(parseUrlValue(raw)).toEqual({ ok: false, problem });
  });
});
