/**
 * Where each API kreload talks to lives: group, version and plural, and the REST paths built from
 * them. Workload kinds take theirs from `rollout/kinds.ts`, the one table of kinds.
 */
import type { RevisionKind, WorkloadKindRow } from '../rollout/kinds.ts';

export interface ApiResource {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** A workload kind's API coordinates, from its `rollout/kinds.ts` row. */
export function workloadResource(
  row: Pick<WorkloadKindRow, 'group' | 'version' | 'plural'>,
): ApiResource {
  const { group, version, plural } = row;
  return { group, version, plural, namespaced: true };
}

const CSI_GROUP = 'secrets-store.csi.x-k8s.io';

export const OTHER_RESOURCES = {
  configMaps: { group: '', version: 'v1', plural: 'configmaps', namespaced: true },
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  namespaces: { group: '', version: 'v1', plural: 'namespaces', namespaced: false },
  events: { group: '', version: 'v1', plural: 'events', namespaced: true },
  /** Rolls by eviction only (docs/adr/0044): listed per round, never watched. */
  pods: { group: '', version: 'v1', plural: 'pods', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  secretProviderClasses: {
    group: CSI_GROUP,
    version: 'v1',
    plural: 'secretproviderclasses',
    namespaced: true,
  },
  secretProviderClassPodStatuses: {
    group: CSI_GROUP,
    version: 'v1',
    plural: 'secretproviderclasspodstatuses',
    namespaced: true,
  },
  reloadPolicies: {
    group: 'kreload.io',
    version: 'v1alpha1',
    plural: 'reloadpolicies',
    namespaced: true,
  },
} as const satisfies Record<string, ApiResource>;

/** Where a kind's revision history lives (config revisions, docs/adr/0036). */
export const REVISION_RESOURCES: Readonly<Record<RevisionKind, ApiResource>> = {
  ReplicaSet: { group: 'apps', version: 'v1', plural: 'replicasets', namespaced: true },
  ControllerRevision: {
    group: 'apps',
    version: 'v1',
    plural: 'controllerrevisions',
    namespaced: true,
  },
};

/** `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

export interface ResourceLocation {
  /** Omitted: all namespaces (or a cluster-scoped resource). */
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  readonly subresource?: string | undefined;
}

export function resourcePath(resource: ApiResource, location: ResourceLocation = {}): string {
  const segments = [groupVersionPath(resource.group, resource.version)];
  if (resource.namespaced && location.namespace !== undefined) {
    segments.push('namespaces', encodeURIComponent(location.namespace));
  }
  segments.push(resource.plural);
  if (location.name !== undefined) segments.push(encodeURIComponent(location.name));
  if (location.subresource !== undefined) segments.push(location.subresource);
  return segments.join('/');
}

/** `apps/v1`, or `v1` for the core group. */
export function apiVersionOf(resource: ApiResource): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}
