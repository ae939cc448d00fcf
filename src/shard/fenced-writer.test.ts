import { describe, expect, it } from 'vitest';
import type { WorkloadRef } from '../core/types.ts';
import type { PodApi, WorkloadWriter } from '../reconcile/ports.ts';
import { LeadershipLostError } from '../reconcile/write-actions.ts';
import {
  BucketWrites,
  fencedPodApi,
  fencedWorkloadWriter,
  type ShardFence,
} from './fenced-writer.ts';

const OWNED = 'team-a';
const OTHER = 'team-b';
const fence: ShardFence = {
  bucketOf: (namespace) => (namespace === OWNED ? 1 : 2),
  mayWrite: (namespace) => namespace === OWNED,
};
const ref = (namespace: string): WorkloadRef => ({ kind: 'Deployment', namespace, name: 'api' });

/** Records the requests that reached the API; each answer waits until released. */
function recordingWriter() {
  const sent: string[] = [];
  const answers: (() => void)[] = [];
  const pending = <T>(what: string, value: T): Promise<T> => {
    sent.push(what);
    return new Promise<T>((resolve) =>
      answers.push(() => {
        resolve(value);
      }),
    );
  };
  const writer = {
    patch: (r: WorkloadRef) =>
      pending(`patch ${r.namespace}`, { resourceVersion: '2', generation: 2 }),
    get: (r: WorkloadRef) => pending(`get ${r.namespace}`, undefined),
    getObject: (r: WorkloadRef) => pending(`getObject ${r.namespace}`, undefined),
    create: (_row: unknown, namespace: string) =>
      pending(`create ${namespace}`, { name: 'x', uid: 'u' }),
    delete: (r: WorkloadRef) => pending(`delete ${r.namespace}`, undefined),
    instantiate: (r: WorkloadRef) => pending(`instantiate ${r.namespace}`, undefined),
  } as unknown as WorkloadWriter;
  return {
    writer,
    sent,
    answerAll: () => {
      answers.splice(0).forEach((answer) => {
        answer();
      });
    },
  };
}

describe('fencedWorkloadWriter', () => {
  it('sends a write to an owned namespace and counts it in flight until answered', async () => {
    const inner = recordingWriter();
    const writes = new BucketWrites();
    const fenced = fencedWorkloadWriter(inner.writer, fence, writes);
    const patch = fenced.patch(ref(OWNED), { type: 'merge', body: {} } as never);
    expect(inner.sent).toEqual([`patch ${OWNED}`]);
    expect(writes.inFlight(1)).toBe(1);
    inner.answerAll();
    await patch;
    expect(writes.inFlight(1)).toBe(0);
  });

  it.each(['patch', 'delete', 'instantiate'] as const)(
    'refuses a %s to a namespace it does not own before any request',
    async (method) => {
      const inner = recordingWriter();
      const writes = new BucketWrites();
      const fenced = fencedWorkloadWriter(inner.writer, fence, writes);
      const call = (fenced[method] as (r: WorkloadRef, x: unknown) => Promise<unknown>)(
        ref(OTHER),
        {},
      );
      await expect(call).rejects.toBeInstanceOf(LeadershipLostError);
      expect(inner.sent).toEqual([]);
      expect(writes.inFlight(2)).toBe(0);
    },
  );

  it('lets reads through whatever the namespace', async () => {
    const inner = recordingWriter();
    const fenced = fencedWorkloadWriter(inner.writer, fence, new BucketWrites());
    const read = fenced.get(ref(OTHER));
    inner.answerAll();
    await read;
    expect(inner.sent).toEqual([`get ${OTHER}`]);
  });

  it('fences evictions like workload writes', async () => {
    const evicted: string[] = [];
    const pods = {
      listPods: () => Promise.resolve([]),
      listReplicaSets: () => Promise.resolve([]),
      evict: (namespace: string) => {
        evicted.push(namespace);
        return Promise.resolve();
      },
    } satisfies PodApi;
    const fenced = fencedPodApi(pods, fence, new BucketWrites());
    await fenced.evict(OWNED, { name: 'p', uid: 'u' });
    await expect(fenced.evict(OTHER, { name: 'p', uid: 'u' })).rejects.toBeInstanceOf(
      LeadershipLostError,
    );
    expect(evicted).toEqual([OWNED]);
  });
});
