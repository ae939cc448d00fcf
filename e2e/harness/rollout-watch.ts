// What the safe-rollout specs read from the cluster: the Deployments kreload patched (from the
// audit log) and how many rollouts of a change are in flight (from one LIST of the Deployments).
import { AppsV1Api, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import type { AuditEvent, AuditLog } from './audit.ts';
import { APP } from './workloads.ts';

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
