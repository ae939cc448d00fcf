import { createHash } from 'node:crypto';

/** A Lease name is a DNS subdomain: at most 253 characters of [a-z0-9.-]. */
const MAX_NAME = 253;

export function bucketLeaseName(prefix: string, bucket: number): string {
  return `${prefix}-bucket-${String(bucket)}`;
}

/**
 * The member Lease of `identity` (the pod name): readable when the identity is a valid name part,
 * else a digest of it, so any identity maps to one valid, stable name.
 */
export function memberLeaseName(prefix: string, identity: string): string {
  const name = `${prefix}-member-${identity}`;
  if (/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(identity) && name.length <= MAX_NAME) return name;
  const digest = createHash('sha256').update(identity).digest('hex').slice(0, 16);
  return `${prefix}-member-x${digest}`;
}

export function memberLeasePrefix(prefix: string): string {
  return `${prefix}-member-`;
}
