/**
 * The two writes of the ConfigMaps kreload keeps in its own namespace (the Job recreation journal,
 * the baseline store): a merge patch of `data`, and the POST that creates the object with it.
 */
import type { JsonObject } from '../core/json.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import { HttpMethod, type KubeRequest } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

/** A merge patch of the keys of `data` (`null` removes a key). */
export function configMapDataPatch(namespace: string, name: string, data: JsonObject): KubeRequest {
  return {
    method: HttpMethod.PATCH,
    path: resourcePath(OTHER_RESOURCES.configMaps, { namespace, name }),
    query: { fieldManager: FIELD_MANAGER },
    body: { data },
    contentType: 'application/merge-patch+json',
  };
}

/** The POST of a new ConfigMap `name` holding `data`. */
export function configMapCreation(
  metadata: {
    readonly namespace: string;
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  },
  data: JsonObject,
): KubeRequest {
  return {
    method: HttpMethod.POST,
    path: resourcePath(OTHER_RESOURCES.configMaps, { namespace: metadata.namespace }),
    query: { fieldManager: FIELD_MANAGER },
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...metadata }, data },
    contentType: 'application/json',
  };
}
