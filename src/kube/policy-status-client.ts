/** JSON merge patch of one ReloadPolicy's `status` subresource. Rejects with ApiError. */
import type { JsonObject } from '../core/json.ts';
import { toApiError } from './api-error.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

export class PolicyStatusClient {
  readonly #transport: KubeTransport;

  constructor(deps: { readonly transport: KubeTransport }) {
    this.#transport = deps.transport;
  }

  /** Only `/status` is written: kreload never changes a policy's spec. */
  async patchStatus(namespace: string, name: string, status: JsonObject): Promise<void> {
    try {
      await this.#transport.request({
        method: HttpMethod.PATCH,
        path: resourcePath(OTHER_RESOURCES.reloadPolicies, {
          namespace,
          name,
          subresource: 'status',
        }),
        query: { fieldManager: FIELD_MANAGER },
        contentType: 'application/merge-patch+json',
        body: { status },
      });
    } catch (err) {
      throw toApiError(err);
    }
  }
}
