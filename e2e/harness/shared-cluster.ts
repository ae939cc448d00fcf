import { inject } from 'vitest';
import { connectCluster, type ClusterClient, type ClusterInfo } from './cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kreloadCluster: ClusterInfo;
  }
}

export const PROVIDED_CLUSTER_KEY = 'kreloadCluster';

/** The cluster the global setup started (or was given) for this test run. */
export function sharedCluster(): ClusterClient {
  return connectCluster(inject(PROVIDED_CLUSTER_KEY));
}
