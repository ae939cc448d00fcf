/**
 * The reconciler's `WorkloadWriter` port (reconcile/ports.ts, §10): PATCH with the patch type's
 * Content-Type, POST and DELETE, all with `fieldManager=kreload` where the API has one (DELETE has
 * none). Raw JSON through the transport, so a GET returns the object exactly as served (a Job
 * recreated from it loses no field client-node's models do not know) and custom resources need no
 * special path. Every method rejects with the transport's `ApiError`; a GET of a missing workload
 * is undefined, and a fresh GET can come back projected to a view.
 */
import { PatchStrategy } from './client-node.ts';
import type { WorkloadKindName, WorkloadRef, WorkloadView } from '../core/types.ts';
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { isJsonObject, numberAt, stringAt } from '../core/json.ts';
import type {
  CreatedObject,
  DeletePreconditions,
  PatchResult,
  WorkloadWriter,
} from '../reconcile/ports.ts';
import type { KindTable, PatchType, WorkloadKindRow } from '../rollout/kinds.ts';
import type { Patch } from '../rollout/patch.ts';
import type { ProjectionSettings } from './projections.ts';
import { resourcePath, workloadResource } from './resources.ts';
import type { ResourceLocation } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { projectWorkload } from './workload-projection.ts';

export const FIELD_MANAGER = 'kreload';

const CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  strategic: PatchStrategy.StrategicMergePatch,
  merge: PatchStrategy.MergePatch,
};

export interface WorkloadClientDeps {
  readonly transport: KubeTransport;
  /** The watches' settings: a view fetched after a conflict must equal the watched one. */
  readonly projection: ProjectionSettings;
  /** The effective kind table: where each workload kind is served. */
  readonly kinds: KindTable;
}

function asObject(value: unknown, what: string): JsonObject {
  if (isJsonObject(value)) return value;
  throw new ApiError(`unexpected answer to ${what}: not a JSON object`, { retryable: false });
}

export class WorkloadClient implements WorkloadWriter {
  readonly #deps: WorkloadClientDeps;

  constructor(deps: WorkloadClientDeps) {
    this.#deps = deps;
  }

  async patch(ref: WorkloadRef, patch: Patch): Promise<PatchResult> {
    const answer = await this.#deps.transport.request({
      method: HttpMethod.PATCH,
      path: this.#pathOf(ref.kind, ref),
      query: { fieldManager: FIELD_MANAGER },
      body: patch.body,
      contentType: CONTENT_TYPES[patch.type],
    });
    const patched = asObject(answer, `PATCH ${ref.kind}`);
    return {
      generation: numberAt(patched, ['metadata', 'generation']),
      resourceVersion: stringAt(patched, ['metadata', 'resourceVersion']),
    };
  }

  /** Undefined when the workload is gone (404) or the answer is not a workload. */
  async get(ref: WorkloadRef): Promise<WorkloadView | undefined> {
    const object = await this.getObject(ref);
    return object === undefined
      ? undefined
      : projectWorkload(this.#deps.kinds.row(ref.kind), object, this.#deps.projection);
  }

  /** The full object as served; undefined on 404. */
  async getObject(ref: WorkloadRef): Promise<JsonObject | undefined> {
    try {
      const answer = await this.#deps.transport.request({
        method: HttpMethod.GET,
        path: this.#pathOf(ref.kind, ref),
      });
      return asObject(answer, `GET ${ref.kind}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Creates an object of `row` (a Job from a CronJob, a recreated Job). */
  async create(row: WorkloadKindRow, namespace: string, body: JsonObject): Promise<CreatedObject> {
    const answer = await this.#deps.transport.request({
      method: HttpMethod.POST,
      path: resourcePath(workloadResource(row), { namespace }),
      query: { fieldManager: FIELD_MANAGER },
      body,
      contentType: 'application/json',
    });
    const created = asObject(answer, `POST ${row.kind}`);
    return {
      name: stringAt(created, ['metadata', 'name']) ?? '',
      uid: stringAt(created, ['metadata', 'uid']) ?? '',
    };
  }

  /** Deletes in the background (the old pods go away on their own), only if still the same object. */
  async delete(ref: WorkloadRef, preconditions: DeletePreconditions): Promise<void> {
    await this.#deps.transport.request({
      method: HttpMethod.DELETE,
      path: this.#pathOf(ref.kind, ref),
      body: {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        propagationPolicy: 'Background',
        preconditions: { uid: preconditions.uid, resourceVersion: preconditions.resourceVersion },
      },
      contentType: 'application/json',
    });
  }

  /** POST `deploymentconfigs/<name>/instantiate` (§7.6). */
  async instantiate(ref: WorkloadRef, body: JsonObject): Promise<void> {
    await this.#deps.transport.request({
      method: HttpMethod.POST,
      path: this.#pathOf(ref.kind, { ...ref, subresource: 'instantiate' }),
      query: { fieldManager: FIELD_MANAGER },
      body,
      contentType: 'application/json',
    });
  }

  #pathOf(kind: WorkloadKindName, location: ResourceLocation): string {
    return resourcePath(workloadResource(this.#deps.kinds.row(kind)), location);
  }
}
