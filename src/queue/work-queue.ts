import PQueue from 'p-queue';
import { parseWorkloadKey } from '../core/keys.ts';
import type { WorkloadKey } from '../core/types.ts';
import { BACKOFF_POLICIES, queueRetryDelay, type RandomSource } from './backoff.ts';
import {
  Debouncer,
  type ChangeRecord,
  type DebounceSettings,
  type PendingEntry,
  type TriggerOutcome,
} from './debouncer.ts';
import type { Timers } from '../time/timers.ts';

/**
 * A run that asks to be run again: the handler made one attempt, and says when the next one is due
 * (a 429's `Retry-After`, the §10 write backoff, or at once after a 409). The queue waits; the
 * worker is free meanwhile. The handler bounds how often it asks; `maxAttempts` does not apply.
 */
interface Requeue<R> {
  readonly kind: 'requeue';
  /** Run the key again after this long; 0: as soon as a worker is free. */
  readonly afterMs: number;
  /** Ends the wait early when it settles: e.g. the watch delivered the version a 409 waits for. */
  readonly wakeEarly?: Promise<unknown> | undefined;
  /** What this run already did, handed to the next run as `context.resume`. */
  readonly resume?: R | undefined;
  /**
   * A new trigger of the key ends the wait too: the run waits for the cluster to move (roll
   * admission), not for a backoff, and a trigger may be that move (a source changed again).
   */
  readonly wakeOnTrigger?: boolean | undefined;
}

/**
 * How a run ended, as small as controller-runtime's result (docs/architecture.md, "Work queue"):
 * - `done`: finished (whatever it wrote); with `rerun`, triggers arrived that the run did not plan
 *   for, so the key runs once more as a fresh entry;
 * - `requeue`: another attempt when the handler says, with its continuation;
 * - `error`: failed. Retryable: another attempt on the queue's own backoff (§8 item 6), at most
 *   `BACKOFF_POLICIES.queue.maxAttempts` runs; terminal: given up at once.
 */
export type WorkResult<R = never> =
  | { readonly kind: 'done'; readonly rerun?: boolean | undefined }
  | Requeue<R>
  | { readonly kind: 'error'; readonly retryable: boolean };

/** A run that did not finish: it is tried again, or given up. */
type Failed<R> = Exclude<WorkResult<R>, { readonly kind: 'done' }>;

export interface WorkContext<R = never> {
  /** 1 for the first run of an entry, 2 for its first retry, … */
  readonly attempt: number;
  /** Aborted when `drain` runs out of time; late writes are harmless (resourceVersion preconditions). */
  readonly signal: AbortSignal;
  /** The `resume` of the requeue that scheduled this run; undefined on a first run. */
  readonly resume?: R | undefined;
  /**
   * Triggers for the key arrived while its previous run was in flight or this retry waited: they
   * are merged into this run's entry, and a run that does not plan afresh must not ignore them.
   */
  readonly retriggered: boolean;
  /** Triggers this key again at `at` (ms since the epoch), e.g. when a pause ends: `triggerAt`. */
  readonly triggerAt: (at: number) => void;
}

export type WorkHandler<R = never> = (
  key: WorkloadKey,
  entry: PendingEntry,
  context: WorkContext<R>,
) => Promise<WorkResult<R>>;

/** Hooks for metrics and logs; every one is optional. */
export interface WorkQueueObserver {
  /** `reloader_workqueue_depth`: pending keys, debounce windows and retry waits included. */
  depthChanged?(depth: number): void;
  /** `reloader_workqueue_adds_total`: a key became pending. */
  added?(key: WorkloadKey): void;
  /** `reloader_debounce_coalesced_total`: a debounced trigger folded into a pending key. */
  coalesced?(key: WorkloadKey): void;
  /**
   * `reloader_workqueue_latency_seconds`: a worker took the key, `latencyMs` after `firstAt`. Once
   * per entry: the retries of a run are the same piece of work, not new arrivals.
   */
  started?(key: WorkloadKey, latencyMs: number): void;
  /** A failed run will be retried after `delayMs`, as attempt number `attempt`. */
  retryScheduled?(
    key: WorkloadKey,
    retry: { readonly attempt: number; readonly delayMs: number },
  ): void;
  /** The key failed `attempts` times in a row and was dropped; the next trigger starts afresh. */
  gaveUp?(key: WorkloadKey, attempts: number): void;
  /** The handler threw (a bug: handlers report failure by returning an error). A retryable error. */
  handlerFailed?(key: WorkloadKey, error: unknown): void;
}

export interface WorkQueueDeps<R = never> {
  /** `--worker-threads`: how many keys are processed at once. */
  readonly concurrency: number;
  readonly debounce: DebounceSettings;
  readonly handler: WorkHandler<R>;
  readonly timers: Timers;
  readonly random: RandomSource;
  /** Runs per entry ending in a retryable error before it is dropped; default `BACKOFF_POLICIES.queue`'s. */
  readonly maxAttempts?: number | undefined;
  readonly observer?: WorkQueueObserver | undefined;
}

export interface TriggerOptions {
  readonly debounced: boolean;
  readonly change?: ChangeRecord | undefined;
  /** This workload's own debounce (a ReloadPolicy's `syncDelay`); default `--sync-delay`. */
  readonly syncDelayMs?: number | undefined;
}

/** The reason given to in-flight handlers' signals when `drain` runs out of time. */
export class DrainDeadlineError extends Error {
  override readonly name = 'DrainDeadlineError';
  constructor(deadlineMs: number, options?: ErrorOptions) {
    super(`work still in flight after the ${deadlineMs} ms drain deadline`, options);
  }
}

type QueueState = 'created' | 'running' | 'stopped';

interface Flight {
  readonly controller: AbortController;
  /** Set when the key is dropped while in flight: its outcome must not bring it back. */
  discarded: boolean;
}

/**
 * Everything the queue knows about one key besides its pending entry (the Debouncer's): the state
 * machine of docs/architecture.md ("Work queue"). A record exists while any field is set, and
 * forgetting a key is deleting its record.
 */
interface KeyRecord<R> {
  /** A worker runs the key now. */
  flight?: Flight | undefined;
  /** Consecutive runs that asked for a retry, and what the last one handed on. */
  failures: number;
  resume?: R | undefined;
  /** Triggers arrived while in flight or waiting for a retry (WorkContext.retriggered). */
  retriggered: boolean;
  /** Cancels the wait before the next attempt; set while the key waits for a retry. */
  cancelRetry?: (() => void) | undefined;
  /** Ends that wait now; set while a requeue that wakes on a trigger waits. */
  endWaitOnTrigger?: (() => void) | undefined;
  /** Cancels the key's one timed trigger (`triggerAt`). */
  cancelTimedTrigger?: (() => void) | undefined;
}

function isEmpty(record: KeyRecord<unknown>): boolean {
  return (
    record.flight === undefined &&
    record.failures === 0 &&
    record.resume === undefined &&
    !record.retriggered &&
    record.cancelRetry === undefined &&
    record.cancelTimedTrigger === undefined
  );
}

interface Job<R> {
  readonly key: WorkloadKey;
  readonly entry: PendingEntry;
  readonly flight: Flight;
  readonly attempt: number;
  readonly resume: R | undefined;
  readonly retriggered: boolean;
}

interface Waiter {
  readonly isMet: () => boolean;
  readonly resolve: () => void;
}

/** A wait for no work in flight that later callers join when its deadline is not later than theirs. */
interface SharedWait {
  /** `Timers.now()` time at which it gives up. */
  readonly deadline: number;
  readonly settled: Promise<undefined>;
}

/**
 * The single work queue of §8. Keys are debounced per workload, handed to at most `concurrency`
 * workers in `dueAt` order, never run by two workers at once, and retried with per-key backoff.
 * It owns every wait between attempts (docs/adr/0023): a handler never sleeps, it returns a
 * requeue and the worker takes the next key. p-queue alone bounds the concurrency: each of its
 * tasks takes the best due key when a worker starts it, so the choice is made as late as possible.
 */
export class WorkQueue<R = never> {
  readonly #deps: WorkQueueDeps<R>;
  readonly #pending: Debouncer<WorkloadKey>;
  /** Per key, everything but its pending entry: see KeyRecord. */
  readonly #records = new Map<WorkloadKey, KeyRecord<R>>();
  #inFlightCount = 0;
  readonly #waiters = new Set<Waiter>();
  /** The newest `whenNoWorkInFlight` wait; undefined once it settled. */
  #noWorkWait: SharedWait | undefined;
  #workers: PQueue | undefined;
  #state: QueueState = 'created';
  #wakeAt: number | undefined;
  #cancelWake: (() => void) | undefined;
  /** A task waits in p-queue for a worker; it takes a key when it starts. */
  #takerQueued = false;
  #reportedDepth = 0;

  constructor(deps: WorkQueueDeps<R>) {
    this.#deps = deps;
    this.#pending = new Debouncer({ settings: deps.debounce });
  }

  /** Pending keys, including those inside a debounce window or waiting for a retry. */
  get depth(): number {
    return this.#pending.size;
  }

  get inFlight(): readonly WorkloadKey[] {
    return [...this.#records].flatMap(([key, record]) => (record.flight ? [key] : []));
  }

  pendingEntry(key: WorkloadKey): PendingEntry | undefined {
    return this.#pending.get(key);
  }

  /** Starts handing keys to workers. Triggers received before are kept. */
  start(): void {
    if (this.#state === 'running') return;
    this.#state = 'running';
    this.#workers ??= new PQueue({ concurrency: Math.max(1, Math.floor(this.#deps.concurrency)) });
    this.#wake();
  }

  /**
   * Stops dequeuing and drops every pending entry (§8 item 7, §13.5). In-flight work continues; its
   * failures are not retried. Triggers received afterwards are ignored until `start()`.
   */
  stop(): void {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.#cancelWake?.();
    this.#cancelWake = undefined;
    this.#wakeAt = undefined;
    this.#pending.clear();
    for (const [key, record] of [...this.#records]) {
      const { flight } = record;
      this.#forget(key);
      if (flight === undefined) continue;
      // Still excluded until it finishes, even if the queue is started again meanwhile.
      this.#pending.hold(key);
      flight.discarded = true;
      this.#records.set(key, { flight, failures: 0, retriggered: false });
    }
    this.#afterChange();
  }

  /**
   * `stop()`, then waits for in-flight work for at most `deadlineMs`. At the deadline the handlers'
   * signals are aborted. Resolves true when everything finished in time.
   */
  async drain(deadlineMs: number): Promise<boolean> {
    this.stop();
    if (this.#inFlightCount === 0) return true;
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        isMet: () => this.#inFlightCount === 0,
        resolve: () => {
          cancel();
          resolve(true);
        },
      };
      const cancel = this.#deps.timers.schedule(deadlineMs, () => {
        this.#waiters.delete(waiter);
        const reason = new DrainDeadlineError(deadlineMs);
        for (const record of this.#records.values()) record.flight?.controller.abort(reason);
        resolve(false);
      });
      this.#waiters.add(waiter);
    });
  }

  /** Resolves once nothing is pending or in flight (tests and barriers). */
  async idle(): Promise<void> {
    if (this.#isIdle()) return;
    await new Promise<void>((resolve) => {
      this.#waiters.add({ isMet: () => this.#isIdle(), resolve });
    });
  }

  /**
   * Resolves once no workload write is in flight, or after `maxWaitMs` at the latest. Lower-value
   * API traffic (Events) waits on it so that it does not compete with rollouts on a busy server.
   */
  async whenNoWorkInFlight(maxWaitMs: number): Promise<void> {
    if (this.#inFlightCount === 0) return;
    // One Event per roll waits here: callers share a wait (and its one timer) that gives up no
    // later than they would, instead of each scheduling and cancelling a timer of its own.
    const deadline = this.#deps.timers.now() + maxWaitMs;
    const shared = this.#noWorkWait;
    if (shared !== undefined && shared.deadline <= deadline) {
      await shared.settled;
      return;
    }
    const { promise, resolve } = Promise.withResolvers<undefined>();
    const wait: SharedWait = { deadline, settled: promise };
    const settle = (): void => {
      if (this.#noWorkWait === wait) this.#noWorkWait = undefined;
      resolve(undefined);
    };
    const waiter: Waiter = {
      isMet: () => this.#inFlightCount === 0,
      resolve: () => {
        cancel();
        settle();
      },
    };
    const cancel = this.#deps.timers.schedule(maxWaitMs, () => {
      this.#waiters.delete(waiter);
      settle();
    });
    this.#waiters.add(waiter);
    this.#noWorkWait = wait;
    await promise;
  }

  /** Applies one trigger at the current time (§8 items 2 and 3). Ignored while stopped. */
  trigger(key: WorkloadKey, options: TriggerOptions): TriggerOutcome | 'ignored' {
    if (this.#state === 'stopped') return 'ignored';
    const outcome = this.#pending.trigger(key, {
      at: this.#deps.timers.now(),
      debounced: options.debounced,
      change: options.change,
      syncDelayMs: options.syncDelayMs,
    });
    this.#retriggered(key);
    if (outcome === 'added') this.#deps.observer?.added?.(key);
    if (outcome === 'coalesced') this.#deps.observer?.coalesced?.(key);
    this.#reportDepth();
    this.#wake();
    return outcome;
  }

  /**
   * An immediate trigger of `key` at `at` (ms since the epoch; at once when past), e.g. the end of a
   * pause period (§7.2). A later call for the same key replaces the earlier one. Delays past Node's
   * 2^31 ms timer limit are chained by the Timers (ADR 0018). Ignored while stopped.
   */
  triggerAt(key: WorkloadKey, at: number): void {
    if (this.#state === 'stopped') return;
    const record = this.#record(key);
    record.cancelTimedTrigger?.();
    const cancel = this.#deps.timers.schedule(Math.max(0, at - this.#deps.timers.now()), () => {
      const current = this.#records.get(key);
      if (current?.cancelTimedTrigger !== cancel) return;
      current.cancelTimedTrigger = undefined;
      this.#prune(key, current);
      this.trigger(key, { debounced: false });
    });
    record.cancelTimedTrigger = cancel;
  }

  /**
   * Forgets `key` (its workload was deleted, §8 item 7): the pending entry and the key's record (a
   * retry wait, a timed trigger, the failure count and the resume state). A run in flight finishes
   * but is not retried.
   */
  drop(key: WorkloadKey): void {
    this.#pending.drop(key);
    const flight = this.#records.get(key)?.flight;
    this.#forget(key);
    if (flight === undefined) {
      this.#pending.release(key);
    } else {
      flight.discarded = true;
      this.#records.set(key, { flight, failures: 0, retriggered: false });
    }
    this.#afterChange();
  }

  /** Drops every key of namespace `namespace` (it left the `--namespace-selector` set, §11). */
  dropNamespace(namespace: string): void {
    const keys = new Set([...this.#pending.keys(), ...this.#records.keys()]);
    for (const key of keys) {
      if (parseWorkloadKey(key)?.namespace === namespace) this.drop(key);
    }
  }

  /** A trigger for a key in flight or waiting: noted, and it ends a wait that wakes on one. */
  #retriggered(key: WorkloadKey): void {
    const record = this.#records.get(key);
    if (record === undefined) return;
    if (record.flight || record.cancelRetry) record.retriggered = true;
    const endWait = record.endWaitOnTrigger;
    // Never dispatch inside trigger(): the wait ends once the caller's update is done.
    if (endWait) queueMicrotask(endWait);
  }

  #record(key: WorkloadKey): KeyRecord<R> {
    let record = this.#records.get(key);
    if (record === undefined) {
      record = { failures: 0, retriggered: false };
      this.#records.set(key, record);
    }
    return record;
  }

  #prune(key: WorkloadKey, record: KeyRecord<R>): void {
    if (isEmpty(record) && this.#records.get(key) === record) this.#records.delete(key);
  }

  /** Cancels the key's timers and deletes its record. */
  #forget(key: WorkloadKey): void {
    const record = this.#records.get(key);
    if (record === undefined) return;
    record.cancelTimedTrigger?.();
    record.cancelRetry?.();
    this.#records.delete(key);
  }

  /** Makes sure a pump runs when the earliest eligible entry falls due. */
  #wake(): void {
    // A queued task takes the next key when a worker frees up, and wakes the queue again after.
    if (this.#state !== 'running' || this.#takerQueued) return;
    const next = this.#pending.nextDueAt();
    if (next === undefined || (this.#wakeAt !== undefined && this.#wakeAt <= next)) return;
    this.#cancelWake?.();
    this.#wakeAt = next;
    // Never dispatch inside trigger(): the caller may be halfway through updating a cache.
    this.#cancelWake = this.#deps.timers.schedule(next - this.#deps.timers.now(), () => {
      this.#wakeAt = undefined;
      this.#cancelWake = undefined;
      this.#pump();
    });
  }

  /** Hands p-queue one task for the due keys; p-queue starts it when a worker is free. */
  #pump(): void {
    const workers = this.#workers;
    if (this.#state !== 'running' || this.#takerQueued || workers === undefined) return;
    const next = this.#pending.nextDueAt();
    if (next === undefined || next > this.#deps.timers.now()) {
      this.#reportDepth();
      this.#wake();
      return;
    }
    this.#takerQueued = true;
    workers
      .add(() => this.#takeAndRun())
      .catch((error: unknown) => {
        // Only the queue's own bookkeeping can get here (handler errors are caught in #run): its
        // state is then not to be trusted, so surface the bug instead of limping on.
        queueMicrotask(() => {
          throw error;
        });
      });
  }

  /** A worker's task: the best due key now, or nothing if it was dropped meanwhile. */
  async #takeAndRun(): Promise<void> {
    this.#takerQueued = false;
    if (this.#state !== 'running') return;
    const now = this.#deps.timers.now();
    const due = this.#pending.takeDue(now);
    if (due === undefined) {
      this.#wake();
      return;
    }
    const job = this.#begin(due.key, due.entry, now);
    const running = this.#run(job);
    // Then another task for the next due key (after this handler started, so that keys start in
    // order): it runs at once while workers are free, or waits in p-queue for one.
    this.#pump();
    this.#reportDepth();
    try {
      await running;
    } catch (error: unknown) {
      this.#deps.observer?.handlerFailed?.(job.key, error);
    }
  }

  #begin(key: WorkloadKey, entry: PendingEntry, now: number): Job<R> {
    // Held until the run (and any retry wait) ends: new triggers pend behind it.
    this.#pending.hold(key);
    const flight: Flight = { controller: new AbortController(), discarded: false };
    const record = this.#record(key);
    record.flight = flight;
    this.#inFlightCount += 1;
    const attempt = record.failures + 1;
    if (attempt === 1) this.#deps.observer?.started?.(key, now - entry.firstAt);
    const { retriggered, resume } = record;
    record.retriggered = false;
    return { key, entry, flight, attempt, resume, retriggered };
  }

  async #run(job: Job<R>): Promise<void> {
    const { key, flight } = job;
    let result: WorkResult<R> = { kind: 'error', retryable: true };
    try {
      result = await this.#deps.handler(key, job.entry, {
        attempt: job.attempt,
        signal: flight.controller.signal,
        resume: job.resume,
        retriggered: job.retriggered,
        triggerAt: (at) => {
          this.triggerAt(key, at);
        },
      });
    } catch (error: unknown) {
      this.#deps.observer?.handlerFailed?.(key, error);
    }
    const record = this.#record(key);
    record.flight = undefined;
    this.#inFlightCount -= 1;
    const live = this.#state === 'running' && !flight.discarded;
    if (result.kind === 'done') {
      this.#forgetAttempts(record);
      if (result.rerun === true && live) this.#again(key);
      this.#pending.release(key);
    } else if (live) {
      this.#retryLater(key, record, job.entry, result);
    } else {
      this.#pending.release(key);
    }
    this.#prune(key, record);
    this.#pump();
    this.#afterChange();
  }

  /** A fresh entry for `key`, due now; it starts once the key is released. */
  #again(key: WorkloadKey): void {
    if (this.#pending.requeue(key, this.#deps.timers.now(), [])) this.#deps.observer?.added?.(key);
  }

  #forgetAttempts(record: KeyRecord<R>): void {
    record.failures = 0;
    record.resume = undefined;
    record.retriggered = false;
  }

  #retryLater(
    key: WorkloadKey,
    record: KeyRecord<R>,
    entry: PendingEntry,
    result: Failed<R>,
  ): void {
    const failures = record.failures + 1;
    if (result.kind === 'error' && !this.#mayRetry(result.retryable, failures)) {
      // Level-triggered: the next event or resync re-evaluates the workload (§8 item 6).
      this.#forgetAttempts(record);
      this.#deps.observer?.gaveUp?.(key, failures);
      this.#pending.release(key);
      return;
    }
    record.failures = failures;
    const request = this.#requestOf(result, failures);
    record.resume = request.resume;
    if (this.#pending.requeue(key, this.#deps.timers.now(), entry.changes)) {
      this.#deps.observer?.added?.(key);
    }
    this.#deps.observer?.retryScheduled?.(key, {
      attempt: failures + 1,
      delayMs: request.afterMs,
    });
    this.#waitForRetry(key, record, request);
  }

  /** A retryable error within the queue's budget (§8 item 6). */
  #mayRetry(retryable: boolean, failures: number): boolean {
    return retryable && failures < (this.#deps.maxAttempts ?? BACKOFF_POLICIES.queue.maxAttempts);
  }

  /** An error backs off per key (§8 item 6); a requeue brings its own delay. */
  #requestOf(result: Failed<R>, failures: number): Requeue<R> {
    if (result.kind === 'error') {
      return { kind: 'requeue', afterMs: queueRetryDelay(failures - 1, this.#deps.random) };
    }
    return { ...result, afterMs: Math.max(0, result.afterMs) };
  }

  /** Holds the key until `afterMs` have passed or `wakeEarly` settles, whichever comes first. */
  #waitForRetry(key: WorkloadKey, record: KeyRecord<R>, request: Requeue<R>): void {
    const release = (): void => {
      // A wait that was cancelled, or already ended by the other of its two triggers, is over.
      if (this.#records.get(key)?.cancelRetry !== cancel) return;
      cancel();
      record.cancelRetry = undefined;
      record.endWaitOnTrigger = undefined;
      this.#prune(key, record);
      this.#pending.release(key);
      this.#pump();
    };
    const cancelTimer = this.#deps.timers.schedule(request.afterMs, release);
    const cancel = (): void => {
      cancelTimer();
    };
    record.cancelRetry = cancel;
    if (request.wakeOnTrigger === true) record.endWaitOnTrigger = release;
    request.wakeEarly?.then(release, release);
  }

  #isIdle(): boolean {
    return this.#pending.size === 0 && this.#inFlightCount === 0;
  }

  #afterChange(): void {
    this.#reportDepth();
    for (const waiter of [...this.#waiters]) {
      if (waiter.isMet()) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  #reportDepth(): void {
    const depth = this.#pending.size;
    if (depth === this.#reportedDepth) return;
    this.#reportedDepth = depth;
    this.#deps.observer?.depthChanged?.(depth);
  }
}
