import { describe, expect, it } from 'vitest';
import { assignBuckets, bucketOf, movedBuckets, ownerOf } from './assignment.ts';

const members = (count: number): string[] =>
  Array.from({ length: count }, (_, index) => `kreload-7d9f8c-${String(index)}`);

describe('bucketOf', () => {
  it.each([
    ['default', 32],
    ['kube-system', 32],
    ['team-a', 1],
    ['a'.repeat(63), 4096],
  ])('%s over %i buckets: in range and stable', (namespace, count) => {
    const bucket = bucketOf(namespace, count);
    expect(bucket).toBeGreaterThanOrEqual(0);
    expect(bucket).toBeLessThan(count);
    expect(bucketOf(namespace, count)).toBe(bucket);
  });

  it('spreads 6,000 namespaces over 32 buckets within 25% of even', () => {
    const counts = new Array<number>(32).fill(0);
    for (let index = 0; index < 6000; index += 1) {
      const bucket = bucketOf(`ns-${String(index)}`, 32);
      counts[bucket] = (counts[bucket] ?? 0) + 1;
    }
    for (const count of counts) expect(Math.abs(count - 6000 / 32)).toBeLessThan(6000 / 32 / 4);
  });
});

describe('ownerOf', () => {
  it('no member: no owner', () => {
    expect(ownerOf(0, [])).toBeUndefined();
  });

  it('does not depend on the order members are listed in', () => {
    const list = members(5);
    for (let bucket = 0; bucket < 64; bucket += 1) {
      expect(ownerOf(bucket, [...list].reverse())).toBe(ownerOf(bucket, list));
    }
  });
});

describe('movedBuckets: a membership change moves about 1/N of the buckets', () => {
  const BUCKETS = 1024;
  it.each([
    // [from, to, expected share moved]
    [3, 5, 2 / 5],
    [3, 4, 1 / 4],
    [5, 3, 2 / 5],
    [3, 2, 1 / 3],
    [1, 3, 2 / 3],
  ])(
    '%i → %i members moves %f of the buckets (±0.05), only to or from the changed ones',
    (from, to, share) => {
      const before = assignBuckets(members(from), BUCKETS);
      const after = assignBuckets(members(to), BUCKETS);
      const moved = movedBuckets(before, after);
      expect(Math.abs(moved.length / BUCKETS - share)).toBeLessThan(0.05);
      const kept = new Set(members(Math.min(from, to)));
      for (const bucket of moved) {
        // Growing: every moved bucket goes to a new member; shrinking: comes from a removed one.
        const changedSide = from < to ? after[bucket] : before[bucket];
        expect(kept.has(changedSide ?? '')).toBe(false);
      }
    },
  );

  it('3 → 2: only the dead member’s buckets move, each to a survivor', () => {
    const three = members(3);
    const dead = three[1] ?? '';
    const before = assignBuckets(three, 32);
    const after = assignBuckets(
      three.filter((member) => member !== dead),
      32,
    );
    const moved = movedBuckets(before, after);
    expect(moved).toEqual(before.flatMap((owner, bucket) => (owner === dead ? [bucket] : [])));
    for (const bucket of moved) expect(after[bucket]).not.toBe(dead);
  });

  it('3 → 5 over the default 32 buckets: at most 2/5 plus sampling noise, never between old members', () => {
    const before = assignBuckets(members(3), 32);
    const after = assignBuckets(members(5), 32);
    const moved = movedBuckets(before, after);
    const old = new Set(members(3));
    for (const bucket of moved) expect(old.has(after[bucket] ?? '')).toBe(false);
    expect(moved.length).toBeLessThanOrEqual(Math.ceil((32 * 2) / 5) + 3);
  });
});
