import { describe, expect, it } from 'vitest';
import { ShardCacheScope } from './cache-scope.ts';

/** Namespaces `b<n>-…` fall in bucket n; each refill is answered by the test. */
function scope() {
  const refills: PromiseWithResolvers<undefined>[] = [];
  let filled = 0;
  const cache = new ShardCacheScope({
    bucketCount: 4,
    bucketOf: (namespace) => Number(namespace.slice(1, 2)),
    refill: () => {
      const refill = Promise.withResolvers<undefined>();
      refills.push(refill);
      return refill.promise;
    },
    onFilled: () => {
      filled += 1;
    },
  });
  return { cache, refills, filled: () => filled };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ShardCacheScope', () => {
  it('holds the wanted buckets at once, filled only after a refill asked for them', async () => {
    const { cache, refills, filled } = scope();
    expect(cache.holds('b1-x')).toBe(false);
    cache.update(new Set([1, 2]));
    expect([cache.holds('b1-x'), cache.holds('b2-x'), cache.holds('b3-x')]).toEqual([
      true,
      true,
      false,
    ]);
    expect([cache.isFilled(1), cache.isFilled(2)]).toEqual([false, false]);
    refills[0]?.resolve(undefined);
    await settle();
    expect([cache.isFilled(1), cache.isFilled(2)]).toEqual([true, true]);
    expect(filled()).toBe(1);
  });

  it('the same set again asks for no refill', () => {
    const { cache, refills } = scope();
    cache.update(new Set([1]));
    cache.update(new Set([1]));
    expect(refills).toHaveLength(1);
  });

  it('a bucket that leaves is dropped at once and refilled (emptied) by a relist', () => {
    const { cache, refills } = scope();
    cache.update(new Set([1, 2]));
    cache.update(new Set([2]));
    expect(cache.holds('b1-x')).toBe(false);
    expect(refills).toHaveLength(2);
  });

  it('an older refill finishing does not mark a bucket that left and joined again', async () => {
    const { cache, refills } = scope();
    cache.update(new Set([1]));
    cache.update(new Set([]));
    cache.update(new Set([1]));
    refills[0]?.resolve(undefined);
    await settle();
    expect(cache.isFilled(1)).toBe(false);
    refills[2]?.resolve(undefined);
    await settle();
    expect(cache.isFilled(1)).toBe(true);
  });
});
