// kreload's leader-election Lease in its namespace, as the HA specs read it.
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { KRELOAD_NAMESPACE } from './rbac.ts';

export interface LeaseState {
  readonly holder: string | undefined;
  /** spec.leaseDurationSeconds. */
  readonly durationSeconds: number | undefined;
  /** spec.renewTime in ms since the epoch; 0 before the first renewal. */
  readonly renewMs: number;
}

/** Reads Lease `name` in kreload's namespace; rejects while it does not exist. */
export async function readLease(kc: KubeConfig, name: string): Promise<LeaseState> {
  const { spec } = await kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ namespace: KRELOAD_NAMESPACE, name });
  return {
    holder: spec?.holderIdentity,
    durationSeconds: spec?.leaseDurationSeconds,
    renewMs: spec?.renewTime === undefined ? 0 : new Date(spec.renewTime).getTime(),
  };
}
