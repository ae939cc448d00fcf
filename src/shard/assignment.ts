/**
 * Which replica writes to which namespace in active-active mode (docs/adr/0051-active-active-sharding.md).
 * A namespace falls in one of a fixed number of buckets by a hash of its name; the buckets are
 * shared out balanced (⌊B/M⌋ or ⌈B/M⌉ each) and sticky (a bucket stays with its live holder while
 * the holder has room), the rest by rendezvous weight. A member joining takes only its share from
 * the others, a member leaving gives up only its own. */
import { createHash } from 'node:crypto';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The bucket of `namespace`, in [0, bucketCount). */
export function bucketOf(namespace: string, bucketCount: number): number {
  return digest(`namespace\u0000${namespace}`).readUInt32BE(0) % bucketCount;
}

/** The rendezvous weight of `member` for `bucket`: 48 bits of a hash of both. */
export function rendezvousWeight(member: string, bucket: number): number {
  return digest(`${String(bucket)}\u0000${member}`).readUIntBE(0, 6);
}

/** The member with the highest weight for `bucket` (ties to the smaller name); none without members. */
export function ownerOf(bucket: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const weight = rendezvousWeight(member, bucket);
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}

/**
 * The owner of every bucket, index = bucket: balanced and sticky. Each member gets ⌊B/M⌋ or ⌈B/M⌉
 * buckets, the ⌈⌉ ones to the B mod M most senior: `members` lists them senior first (the
 * coordinator orders them by when each became a member). Seniority, unlike the number of buckets
 * held now, does not change while buckets are handed over, so a member never gains room because
 * another released first, and members joining take the ⌊⌋ shares. A bucket stays with its live
 * holder while the holder has room (its highest-weight buckets first); every other bucket goes to
 * the member with the highest rendezvous weight that has room. So a membership change moves the
 * fewest buckets that balance needs (3 → 5 over 32: 12, never more than 2/5), and an assignment
 * whose holders already follow it is its own fixed point.
 * `holders[bucket]`: the member holding the bucket's Lease now, if any.
 */
export function assignBuckets(
  members: readonly string[],
  bucketCount: number,
  holders: readonly (string | undefined)[] = [],
): readonly (string | undefined)[] {
  const live = [...new Set(members)];
  const owners = new Array<string | undefined>(bucketCount).fill(undefined);
  if (live.length === 0) return owners;
  const heldBy = new Map<string, number[]>(live.map((member) => [member, []]));
  holders.forEach((holder, bucket) => {
    if (holder !== undefined && bucket < bucketCount) heldBy.get(holder)?.push(bucket);
  });
  const room = capacities(live, bucketCount);
  for (const [member, held] of heldBy) {
    const kept = held
      .map((bucket) => ({ bucket, weight: rendezvousWeight(member, bucket) }))
      .sort((a, b) => b.weight - a.weight)
      .slice(0, room.get(member) ?? 0)
      .map(({ bucket }) => bucket);
    for (const bucket of kept) owners[bucket] = member;
    room.set(member, (room.get(member) ?? 0) - kept.length);
  }
  for (let bucket = 0; bucket < bucketCount; bucket += 1) {
    if (owners[bucket] !== undefined) continue;
    const withRoom = live.filter((member) => (room.get(member) ?? 0) > 0);
    const owner = ownerOf(bucket, withRoom);
    if (owner === undefined) continue;
    owners[bucket] = owner;
    room.set(owner, (room.get(owner) ?? 0) - 1);
  }
  return owners;
}

/** ⌊B/M⌋ each, one more for the B mod M first (most senior) members. */
function capacities(live: readonly string[], bucketCount: number): Map<string, number> {
  const base = Math.floor(bucketCount / live.length);
  const extra = bucketCount % live.length;
  return new Map(live.map((member, rank) => [member, base + (rank < extra ? 1 : 0)]));
}

/** The buckets whose owner differs between two assignments. */
export function movedBuckets(
  before: readonly (string | undefined)[],
  after: readonly (string | undefined)[],
): readonly number[] {
  return before.flatMap((owner, bucket) => (after[bucket] === owner ? [] : [bucket]));
}
