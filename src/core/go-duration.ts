/**
 * Go `time.ParseDuration` (§12.4), reproduced step by step so that the same strings are accepted and the
 * same overflows rejected. Nanoseconds are accumulated as BigInt (Go uses uint64).
 */

import { ownValue } from './records.ts';

const NANOSECONDS_PER_UNIT: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n, // µ MICRO SIGN
  '\u03bcs': 1_000n, // μ GREEK SMALL LETTER MU
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const TWO_POW_63 = 1n << 63n;
const NANOSECONDS_PER_MILLISECOND = 1_000_000;

function isDigit(char: string | undefined): boolean {
  return char !== undefined && char >= '0' && char <= '9';
}

interface Cursor {
  readonly text: string;
  index: number;
}

/** `leadingInt`: undefined on overflow. */
function leadingInt(cursor: Cursor): bigint | undefined {
  let value = 0n;
  while (isDigit(cursor.text[cursor.index])) {
    value = value * 10n + BigInt(cursor.text.charCodeAt(cursor.index) - 0x30);
    if (value > TWO_POW_63) return undefined;
    cursor.index += 1;
  }
  return value;
}

/** `leadingFraction`: stops gaining precision instead of failing on overflow. */
function leadingFraction(cursor: Cursor): { fraction: bigint; scale: number } {
  let fraction = 0n;
  let scale = 1;
  let overflow = false;
  while (isDigit(cursor.text[cursor.index])) {
    const next = fraction * 10n + BigInt(cursor.text.charCodeAt(cursor.index) - 0x30);
    cursor.index += 1;
    if (overflow || next > TWO_POW_63) {
      overflow = true;
      continue;
    }
    fraction = next;
    scale *= 10;
  }
  return { fraction, scale };
}

function readUnit(cursor: Cursor): bigint | undefined {
  const start = cursor.index;
  while (cursor.index < cursor.text.length) {
    const char = cursor.text[cursor.index];
    if (char === '.' || isDigit(char)) break;
    cursor.index += 1;
  }
  return ownValue(NANOSECONDS_PER_UNIT, cursor.text.slice(start, cursor.index));
}

/** One `<decimal number><unit>` group, in nanoseconds; undefined when invalid or overflowing. */
function readGroup(cursor: Cursor): bigint | undefined {
  const first = cursor.text[cursor.index];
  if (first !== '.' && !isDigit(first)) return undefined;
  const intStart = cursor.index;
  const integer = leadingInt(cursor);
  if (integer === undefined) return undefined;
  const hasInteger = cursor.index !== intStart;
  let fraction = { fraction: 0n, scale: 1 };
  let hasFraction = false;
  if (cursor.text[cursor.index] === '.') {
    cursor.index += 1;
    const fractionStart = cursor.index;
    fraction = leadingFraction(cursor);
    hasFraction = cursor.index !== fractionStart;
  }
  if (!hasInteger && !hasFraction) return undefined;
  const unit = readUnit(cursor);
  if (unit === undefined || integer > TWO_POW_63 / unit) return undefined;
  return integer * unit + fractionNanoseconds(fraction, unit);
}

/** Go: `uint64(float64(f) * (float64(unit) / scale))`, truncated toward zero. */
function fractionNanoseconds(
  { fraction, scale }: { fraction: bigint; scale: number },
  unit: bigint,
): bigint {
  if (fraction === 0n) return 0n;
  return BigInt(Math.trunc(Number(fraction) * (Number(unit) / scale)));
}

function parseNanoseconds(v: string): bigint | undefined {
  const negative = v.startsWith('-');
  const cursor: Cursor = { text: v, index: negative || v.startsWith('+') ? 1 : 0 };
  const rest = v.slice(cursor.index);
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (cursor.index < v.length) {
    const group = readGroup(cursor);
    if (group === undefined || group > TWO_POW_63) return undefined;
    total += group;
    if (total > TWO_POW_63) return undefined;
  }
  if (negative) return -total;
  return total > TWO_POW_63 - 1n ? undefined : total;
}

/** Milliseconds (may be fractional or negative); undefined when Go would reject the string. */
export function parseGoDuration(v: string): number | undefined {
  const nanoseconds = parseNanoseconds(v);
  return nanoseconds === undefined ? undefined : Number(nanoseconds) / NANOSECONDS_PER_MILLISECOND;
}
