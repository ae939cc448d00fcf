/** Create-or-update of one ConfigMap (the meta-info ConfigMap of §13.10). Rejects with ApiError. */
import { toApiError } from './api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { stringAt } from '../core/json.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

export class ConfigMapClient {
  readonly #transport: KubeTransport;

  constructor(deps: { readonly transport: KubeTransport }) {
    this.#transport = deps.transport;
  }

  /** `body` is a whole ConfigMap with `metadata.name`; an existing one is replaced. */
  async upsert(namespace: string, name: string, body: JsonObject): Promise<void> {
    const api = OTHER_RESOURCES.configMaps;
    let existing: unknown;
    try {
      existing = await this.#transport.request({
        method: HttpMethod.GET,
        path: resourcePath(api, { namespace, name }),
      });
    } catch (err) {
      if (toApiError(err).status !== 404) throw toApiError(err);
      await this.#transport.request({
        method: HttpMethod.POST,
        path: resourcePath(api, { namespace }),
        query: { fieldManager: FIELD_MANAGER },
        body,
      });
      return;
    }
    const resourceVersion = stringAt(existing, ['metadata', 'resourceVersion']);
    const metadata = { ...(body.metadata as JsonObject), resourceVersion };
    await this.#transport.request({
      method: HttpMethod.PUT,
      path: resourcePath(api, { namespace, name }),
      query: { fieldManager: FIELD_MANAGER },
      body: { ...body, metadata },
    });
  }
}
