// Pods that really run in the test cluster, and configs that really break them.
//
// kube-scheduler places pods and kwok plays the kubelet of a few fake nodes
// (e2e/cluster/fake-nodes.ts, stages in e2e/cluster/kwok/stages.yaml). The fake nodes are tainted,
// so a pod runs only when its spec says so: `runnable(podSpec)` adds the toleration and the node
// selector. Its pods are then scheduled, become Running and Ready within a second or two, and old
// pods go away when their ReplicaSet or revision is scaled down, so a Deployment's
// `availableReplicas` and conditions, a StatefulSet's `currentRevision` and a DaemonSet's
// `numberAvailable` move as on a real cluster.
//
// The bad-config recipe:
//   1. compute the hash kreload will write for the bad content (sources.ts: `configMapHash`,
//      `secretHash`), before the change;
//   2. create the workload with `crashOnConfig(hash)` among its template annotations and a short
//      `progressDeadlineSeconds` (a Deployment);
//   3. write the bad content. kreload puts the hash into the pod template (a `STAKATER_*` env value,
//      or `last-reloaded-from` with the annotations strategy); the new pods carry it and kwok
//      sends them to CrashLoopBackOff (Running, not Ready). The new ReplicaSet never becomes
//      available and, after `progressDeadlineSeconds`, the Deployment's `Progressing` condition
//      turns False with reason `ProgressDeadlineExceeded`: what a crash-looping config does in
//      production. Pods of the old template stay Ready.
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Pod,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { FAKE_NODE } from '../cluster/fake-nodes.ts';
import { pollUntil } from './poll.ts';
import type { WorkloadRef } from './workloads.ts';

/** Template annotation: pods crash when its value occurs in an env value or another annotation. */
const CRASH_ON_CONFIG = 'e2e.kreload.dev/crash-on-config';

/** The node selector and toleration that put a pod on the fake nodes, added to `spec`'s own. */
export function fakeNodeScheduling(
  spec: Pick<V1PodSpec, 'nodeSelector' | 'tolerations'> = {},
): Required<Pick<V1PodSpec, 'nodeSelector' | 'tolerations'>> {
  return {
    nodeSelector: { ...spec.nodeSelector, [FAKE_NODE.label.key]: FAKE_NODE.label.value },
    tolerations: [
      ...(spec.tolerations ?? []),
      { key: FAKE_NODE.taint.key, operator: 'Exists', effect: FAKE_NODE.taint.effect },
    ],
  };
}

/** The pod spec with the fake nodes' toleration and node selector: its pods get scheduled. */
export function runnable(spec: V1PodSpec): V1PodSpec {
  const scheduled = structuredClone(spec);
  Object.assign(scheduled, fakeNodeScheduling(spec));
  return scheduled;
}

/** Template annotations that make pods carrying `configHash` crash-loop (see the recipe above). */
export function crashOnConfig(configHash: string): Record<string, string> {
  return { [CRASH_ON_CONFIG]: configHash };
}

/** What `kubectl rollout status` reads, per kind, as one shape for assertions and messages. */
export interface RolloutStatus {
  readonly generation: number;
  readonly observedGeneration: number;
  readonly desired: number;
  /** Replicas of every revision (Deployment: old ReplicaSets' pods included). */
  readonly total: number;
  readonly updated: number;
  readonly ready: number;
  readonly available: number;
  /** Deployment: the `Progressing` condition's reason. */
  readonly progressingReason: string | undefined;
  /** StatefulSet: currentRevision === updateRevision; the other kinds: true. */
  readonly revisionsConverged: boolean;
}

/** The same rule as `kubectl rollout status`: every replica updated, ready and available. */
export function isRolloutComplete(status: RolloutStatus): boolean {
  return (
    status.observedGeneration >= status.generation &&
    status.updated === status.desired &&
    status.total === status.desired &&
    status.ready === status.desired &&
    status.available === status.desired &&
    status.revisionsConverged &&
    status.progressingReason !== 'ProgressDeadlineExceeded'
  );
}

export interface PodSummary {
  readonly name: string;
  readonly uid: string;
  readonly phase: string;
  readonly ready: boolean;
  readonly node: string | undefined;
  readonly deleting: boolean;
  /** The first container's waiting reason (`CrashLoopBackOff`), or its state's name. */
  readonly containerState: string | undefined;
}

function containerState(pod: V1Pod): string | undefined {
  const state = pod.status?.containerStatuses?.[0]?.state;
  if (state === undefined) return undefined;
  if (state.waiting) return state.waiting.reason ?? 'waiting';
  return state.running ? 'running' : state.terminated ? 'terminated' : undefined;
}

function summarize(pod: V1Pod): PodSummary {
  return {
    name: pod.metadata?.name ?? '',
    uid: pod.metadata?.uid ?? '',
    phase: pod.status?.phase ?? '',
    ready: pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
    node: pod.spec?.nodeName,
    deleting: pod.metadata?.deletionTimestamp !== undefined,
    containerState: containerState(pod),
  };
}

/** Reads rollouts and pods of the harness's workloads (label `app=<name>`), as the admin. */
export class PodLifecycle {
  readonly #apps: AppsV1Api;
  readonly #core: CoreV1Api;

  constructor(deps: { kc: KubeConfig }) {
    this.#apps = deps.kc.makeApiClient(AppsV1Api);
    this.#core = deps.kc.makeApiClient(CoreV1Api);
  }

  async status(ref: WorkloadRef): Promise<RolloutStatus> {
    if (ref.kind === 'Deployment') {
      const d = await this.#apps.readNamespacedDeployment(ref);
      return {
        generation: d.metadata?.generation ?? 0,
        observedGeneration: d.status?.observedGeneration ?? 0,
        desired: d.spec?.replicas ?? 1,
        total: d.status?.replicas ?? 0,
        updated: d.status?.updatedReplicas ?? 0,
        ready: d.status?.readyReplicas ?? 0,
        available: d.status?.availableReplicas ?? 0,
        progressingReason: d.status?.conditions?.find((c) => c.type === 'Progressing')?.reason,
        revisionsConverged: true,
      };
    }
    if (ref.kind === 'StatefulSet') {
      const s = await this.#apps.readNamespacedStatefulSet(ref);
      return {
        generation: s.metadata?.generation ?? 0,
        observedGeneration: s.status?.observedGeneration ?? 0,
        desired: s.spec?.replicas ?? 1,
        total: s.status?.replicas ?? 0,
        updated: s.status?.updatedReplicas ?? 0,
        ready: s.status?.readyReplicas ?? 0,
        available: s.status?.availableReplicas ?? 0,
        progressingReason: undefined,
        revisionsConverged: s.status?.currentRevision === s.status?.updateRevision,
      };
    }
    const ds = await this.#apps.readNamespacedDaemonSet(ref);
    return {
      generation: ds.metadata?.generation ?? 0,
      observedGeneration: ds.status?.observedGeneration ?? 0,
      desired: ds.status?.desiredNumberScheduled ?? 0,
      total: ds.status?.currentNumberScheduled ?? 0,
      updated: ds.status?.updatedNumberScheduled ?? 0,
      ready: ds.status?.numberReady ?? 0,
      available: ds.status?.numberAvailable ?? 0,
      progressingReason: undefined,
      revisionsConverged: true,
    };
  }

  /** Waits until the rollout is complete with at least one replica; returns the last status. */
  waitComplete(ref: WorkloadRef, timeoutMs = 60_000): Promise<RolloutStatus> {
    return this.#waitFor(ref, {
      until: (status) => status.desired > 0 && isRolloutComplete(status),
      describe: `${ref.kind} ${ref.namespace}/${ref.name} rollout complete`,
      timeoutMs,
    });
  }

  /** Waits for a Deployment's `Progressing` condition to say ProgressDeadlineExceeded. */
  waitProgressDeadlineExceeded(ref: WorkloadRef, timeoutMs = 90_000): Promise<RolloutStatus> {
    return this.#waitFor(ref, {
      until: (status) => status.progressingReason === 'ProgressDeadlineExceeded',
      describe: `${ref.namespace}/${ref.name} to exceed its progress deadline`,
      timeoutMs,
    });
  }

  /** The workload's pods (label `app=<name>`) not being deleted, by name. */
  async pods(ref: WorkloadRef): Promise<readonly PodSummary[]> {
    return (await this.#livePods(ref)).map(summarize).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The env value `name` of container `container` in each of the workload's live pods. */
  async podEnv(ref: WorkloadRef, container: string, name: string): Promise<(string | undefined)[]> {
    return (await this.#livePods(ref)).map(
      (pod) =>
        pod.spec?.containers.find((c) => c.name === container)?.env?.find((e) => e.name === name)
          ?.value,
    );
  }

  #waitFor(
    ref: WorkloadRef,
    wait: {
      readonly until: (status: RolloutStatus) => boolean;
      readonly describe: string;
      readonly timeoutMs: number;
    },
  ): Promise<RolloutStatus> {
    return pollUntil(
      async () => {
        const status = await this.status(ref);
        if (wait.until(status)) return status;
        throw new Error(`last seen: ${JSON.stringify(status)}`);
      },
      { timeoutMs: wait.timeoutMs, describe: wait.describe },
    );
  }

  /** The pods labelled `app=<name>` that are not being deleted. */
  async #livePods(ref: WorkloadRef): Promise<V1Pod[]> {
    const { items } = await this.#core.listNamespacedPod({
      namespace: ref.namespace,
      labelSelector: `app=${ref.name}`,
    });
    return items.filter((pod) => pod.metadata?.deletionTimestamp === undefined);
  }
}
