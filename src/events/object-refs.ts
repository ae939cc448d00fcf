import type { SourceRef, SourceType, WorkloadKind, WorkloadRef } from '../core/types.ts';
import type { EventObjectRef } from './ports.ts';

interface ObjectType {
  readonly apiVersion: string;
  readonly kind: string;
}

/** The API object behind each source TYPE. */
export const SOURCE_OBJECT_TYPES: Readonly<Record<SourceType, ObjectType>> = {
  CONFIGMAP: { apiVersion: 'v1', kind: 'ConfigMap' },
  SECRET: { apiVersion: 'v1', kind: 'Secret' },
  SECRETPROVIDERCLASS: {
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
  },
};

const WORKLOAD_API_VERSIONS: Readonly<Record<WorkloadKind, string>> = {
  Deployment: 'apps/v1',
  DaemonSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  CronJob: 'batch/v1',
  Job: 'batch/v1',
  Rollout: 'argoproj.io/v1alpha1',
  DeploymentConfig: 'apps.openshift.io/v1',
};

export function sourceObjectRef(ref: SourceRef, uid: string): EventObjectRef {
  return { ...SOURCE_OBJECT_TYPES[ref.type], namespace: ref.namespace, name: ref.name, uid };
}

export function workloadObjectRef(ref: WorkloadRef, uid: string): EventObjectRef {
  return {
    apiVersion: WORKLOAD_API_VERSIONS[ref.kind],
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    uid,
  };
}

/** A ReloadPolicy (docs/reload-policy.md), for the Events written on it. */
export function reloadPolicyObjectRef(policy: {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}): EventObjectRef {
  return {
    apiVersion: 'kreload.io/v1alpha1',
    kind: 'ReloadPolicy',
    namespace: policy.namespace,
    name: policy.name,
    uid: policy.uid,
  };
}
