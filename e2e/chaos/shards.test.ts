import { describe, expect, it } from 'vitest';
import { bucketOf } from '../../src/shard/assignment.ts';
import { movement, namespacesOf, settled, SHARD_BUCKETS, type BucketHolders } from './shards.ts';

/** `SHARD_BUCKETS` holders: `a` everywhere except the given buckets. */
function holders(overrides: Readonly<Record<number, string | undefined>>): BucketHolders {
  return Array.from({ length: SHARD_BUCKETS }, (_unused, bucket) =>
    bucket in overrides ? overrides[bucket] : 'a',
  );
}

/** Namespace names in `count` different buckets, found by hashing, with their buckets. */
function inDistinctBuckets(count: number): { names: string[]; buckets: number[] } {
  const names: string[] = [];
  const buckets: number[] = [];
  for (let index = 0; names.length < count; index += 1) {
    const name = `team-${String(index)}`;
    const bucket = bucketOf(name, SHARD_BUCKETS);
    if (buckets.includes(bucket)) continue;
    names.push(name);
    buckets.push(bucket);
  }
  return { names, buckets };
}

describe('shard Leases as the rows judge them', () => {
  it.each([
    { name: 'every bucket held, every member holding', holders: holders({ 0: 'b' }), ok: true },
    { name: 'a bucket without holder', holders: holders({ 0: 'b', 1: undefined }), ok: false },
    { name: 'a bucket held by a non-member', holders: holders({ 0: 'b', 1: 'dead' }), ok: false },
    { name: 'a member holding nothing', holders: holders({}), ok: false },
  ])('settled over a, b: $name', ({ holders: given, ok }) => {
    expect(settled(given, ['a', 'b'])).toBe(ok);
  });

  it('counts buckets moved, those that went to an old member, and the namespaces in them', () => {
    const {
      names: [joinedOne, movedAmongOld, stayed],
      buckets: [toNew, toOld],
    } = inDistinctBuckets(3);
    if (toNew === undefined || toOld === undefined) throw new Error('no buckets');
    const before = holders({ [toNew]: 'b' });
    const after = holders({ [toNew]: 'new', [toOld]: 'b' });
    const namespaces = [joinedOne ?? '', movedAmongOld ?? '', stayed ?? ''];
    expect(movement(before, after, ['new'], namespaces)).toEqual({
      buckets: 2,
      toOldMembers: 1,
      namespaces: 2,
    });
    expect(namespacesOf(after, 'new', namespaces)).toEqual([joinedOne]);
    expect(movement(before, before, ['new'], namespaces)).toEqual({
      buckets: 0,
      toOldMembers: 0,
      namespaces: 0,
    });
  });
});
