/**
 * The baseline store's I/O (docs/adr/0046): a list-watch of its ConfigMaps in kreload's own
 * namespace, folded into `BaselineRecords`, and a writer that sends the records set since the last
 * flush as one JSON merge patch per object (a POST creates an object the first time), at most once
 * per FLUSH_INTERVAL_MS, or REMOVAL_FLUSH_INTERVAL_MS when only removals wait, up to
 * FLUSH_CONCURRENCY objects at once. Only hashes are kept and written, never source content.
 */
import PQueue from 'p-queue';

import type { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { isJsonObject, objectAt, stringAt } from '../core/json.ts';
import type { WorkloadView } from '../core/types.ts';
import { backoffDelay, BACKOFF_POLICIES, type RandomSource } from '../queue/backoff.ts';
import type { BaselineStore } from '../reconcile/ports.ts';
import { LeadershipLostError } from '../reconcile/write-actions.ts';
import type { Timers } from '../time/timers.ts';
import { toApiError } from './api-error.ts';
import type { ObjectBatch, Refused, StoreObject, StoreProblem } from './baseline-records.ts';
import { BaselineRecords, OBJECT_MAX_BYTES } from './baseline-records.ts';
import type { ListWatchConsumer, ListWatchStatus } from './list-watch.ts';
import type { KubeTransport } from './transport.ts';
import { configMapCreation, configMapDataPatch } from './config-map-requests.ts';
import { FIELD_MANAGER } from './workload-client.ts';

export const BASELINE_STORE_LABELS = {
  'app.kubernetes.io/managed-by': 'kreload',
  'kreload.io/baseline-store': 'true',
} as const;
export const BASELINE_STORE_SELECTOR = Object.entries(BASELINE_STORE_LABELS)
  .map(([key, value]) => `${key}=${value}`)
  .join(',');
/** The watched namespace whose workloads a store object records. */
export const BASELINE_NAMESPACE_ANNOTATION = 'kreload.io/baseline-namespace';
/** Records set within this long of each other go out in one patch per object. */
export const FLUSH_INTERVAL_MS = 1_000;
/**
 * Removals alone wait this long: a roll removes its workload's record, and the template's B wins
 * over a stale record, so a burst of rolls in one namespace costs one patch, not one per roll.
 */
export const REMOVAL_FLUSH_INTERVAL_MS = 10_000;
/**
 * Store objects one flush writes at once, after its first alone. Each batch is a different object,
 * so their writes are independent; a first start's flush (one object per watched namespace) then
 * takes a few round trips instead of one per namespace.
 */
export const FLUSH_CONCURRENCY = 4;

/** The data keys each `managedFields` manager owns: kreload's, and the others' by key. */
function dataOwners(managedFields: readonly unknown[]): {
  ours: Set<string>;
  theirs: Map<string, string>;
} {
  const ours = new Set<string>();
  const theirs = new Map<string, string>();
  for (const entry of managedFields) {
    const fields = objectAt(entry, ['fieldsV1', 'f:data']);
    if (fields === undefined) continue;
    const manager = stringAt(entry, ['manager']) ?? '(unnamed)';
    for (const field of Object.keys(fields)) {
      if (!field.startsWith('f:')) continue;
      if (manager === FIELD_MANAGER) ours.add(field.slice(2));
      else theirs.set(field.slice(2), manager);
    }
  }
  return { ours, theirs };
}

/**
 * The data keys kreload's field manager does not own, each with a manager that does. Undefined
 * without `managedFields` (nothing to tell by) or when kreload owns every key.
 */
function foreignWriters(
  managedFields: unknown,
  keys: Iterable<string>,
): ReadonlyMap<string, string> | undefined {
  if (!Array.isArray(managedFields) || managedFields.length === 0) return undefined;
  const { ours, theirs } = dataOwners(managedFields);
  const foreign = new Map<string, string>();
  for (const key of keys) {
    if (!ours.has(key)) foreign.set(key, theirs.get(key) ?? '(no manager)');
  }
  return foreign.size === 0 ? undefined : foreign;
}

/**
 * What the list-watch keeps of a store object: its name, version and data, and which records
 * someone other than kreload wrote last (`managedFields`, docs/adr/0046); nothing else.
 */
export function projectStoreObject(object: JsonObject): StoreObject {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {};
  const data = isJsonObject(object.data) ? object.data : {};
  const entries = new Map<string, string>();
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === 'string') entries.set(key, value);
  }
  const writers = foreignWriters(metadata.managedFields, entries.keys());
  return {
    name: stringAt(metadata, ['name']) ?? '',
    namespace: stringAt(metadata, ['annotations', BASELINE_NAMESPACE_ANNOTATION]),
    resourceVersion: stringAt(metadata, ['resourceVersion']) ?? '',
    data: entries,
    ...(writers !== undefined && { foreignWriters: writers }),
  };
}

export interface BaselineStoreEvents {
  /** A record that no object can hold: its workload keeps no baseline (Reloader's behaviour). */
  onRefused(refused: Refused): void;
  /** Store objects that vanished with records in them; their workloads are baselined again. */
  onLost(object: string, records: number): void;
  /** A batch that could not be written; `retryInMs` undefined: given up (not retryable). */
  onWriteFailed(batch: ObjectBatch, error: ApiError, retryInMs: number | undefined): void;
  onStatus?(status: ListWatchStatus): void;
  /** Records (or an object) not read as they are: someone else wrote them, or they are malformed. */
  onIgnored?(problem: StoreProblem): void;
  /** The store stopped being used: B of never-rolled workloads goes to the workloads now. */
  onFellBack?(cause: FallBackCause): void;
}

/** Why the store fell back to baselines on the workloads. */
export type FallBackCause = 'list-forbidden' | 'write-forbidden';

/**
 * Active-active mode's fence on the store (docs/adr/0051): a replica sets and writes the records of
 * a namespace only while it may write to the namespace's workloads. A record of a namespace whose
 * bucket it lost is dropped, never sent: the new owner decides that namespace's baselines, and an
 * older first sight written over its record would roll a workload whose sources never changed.
 */
export interface BaselineFence {
  /** The namespace's bucket is held here, within its term. */
  holds(namespace: string): boolean;
  /**
   * Runs `write` counted in flight under the namespace's bucket; rejects with
   * LeadershipLostError, sending nothing, when the bucket is not held here.
   */
  admit<T>(namespace: string, write: () => Promise<T>): Promise<T>;
}

export interface KubeBaselineStoreDeps {
  readonly transport: KubeTransport;
  /** kreload's own namespace, where the store objects live. */
  readonly namespace: string;
  readonly timers: Timers;
  readonly random: RandomSource;
  /** §13.4 item 4: only the leader writes; a follower's batches wait. */
  readonly mayWrite: () => boolean;
  /** Active-active: records only of the namespaces whose bucket this replica holds. */
  readonly fence?: BaselineFence | undefined;
  readonly events: BaselineStoreEvents;
  /** Awaited before each batch is sent; a test-only failpoint holds it (config/test-failpoint.ts). */
  readonly beforeWrite?: (batch: ObjectBatch) => Promise<void>;
}

/** What the batches of one flush came to. */
interface FlushOutcome {
  failed: boolean;
  retryable: boolean;
}

export class KubeBaselineStore implements BaselineStore {
  readonly #deps: KubeBaselineStoreDeps;
  readonly #records = new BaselineRecords();
  #cancelFlush: (() => void) | undefined;
  /** When the scheduled flush runs, in `timers.now()` time. */
  #flushDueAt = 0;
  #flushing: Promise<void> | undefined;
  #failures = 0;
  #stopped = false;
  #inUse = true;

  constructor(deps: KubeBaselineStoreDeps) {
    this.#deps = deps;
  }

  /** Feeds the store from its list-watch. */
  get consumer(): ListWatchConsumer<StoreObject> {
    return {
      replace: (items) => {
        const { lost, problems } = this.#records.replace(items);
        if (lost > 0) this.#deps.events.onLost('(relist)', lost);
        this.#report(problems);
      },
      upsert: (item) => {
        this.#report(this.#records.upsert(item));
      },
      remove: (item) => {
        const lost = this.#records.remove(item.name, item.resourceVersion);
        if (lost > 0) this.#deps.events.onLost(item.name, lost);
      },
      onStatus: (status) => this.#deps.events.onStatus?.(status),
    };
  }

  #report(problems: readonly StoreProblem[]): void {
    for (const problem of problems) this.#deps.events.onIgnored?.(problem);
  }

  get recordCount(): number {
    return this.#records.recordCount;
  }

  get objectCount(): number {
    return this.#records.objectCount;
  }

  inUse(): boolean {
    return this.#inUse;
  }

  /**
   * From now on B of never-rolled workloads is written into them (`--baseline-store=workload`):
   * records not yet written are never sent, and none is set or removed. The records read so far
   * (none after a refused list), and those set before, are still answered by `recordOf`: the
   * planner reads one as B of a workload whose metadata holds none, until its first write moves B
   * into the workload, so a change made while kreload was down still rolls it.
   */
  fallBack(cause: FallBackCause): void {
    if (!this.#inUse) return;
    this.#inUse = false;
    this.#cancelFlush?.();
    this.#cancelFlush = undefined;
    this.#deps.events.onFellBack?.(cause);
  }

  recordOf(view: WorkloadView): string | undefined {
    return this.#records.recordOf(view);
  }

  /** `<namespace>/<name>` of the store object holding the workload's record, if any. */
  objectOf(view: WorkloadView): string | undefined {
    const object = this.#records.objectOf(view);
    return object === undefined ? undefined : `${this.#deps.namespace}/${object}`;
  }

  record(view: WorkloadView, value: string | null): void {
    if (!this.#inUse || this.#deps.fence?.holds(view.ref.namespace) === false) return;
    const refused = this.#records.set(view, value);
    if (refused !== undefined) {
      this.#deps.events.onRefused(refused);
      return;
    }
    this.#scheduleFlush(value === null ? REMOVAL_FLUSH_INTERVAL_MS : FLUSH_INTERVAL_MS);
  }

  /**
   * Removes the records of deleted workloads (docs/adr/0046), in the batched write path. `isGone`
   * answers by namespace and UID; the caller asks only when its caches hold every watched workload,
   * and answers false for a namespace it does not write (another active-active replica's).
   */
  sweep(isGone: (namespace: string, uid: string) => boolean): number {
    if (!this.#inUse) return 0;
    const removed = this.#records.sweep(isGone);
    if (removed > 0) this.#scheduleFlush(REMOVAL_FLUSH_INTERVAL_MS);
    return removed;
  }

  /** Sends what is pending now and waits for it (shutdown; tests). */
  async flush(): Promise<void> {
    this.#cancelFlush?.();
    this.#cancelFlush = undefined;
    await this.#afterTheFlushesBefore();
  }

  /** Stops the timer after a last flush. */
  async stop(): Promise<void> {
    await this.flush().catch(() => undefined);
    this.#stopped = true;
    this.#cancelFlush?.();
  }

  /** Schedules a flush in `delayMs`, or keeps the one scheduled if it runs sooner. */
  #scheduleFlush(delayMs: number): void {
    if (this.#stopped) return;
    const dueAt = this.#deps.timers.now() + delayMs;
    if (this.#cancelFlush !== undefined) {
      if (this.#flushDueAt <= dueAt) return;
      this.#cancelFlush();
    }
    this.#flushDueAt = dueAt;
    this.#cancelFlush = this.#deps.timers.schedule(delayMs, () => {
      this.#cancelFlush = undefined;
      void this.#afterTheFlushesBefore();
    });
  }

  /**
   * Runs a flush once every flush asked for before it is over, so flushes never overlap and a
   * caller's flush returns only when every write before it has been answered (a shutdown asked
   * for while the first pass's flush is out waits for both).
   */
  #afterTheFlushesBefore(): Promise<void> {
    const flushing = (this.#flushing ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.#flushOnce());
    this.#flushing = flushing;
    return flushing;
  }

  async #flushOnce(): Promise<void> {
    if (!this.#deps.mayWrite() || !this.#inUse) return;
    const batches = this.#records.takeBatches();
    const outcome: FlushOutcome = { failed: false, retryable: false };
    const send = async (batch: ObjectBatch): Promise<void> => {
      const failed = await this.#send(batch);
      if (failed === undefined || failed === 'fell-back') return;
      outcome.failed = true;
      outcome.retryable ||= failed.retryable;
    };
    // The first batch goes alone: a Role that refuses the store's writes refuses it, and then
    // nothing else is sent (§5.7). The others go side by side.
    const first = batches[0];
    if (first !== undefined) await send(first);
    const beside = new PQueue({ concurrency: FLUSH_CONCURRENCY });
    await beside.addAll(
      batches.slice(1).map((batch) => async () => {
        if (this.#inUse) await send(batch);
      }),
    );
    if (!this.inUse()) return; // fell back while the batches were out
    if (!outcome.failed) this.#failures = 0;
    else if (outcome.retryable) this.#failures += 1;
    if (this.#records.hasPending) this.#scheduleFlush(this.#nextFlushDelay());
  }

  /**
   * Writes one batch; its error when it failed and may be sent again. A batch of a namespace this
   * replica no longer holds (active-active) is dropped, not sent. A 403 falls back to baselines on
   * the workloads, once for every batch of the flush.
   */
  async #send(batch: ObjectBatch): Promise<ApiError | 'fell-back' | undefined> {
    const { fence } = this.#deps;
    try {
      const resourceVersion = await (fence === undefined
        ? this.#write(batch)
        : fence.admit(batch.namespace, () => this.#write(batch)));
      this.#records.written(batch, resourceVersion);
      return undefined;
    } catch (error) {
      if (error instanceof LeadershipLostError) {
        this.#records.abandon(batch);
        return undefined;
      }
      const apiError = toApiError(error);
      if (apiError.status === 403) {
        if (!this.inUse()) return 'fell-back';
        this.#deps.events.onWriteFailed(batch, apiError, undefined);
        this.fallBack('write-forbidden');
        return 'fell-back';
      }
      this.#records.failed(batch, apiError.retryable);
      const retryInMs = apiError.retryable ? this.#retryDelay() : undefined;
      this.#deps.events.onWriteFailed(batch, apiError, retryInMs);
      return apiError;
    }
  }

  /** After a flush that left records pending: their interval, or the backoff after failures. */
  #nextFlushDelay(): number {
    const interval = this.#records.hasPendingValue ? FLUSH_INTERVAL_MS : REMOVAL_FLUSH_INTERVAL_MS;
    return this.#failures > 0 ? Math.max(interval, this.#retryDelay()) : interval;
  }

  #retryDelay(): number {
    return Math.max(
      FLUSH_INTERVAL_MS,
      backoffDelay(BACKOFF_POLICIES.watch, Math.max(0, this.#failures - 1), this.#deps.random),
    );
  }

  /**
   * One merge patch of the object, or a POST when this replica knows of no such object (a 404 on
   * the patch of one it thought existed POSTs too). The new resourceVersion.
   */
  async #write(batch: ObjectBatch): Promise<string | undefined> {
    await this.#deps.beforeWrite?.(batch);
    const data = Object.fromEntries(batch.data);
    if (this.#records.knows(batch.object)) {
      try {
        return await this.#patch(batch.object, data);
      } catch (error) {
        if (toApiError(error).status !== 404) throw toApiError(error);
      }
    }
    const kept = Object.fromEntries([...batch.data].filter(([, value]) => value !== null));
    if (Object.keys(kept).length === 0) return undefined;
    try {
      return await this.#create(batch, kept);
    } catch (error) {
      if (toApiError(error).status !== 409) throw toApiError(error);
      return this.#patch(batch.object, data);
    }
  }

  async #patch(name: string, data: JsonObject): Promise<string | undefined> {
    const { namespace, transport } = this.#deps;
    const served = await transport.request(configMapDataPatch(namespace, name, data));
    return stringAt(served, ['metadata', 'resourceVersion']);
  }

  async #create(batch: ObjectBatch, data: JsonObject): Promise<string | undefined> {
    const { namespace, transport } = this.#deps;
    const served = await transport.request(
      configMapCreation(
        {
          namespace,
          name: batch.object,
          labels: BASELINE_STORE_LABELS,
          annotations: { [BASELINE_NAMESPACE_ANNOTATION]: batch.namespace },
        },
        data,
      ),
    );
    return stringAt(served, ['metadata', 'resourceVersion']);
  }
}

/** The message of a store problem: the object and data key, never the record's value. */
export function storeProblemMessage(problem: StoreProblem): string {
  switch (problem.reason) {
    case 'foreign-writer':
      return (
        `the baseline record ${problem.dataKey} in ${problem.object} was last written by ` +
        `${problem.writer}, not kreload: it is not read, so a change made while kreload was down ` +
        "is not rolled for that workload (Reloader's behaviour); kreload records a new baseline"
      );
    case 'malformed':
      return (
        `the baseline record ${problem.dataKey} in ${problem.object} is malformed: it counts as ` +
        'absent, and kreload records a new baseline'
      );
    case 'foreign-object':
      return (
        `${problem.object} is labelled as a baseline store object, but its name is not the store's ` +
        `for the namespace its ${BASELINE_NAMESPACE_ANNOTATION} annotation names: its ` +
        `${String(problem.records)} records are not read`
      );
  }
}

/** The message of a record too big for the store. */
export function refusedMessage(refused: Refused): string {
  return (
    `the baseline of ${refused.namespace}/${refused.dataKey} is ${String(refused.bytes)} bytes, ` +
    `more than a store object holds (${String(OBJECT_MAX_BYTES)}), or every object of its ` +
    'namespace is full: it is not recorded, so a change made while kreload is down is not rolled'
  );
}
