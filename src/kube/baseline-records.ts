/**
 * The baseline store's records in memory (docs/adr/0046): what the store objects hold as last
 * observed, overlaid with the records this process set and has not yet seen come back. Pure: no
 * I/O and no clock; `KubeBaselineStore` reads the objects and writes the batches this plans.
 *
 * A store object is a ConfigMap in kreload's namespace holding the records of workloads of one
 * watched namespace; data key `<kind>.<name>.<uid>` (the name digested when the key would pass
 * 253 characters), value the same compact hash map `kreload.io/baseline` holds. A record goes to
 * the first object of its namespace with room for it, so a namespace of a few workloads has one
 * object and a namespace of 10,000 a handful; every object stays under OBJECT_MAX_BYTES.
 */
import { createHash } from 'node:crypto';
import { parseHashMap } from '../core/state.ts';
import type { WorkloadView } from '../core/types.ts';

/** Bound of one object's data: half the API server's 1 MiB, leaving room for the patch itself. */
export const OBJECT_MAX_BYTES = 512 * 1024;
/** Objects per watched namespace at most: 32 MiB of records, 10,000 workloads of 3 KiB each. */
export const OBJECTS_PER_NAMESPACE = 64;
/** A data key's overhead in the stored object beyond its two JSON strings: colon and comma. */
const ENTRY_OVERHEAD_BYTES = 2;
const DATA_KEY_MAX = 253;
export const STORE_NAME_PREFIX = 'kreload-baselines-';

/** One store object as observed. */
export interface StoreObject {
  readonly name: string;
  /** The watched namespace whose workloads it records (annotation `kreload.io/baseline-namespace`). */
  readonly namespace: string | undefined;
  readonly resourceVersion: string;
  readonly data: ReadonlyMap<string, string>;
  /**
   * The data keys kreload's field manager did not write last, each with the manager that did
   * (from `managedFields`). Undefined when the object carries no `managedFields`.
   */
  readonly foreignWriters?: ReadonlyMap<string, string> | undefined;
}

/**
 * Why a record, or a whole object, of the store is not read (docs/adr/0046): a record someone else
 * wrote could name any hash, and a hash that differs from the source's rolls the workload. Never
 * holds a record's value.
 */
export type StoreProblem =
  | {
      readonly reason: 'foreign-writer';
      readonly object: string;
      readonly dataKey: string;
      readonly writer: string;
    }
  | { readonly reason: 'malformed'; readonly object: string; readonly dataKey: string }
  | { readonly reason: 'foreign-object'; readonly object: string; readonly records: number };

/** A record kreload did not write: not read unless kreload computed the same value itself. */
interface IgnoredRecord {
  readonly value: string;
  /** kreload set this very value since (a first sight): writing it would not change its owner. */
  adopted: boolean;
}

/** The changes of one object to write in one merge patch (null removes a key). */
export interface ObjectBatch {
  readonly object: string;
  readonly namespace: string;
  readonly data: ReadonlyMap<string, string | null>;
}

type Phase = 'pending' | 'sending' | 'written' | 'failed';

interface LocalRecord {
  readonly object: string;
  readonly namespace: string;
  readonly dataKey: string;
  readonly value: string | null;
  phase: Phase;
  /** `written`: the resourceVersion the write returned; the record is settled once observed. */
  writtenAt?: string | undefined;
  /** The object that held the record before it moved for want of room: its key is removed. */
  readonly leaving?: string | undefined;
}

/** Why a record was not kept. */
export interface Refused {
  readonly dataKey: string;
  readonly namespace: string;
  readonly bytes: number;
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The store object `index` of `namespace`: deterministic, a DNS-1123 name. */
export function storeObjectName(namespace: string, index: number): string {
  return `${STORE_NAME_PREFIX}${sha256Hex(namespace).slice(0, 16)}-${String(index)}`;
}

/** The data key of a workload object: kind, name and UID (a re-created workload has another). */
export function recordKey(view: Pick<WorkloadView, 'ref' | 'uid'>): string {
  const { kind, name } = view.ref;
  const key = `${kind}.${name}.${view.uid}`;
  return key.length <= DATA_KEY_MAX ? key : `${kind}.${sha256Hex(name).slice(0, 32)}.${view.uid}`;
}

/** An entry's size as its JSON member in a patch or object: escaped quotes count. */
function entryBytes(dataKey: string, value: string): number {
  return (
    Buffer.byteLength(JSON.stringify(dataKey), 'utf8') +
    Buffer.byteLength(JSON.stringify(value), 'utf8') +
    ENTRY_OVERHEAD_BYTES
  );
}

function objectBytes(data: ReadonlyMap<string, string>): number {
  let bytes = 0;
  for (const [key, value] of data) bytes += entryBytes(key, value);
  return bytes;
}

/**
 * The namespace whose records the object holds: the one its annotation names, when its name is one
 * of that namespace's store objects; undefined for any other object the store's label selects.
 */
function ownNamespace(object: StoreObject): string | undefined {
  const { namespace, name } = object;
  if (namespace === undefined) return undefined;
  const prefix = storeObjectName(namespace, 0).slice(0, -1);
  if (!name.startsWith(prefix)) return undefined;
  const index = name.slice(prefix.length);
  if (!/^(0|[1-9]\d?)$/u.test(index) || Number(index) >= OBJECTS_PER_NAMESPACE) return undefined;
  return namespace;
}

/** Whether resourceVersion `seen` is at or after `written` (etcd revisions; opaque: assume so). */
function observedSince(seen: string, written: string | undefined): boolean {
  if (written === undefined) return true;
  try {
    return BigInt(seen) >= BigInt(written);
  } catch {
    return true;
  }
}

function recordId(namespace: string, dataKey: string): string {
  return `${namespace}/${dataKey}`;
}

export class BaselineRecords {
  /** Observed objects, by name, with their data size. */
  readonly #objects = new Map<string, StoreObject & { readonly bytes: number }>();
  /** Record id → the observed object holding it. */
  readonly #observedIn = new Map<string, string>();
  /** Records set here and not yet observed back. */
  readonly #local = new Map<string, LocalRecord>();
  /** Per object, the bytes local records add to it (an over-estimate: updates count whole). */
  readonly #localBytes = new Map<string, number>();
  /** Per watched namespace, the name its store objects share before their index. */
  readonly #prefixes = new Map<string, string>();
  /** Per observed object, its records someone else wrote, by data key. */
  readonly #ignored = new Map<string, Map<string, IgnoredRecord>>();

  /** The workload's record: the local one if any, else the observed one. */
  recordOf(view: Pick<WorkloadView, 'ref' | 'uid'>): string | undefined {
    const dataKey = recordKey(view);
    const id = recordId(view.ref.namespace, dataKey);
    const local = this.#local.get(id);
    if (local !== undefined) return local.value ?? undefined;
    const object = this.#observedIn.get(id);
    if (object === undefined || this.#isIgnored(object, dataKey)) return undefined;
    return this.#objects.get(object)?.data.get(dataKey);
  }

  /** The store object that holds (or will hold) the workload's record, if it has one. */
  objectOf(view: Pick<WorkloadView, 'ref' | 'uid'>): string | undefined {
    const id = recordId(view.ref.namespace, recordKey(view));
    const local = this.#local.get(id);
    if (local !== undefined) return local.value === null ? undefined : local.object;
    const object = this.#observedIn.get(id);
    return object === undefined || this.#isIgnored(object, recordKey(view)) ? undefined : object;
  }

  /**
   * Sets the workload's record (null removes it) for the next batch. Returns the refusal when the
   * record is too big for any object of its namespace; nothing is kept or written then.
   */
  set(view: Pick<WorkloadView, 'ref' | 'uid'>, value: string | null): Refused | undefined {
    const namespace = view.ref.namespace;
    const dataKey = recordKey(view);
    const id = recordId(namespace, dataKey);
    const previous = this.#local.get(id);
    const holder = previous?.object ?? this.#observedIn.get(id);
    if (value === null) {
      if (holder === undefined) return undefined;
      this.#put(id, { object: holder, namespace, dataKey, value: null, phase: 'pending' });
      return undefined;
    }
    if (previous === undefined && this.#adopt(holder, dataKey, value)) return undefined;
    const bytes = entryBytes(dataKey, value);
    this.#dropLocal(id);
    const object = this.#placement(namespace, { holder, dataKey }, bytes);
    if (object === undefined) {
      if (previous !== undefined) this.#put(id, previous);
      return { dataKey, namespace, bytes };
    }
    const leaving = holder !== undefined && holder !== object ? holder : undefined;
    this.#put(id, { object, namespace, dataKey, value, phase: 'pending', leaving });
    return undefined;
  }

  /**
   * Removes, in the next batch, every record whose workload object `isGone` says no longer exists
   * (by UID, the last segment of the data key). Returns how many it removes.
   */
  sweep(isGone: (namespace: string, uid: string) => boolean): number {
    const holders = new Map<string, string>(this.#observedIn);
    for (const [id, record] of this.#local) {
      if (record.value === null) holders.delete(id);
      else holders.set(id, record.object);
    }
    let removed = 0;
    for (const [id, object] of holders) {
      const namespace = id.slice(0, id.indexOf('/'));
      const dataKey = id.slice(namespace.length + 1);
      if (!isGone(namespace, dataKey.slice(dataKey.lastIndexOf('.') + 1))) continue;
      this.#dropLocal(id);
      this.#put(id, { object, namespace, dataKey, value: null, phase: 'pending' });
      removed += 1;
    }
    return removed;
  }

  /** Takes the pending records as one batch per object, and marks them being sent. */
  takeBatches(): ObjectBatch[] {
    const batches = new Map<string, { namespace: string; data: Map<string, string | null> }>();
    const add = (object: string, namespace: string, key: string, value: string | null): void => {
      let batch = batches.get(object);
      if (batch === undefined) {
        batch = { namespace, data: new Map() };
        batches.set(object, batch);
      }
      batch.data.set(key, value);
    };
    for (const record of this.#local.values()) {
      if (record.phase !== 'pending') continue;
      record.phase = 'sending';
      add(record.object, record.namespace, record.dataKey, record.value);
      if (record.leaving !== undefined) add(record.leaving, record.namespace, record.dataKey, null);
    }
    return [...batches].map(([object, { namespace, data }]) => ({ object, namespace, data }));
  }

  /** The batch was written at `resourceVersion`: its records wait to be observed. */
  written(batch: ObjectBatch, resourceVersion: string | undefined): void {
    for (const record of this.#sentOf(batch)) {
      record.phase = 'written';
      record.writtenAt = resourceVersion;
    }
  }

  /**
   * The batch is not this replica's to write (active-active: its namespace's bucket is held by
   * another): its records are dropped, so the observed ones are read again.
   */
  abandon(batch: ObjectBatch): void {
    for (const key of batch.data.keys()) {
      const id = recordId(batch.namespace, key);
      const record = this.#local.get(id);
      if (record?.phase === 'sending') this.#dropLocal(id);
    }
  }

  /** The batch failed: retryable, its records are sent again; otherwise they stay unsent. */
  failed(batch: ObjectBatch, retryable: boolean): void {
    for (const record of this.#sentOf(batch)) record.phase = retryable ? 'pending' : 'failed';
  }

  get hasPending(): boolean {
    for (const record of this.#local.values()) if (record.phase === 'pending') return true;
    return false;
  }

  /**
   * Whether a pending record sets a value. Removals alone are never urgent: a rolled workload's B
   * is in its template, which wins over a stale record (docs/adr/0046).
   */
  get hasPendingValue(): boolean {
    for (const record of this.#local.values()) {
      if (record.phase === 'pending' && record.value !== null) return true;
    }
    return false;
  }

  /** Whether the object exists as far as this replica knows: observed, or written by it. */
  knows(object: string): boolean {
    if (this.#objects.has(object)) return true;
    for (const record of this.#local.values()) {
      if (record.object === object && record.phase === 'written') return true;
    }
    return false;
  }

  /**
   * The whole set of objects, after a list: what the lost objects held (see `remove`), and the
   * problems not reported before (see `upsert`).
   */
  replace(objects: readonly StoreObject[]): { lost: number; problems: StoreProblem[] } {
    const names = new Set(objects.map((object) => object.name));
    let lost = 0;
    for (const name of [...this.#objects.keys()]) {
      if (!names.has(name)) lost += this.remove(name, undefined);
    }
    const problems = objects.flatMap((object) => this.upsert(object));
    return { lost, problems };
  }

  /**
   * Reads the object. Returns its problems that are new since its previous version: records not
   * read because someone else wrote them, malformed ones (read, and counted absent by the planner),
   * or the whole object when its name is not one of the store's for the namespace it names (a copy,
   * or an edited annotation): its records are not read and no record goes to it.
   */
  upsert(object: StoreObject): StoreProblem[] {
    const previous = this.#objects.get(object.name);
    if (previous !== undefined) this.#unindex(previous);
    const namespace = ownNamespace(object);
    if (namespace === undefined) {
      this.#objects.set(object.name, {
        ...object,
        namespace: undefined,
        bytes: objectBytes(object.data),
      });
      this.#ignored.delete(object.name);
      this.#settle(object.name, object.resourceVersion);
      const wasRead = previous === undefined || previous.namespace !== undefined;
      return wasRead && object.data.size > 0
        ? [{ reason: 'foreign-object', object: object.name, records: object.data.size }]
        : [];
    }
    this.#objects.set(object.name, { ...object, bytes: objectBytes(object.data) });
    for (const key of object.data.keys()) {
      this.#observedIn.set(recordId(namespace, key), object.name);
    }
    const problems = this.#checkRecords(object, previous);
    this.#settle(object.name, object.resourceVersion);
    return problems;
  }

  /**
   * The object is gone (deleted by someone, or missing from a relist): its records are lost, and
   * so are the local records already written to it, which went with it. Their workloads have no
   * baseline now and are baselined again without a roll. Returns how many records were lost.
   */
  remove(name: string, resourceVersion: string | undefined): number {
    const previous = this.#objects.get(name);
    this.#objects.delete(name);
    this.#ignored.delete(name);
    let lost = 0;
    if (previous !== undefined) lost += this.#unindex(previous);
    for (const [id, record] of this.#local) {
      if (record.object !== name || record.phase !== 'written') continue;
      if (resourceVersion === undefined || observedSince(resourceVersion, record.writtenAt)) {
        this.#dropLocal(id);
      }
    }
    return lost;
  }

  /** Records held: observed, and set here but not yet observed; removals pending excluded. */
  get recordCount(): number {
    let count = this.#observedIn.size;
    for (const [id, record] of this.#local) {
      const observed = this.#observedIn.has(id);
      if (record.value === null && observed) count -= 1;
      else if (record.value !== null && !observed) count += 1;
    }
    return count;
  }

  /** Store objects observed. */
  get objectCount(): number {
    return this.#objects.size;
  }

  /** Records held in memory beyond the observed objects (bounded by the workloads written). */
  get localCount(): number {
    return this.#local.size;
  }

  #sentOf(batch: ObjectBatch): LocalRecord[] {
    const sent: LocalRecord[] = [];
    for (const key of batch.data.keys()) {
      const record = this.#local.get(recordId(batch.namespace, key));
      if (record?.phase === 'sending' && record.object === batch.object) sent.push(record);
    }
    return sent;
  }

  /** The object the record goes to: where it is if it still fits, else the first with room. */
  #placement(
    namespace: string,
    current: { readonly holder: string | undefined; readonly dataKey: string },
    bytes: number,
  ): string | undefined {
    if (bytes > OBJECT_MAX_BYTES) return undefined;
    const { holder, dataKey } = current;
    // In place, the new value replaces the observed one: its bytes are room too, or a full
    // object could not even take a record of the same size back.
    if (
      holder !== undefined &&
      this.#room(holder) + this.#observedBytes(holder, dataKey) >= bytes
    ) {
      return holder;
    }
    const prefix = this.#objectPrefix(namespace);
    for (let index = 0; index < OBJECTS_PER_NAMESPACE; index += 1) {
      const name = `${prefix}${String(index)}`;
      const observed = this.#objects.get(name);
      if (observed !== undefined && observed.namespace !== namespace) continue;
      if (this.#room(name) >= bytes) return name;
    }
    return undefined;
  }

  /** `storeObjectName(namespace, i)` without `i`: one SHA-256 per namespace, not per record. */
  #objectPrefix(namespace: string): string {
    let prefix = this.#prefixes.get(namespace);
    if (prefix === undefined) {
      prefix = storeObjectName(namespace, 0).slice(0, -1);
      this.#prefixes.set(namespace, prefix);
    }
    return prefix;
  }

  #isIgnored(object: string, dataKey: string): boolean {
    const ignored = this.#ignored.get(object)?.get(dataKey);
    return ignored !== undefined && !ignored.adopted;
  }

  /**
   * kreload sets the very value someone else wrote: it is read from now on, and not written, since
   * writing the same value would not make kreload its writer.
   */
  #adopt(holder: string | undefined, dataKey: string, value: string): boolean {
    const ignored = holder === undefined ? undefined : this.#ignored.get(holder)?.get(dataKey);
    if (ignored?.value !== value) return false;
    ignored.adopted = true;
    return true;
  }

  /** The object's problems new since `previous`: records someone else wrote, malformed ones. */
  #checkRecords(object: StoreObject, previous: StoreObject | undefined): StoreProblem[] {
    const problems = this.#keepForeign(object);
    const ignored = this.#ignored.get(object.name);
    const seen = previous?.namespace === undefined ? undefined : previous.data;
    for (const [dataKey, value] of object.data) {
      if (ignored?.has(dataKey) === true || seen?.get(dataKey) === value) continue;
      if (parseHashMap(value).malformed) {
        problems.push({ reason: 'malformed', object: object.name, dataKey });
      }
    }
    return problems;
  }

  /** Keeps apart the records someone else wrote; reports those new or changed. */
  #keepForeign(object: StoreObject): StoreProblem[] {
    const problems: StoreProblem[] = [];
    const before = this.#ignored.get(object.name);
    const ignored = new Map<string, IgnoredRecord>();
    for (const [dataKey, writer] of object.foreignWriters ?? []) {
      const value = object.data.get(dataKey);
      if (value === undefined) continue;
      const known = before?.get(dataKey);
      if (known?.value === value) {
        ignored.set(dataKey, known);
        continue;
      }
      ignored.set(dataKey, { value, adopted: false });
      problems.push({ reason: 'foreign-writer', object: object.name, dataKey, writer });
    }
    if (ignored.size > 0) this.#ignored.set(object.name, ignored);
    else this.#ignored.delete(object.name);
    return problems;
  }

  /** The bytes the object holds for `dataKey` as last observed (0 without such an entry). */
  #observedBytes(object: string, dataKey: string): number {
    const value = this.#objects.get(object)?.data.get(dataKey);
    return value === undefined ? 0 : entryBytes(dataKey, value);
  }

  #room(object: string): number {
    const observed = this.#objects.get(object)?.bytes ?? 0;
    return OBJECT_MAX_BYTES - observed - (this.#localBytes.get(object) ?? 0);
  }

  #put(id: string, record: LocalRecord): void {
    this.#dropLocal(id);
    this.#local.set(id, record);
    if (record.value !== null) {
      const bytes = entryBytes(record.dataKey, record.value);
      this.#localBytes.set(record.object, (this.#localBytes.get(record.object) ?? 0) + bytes);
    }
  }

  #dropLocal(id: string): void {
    const record = this.#local.get(id);
    if (record === undefined) return;
    this.#local.delete(id);
    if (record.value === null) return;
    const left =
      (this.#localBytes.get(record.object) ?? 0) - entryBytes(record.dataKey, record.value);
    if (left > 0) this.#localBytes.set(record.object, left);
    else this.#localBytes.delete(record.object);
  }

  #unindex(object: StoreObject): number {
    let count = 0;
    if (object.namespace === undefined) return 0;
    for (const key of object.data.keys()) {
      const id = recordId(object.namespace, key);
      if (this.#observedIn.get(id) === object.name) {
        this.#observedIn.delete(id);
        count += 1;
      }
    }
    return count;
  }

  /** Local records written to `name` at or before `resourceVersion` are now observed. */
  #settle(name: string, resourceVersion: string): void {
    for (const [id, record] of this.#local) {
      if (record.object !== name || record.phase !== 'written') continue;
      if (observedSince(resourceVersion, record.writtenAt)) this.#dropLocal(id);
    }
  }
}
