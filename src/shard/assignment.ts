/**
 * Which replica writes to which namespace in active-active mode (docs/adr/0051-active-active-sharding.md).
 * A namespace falls in one of a fixed number of buckets by a hash of its name; each bucket goes to
 * the live member with the highest rendezvous weight for it. A member joining takes only the
 * buckets it now wins, a member leaving gives up only its own: about 1/N of them move.
 */
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

/** The owner of every bucket, index = bucket. */
export function assignBuckets(
  members: readonly string[],
  bucketCount: number,
): readonly (string | undefined)[] {
  return Array.from({ length: bucketCount }, (_, bucket) => ownerOf(bucket, members));
}

/** The buckets whose owner differs between two assignments. */
export function movedBuckets(
  before: readonly (string | undefined)[],
  after: readonly (string | undefined)[],
): readonly number[] {
  return before.flatMap((owner, bucket) => (after[bucket] === owner ? [] : [bucket]));
}
