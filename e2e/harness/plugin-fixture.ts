// What the two plugin specs (the script under this Node, and the released executables) explain:
// a namespace holding ConfigMap `cfg` and Deployment `web` that auto-reloads on it.
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { TEST_IMAGE } from './workloads.ts';

/** Creates the namespace, ConfigMap `cfg` and the Deployment `web` (no replicas) that uses it. */
export async function createExplainedWorkload(kc: KubeConfig, namespace: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await core.createNamespacedConfigMap({
    namespace,
    body: { metadata: { name: 'cfg' }, data: { a: '1' } },
  });
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: 'web', annotations: { 'reloader.stakater.com/auto': 'true' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              { name: 'app', image: TEST_IMAGE, envFrom: [{ configMapRef: { name: 'cfg' } }] },
            ],
          },
        },
      },
    },
  });
}

/** Deletes the namespace; one already gone is fine. */
export async function deleteExplainedWorkload(kc: KubeConfig, namespace: string): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
}
