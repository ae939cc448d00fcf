/**
 * The reconciler's `WorkloadWriter` port (reconcile/ports.ts) on top of `WorkloadClient`: every
 * failure rejects with the one `ApiError` (core/api-error.ts), a GET of a missing workload is
 * undefined, and a fresh GET can come back projected to a view.
 */
import type { WorkloadRef, WorkloadView } from '../core/types.ts';
import type {
  CreatedObject,
  DeletePreconditions,
  PatchResult,
  WorkloadWriter,
} from '../reconcile/ports.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import type { Patch } from '../rollout/patch.ts';
import { toApiError } from './api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { numberAt, stringAt } from '../core/json.ts';
import type { WorkloadClient } from './workload-client.ts';
import type { ProjectionSettings } from './projections.ts';
import { projectWorkload } from './workload-projection.ts';

export interface KubeWorkloadWriterDeps {
  readonly client: WorkloadClient;
  /** The watches' settings: a view fetched after a conflict must equal the watched one. */
  readonly projection: ProjectionSettings;
}

async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw toApiError(err);
  }
}

/** Like `mapped`, but a 404 resolves to undefined. */
async function unlessGone<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    const error = toApiError(err);
    if (error.status === 404) return undefined;
    throw error;
  }
}

export class KubeWorkloadWriter implements WorkloadWriter {
  readonly #deps: KubeWorkloadWriterDeps;

  constructor(deps: KubeWorkloadWriterDeps) {
    this.#deps = deps;
  }

  async patch(ref: WorkloadRef, patch: Patch): Promise<PatchResult> {
    const patched = await mapped(() => this.#deps.client.patch(ref, patch));
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
      : projectWorkload(ref.kind, object, this.#deps.projection);
  }

  getObject(ref: WorkloadRef): Promise<JsonObject | undefined> {
    return unlessGone(() => this.#deps.client.get(ref));
  }

  async create(row: WorkloadKindRow, namespace: string, body: JsonObject): Promise<CreatedObject> {
    const created = await mapped(() => this.#deps.client.create(row.kind, namespace, body));
    return {
      name: stringAt(created, ['metadata', 'name']) ?? '',
      uid: stringAt(created, ['metadata', 'uid']) ?? '',
    };
  }

  async delete(ref: WorkloadRef, preconditions: DeletePreconditions): Promise<void> {
    await mapped(() => this.#deps.client.delete(ref, preconditions));
  }

  async instantiate(ref: WorkloadRef, body: JsonObject): Promise<void> {
    await mapped(() => this.#deps.client.createSubresource(ref, 'instantiate', body));
  }
}
