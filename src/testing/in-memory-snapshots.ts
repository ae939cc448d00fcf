/**
 * In-memory SnapshotApi (docs/adr/0036): ConfigMaps, Secrets and revision objects by namespace and
 * name. Records every call in order with how many workload writes came before it, refuses a create
 * whose name is taken (409), enforces the resourceVersion precondition of owner patches and the UID
 * precondition of deletes, and can be scripted to fail the next creates.
 */
import { ApiError } from '../core/api-error.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { objectAt, stringAt } from '../core/json.ts';
import type { SnapshotApi, SnapshotVersion } from '../reconcile/ports.ts';
import type { RevisionKind } from '../rollout/kinds.ts';
import type { SnapshotType } from '../rollout/snapshots.ts';

export type SnapshotCall =
  | { readonly verb: 'get' | 'list' | 'revisions'; readonly what: string }
  | { readonly verb: 'create'; readonly what: string; readonly body: JsonObject }
  | {
      readonly verb: 'setOwners' | 'addOwner';
      readonly what: string;
      readonly owners: readonly string[];
    }
  | { readonly verb: 'delete'; readonly what: string };

function conflict(message: string): ApiError {
  return new ApiError(message, { status: 409, reason: 'Conflict', retryable: true });
}

export class InMemorySnapshots implements SnapshotApi {
  readonly #objects = new Map<string, JsonObject>();
  readonly #revisions: JsonObject[] = [];
  readonly #failCreates: ApiError[] = [];
  readonly calls: SnapshotCall[] = [];
  #version = 100;
  #uids = 0;

  /** Puts a source (or any object) of `type`; it gets a uid and a resourceVersion. */
  put(type: SnapshotType, namespace: string, object: JsonObject): void {
    const name = stringAt(object, ['metadata', 'name']) ?? '';
    this.#store(type, namespace, name, object);
  }

  object(type: SnapshotType, namespace: string, name: string): JsonObject | undefined {
    return this.#objects.get(`${type}/${namespace}/${name}`);
  }

  /** Names of the objects of `type` in `namespace`, sorted. */
  names(type: SnapshotType, namespace: string): string[] {
    const prefix = `${type}/${namespace}/`;
    return [...this.#objects.keys()]
      .filter((key) => key.startsWith(prefix))
      .map((key) => key.slice(prefix.length))
      .sort();
  }

  addRevision(revision: JsonObject): void {
    this.#revisions.push(structuredClone(revision));
  }

  failNextCreate(...errors: ApiError[]): void {
    this.#failCreates.push(...errors);
  }

  #store(type: SnapshotType, namespace: string, name: string, object: JsonObject): JsonObject {
    const stored = structuredClone(object);
    const metadata = objectAt(stored, ['metadata']) ?? {};
    metadata.name = name;
    metadata.namespace = namespace;
    metadata.uid ??= `uid-${String(++this.#uids)}`;
    metadata.resourceVersion = String(++this.#version);
    stored.metadata = metadata;
    this.#objects.set(`${type}/${namespace}/${name}`, stored);
    return stored;
  }

  get(type: SnapshotType, namespace: string, name: string): Promise<JsonObject | undefined> {
    this.calls.push({ verb: 'get', what: `${type}/${name}` });
    const found = this.#objects.get(`${type}/${namespace}/${name}`);
    return Promise.resolve(found ? structuredClone(found) : undefined);
  }

  create(type: SnapshotType, namespace: string, body: JsonObject): Promise<void> {
    const name = stringAt(body, ['metadata', 'name']) ?? '';
    this.calls.push({ verb: 'create', what: `${type}/${name}`, body: structuredClone(body) });
    const failure = this.#failCreates.shift();
    if (failure) return Promise.reject(failure);
    if (this.#objects.has(`${type}/${namespace}/${name}`)) {
      return Promise.reject(
        new ApiError(`${name} already exists`, {
          status: 409,
          reason: 'AlreadyExists',
          retryable: true,
        }),
      );
    }
    this.#store(type, namespace, name, body);
    return Promise.resolve();
  }

  list(type: SnapshotType, namespace: string, labelSelector: string): Promise<JsonObject[]> {
    this.calls.push({ verb: 'list', what: `${type}?${labelSelector}` });
    const [label, value] = labelSelector.split('=');
    const prefix = `${type}/${namespace}/`;
    const items = [...this.#objects.entries()]
      .filter(([key]) => key.startsWith(prefix))
      .map(([, object]) => object)
      .filter((object) => {
        const labelled = stringAt(object, ['metadata', 'labels', label ?? '']);
        // `key` alone is an existence selector, as the API server reads it.
        return value === undefined ? labelled !== undefined : labelled === value;
      });
    return Promise.resolve(structuredClone(items));
  }

  setOwners(
    type: SnapshotType,
    ref: SnapshotVersion,
    owners: readonly JsonObject[],
    labels?: Readonly<Record<string, string | null>>,
  ): Promise<void> {
    this.calls.push({
      verb: 'setOwners',
      what: `${type}/${ref.name}`,
      owners: owners.map(
        (owner) => `${stringAt(owner, ['kind']) ?? ''}/${stringAt(owner, ['name']) ?? ''}`,
      ),
    });
    const current = this.#objects.get(`${type}/${ref.namespace}/${ref.name}`);
    if (!current)
      return Promise.reject(new ApiError('not found', { status: 404, retryable: false }));
    if (stringAt(current, ['metadata', 'resourceVersion']) !== ref.resourceVersion) {
      return Promise.reject(conflict(`${ref.name} was modified`));
    }
    const next = structuredClone(current);
    const metadata = next.metadata as JsonObject;
    metadata.ownerReferences = structuredClone([...owners]);
    const merged = { ...(objectAt(next, ['metadata', 'labels']) ?? {}), ...labels };
    metadata.labels = Object.fromEntries(
      Object.entries(merged).filter((entry): entry is [string, JsonValue] => entry[1] !== null),
    );
    this.#store(type, ref.namespace, ref.name, next);
    return Promise.resolve();
  }

  /** Appends like the JSON patch: no resourceVersion precondition, only the uid's. */
  addOwner(type: SnapshotType, read: JsonObject, owner: JsonObject, label: string): Promise<void> {
    const name = stringAt(read, ['metadata', 'name']) ?? '';
    const namespace = stringAt(read, ['metadata', 'namespace']) ?? '';
    this.calls.push({
      verb: 'addOwner',
      what: `${type}/${name}`,
      owners: [`${stringAt(owner, ['kind']) ?? ''}/${stringAt(owner, ['name']) ?? ''}`],
    });
    const current = this.#objects.get(`${type}/${namespace}/${name}`);
    if (!current)
      return Promise.reject(new ApiError('not found', { status: 404, retryable: false }));
    if (stringAt(current, ['metadata', 'uid']) !== stringAt(read, ['metadata', 'uid'])) {
      return Promise.reject(new ApiError('test failed', { status: 422, retryable: false }));
    }
    const next = structuredClone(current);
    const metadata = next.metadata as JsonObject;
    const owners = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [];
    metadata.ownerReferences = [...owners, structuredClone(owner)];
    metadata.labels = { ...(objectAt(next, ['metadata', 'labels']) ?? {}), [label]: 'true' };
    this.#store(type, namespace, name, next);
    return Promise.resolve();
  }

  delete(type: SnapshotType, ref: SnapshotVersion & { readonly uid: string }): Promise<void> {
    this.calls.push({ verb: 'delete', what: `${type}/${ref.name}` });
    const key = `${type}/${ref.namespace}/${ref.name}`;
    const current = this.#objects.get(key);
    if (!current)
      return Promise.reject(new ApiError('not found', { status: 404, retryable: false }));
    if (stringAt(current, ['metadata', 'uid']) !== ref.uid) return Promise.reject(conflict('uid'));
    if (stringAt(current, ['metadata', 'resourceVersion']) !== ref.resourceVersion) {
      return Promise.reject(conflict(`${ref.name} was modified`));
    }
    this.#objects.delete(key);
    return Promise.resolve();
  }

  revisions(kind: RevisionKind, namespace: string): Promise<JsonObject[]> {
    this.calls.push({ verb: 'revisions', what: kind });
    return Promise.resolve(
      structuredClone(
        this.#revisions.filter(
          (r) => r.kind === kind && stringAt(r, ['metadata', 'namespace']) === namespace,
        ),
      ),
    );
  }
}
