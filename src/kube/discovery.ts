/**
 * Is an API served? (§2.2: Rollouts, DeploymentConfigs, the CSI secrets-store kinds.) Asked at
 * startup and at every resync, so a CRD installed later is picked up without a restart.
 */
import { objectsAt, stringAt } from '../core/json.ts';
import { toApiError } from './api-error.ts';
import { groupVersionPath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';

export interface ApiDiscoveryDeps {
  readonly transport: KubeTransport;
}

export class ApiDiscovery {
  readonly #transport: KubeTransport;

  constructor(deps: ApiDiscoveryDeps) {
    this.#transport = deps.transport;
  }

  /**
   * True when `group/version` is served and lists `plural`; false when the group version is
   * unknown (404). Other failures (403, 503 from an unavailable aggregated API, network) reject
   * with `ApiError`: "could not tell" is not "absent".
   */
  async isApiServed(group: string, version: string, plural: string): Promise<boolean> {
    let resources: unknown;
    try {
      resources = await this.#transport.request({
        method: HttpMethod.GET,
        path: groupVersionPath(group, version),
      });
    } catch (err) {
      const error = toApiError(err);
      if (error.status === 404) return false;
      throw error;
    }
    return objectsAt(resources, ['resources']).some((r) => stringAt(r, ['name']) === plural);
  }
}
