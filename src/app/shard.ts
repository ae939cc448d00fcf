/**
 * Active-active mode's parts (docs/adr/0051-active-active-sharding.md): the coordinator on the
 * shard's Leases, the fence every workload write passes, and the per-replica metrics.
 */
import type { Options } from '../config/parse-options.ts';
import type { ShardFacts } from '../explain/model.ts';
import { parseWorkloadKey } from '../core/keys.ts';
import type { WorkloadKey } from '../core/types.ts';
import type { BaselineFence } from '../kube/baseline-store.ts';
import { LeaseClient } from '../kube/lease-client.ts';
import type { KubeTransport } from '../kube/transport.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { PodApi, WorkloadWriter } from '../reconcile/ports.ts';
import type { RolloutSettings } from '../rollout/waves.ts';
import { BucketWrites, fencedPodApi, fencedWorkloadWriter } from '../shard/fenced-writer.ts';
import type { ShardFence } from '../shard/fenced-writer.ts';
import { budgetShare, sharedRolloutSettings } from '../shard/rollout-budget.ts';
import { ShardCoordinator } from '../shard/shard-coordinator.ts';
import { bucketOf } from '../shard/assignment.ts';
import { ShardCacheScope } from '../shard/cache-scope.ts';
import { SYSTEM_CLOCK, SYSTEM_TIMERS } from '../time/timers.ts';

export interface ShardRuntime {
  readonly coordinator: ShardCoordinator;
  /** The namespaces this replica keeps in its caches (docs/adr/0053). */
  readonly cache: ShardCacheScope;
  readonly writes: BucketWrites;
  readonly identity: string;
}

/** Undefined unless `--shard-mode=active-active`. */
export function createShard(parts: {
  readonly options: Options;
  readonly transport: KubeTransport;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** A bucket was acquired: reconcile the workloads of its namespaces. */
  readonly onAcquired: (bucket: number) => void;
  /** Relists the caches' list-watches; resolves once each new list reached its cache. */
  readonly refill: (affected: (namespace: string) => boolean) => Promise<void>;
}): ShardRuntime | undefined {
  const { options, logger, metrics } = parts;
  const { leaderElection, shard } = options;
  if (shard.mode !== 'active-active' || leaderElection.namespace === undefined) return undefined;
  const writes = new BucketWrites();
  const identity = leaderElection.identity ?? options.podName ?? 'kreload';
  const cache = new ShardCacheScope({
    bucketCount: shard.bucketCount,
    bucketOf: (namespace) => bucketOf(namespace, shard.bucketCount),
    refill: parts.refill,
    onFilled: () => {
      logger.info('shard caches filled', { buckets: cache.heldBuckets() });
      coordinator.nudge();
    },
  });
  const coordinator: ShardCoordinator = new ShardCoordinator({
    store: new LeaseClient({ transport: parts.transport }),
    settings: {
      identity,
      namespace: leaderElection.namespace,
      prefix: leaderElection.id,
      bucketCount: shard.bucketCount,
      timings: {
        leaseDurationMs: leaderElection.leaseDurationMs,
        renewDeadlineMs: leaderElection.renewDeadlineMs,
        retryPeriodMs: leaderElection.retryPeriodMs,
      },
    },
    clock: SYSTEM_CLOCK,
    timers: SYSTEM_TIMERS,
    inFlight: (bucket) => writes.inFlight(bucket),
    cache,
    onAcquired: (bucket) => {
      logger.info('shard bucket acquired', { bucket, members: coordinator.liveMembers() });
      metrics.setShardState(coordinator.ownedBuckets().length, coordinator.liveMembers().length);
      metrics.recordShardHandover('acquired');
      parts.onAcquired(bucket);
    },
    onReleased: (bucket, reason) => {
      logger.info('shard bucket given up', { bucket, reason });
      metrics.setShardState(coordinator.ownedBuckets().length, coordinator.liveMembers().length);
      metrics.recordShardHandover('released');
    },
    onMembersChanged: (live, suspected) => {
      logger.info('shard members', { live, suspected });
    },
    onError: (error) => {
      logger.warn('shard lease request failed', {
        error: error.message,
        cause: error.cause instanceof Error ? error.cause.message : String(error.cause),
      });
    },
  });
  return { coordinator, cache, writes, identity };
}

/** The list-watches' decode filter: the namespaces of this replica's share; all without a shard. */
export function shardCacheFilter(
  shard: ShardRuntime | undefined,
): ((namespace: string) => boolean) | undefined {
  return shard && ((namespace) => shard.cache.holds(namespace));
}

/** The workloads of `keys` whose namespace falls in `bucket`. */
export function keysInBucket(
  keys: readonly WorkloadKey[],
  bucket: number,
  coordinator: Pick<ShardCoordinator, 'bucketOf'>,
): WorkloadKey[] {
  return keys.filter((key) => {
    const ref = parseWorkloadKey(key);
    return ref !== undefined && coordinator.bucketOf(ref.namespace) === bucket;
  });
}

/** The workloads of `keys` in the namespaces this replica owns now. */
export function keysOwned(
  keys: readonly WorkloadKey[],
  coordinator: Pick<ShardCoordinator, 'owns'>,
): WorkloadKey[] {
  return keys.filter((key) => {
    const ref = parseWorkloadKey(key);
    return ref !== undefined && coordinator.owns(ref.namespace);
  });
}

/** `kreload explain`'s view of a namespace: its bucket, the holder and the assigned member. */
export function shardFacts(coordinator: ShardCoordinator) {
  return (namespace: string): ShardFacts => ({
    bucket: coordinator.bucketOf(namespace),
    holder: coordinator.leaseHolder(namespace),
    assigned: coordinator.assignedOwner(namespace),
    owned: coordinator.owns(namespace),
  });
}

/** `/readyz`'s view: a member seeing the Leases is following correctly, holding buckets leads. */
export function shardReadiness(coordinator: ShardCoordinator) {
  return {
    state: (): 'leader' | 'follower' =>
      coordinator.ownedBuckets().length > 0 ? 'leader' : 'follower',
    get lastObservedAt(): number | undefined {
      return coordinator.lastObservedAt;
    },
  };
}

/**
 * The baseline store's records of a namespace are set and written only under its bucket's fence,
 * counted in flight like the workload writes (docs/adr/0051, 0046).
 */
export function baselineFence(fence: ShardFence, writes: BucketWrites): BaselineFence {
  return {
    holds: (namespace) => fence.mayWrite(namespace),
    admit: (namespace, write) =>
      writes.admit(fence, { kind: 'ConfigMap', namespace, name: 'baseline-store' }, write),
  };
}

/** The pipeline's write ports: fenced by bucket in active-active mode, as given otherwise. */
export function shardPorts(
  shard: ShardRuntime | undefined,
  ports: {
    readonly writer: WorkloadWriter;
    readonly pods: PodApi;
    readonly rollouts: RolloutSettings;
  },
): {
  readonly writer: WorkloadWriter;
  readonly pods: PodApi;
  readonly rollouts: RolloutSettings;
  readonly owns: ((namespace: string) => boolean) | undefined;
  readonly baselines: BaselineFence | undefined;
} {
  if (!shard) return { ...ports, owns: undefined, baselines: undefined };
  const { coordinator, writes, identity } = shard;
  return {
    writer: fencedWorkloadWriter(ports.writer, coordinator, writes),
    pods: fencedPodApi(ports.pods, coordinator, writes),
    // The cluster-wide rollout budget, split between the live members.
    rollouts: sharedRolloutSettings(ports.rollouts, (budget) =>
      budgetShare({ budget, members: coordinator.liveMembers(), identity }),
    ),
    owns: (namespace) => coordinator.owns(namespace),
    baselines: baselineFence(coordinator, writes),
  };
}
