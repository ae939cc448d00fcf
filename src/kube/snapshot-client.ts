/**
 * The reconciler's `SnapshotApi` port (reconcile/ports.ts, docs/adr/0036): ConfigMaps and Secrets
 * by raw JSON through the transport, ReplicaSets and ControllerRevisions listed for adoption. A
 * source's content is returned to the one caller and never kept here. Every method rejects with
 * `ApiError`.
 */
import type { JsonObject } from '../core/json.ts';
import { isJsonObject, objectAt, objectsAt, stringAt } from '../core/json.ts';
import type { SnapshotApi, SnapshotVersion } from '../reconcile/ports.ts';
import type { RevisionKind } from '../rollout/kinds.ts';
import type { SnapshotType } from '../rollout/snapshots.ts';
import { toApiError } from './api-error.ts';
import type { ApiResource } from './resources.ts';
import { OTHER_RESOURCES, REVISION_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

const SOURCE_RESOURCES: Readonly<Record<SnapshotType, ApiResource>> = {
  CONFIGMAP: OTHER_RESOURCES.configMaps,
  SECRET: OTHER_RESOURCES.secrets,
};

async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toApiError(err);
  }
}

/** The items of a list, each with its `kind` (a list's items come without it). */
function itemsOf(answer: unknown, kind: string): JsonObject[] {
  return objectsAt(answer, ['items']).map((item) => ({ ...item, kind }));
}

/** RFC 6901: `~` and `/` escaped, for a label key inside a JSON patch path. */
function jsonPointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

const ITEM_KINDS: Readonly<Record<SnapshotType, string>> = {
  CONFIGMAP: 'ConfigMap',
  SECRET: 'Secret',
};

export class KubeSnapshotClient implements SnapshotApi {
  readonly #transport: KubeTransport;

  constructor(deps: { readonly transport: KubeTransport }) {
    this.#transport = deps.transport;
  }

  async get(type: SnapshotType, namespace: string, name: string): Promise<JsonObject | undefined> {
    try {
      const answer = await this.#transport.request({
        method: HttpMethod.GET,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace, name }),
      });
      return isJsonObject(answer) ? answer : undefined;
    } catch (err) {
      const error = toApiError(err);
      if (error.status === 404) return undefined;
      throw error;
    }
  }

  async create(type: SnapshotType, namespace: string, body: JsonObject): Promise<void> {
    await mapped(() =>
      this.#transport.request({
        method: HttpMethod.POST,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace }),
        query: { fieldManager: FIELD_MANAGER },
        body,
        contentType: 'application/json',
      }),
    );
  }

  async list(
    type: SnapshotType,
    namespace: string,
    labelSelector: string,
  ): Promise<readonly JsonObject[]> {
    const answer = await mapped(() =>
      this.#transport.request({
        method: HttpMethod.GET,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace }),
        query: { labelSelector },
      }),
    );
    return itemsOf(answer, ITEM_KINDS[type]);
  }

  async setOwners(
    type: SnapshotType,
    ref: SnapshotVersion,
    owners: readonly JsonObject[],
    labels?: Readonly<Record<string, string | null>>,
  ): Promise<void> {
    const metadata: JsonObject = {
      resourceVersion: ref.resourceVersion,
      ownerReferences: [...owners],
    };
    if (labels !== undefined) metadata.labels = { ...labels };
    await mapped(() =>
      this.#transport.request({
        method: HttpMethod.PATCH,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace: ref.namespace, name: ref.name }),
        query: { fieldManager: FIELD_MANAGER },
        body: { metadata },
        contentType: 'application/merge-patch+json',
      }),
    );
  }

  async addOwner(
    type: SnapshotType,
    current: JsonObject,
    owner: JsonObject,
    label: string,
  ): Promise<void> {
    const namespace = stringAt(current, ['metadata', 'namespace']) ?? '';
    const name = stringAt(current, ['metadata', 'name']) ?? '';
    const hasOwners = objectsAt(current, ['metadata', 'ownerReferences']).length > 0;
    const hasLabels = objectAt(current, ['metadata', 'labels']) !== undefined;
    await mapped(() =>
      this.#transport.request({
        method: HttpMethod.PATCH,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace, name }),
        query: { fieldManager: FIELD_MANAGER },
        body: [
          {
            op: 'test',
            path: '/metadata/uid',
            value: stringAt(current, ['metadata', 'uid']) ?? '',
          },
          hasOwners
            ? { op: 'add', path: '/metadata/ownerReferences/-', value: owner }
            : { op: 'add', path: '/metadata/ownerReferences', value: [owner] },
          hasLabels
            ? { op: 'add', path: `/metadata/labels/${jsonPointerToken(label)}`, value: 'true' }
            : { op: 'add', path: '/metadata/labels', value: { [label]: 'true' } },
        ],
        contentType: 'application/json-patch+json',
      }),
    );
  }

  async delete(type: SnapshotType, ref: SnapshotVersion & { readonly uid: string }): Promise<void> {
    await mapped(() =>
      this.#transport.request({
        method: HttpMethod.DELETE,
        path: resourcePath(SOURCE_RESOURCES[type], { namespace: ref.namespace, name: ref.name }),
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          preconditions: { uid: ref.uid, resourceVersion: ref.resourceVersion },
        },
        contentType: 'application/json',
      }),
    );
  }

  async revisions(kind: RevisionKind, namespace: string): Promise<readonly JsonObject[]> {
    const answer = await mapped(() =>
      this.#transport.request({
        method: HttpMethod.GET,
        path: resourcePath(REVISION_RESOURCES[kind], { namespace }),
      }),
    );
    return itemsOf(answer, kind);
  }
}
