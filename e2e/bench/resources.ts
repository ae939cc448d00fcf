/** The API resources the bench and the ideal reactor touch: one row per resource. */

export type SourceType = 'configmap' | 'secret';
export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'DaemonSet';

export interface ResourceInfo {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const SOURCE_RESOURCES: Readonly<Record<SourceType, ResourceInfo>> = {
  configmap: { group: '', version: 'v1', plural: 'configmaps' },
  secret: { group: '', version: 'v1', plural: 'secrets' },
};

export const WORKLOAD_RESOURCES: Readonly<Record<WorkloadKind, ResourceInfo>> = {
  Deployment: { group: 'apps', version: 'v1', plural: 'deployments' },
  StatefulSet: { group: 'apps', version: 'v1', plural: 'statefulsets' },
  DaemonSet: { group: 'apps', version: 'v1', plural: 'daemonsets' },
};

export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['Deployment', 'StatefulSet', 'DaemonSet'];

export const REPLICA_SETS: ResourceInfo = { group: 'apps', version: 'v1', plural: 'replicasets' };
export const NAMESPACES: ResourceInfo = { group: '', version: 'v1', plural: 'namespaces' };

/**
 * Workload resources as the audit log names them: LIST/GET of these after ready is the headline
 * request figure (Reloader LISTs every kind on every event; a watching controller should not).
 */
export const AUDITED_WORKLOAD_RESOURCES: ReadonlySet<string> = new Set([
  'deployments',
  'statefulsets',
  'daemonsets',
  'cronjobs',
  'jobs',
  'rollouts',
  'deploymentconfigs',
  'replicasets',
]);

function groupPrefix(resource: ResourceInfo): string {
  return resource.group === ''
    ? `/api/${resource.version}`
    : `/apis/${resource.group}/${resource.version}`;
}

/** `/api/v1/namespaces/ns/configmaps`, or the cluster-wide collection without a namespace. */
export function collectionPath(resource: ResourceInfo, namespace?: string): string {
  if (resource === NAMESPACES || namespace === undefined) {
    return `${groupPrefix(resource)}/${resource.plural}`;
  }
  return `${groupPrefix(resource)}/namespaces/${namespace}/${resource.plural}`;
}

export function objectPath(resource: ResourceInfo, namespace: string, name: string): string {
  return `${collectionPath(resource, namespace)}/${name}`;
}

/** `Deployment/ns/name`: how runs, the observer and the evaluation name a workload. */
export function workloadKey(kind: WorkloadKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

/** `configmap/ns/name`: a source, cluster-wide. */
export function sourceKey(type: SourceType, namespace: string, name: string): string {
  return `${type}/${namespace}/${name}`;
}

/** `configmap/name`: a source as seen from a workload in the same namespace (kreload's key form). */
export function localSourceKey(type: SourceType, name: string): string {
  return `${type}/${name}`;
}
