/**
 * List-watch on client-node's low-level `Watch` (docs/behavior.md §9.1; ADR 0004). client-node's
 * own `ListWatch` fires `error` once and then stops for good on any failure but a 410 (a 403, a 500,
 * a stream broken mid-watch), never paginates its list, and does not re-check `stop()` after its
 * awaits, so a stop during a list still opens a watch; hence this loop:
 *
 * - paginated list (limit 500, `continue`); an expired `continue` (410) restarts the list; the full
 *   result goes to the consumer as one `replace()` so it can diff by UID;
 * - watch from the list's resourceVersion with bookmarks and a jittered server timeout; bookmarks
 *   only advance the resourceVersion;
 * - 410 (HTTP status or in-stream ERROR) → relist; a clean close or the inactivity timeout →
 *   re-watch from the last resourceVersion (repeated closes without any event back off, so a proxy
 *   that closes at once cannot make it spin);
 * - a watch line that cannot be decoded → back off, then relist: skipping it would let the next
 *   event's resourceVersion move past a change that was never seen;
 * - 403 → status `forbidden`, 404 → `absent`, retried every 60 s; a failure is never an empty list;
 * - anything else → exponential backoff (1 s → 30 s, ±20 %), reset after a healthy minute;
 * - exactly one loop; `stopped` is re-checked after every await.
 *
 * Objects are wire JSON for list and watch alike (see transport.ts); `project` turns each into what
 * the consumer keeps as soon as it is decoded, so a raw Secret lives only until it is hashed and
 * memory is bounded by the largest object, not by a page (ADR 0022).
 */
import { apiErrorFromHttp, toApiError } from './api-error.ts';
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { isJsonObject, numberAt, stringAt } from '../core/json.ts';
import type { Timers } from '../time/timers.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { MalformedResponseError } from './response-decoding.ts';
import { backoffDelay, LIST_WATCH_TIMING, watchTimeoutSeconds } from './list-watch-timing.ts';

export type ListWatchStatus = 'syncing' | 'ok' | 'forbidden' | 'absent';
export type ListWatchPhase = 'list' | 'watch' | 'consumer';

export interface ListWatchConsumer<T> {
  /** The complete current set, after the initial list and after every relist. */
  replace(items: readonly T[], resourceVersion: string): void;
  /** `added`: a watch ADDED event; otherwise MODIFIED. */
  upsert(item: T, added: boolean): void;
  remove(item: T): void;
  /** Every failure, before the loop backs off (count restarts, log). */
  onError?(error: ApiError, phase: ListWatchPhase): void;
  onStatus?(status: ListWatchStatus): void;
  /** The watch's resourceVersion expired (410 Gone): it relists at once, without a backoff. */
  onExpired?(): void;
}

export interface ListPageRequest {
  readonly limit: number;
  readonly continue: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  readonly signal: AbortSignal;
  /** Called once per item, in order, as soon as it is decoded. */
  readonly onItem: (object: JsonObject) => void;
}

/** What is left of a page once its items went to `onItem`. */
export interface ListPage {
  readonly resourceVersion: string;
  readonly continue: string | undefined;
}

export type ListPageFn = (request: ListPageRequest) => Promise<ListPage>;

/**
 * Opens a watch (the signature of client-node's `Watch#watch`); `onDone(null)` is a clean close, and
 * a `MalformedResponseError` a line that could not be decoded.
 */
export type WatchFn = (
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  onEvent: (type: string, object: unknown) => void,
  onDone: (err: unknown) => void,
) => Promise<AbortController>;

export interface ListWatchDeps<T> {
  /** Collection path, e.g. `/api/v1/namespaces/ns/configmaps`; used for the watch. */
  readonly path: string;
  readonly listPage: ListPageFn;
  readonly watch: WatchFn;
  readonly project: (object: JsonObject) => T;
  readonly consumer: ListWatchConsumer<T>;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
  readonly timers?: Timers;
  readonly random?: () => number;
}

type WatchEnd =
  | { readonly kind: 'closed'; readonly sawEvent: boolean }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'gone' }
  | { readonly kind: 'malformed'; readonly error: ApiError }
  | { readonly kind: 'failed'; readonly error: ApiError };

function classifyWatchEnd(err: unknown, sawEvent: boolean): WatchEnd {
  if (err === null || err === undefined) return { kind: 'closed', sawEvent };
  if (err instanceof MalformedResponseError) return { kind: 'malformed', error: err };
  const timedOut =
    err instanceof ApiError
      ? err.reason === 'Timeout'
      : err instanceof Error && err.name === 'TimeoutError';
  if (timedOut) return { kind: 'timeout' };
  const error = toApiError(err);
  return error.status === 410 ? { kind: 'gone' } : { kind: 'failed', error };
}

/** For a WatchFn that hands over an event whose object is not a JSON object. */
const NOT_AN_OBJECT: WatchEnd = {
  kind: 'malformed',
  error: new ApiError('malformed watch event: its object is not a JSON object', {
    reason: 'MalformedResponse',
    retryable: true,
  }),
};

export class ListWatch<T> {
  readonly #deps: ListWatchDeps<T>;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #abort = new AbortController();
  readonly #synced = Promise.withResolvers<undefined>();
  #isSynced = false;
  #running: Promise<void> | undefined;
  #status: ListWatchStatus = 'syncing';
  #resourceVersion: string | undefined;
  #endWatch: (() => void) | undefined;
  #failures = 0;
  #quietCloses = 0;
  #healthySince: number | undefined;
  /** When a readable resource last turned forbidden or absent. */
  #accessLostAt: number | undefined;
  /** Callers of `relist()` waiting for a list that starts after their call. */
  #relistWaiters: (() => void)[] = [];

  constructor(deps: ListWatchDeps<T>) {
    this.#deps = deps;
    this.#timers = deps.timers ?? SYSTEM_TIMERS;
    this.#random = deps.random ?? Math.random;
  }

  /** Resolves after the first complete list has been handed to the consumer; never rejects. */
  get synced(): Promise<void> {
    return this.#synced.promise;
  }

  get isSynced(): boolean {
    return this.#isSynced;
  }

  get status(): ListWatchStatus {
    return this.#status;
  }

  /** A method, not a getter: TypeScript would narrow a getter across awaits. */
  #stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  /** Starts the loop once; a stopped ListWatch cannot be restarted. */
  start(): void {
    if (this.#running || this.#stopped()) return;
    this.#running = this.#run();
  }

  /**
   * Lists again now, ending the current watch: resolves once a list that started after this call
   * reached the consumer, or the type turned forbidden or absent, or the loop stopped. Calls made
   * during one list share the next. A widened `project` filter refills the consumer this way.
   */
  relist(): Promise<void> {
    if (this.#stopped() || this.#status === 'forbidden' || this.#status === 'absent') {
      return Promise.resolve();
    }
    const done = Promise.withResolvers<undefined>();
    this.#relistWaiters.push(() => {
      done.resolve(undefined);
    });
    this.#endWatch?.();
    return done.promise;
  }

  /** Aborts the current request and sleep; resolves when the loop has exited. */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#endWatch?.();
    await this.#running;
    this.#settleRelists(this.#relistWaiters.splice(0));
  }

  #settleRelists(waiters: readonly (() => void)[]): void {
    for (const resolve of waiters) resolve();
  }

  async #run(): Promise<void> {
    while (!this.#stopped()) {
      let delayMs: number;
      // A relist asked for during the last list or watch: list again, whatever the watch said.
      if (this.#relistWaiters.length > 0) this.#resourceVersion = undefined;
      try {
        delayMs =
          this.#resourceVersion === undefined ? await this.#listStep() : await this.#watchStep();
      } catch (err) {
        // Steps catch their own failures; this only keeps a bug from ending the loop for good.
        delayMs = this.#afterFailure(toApiError(err), 'watch');
      }
      if (this.#stopped()) return;
      if (delayMs > 0) await this.#sleep(delayMs);
    }
  }

  /** @returns the delay before the next step. */
  async #listStep(): Promise<number> {
    // Served by this list; a relist asked for while it runs waits for the next one.
    const waiters = this.#relistWaiters.splice(0);
    let result: { items: T[]; resourceVersion: string } | undefined;
    try {
      result = await this.#listWithRestarts();
    } catch (err) {
      this.#relistWaiters.unshift(...waiters);
      return this.#stopped() ? 0 : this.#afterFailure(toApiError(err), 'list');
    }
    if (result === undefined || this.#stopped()) {
      this.#relistWaiters.unshift(...waiters);
      return 0;
    }
    this.#deliver(() => {
      this.#deps.consumer.replace(result.items, result.resourceVersion);
    });
    this.#settleRelists(waiters);
    this.#resourceVersion = result.resourceVersion;
    this.#quietCloses = 0;
    this.#markHealthy();
    if (!this.#isSynced) {
      this.#isSynced = true;
      this.#synced.resolve(undefined);
    }
    return 0;
  }

  async #listWithRestarts(): Promise<{ items: T[]; resourceVersion: string } | undefined> {
    for (let restarts = 0; ; restarts++) {
      const result = await this.#listOnce(restarts < LIST_WATCH_TIMING.maxListRestarts);
      if (result !== 'expired') return result;
    }
  }

  /** One paginated list; `'expired'` when a `continue` token expired and may be restarted. */
  async #listOnce(
    mayRestart: boolean,
  ): Promise<{ items: T[]; resourceVersion: string } | 'expired' | undefined> {
    const items: T[] = [];
    let resourceVersion = '';
    let token: string | undefined;
    do {
      let page: ListPage;
      try {
        page = await this.#deps.listPage({
          limit: LIST_WATCH_TIMING.pageSize,
          continue: token,
          labelSelector: this.#deps.labelSelector,
          fieldSelector: this.#deps.fieldSelector,
          signal: this.#abort.signal,
          onItem: (object) => {
            items.push(this.#deps.project(object));
          },
        });
      } catch (err) {
        if (token !== undefined && mayRestart && toApiError(err).status === 410) return 'expired';
        throw err;
      }
      if (this.#stopped()) return undefined;
      if (token === undefined) resourceVersion = page.resourceVersion;
      token = page.continue === '' ? undefined : page.continue;
    } while (token !== undefined);
    return { items, resourceVersion };
  }

  async #watchStep(): Promise<number> {
    const end = await this.#watchOnce(this.#resourceVersion ?? '');
    // Ended for a relist (the run loop lists next): not a quiet close to back off from.
    if (this.#stopped() || this.#relistWaiters.length > 0) return 0;
    switch (end.kind) {
      case 'timeout':
        return 0;
      case 'gone':
        this.#resourceVersion = undefined;
        this.#deliver(() => this.#deps.consumer.onExpired?.());
        return 0;
      case 'malformed':
        this.#resourceVersion = undefined;
        return this.#afterFailure(end.error, 'watch');
      case 'closed':
        if (end.sawEvent) this.#quietCloses = 0;
        else this.#quietCloses++;
        return this.#quietCloses > 1 ? backoffDelay(this.#nextAttempt(), this.#random) : 0;
      case 'failed':
        return this.#afterFailure(end.error, 'watch');
    }
  }

  async #watchOnce(resourceVersion: string): Promise<WatchEnd> {
    const done = Promise.withResolvers<unknown>();
    // An object, because TypeScript cannot see the callbacks assign a plain `let`.
    const connection = { ended: false };
    let inStream: WatchEnd | undefined;
    let sawEvent = false;
    let controller: AbortController | undefined;
    const finish = (err: unknown): void => {
      connection.ended = true;
      done.resolve(err ?? null);
    };
    const onEvent = (type: string, object: unknown): void => {
      if (inStream !== undefined || this.#stopped()) return;
      sawEvent = true;
      inStream = isJsonObject(object) ? this.#handleEvent(type, object) : NOT_AN_OBJECT;
      if (inStream !== undefined) controller?.abort();
    };
    // stop() must not wait for a connect that may hang until client-node's 30 s timer.
    this.#endWatch = () => {
      finish(null);
      controller?.abort();
    };
    const connecting = this.#deps
      .watch(this.#deps.path, this.#watchQuery(resourceVersion), onEvent, finish)
      .then(
        (watchController) => {
          controller = watchController;
          if (this.#stopped() || inStream !== undefined) watchController.abort();
        },
        finish, // watch() itself failed, e.g. an exec credential plugin
      );
    await Promise.race([connecting, done.promise]);
    // watch() resolves once the response headers are in: a 200 unless onDone already ran.
    if (!connection.ended && !this.#stopped()) this.#markHealthy();
    const err = await done.promise;
    this.#endWatch = undefined;
    return inStream ?? classifyWatchEnd(err, sawEvent);
  }

  #watchQuery(resourceVersion: string): Record<string, string | number | boolean | undefined> {
    return {
      resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: watchTimeoutSeconds(this.#random),
      labelSelector: this.#deps.labelSelector,
      fieldSelector: this.#deps.fieldSelector,
    };
  }

  /** @returns how the watch must end, for an in-stream ERROR; undefined to keep going. */
  #handleEvent(type: string, object: JsonObject): WatchEnd | undefined {
    if (type === 'ERROR') {
      const code = numberAt(object, ['code']);
      if (code === 410) return { kind: 'gone' };
      return { kind: 'failed', error: apiErrorFromHttp({ status: code ?? 500, body: object }) };
    }
    const resourceVersion = stringAt(object, ['metadata', 'resourceVersion']);
    if (resourceVersion !== undefined) this.#resourceVersion = resourceVersion;
    if (type === 'ADDED' || type === 'MODIFIED') {
      this.#deliver(() => {
        this.#deps.consumer.upsert(this.#deps.project(object), type === 'ADDED');
      });
    } else if (type === 'DELETED') {
      this.#deliver(() => {
        this.#deps.consumer.remove(this.#deps.project(object));
      });
    }
    return undefined; // BOOKMARK and unknown types only move the resourceVersion
  }

  /** The consumer's exceptions are reported, never allowed to break the loop. */
  #deliver(call: () => void): void {
    try {
      call();
    } catch (err) {
      this.#report(toApiError(err), 'consumer');
    }
  }

  #afterFailure(error: ApiError, phase: ListWatchPhase): number {
    this.#report(error, phase);
    if (error.status === 403 || error.status === 404) {
      const now = this.#timers.now();
      if (this.#status === 'ok') this.#accessLostAt = now;
      this.#setStatus(error.status === 403 ? 'forbidden' : 'absent');
      // A 404 while watching means the collection itself went away (e.g. its CRD): relist.
      if (error.status === 404) this.#resourceVersion = undefined;
      // Readable a moment ago: most likely a restarted kube-apiserver whose authorizer has not
      // loaded its roles yet (docs/reliability.md), so retry on the backoff for one probe interval.
      const lostAccessAt = this.#accessLostAt;
      if (lostAccessAt !== undefined && now - lostAccessAt < LIST_WATCH_TIMING.probeIntervalMs) {
        const delay = backoffDelay(this.#nextAttempt(), this.#random);
        return Math.min(delay, LIST_WATCH_TIMING.probeIntervalMs);
      }
      this.#healthySince = undefined;
      return LIST_WATCH_TIMING.probeIntervalMs;
    }
    return backoffDelay(this.#nextAttempt(), this.#random);
  }

  #nextAttempt(): number {
    const now = this.#timers.now();
    if (
      this.#healthySince !== undefined &&
      now - this.#healthySince >= LIST_WATCH_TIMING.healthyResetMs
    ) {
      this.#failures = 0;
    }
    this.#healthySince = undefined;
    return this.#failures++;
  }

  #markHealthy(): void {
    this.#healthySince ??= this.#timers.now();
    this.#setStatus('ok');
  }

  #setStatus(status: ListWatchStatus): void {
    // Nothing to list here for now: a relist must not wait for access to come back.
    if (status === 'forbidden' || status === 'absent') {
      this.#settleRelists(this.#relistWaiters.splice(0));
    }
    if (this.#status === status) return;
    this.#status = status;
    this.#deliver(() => this.#deps.consumer.onStatus?.(status));
  }

  #report(error: ApiError, phase: ListWatchPhase): void {
    try {
      this.#deps.consumer.onError?.(error, phase);
    } catch {
      // an error reporter that throws has nobody left to report to
    }
  }

  #sleep(ms: number): Promise<void> {
    const signal = this.#abort.signal;
    return new Promise<void>((resolve) => {
      if (signal.aborted) {
        resolve();
        return;
      }
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      const cancel = this.#timers.schedule(ms, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
