import { describe, expect, it } from 'vitest';
import {
  BACKOFF_POLICIES,
  backoffDelay,
  deliveryRetryDelay,
  queueRetryDelay,
  watchRetryDelay,
  writeRetryDelay,
} from './backoff.ts';

const middle = (): number => 0.5;
const lowest = (): number => 0;
const almostHighest = (): number => 0.999_999;

describe('backoffDelay', () => {
  it.each([
    // policy, retry, random, expected ms
    ['write', 0, middle, 250],
    ['write', 1, middle, 500],
    ['write', 4, middle, 4_000],
    ['write', 5, middle, 8_000],
    ['write', 9, middle, 8_000],
    ['write', 0, lowest, 200],
    ['write', 5, lowest, 6_400],
    ['write', 5, almostHighest, 9_600],
    ['watch', 0, middle, 1_000],
    ['watch', 4, middle, 16_000],
    ['watch', 5, middle, 30_000],
    ['watch', 50, lowest, 24_000],
    ['queue', 0, middle, 1_000],
    ['queue', 8, middle, 256_000],
    ['queue', 9, middle, 300_000],
    ['queue', 2_000, almostHighest, 360_000],
    ['queue', -3, middle, 1_000],
  ] as const)('%s retry %i → %i ms', (policy, retry, random, expected) => {
    expect(backoffDelay(BACKOFF_POLICIES[policy], retry, random)).toBe(expected);
  });

  it('names each place that retries', () => {
    expect(watchRetryDelay(2, middle)).toBe(4_000);
    expect(queueRetryDelay(3, middle)).toBe(8_000);
  });
});

describe('writeRetryDelay', () => {
  it.each([
    [{ retry: 2, random: middle }, 1_000],
    [{ retry: 2, random: middle, retryAfterMs: 5_000 }, 5_000],
    [{ retry: 2, random: middle, retryAfterMs: 120_000 }, 30_000],
    [{ retry: 2, random: middle, retryAfterMs: 0 }, 0],
    [{ retry: 2, random: middle, retryAfterMs: Number.NaN }, 1_000],
    [{ retry: 2, random: middle, retryAfterMs: -1 }, 1_000],
  ])('%o → %i ms', (input, expected) => {
    expect(writeRetryDelay(input)).toBe(expected);
  });
});

describe('deliveryRetryDelay (alerts and webhook, §13.6, §13.7)', () => {
  it('waits 1 s, 2 s, 4 s, 8 s, 16 s after the 1st … 5th failure, without jitter', () => {
    expect([1, 2, 3, 4, 5].map(deliveryRetryDelay)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });
});
