import type { SourceRef, WorkloadRef } from '../core/types.ts';
import { sourceTypeRow } from '../core/source-types.ts';
import type { KindTable } from '../rollout/kinds.ts';
import type { EventObjectRef } from './ports.ts';

export function sourceObjectRef(ref: SourceRef, uid: string): EventObjectRef {
  const { apiVersion, kind } = sourceTypeRow(ref.type);
  return { apiVersion, kind, namespace: ref.namespace, name: ref.name, uid };
}

/** `kinds`: the effective kind table, for the workload's apiVersion. */
export function workloadObjectRef(kinds: KindTable, ref: WorkloadRef, uid: string): EventObjectRef {
  return {
    apiVersion: kinds.row(ref.kind).apiVersion,
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
