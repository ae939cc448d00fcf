/**
 * The fence of active-active mode at the workload writer port: a write to a namespace starts only
 * while this replica holds the namespace's bucket within its term, and is counted in flight until
 * answered, so a bucket that moves is released only after its last write landed.
 */
import type { JsonObject } from '../core/json.ts';
import type { WorkloadRef } from '../core/types.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import type { PodApi, WorkloadWriter } from '../reconcile/ports.ts';
import { LeadershipLostError } from '../reconcile/write-actions.ts';

export interface ShardFence {
  bucketOf(namespace: string): number;
  mayWrite(namespace: string): boolean;
}

/** Writes admitted and not yet answered, per bucket. */
export class BucketWrites {
  readonly #counts = new Map<number, number>();

  inFlight(bucket: number): number {
    return this.#counts.get(bucket) ?? 0;
  }

  /** Runs `write` counted under the bucket of `ref`, or throws LeadershipLostError when fenced. */
  async admit<T>(fence: ShardFence, ref: WorkloadRef, write: () => Promise<T>): Promise<T> {
    if (!fence.mayWrite(ref.namespace)) throw new LeadershipLostError(ref);
    const bucket = fence.bucketOf(ref.namespace);
    this.#counts.set(bucket, this.inFlight(bucket) + 1);
    try {
      return await write();
    } finally {
      const left = this.inFlight(bucket) - 1;
      if (left > 0) this.#counts.set(bucket, left);
      else this.#counts.delete(bucket);
    }
  }
}

/** The workload writer with every mutating request fenced; reads pass through. */
export function fencedWorkloadWriter(
  writer: WorkloadWriter,
  fence: ShardFence,
  writes: BucketWrites,
): WorkloadWriter {
  return {
    patch: (ref, patch) => writes.admit(fence, ref, () => writer.patch(ref, patch)),
    get: (ref) => writer.get(ref),
    getObject: (ref) => writer.getObject(ref),
    create: (row: WorkloadKindRow, namespace: string, body: JsonObject) =>
      writes.admit(fence, { kind: row.kind, namespace, name: nameOf(body) }, () =>
        writer.create(row, namespace, body),
      ),
    delete: (ref, preconditions) =>
      writes.admit(fence, ref, () => writer.delete(ref, preconditions)),
    instantiate: (ref, body) => writes.admit(fence, ref, () => writer.instantiate(ref, body)),
  };
}

/** Pod evictions fenced like workload writes. */
export function fencedPodApi(pods: PodApi, fence: ShardFence, writes: BucketWrites): PodApi {
  return {
    listPods: (namespace, selector) => pods.listPods(namespace, selector),
    listReplicaSets: (namespace, selector) => pods.listReplicaSets(namespace, selector),
    evict: (namespace, pod) =>
      writes.admit(fence, { kind: 'Pod', namespace, name: pod.name }, () =>
        pods.evict(namespace, pod),
      ),
  };
}

function nameOf(body: JsonObject): string {
  const metadata = body.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    const name = metadata.name ?? metadata.generateName;
    if (typeof name === 'string') return name;
  }
  return '';
}
