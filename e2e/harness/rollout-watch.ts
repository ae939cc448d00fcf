// What the safe-rollout specs read from the cluster: the Deployments kreload patched (from the
// audit log) and how many rollouts of a change are in flight: from one LIST of the Deployments, or
// from their ReplicaSets and pods.
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';
import type { AuditEvent, AuditLog } from './audit.ts';
import { waitForEnv } from './expectations.ts';
import type { EventReader, RecordedEvent } from './kube-events.ts';
import { type PodLifecycle, crashOnConfig, runnable } from './pod-lifecycle.ts';
import { pollUntil } from './poll.ts';
import { envVarName, sourceHash, type SecretSpec, type SourceClient } from './sources.ts';
import {
  APP,
  podSpec,
  type WorkloadClient,
  type WorkloadRef,
  type WorkloadSpec,
} from './workloads.ts';

/** `kubectl rollout status`'s rule on one Deployment as listed. */
export function deploymentComplete(deployment: V1Deployment): boolean {
  const desired = deployment.spec?.replicas ?? 1;
  const status = deployment.status;
  return (
    (status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0) &&
    status?.updatedReplicas === desired &&
    status.replicas === desired &&
    status.readyReplicas === desired &&
    status.availableReplicas === desired
  );
}

/** Deployments `user` patched (template or metadata) since `offset`, by name, in order. */
export async function patchedSince(
  audit: AuditLog,
  offset: number,
  namespace: string,
  user: string,
): Promise<string[]> {
  const events = await audit.eventsSince(offset);
  return events
    .filter(
      (event: AuditEvent) =>
        event.stage === 'ResponseComplete' &&
        event.verb === 'patch' &&
        event.user.username === user &&
        event.objectRef?.resource === 'deployments' &&
        event.objectRef.namespace === namespace,
    )
    .map((event) => event.objectRef?.name ?? '');
}

/** A change's rollouts in one consistent LIST: rolled for it and complete, or still in flight. */
export interface ChangeProgress {
  readonly complete: number;
  readonly inFlight: number;
}

/**
 * One LIST is one consistent snapshot of every Deployment, so two rollouts that merely follow each
 * other are never counted together. `rolled` is the env var kreload writes for the change.
 */
export async function changeProgress(
  kc: KubeConfig,
  namespace: string,
  rolled: { readonly name: string; readonly value: string },
): Promise<ChangeProgress> {
  const list = await kc.makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace });
  let inFlight = 0;
  let complete = 0;
  for (const deployment of list.items) {
    const app = deployment.spec?.template.spec?.containers.find((c) => c.name === APP);
    const done = app?.env?.some((v) => v.name === rolled.name && v.value === rolled.value);
    if (done !== true) continue;
    if (deploymentComplete(deployment)) complete += 1;
    else inFlight += 1;
  }
  return { complete, inFlight };
}

/** A pod counts once it is Ready and not on its way out. */
function podReady(pod: V1Pod): boolean {
  return (
    pod.metadata?.deletionTimestamp === undefined &&
    pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

/**
 * The same count from the ReplicaSets and pods instead of the Deployments' status: a Deployment is
 * rolled when one of its ReplicaSets has the change's env var, complete once that ReplicaSet has
 * `replicas` Ready pods and no pod of an older one is left (terminating ones aside). Pods are listed
 * after the ReplicaSets, so a roll between the two LISTs is not counted at all, never twice.
 */
export async function changeProgressFromPods(
  kc: KubeConfig,
  namespace: string,
  rolled: { readonly name: string; readonly value: string },
  replicas: number,
): Promise<ChangeProgress> {
  const sets = await kc.makeApiClient(AppsV1Api).listNamespacedReplicaSet({ namespace });
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace });
  const setOf = new Map<string, { readonly deployment: string; readonly fresh: boolean }>();
  for (const set of sets.items) {
    const owner = set.metadata?.ownerReferences?.find(
      (ref) => ref.controller === true && ref.kind === 'Deployment',
    );
    const uid = set.metadata?.uid;
    if (owner === undefined || uid === undefined) continue;
    const app = set.spec?.template?.spec?.containers.find((c) => c.name === APP);
    const fresh = app?.env?.some((v) => v.name === rolled.name && v.value === rolled.value);
    setOf.set(uid, { deployment: owner.name, fresh: fresh === true });
  }
  const deployments = new Map<string, { ready: number; old: number }>();
  for (const { deployment, fresh } of setOf.values()) {
    if (fresh) deployments.set(deployment, { ready: 0, old: 0 });
  }
  for (const pod of pods.items) {
    if (pod.metadata?.deletionTimestamp !== undefined) continue;
    const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller === true);
    const set = owner === undefined ? undefined : setOf.get(owner.uid);
    const counts = set === undefined ? undefined : deployments.get(set.deployment);
    if (set === undefined || counts === undefined) continue;
    if (!set.fresh) counts.old += 1;
    else if (podReady(pod)) counts.ready += 1;
  }
  let complete = 0;
  let inFlight = 0;
  for (const counts of deployments.values()) {
    if (counts.ready >= replicas && counts.old === 0) complete += 1;
    else inFlight += 1;
  }
  return { complete, inFlight };
}

/**
 * A bad value written to `bad`'s Secret under waves with halting: the canary takes the new value,
 * its pods crash until its progress deadline passes, and kreload records `ConfigRolloutHalted` on
 * it. Returns those Events.
 */
export async function badValueHaltsAtCanary(parts: {
  readonly sources: Pick<SourceClient, 'replace'>;
  readonly workloads: WorkloadClient;
  readonly pods: Pick<PodLifecycle, 'waitProgressDeadlineExceeded'>;
  readonly events: Pick<EventReader, 'about'>;
  readonly namespace: string;
  readonly bad: SecretSpec;
  readonly canary: WorkloadRef;
}): Promise<RecordedEvent[]> {
  const { sources, workloads, pods, events, namespace, bad, canary } = parts;
  await sources.replace(namespace, bad);
  await waitForEnv(workloads, canary, {
    container: APP,
    name: envVarName(bad),
    value: sourceHash(bad),
  });
  await pods.waitProgressDeadlineExceeded(canary);
  return pollUntil(
    async () => {
      const found = (await events.about(canary)).filter(
        (event) => event.reason === 'ConfigRolloutHalted',
      );
      if (found.length > 0) return found;
      throw new Error('no ConfigRolloutHalted Event yet');
    },
    { timeoutMs: 40_000, describe: 'the ConfigRolloutHalted Event on the canary' },
  );
}

/** Secret `db` as a fleet starts on it, the value its pods crash on, and the fix. */
export interface FleetSecrets {
  readonly secret: SecretSpec;
  readonly bad: SecretSpec;
  readonly fixed: SecretSpec;
}

/**
 * Secret `db` and `count` one-replica Deployments `<prefix>00…` reading it, on kwok pods that
 * crash once the template carries the bad value's hash (progress deadline 10 s). `metadata` makes
 * them kreload's (an annotation, or labels a ReloadPolicy selects).
 */
export async function createCrashingFleet(parts: {
  readonly sources: Pick<SourceClient, 'create'>;
  readonly workloads: WorkloadClient;
  readonly namespace: string;
  readonly count: number;
  readonly prefix: string;
  readonly metadata: Pick<WorkloadSpec, 'annotations' | 'labels'>;
}): Promise<FleetSecrets & { readonly refs: WorkloadRef[] }> {
  const { sources, workloads, namespace, count, prefix, metadata } = parts;
  const secret: SecretSpec = { type: 'SECRET', name: 'db', data: { level: 'info' } };
  const bad: SecretSpec = { ...secret, data: { level: 'no-such-level' } };
  const fixed: SecretSpec = { ...secret, data: { level: 'warn' } };
  await sources.create(namespace, secret);
  const refs: WorkloadRef[] = [];
  for (let i = 0; i < count; i += 1) {
    refs.push(
      await workloads.create('Deployment', {
        namespace,
        name: `${prefix}${String(i).padStart(2, '0')}`,
        ...metadata,
        templateAnnotations: crashOnConfig(sourceHash(bad)),
        progressDeadlineSeconds: 10,
        replicas: 1,
        podSpec: runnable(podSpec({ app: { envFrom: [{ secretRef: { name: 'db' } }] } })),
      }),
    );
  }
  return { secret, bad, fixed, refs };
}
