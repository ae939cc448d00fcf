/**
 * Workload writes and reads (§10): PATCH with the patch type's Content-Type, POST and DELETE, all
 * with `fieldManager=kreload` where the API has one (DELETE has none). Raw JSON through the
 * transport, so a GET returns the object exactly as served (a Job recreated from it loses no
 * field client-node's models do not know) and custom resources need no special path.
 * Every method rejects with `ApiError`.
 */
import { PatchStrategy } from './client-node.ts';
import type { WorkloadKind, WorkloadRef } from '../core/types.ts';
import { ApiError } from '../core/api-error.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { isJsonObject } from '../core/json.ts';
import { resourcePath, workloadResource } from './resources.ts';
import type { ResourceLocation } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';

export const FIELD_MANAGER = 'kreload';

/** A superset of rollout/'s patch types: the client can send any of the three (§10). */
export type PatchType = 'strategic' | 'merge' | 'json';

const CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  strategic: PatchStrategy.StrategicMergePatch,
  merge: PatchStrategy.MergePatch,
  json: PatchStrategy.JsonPatch,
};

export interface WorkloadPatch {
  readonly type: PatchType;
  /** An object for strategic and merge patches, an operation list for JSON patches. */
  readonly body: JsonObject | readonly JsonValue[];
}

/** `DeleteOptions.preconditions`: delete exactly the object that was read (§7.4). */
export interface DeletePreconditions {
  readonly uid: string;
  readonly resourceVersion: string;
}

export interface WorkloadClientDeps {
  readonly transport: KubeTransport;
}

function asObject(value: unknown, what: string): JsonObject {
  if (isJsonObject(value)) return value;
  throw new ApiError(`unexpected answer to ${what}: not a JSON object`, { retryable: false });
}

export class WorkloadClient {
  readonly #transport: KubeTransport;

  constructor(deps: WorkloadClientDeps) {
    this.#transport = deps.transport;
  }

  /** The full object as served. */
  async get(ref: WorkloadRef): Promise<JsonObject> {
    const answer = await this.#transport.request({
      method: HttpMethod.GET,
      path: pathOf(ref.kind, ref),
    });
    return asObject(answer, `GET ${ref.kind}`);
  }

  /** @returns the patched object. */
  async patch(ref: WorkloadRef, patch: WorkloadPatch): Promise<JsonObject> {
    const answer = await this.#transport.request({
      method: HttpMethod.PATCH,
      path: pathOf(ref.kind, ref),
      query: { fieldManager: FIELD_MANAGER },
      body: patch.body,
      contentType: CONTENT_TYPES[patch.type],
    });
    return asObject(answer, `PATCH ${ref.kind}`);
  }

  /** Creates an object of `kind` (a Job from a CronJob, a recreated Job); @returns it as created. */
  async create(kind: WorkloadKind, namespace: string, body: JsonObject): Promise<JsonObject> {
    const answer = await this.#transport.request({
      method: HttpMethod.POST,
      path: pathOf(kind, { namespace }),
      query: { fieldManager: FIELD_MANAGER },
      body,
      contentType: 'application/json',
    });
    return asObject(answer, `POST ${kind}`);
  }

  /** Deletes in the background (the old pods go away on their own), only if still the same object. */
  async delete(ref: WorkloadRef, preconditions: DeletePreconditions): Promise<void> {
    await this.#transport.request({
      method: HttpMethod.DELETE,
      path: pathOf(ref.kind, ref),
      body: {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: 'Background',
        preconditions: { uid: preconditions.uid, resourceVersion: preconditions.resourceVersion },
      },
      contentType: 'application/json',
    });
  }

  /** POST to a subresource, e.g. `deploymentconfigs/<name>/instantiate` (§7.6). */
  async createSubresource(
    ref: WorkloadRef,
    subresource: string,
    body: JsonObject,
  ): Promise<unknown> {
    return this.#transport.request({
      method: HttpMethod.POST,
      path: pathOf(ref.kind, { ...ref, subresource }),
      query: { fieldManager: FIELD_MANAGER },
      body,
      contentType: 'application/json',
    });
  }
}

function pathOf(kind: WorkloadKind, location: ResourceLocation): string {
  return resourcePath(workloadResource(kind), location);
}
