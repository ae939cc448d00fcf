/**
 * In-memory WorkloadWriter: an API server holding workload views (for `get`) and, where a test puts
 * them, full wire objects (for `getObject`). It records every mutating call in order, enforces the
 * resourceVersion precondition of patches (409) and the preconditions of deletes (409), refuses a
 * create whose name is taken (409 AlreadyExists), applies patch bodies to the stored view, and can be
 * scripted to fail the next calls of each verb.
 */
import { workloadKey } from '../core/keys.ts';
import type {
  Annotations,
  ContainerView,
  WorkloadKey,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type {
  CreatedObject,
  DeletePreconditions,
  JournalEntry,
  PatchResult,
  WorkloadWriter,
} from '../reconcile/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { REVISION_DIGEST } from '../core/types.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { isJsonObject, objectAt, stringAt } from '../core/json.ts';
import type { Patch } from '../rollout/patch.ts';

export type RecordedWrite =
  | { readonly verb: 'patch'; readonly key: WorkloadKey; readonly patch: Patch }
  /** `key` names the object by `metadata.name`, or by `generateName` when it has none. */
  | { readonly verb: 'create'; readonly key: WorkloadKey; readonly body: JsonObject }
  | {
      readonly verb: 'delete';
      readonly key: WorkloadKey;
      readonly preconditions: DeletePreconditions;
    }
  | { readonly verb: 'instantiate'; readonly key: WorkloadKey; readonly body: JsonObject }
  /** Writes of the Job recreation journal (recording-journal.ts), in the same order. */
  | { readonly verb: 'journal'; readonly key: WorkloadKey; readonly entry: JournalEntry }
  | { readonly verb: 'unjournal'; readonly key: WorkloadKey };

/** The verbs of the WorkloadWriter port. */
type WriterVerb = Exclude<RecordedWrite['verb'], 'journal' | 'unjournal'>;

export type ScriptedVerb = WriterVerb | 'get' | 'getObject';

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
  const patch = patches.find((p) => isJsonObject(p) && p.name === container.name);
  const env = isJsonObject(patch) && Array.isArray(patch.env) ? patch.env : [];
  const stakaterEnv: Record<string, string> = { ...container.stakaterEnv };
  for (const entry of env) {
    if (!isJsonObject(entry) || typeof entry.name !== 'string') continue;
    if (entry.name.startsWith('STAKATER_') && typeof entry.value === 'string') {
      stakaterEnv[entry.name] = entry.value;
    }
  }
  return { ...container, stakaterEnv };
}

/** The pod template inside a patch body: `spec.template`, or a CronJob's job template. */
function templateOf(body: JsonObject): JsonObject | undefined {
  return (
    objectAt(body, ['spec', 'template']) ??
    objectAt(body, ['spec', 'jobTemplate', 'spec', 'template'])
  );
}

/**
 * Applies a patch body of rollout/patch.ts to a view, as the API server would: annotations merge,
 * env entries merge by name (a merge patch's full container list gives the same result here), and
 * `spec.paused` is set.
 */
export function applyPatchToView(view: WorkloadView, patch: Patch): WorkloadView {
  const body = patch.body;
  const template = templateOf(body);
  const containers = objectAt(template, ['spec'])?.containers;
  const containerPatches = Array.isArray(containers) ? containers : [];
  const paused = objectAt(body, ['spec'])?.paused;
  return {
    ...view,
    resourceVersion: String(Number(view.resourceVersion) + 1),
    generation: (view.generation ?? 0) + (template === undefined ? 0 : 1),
    annotations: mergeAnnotations(view.annotations, objectAt(body, ['metadata', 'annotations'])),
    templateAnnotations: mergeAnnotations(
      view.templateAnnotations,
      objectAt(template, ['metadata', 'annotations']),
    ),
    podSpec: {
      ...view.podSpec,
      containers: view.podSpec.containers.map((c) => mergeContainerEnv(c, containerPatches)),
    },
    paused: typeof paused === 'boolean' ? paused : view.paused,
    ...revisionDigestAfter(view, objectAt(body, ['metadata', 'labels'])),
  };
}

/** The W label config revisions write (docs/adr/0036): a string sets it, null removes it. */
function revisionDigestAfter(
  view: WorkloadView,
  labels: JsonObject | undefined,
): Pick<WorkloadView, 'revisionDigest'> {
  const value = labels?.[REVISION_DIGEST];
  if (typeof value === 'string') return { revisionDigest: value };
  return value === null ? { revisionDigest: undefined } : {};
}

function preconditionOf(patch: Patch): string | undefined {
  const value = objectAt(patch.body, ['metadata'])?.resourceVersion;
  return typeof value === 'string' ? value : undefined;
}

export class RecordingWriter implements WorkloadWriter {
  readonly #views = new Map<WorkloadKey, WorkloadView>();
  readonly #objects = new Map<WorkloadKey, JsonObject>();
  readonly #writes: RecordedWrite[] = [];
  readonly #failures = new Map<ScriptedVerb, ApiError[]>();
  readonly #lostAnswers = new Map<WriterVerb, ApiError[]>();
  #gets = 0;
  #objectGets = 0;
  #created = 0;

  /** Puts (or replaces) the server's view of a workload. */
  put(view: WorkloadView): void {
    this.#views.set(workloadKey(view.ref), view);
  }

  /** Puts (or replaces) the full object that `getObject` serves for `ref`. */
  putObject(ref: WorkloadRef, object: JsonObject): void {
    this.#objects.set(workloadKey(ref), structuredClone(object));
  }

  server(ref: WorkloadRef): WorkloadView | undefined {
    return this.#views.get(workloadKey(ref));
  }

  /** The stored wire object (created objects included), by `Kind/namespace/name`. */
  object(key: WorkloadKey): JsonObject | undefined {
    return this.#objects.get(key);
  }

  /** The next calls of `verb` fail with these errors, in order. */
  failNextCall(verb: ScriptedVerb, ...errors: ApiError[]): void {
    this.#failures.set(verb, [...(this.#failures.get(verb) ?? []), ...errors]);
  }

  /**
   * The next calls of `verb` take effect and then fail with these errors, in order: the server
   * committed the write and its answer was lost (a timeout, a reset, a 504).
   */
  loseNextAnswer(verb: WriterVerb, ...errors: ApiError[]): void {
    this.#lostAnswers.set(verb, [...(this.#lostAnswers.get(verb) ?? []), ...errors]);
  }

  #answer<T>(verb: WriterVerb, value: T): Promise<T> {
    const lost = this.#lostAnswers.get(verb)?.shift();
    return lost ? Promise.reject(lost) : Promise.resolve(value);
  }

  /** The next patch calls fail with these errors, in order. */
  failNext(...errors: ApiError[]): void {
    this.failNextCall('patch', ...errors);
  }

  /** The next get calls fail with these errors, in order. */
  failNextGet(...errors: ApiError[]): void {
    this.failNextCall('get', ...errors);
  }

  /** Adds a write of another port (the journal) to `writes`, so tests see one order. */
  note(write: Extract<RecordedWrite, { verb: 'journal' | 'unjournal' }>): void {
    this.#writes.push(write);
  }

  /** Every mutating call, in order. */
  get writes(): readonly RecordedWrite[] {
    return this.#writes;
  }

  get getCount(): number {
    return this.#gets;
  }

  get getObjectCount(): number {
    return this.#objectGets;
  }

  #scripted(verb: ScriptedVerb): ApiError | undefined {
    return this.#failures.get(verb)?.shift();
  }

  patch(ref: WorkloadRef, patch: Patch): Promise<PatchResult> {
    const key = workloadKey(ref);
    this.#writes.push({ verb: 'patch', key, patch });
    const failure = this.#scripted('patch');
    if (failure) return Promise.reject(failure);
    const current = this.#views.get(key);
    if (!current) return Promise.reject(notFound(key));
    // A patch without a resourceVersion has no precondition, as on the API server.
    const precondition = preconditionOf(patch);
    if (precondition !== undefined && precondition !== current.resourceVersion) {
      return Promise.reject(conflict(key));
    }
    const next = applyPatchToView(current, patch);
    this.#views.set(key, next);
    const object = this.#objects.get(key);
    const metadata = objectAt(object, ['metadata']);
    if (metadata) metadata.resourceVersion = next.resourceVersion;
    return this.#answer('patch', {
      generation: next.generation,
      resourceVersion: next.resourceVersion,
    });
  }

  get(ref: WorkloadRef): Promise<WorkloadView | undefined> {
    this.#gets += 1;
    const failure = this.#scripted('get');
    if (failure) return Promise.reject(failure);
    return Promise.resolve(this.#views.get(workloadKey(ref)));
  }

  getObject(ref: WorkloadRef): Promise<JsonObject | undefined> {
    this.#objectGets += 1;
    const failure = this.#scripted('getObject');
    if (failure) return Promise.reject(failure);
    const object = this.#objects.get(workloadKey(ref));
    return Promise.resolve(object === undefined ? undefined : structuredClone(object));
  }

  create(row: WorkloadKindRow, namespace: string, body: JsonObject): Promise<CreatedObject> {
    const requested = stringAt(body, ['metadata', 'name']);
    const generateName = stringAt(body, ['metadata', 'generateName']) ?? '';
    this.#writes.push({
      verb: 'create',
      key: workloadKey({ kind: row.kind, namespace, name: requested ?? generateName }),
      body: structuredClone(body),
    });
    const failure = this.#scripted('create');
    if (failure) return Promise.reject(failure);
    this.#created += 1;
    const name = requested ?? `${generateName}${String(this.#created).padStart(5, '0')}`;
    const key = workloadKey({ kind: row.kind, namespace, name });
    if (this.#objects.has(key) || this.#views.has(key)) return Promise.reject(alreadyExists(key));
    const uid = `uid-created-${this.#created}`;
    const metadata = { ...(objectAt(body, ['metadata']) ?? {}), name, namespace, uid };
    this.#objects.set(key, { ...structuredClone(body), metadata });
    return this.#answer('create', { name, uid });
  }

  delete(ref: WorkloadRef, preconditions: DeletePreconditions): Promise<void> {
    const key = workloadKey(ref);
    this.#writes.push({ verb: 'delete', key, preconditions });
    const failure = this.#scripted('delete');
    if (failure) return Promise.reject(failure);
    const current = this.#views.get(key);
    if (!current) return Promise.reject(notFound(key));
    if (
      current.uid !== preconditions.uid ||
      current.resourceVersion !== preconditions.resourceVersion
    ) {
      return Promise.reject(conflict(key));
    }
    this.#views.delete(key);
    this.#objects.delete(key);
    return this.#answer('delete', undefined);
  }

  instantiate(ref: WorkloadRef, body: JsonObject): Promise<void> {
    const key = workloadKey(ref);
    this.#writes.push({ verb: 'instantiate', key, body });
    const failure = this.#scripted('instantiate');
    if (failure) return Promise.reject(failure);
    return this.#views.has(key)
      ? this.#answer('instantiate', undefined)
      : Promise.reject(notFound(key));
  }
}

function notFound(key: WorkloadKey): ApiError {
  return new ApiError(`${key} not found`, { status: 404, retryable: false });
}

function conflict(key: WorkloadKey): ApiError {
  return new ApiError(`Operation cannot be fulfilled on ${key}: the object has been modified`, {
    status: 409,
    retryable: true,
  });
}

function alreadyExists(key: WorkloadKey): ApiError {
  return new ApiError(`${key} already exists`, { status: 409, retryable: true });
}
