// The bucket Leases of active-active replicas as kube-apiserver has them: who holds which bucket,
// when the holders settle over a set of members, and what moved between two such moments.
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { bucketOf } from '../../src/shard/assignment.ts';
import { bucketLeaseName } from '../../src/shard/lease-names.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';

/** kreload's default `--shard-buckets`: the rows run with it. */
export const SHARD_BUCKETS = 32;

/** An active-active row's fleet layout. */
export interface ShardRowLayout {
  /** Namespaces the fleet is spread over, one fleet in each. */
  readonly namespaces: number;
}

/** Holder of each bucket's Lease, index = bucket; undefined: no Lease or no holder. */
export type BucketHolders = readonly (string | undefined)[];

export class ShardLeases {
  readonly #coordination: CoordinationV1Api;
  readonly #prefix: string;

  constructor(admin: KubeConfig, prefix: string) {
    this.#coordination = admin.makeApiClient(CoordinationV1Api);
    this.#prefix = prefix;
  }

  async holders(): Promise<BucketHolders> {
    const list = await this.#coordination.listNamespacedLease({ namespace: KRELOAD_NAMESPACE });
    const byName = new Map(
      list.items.map((lease) => [lease.metadata?.name ?? '', lease.spec?.holderIdentity]),
    );
    return Array.from(
      { length: SHARD_BUCKETS },
      (_unused, bucket) => byName.get(bucketLeaseName(this.#prefix, bucket)) ?? undefined,
    );
  }

  /** Polls until every bucket is held by one of `members` and each member holds one. */
  async settledOver(members: readonly string[], timeoutMs: number): Promise<BucketHolders> {
    return pollUntil(
      async () => {
        const holders = await this.holders();
        return settled(holders, members) ? holders : undefined;
      },
      { timeoutMs, intervalMs: 250, describe: `every bucket held by one of ${members.join(', ')}` },
    );
  }
}

export function settled(holders: BucketHolders, members: readonly string[]): boolean {
  return (
    holders.every((holder) => holder !== undefined && members.includes(holder)) &&
    members.every((member) => holders.includes(member))
  );
}

/** The namespaces whose bucket `member` holds. */
export function namespacesOf(
  holders: BucketHolders,
  member: string,
  namespaces: readonly string[],
): string[] {
  return namespaces.filter((namespace) => holders[bucketOf(namespace, SHARD_BUCKETS)] === member);
}

export interface Movement {
  /** Buckets whose holder changed. */
  readonly buckets: number;
  /** Of them, buckets that went to a member not in `joined`: churn among the old members. */
  readonly toOldMembers: number;
  /** Namespaces (of those given) whose bucket changed holder. */
  readonly namespaces: number;
}

/** What moved between two settled assignments, `joined` being the members added in between. */
export function movement(
  before: BucketHolders,
  after: BucketHolders,
  joined: readonly string[],
  namespaces: readonly string[],
): Movement {
  const moved = before.flatMap((holder, bucket) => (after[bucket] === holder ? [] : [bucket]));
  return {
    buckets: moved.length,
    toOldMembers: moved.filter((bucket) => !joined.includes(after[bucket] ?? '')).length,
    namespaces: namespaces.filter((namespace) => moved.includes(bucketOf(namespace, SHARD_BUCKETS)))
      .length,
  };
}
