/**
 * The baseline store falling back to baselines on the workloads (docs/adr/0046, "RBAC") while
 * records it has read still matter: a change made while kreload was down must still roll each of
 * their workloads exactly once. kreload's real pipeline on the in-memory server; the store's
 * ConfigMaps may be listed but not written (a Role without `patch`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadView } from '../core/types.ts';
import { BASELINE, DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { recordKey, storeObjectName } from '../kube/baseline-records.ts';
import type { KubeRequest, KubeTransport } from '../kube/transport.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import {
  annotationsOf,
  InMemoryCluster,
  isRoll,
  startPipeline,
} from '../testing/in-memory-cluster.ts';
import { aPipelineBaselineStore, statusError } from '../testing/in-memory-config-maps.ts';

const NS = 'team-a';
const HOME = 'kreload-system';
const BEFORE = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const NOW = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const SYNC_DELAY_MS = 1_000;

function deployment(name: string): WorkloadView {
  return aWorkload('Deployment', NS, name)
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
    .build();
}

/** Recorded at BEFORE by an earlier run; app-config changed to NOW while kreload was down. */
const RECORDED = deployment('recorded');
/** Never seen before: its first-sight record is the store write the Role refuses. */
const FRESH = deployment('fresh');

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a 403 on the store write while a recorded workload waits', () => {
  it('the workload whose roll is retried after the fall-back still rolls, once', async () => {
    const cluster = new InMemoryCluster();
    const requests: KubeRequest[] = [];
    const wired: { router?: { triggerAll(keys: readonly string[]): void } } = {};
    const refusing: KubeTransport = {
      request: (request) => {
        requests.push(request);
        return Promise.reject(statusError(403));
      },
    };
    const store = aPipelineBaselineStore(refusing, {
      namespace: HOME,
      events: {
        // As src/app/baseline-store.ts does: every workload again.
        onFellBack: () =>
          wired.router?.triggerAll([RECORDED, FRESH].map((view) => workloadKey(view.ref))),
      },
    });
    store.consumer.replace(
      [
        {
          name: storeObjectName(NS, 0),
          namespace: NS,
          resourceVersion: '5',
          data: new Map([[recordKey(RECORDED), `{"configmap/app-config":"${BEFORE}"}`]]),
        },
      ],
      '5',
    );
    const process = startPipeline(cluster, {
      sourceTypes: ['CONFIGMAP'],
      debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
      baselines: store,
    });
    wired.router = process.router;
    process.watched.byType.CONFIGMAP?.replace([aConfigMap(NS, 'app-config').withHash(NOW).build()]);
    for (const view of [RECORDED, FRESH]) cluster.api.put(view);
    process.watched.store.replace('Deployment', [RECORDED, FRESH]);
    // The API server is briefly unavailable for the recorded workload's roll.
    const unavailable = Array.from({ length: 4 }, () => statusError(503));
    cluster.failPatchesOf(workloadKey(RECORDED.ref), ...unavailable);
    process.queue.start();
    process.router.triggerAll([RECORDED, FRESH].map((view) => workloadKey(view.ref)));
    await vi.advanceTimersByTimeAsync(30_000);
    await process.queue.idle();

    expect(requests.length, 'the store write was refused').toBeGreaterThan(0);
    expect(store.inUse()).toBe(false);
    /** The PATCHes the server applied to the workload (refused ones excluded). */
    const applied = (view: WorkloadView) =>
      cluster.api.writes.flatMap((write) =>
        write.verb === 'patch' && write.key === workloadKey(view.ref) ? [write.patch.body] : [],
      );
    const isTemplate = (body: Record<string, unknown>) =>
      (body.spec as { template?: unknown } | undefined)?.template !== undefined;
    expect(
      applied(RECORDED).filter(isTemplate),
      'the change made while kreload was down rolls the recorded workload once',
    ).toHaveLength(1);
    const fresh = cluster.sent.filter((write) => write.key === workloadKey(FRESH.ref));
    expect(fresh.filter(isRoll)).toEqual([]);
    expect(fresh.map((write) => annotationsOf(write)[BASELINE])).toEqual([
      `{"configmap/app-config":"${NOW}"}`,
    ]);
  });
});
