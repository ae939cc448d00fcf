/**
 * In-memory WorkloadWriter: an API server holding workload views. It records every patch, enforces the
 * resourceVersion precondition (409), applies strategic-merge bodies to the stored view, and can be
 * scripted to fail the next calls.
 */
import { workloadKey } from '../core/keys.ts';
import type {
  Annotations,
  ContainerView,
  WorkloadKey,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type { WorkloadWriter } from '../reconcile/ports.ts';
import { WriteError } from '../reconcile/ports.ts';
import type { JsonObject, JsonValue, Patch } from '../rollout/patch.ts';

export interface RecordedWrite {
  readonly key: WorkloadKey;
  readonly patch: Patch;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: JsonValue | undefined, ...path: string[]): JsonObject | undefined {
  let current = value;
  for (const segment of path) {
    if (!isObject(current)) return undefined;
    current = current[segment];
  }
  return isObject(current) ? current : undefined;
}

/** Merges an annotation patch: a string sets, null removes. */
function mergeAnnotations(current: Annotations, patch: JsonObject | undefined): Annotations {
  if (!patch) return current;
  const next: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) Reflect.deleteProperty(next, key);
    else if (typeof value === 'string') next[key] = value;
  }
  return next;
}

function mergeContainerEnv(container: ContainerView, patches: readonly JsonValue[]): ContainerView {
  const patch = patches.find((p) => isObject(p) && p.name === container.name);
  const env = isObject(patch) && Array.isArray(patch.env) ? patch.env : [];
  const stakaterEnv: Record<string, string> = { ...container.stakaterEnv };
  for (const entry of env) {
    if (isObject(entry) && typeof entry.name === 'string' && typeof entry.value === 'string') {
      stakaterEnv[entry.name] = entry.value;
    }
  }
  return { ...container, stakaterEnv };
}

/** Applies a strategic-merge patch body of rollout/patch.ts to a view, as the API server would. */
export function applyPatchToView(view: WorkloadView, patch: Patch): WorkloadView {
  const body = patch.body;
  const template = objectAt(body, 'spec', 'template');
  const containers = objectAt(template, 'spec')?.containers;
  const containerPatches = Array.isArray(containers) ? containers : [];
  const templateChanged = template !== undefined;
  return {
    ...view,
    resourceVersion: String(Number(view.resourceVersion) + 1),
    generation: (view.generation ?? 0) + (templateChanged ? 1 : 0),
    annotations: mergeAnnotations(view.annotations, objectAt(body, 'metadata', 'annotations')),
    templateAnnotations: mergeAnnotations(
      view.templateAnnotations,
      objectAt(template, 'metadata', 'annotations'),
    ),
    podSpec: {
      ...view.podSpec,
      containers: view.podSpec.containers.map((c) => mergeContainerEnv(c, containerPatches)),
    },
  };
}

function preconditionOf(patch: Patch): string | undefined {
  const value = objectAt(patch.body, 'metadata')?.resourceVersion;
  return typeof value === 'string' ? value : undefined;
}

export class RecordingWriter implements WorkloadWriter {
  readonly #server = new Map<WorkloadKey, WorkloadView>();
  readonly #writes: RecordedWrite[] = [];
  readonly #failures: WriteError[] = [];
  readonly #getFailures: WriteError[] = [];
  #gets = 0;

  /** Puts (or replaces) the server's copy of a workload. */
  put(view: WorkloadView): void {
    this.#server.set(workloadKey(view.ref), view);
  }

  server(ref: WorkloadRef): WorkloadView | undefined {
    return this.#server.get(workloadKey(ref));
  }

  /** The next patch calls fail with these errors, in order. */
  failNext(...errors: WriteError[]): void {
    this.#failures.push(...errors);
  }

  /** The next get calls fail with these errors, in order. */
  failNextGet(...errors: WriteError[]): void {
    this.#getFailures.push(...errors);
  }

  get writes(): readonly RecordedWrite[] {
    return this.#writes;
  }

  get getCount(): number {
    return this.#gets;
  }

  patch(ref: WorkloadRef, patch: Patch): Promise<void> {
    const key = workloadKey(ref);
    this.#writes.push({ key, patch });
    const failure = this.#failures.shift();
    if (failure) return Promise.reject(failure);
    const current = this.#server.get(key);
    if (!current) return Promise.reject(notFound(key));
    if (preconditionOf(patch) !== current.resourceVersion) return Promise.reject(conflict(key));
    this.#server.set(key, applyPatchToView(current, patch));
    return Promise.resolve();
  }

  get(ref: WorkloadRef): Promise<WorkloadView | undefined> {
    this.#gets += 1;
    const failure = this.#getFailures.shift();
    if (failure) return Promise.reject(failure);
    return Promise.resolve(this.#server.get(workloadKey(ref)));
  }
}

function notFound(key: WorkloadKey): WriteError {
  return new WriteError({ message: `${key} not found`, status: 404, retryable: false });
}

function conflict(key: WorkloadKey): WriteError {
  return new WriteError({
    message: `Operation cannot be fulfilled on ${key}: the object has been modified`,
    status: 409,
    retryable: true,
  });
}
