/**
 * The reconciler's `PodApi` port (reconcile/ports.ts) for rolls by eviction (docs/adr/0044): LISTs
 * of pods and ReplicaSets by label selector, and POSTs to the `pods/<name>/eviction` subresource
 * (policy/v1), so the API server applies the PodDisruptionBudgets. Raw JSON through the transport;
 * every method rejects with the transport's `ApiError`.
 */
import type { JsonObject } from '../core/json.ts';
import { objectsAt } from '../core/json.ts';
import { evictionBody } from '../rollout/evict.ts';
import type { PodApi } from '../reconcile/ports.ts';
import type { ApiResource } from './resources.ts';
import { OTHER_RESOURCES, REVISION_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';

const PODS = OTHER_RESOURCES.pods;

export class KubePodClient implements PodApi {
  readonly #transport: KubeTransport;

  constructor(deps: { readonly transport: KubeTransport }) {
    this.#transport = deps.transport;
  }

  listPods(namespace: string, labelSelector: string): Promise<readonly JsonObject[]> {
    return this.#list(PODS, namespace, labelSelector);
  }

  listReplicaSets(namespace: string, labelSelector: string): Promise<readonly JsonObject[]> {
    return this.#list(REVISION_RESOURCES.ReplicaSet, namespace, labelSelector);
  }

  async evict(
    namespace: string,
    pod: { readonly name: string; readonly uid: string },
  ): Promise<void> {
    await this.#transport.request({
      method: HttpMethod.POST,
      path: resourcePath(PODS, { namespace, name: pod.name, subresource: 'eviction' }),
      body: evictionBody(namespace, pod),
      contentType: 'application/json',
    });
  }

  async #list(
    resource: ApiResource,
    namespace: string,
    labelSelector: string,
  ): Promise<readonly JsonObject[]> {
    const answer = await this.#transport.request({
      method: HttpMethod.GET,
      path: resourcePath(resource, { namespace }),
      query: { labelSelector },
    });
    return objectsAt(answer, ['items']);
  }
}
