import PQueue from 'p-queue';
import { parseWorkloadKey } from '../core/keys.ts';
import type { WorkloadKey } from '../core/types.ts';
import { queueRetryDelay, type RandomSource } from './backoff.ts';
import {
  Debouncer,
  type ChangeRecord,
  type DebounceSettings,
  type PendingEntry,
  type TriggerOutcome,
} from './debouncer.ts';
import type { Timers } from './timers.ts';

/** `done`: finished (whatever it wrote); `retry`: failed in a way worth another attempt later. */
export type WorkResult = 'done' | 'retry';

export interface WorkContext {
  /** 1 for the first run of an entry, 2 for its first retry, … */
  readonly attempt: number;
  /** Aborted when `drain` runs out of time; late writes are harmless (resourceVersion preconditions). */
  readonly signal: AbortSignal;
}

export type WorkHandler = (
  key: WorkloadKey,
  entry: PendingEntry,
  context: WorkContext,
) => Promise<WorkResult>;

/** Hooks for metrics and logs; every one is optional. */
export interface WorkQueueObserver {
  /** `reloader_workqueue_depth`: pending keys, debounce windows and retry waits included. */
  depthChanged?(depth: number): void;
  /** `reloader_workqueue_adds_total`: a key became pending. */
  added?(key: WorkloadKey): void;
  /** `reloader_debounce_coalesced_total`: a debounced trigger folded into a pending key. */
  coalesced?(key: WorkloadKey): void;
  /** `reloader_workqueue_latency_seconds`: a worker took the key, `latencyMs` after `firstAt`. */
  started?(key: WorkloadKey, latencyMs: number): void;
  /** A failed run will be retried after `delayMs`, as attempt number `attempt`. */
  retryScheduled?(
    key: WorkloadKey,
    retry: { readonly attempt: number; readonly delayMs: number },
  ): void;
  /** The key failed `attempts` times in a row and was dropped; the next trigger starts afresh. */
  gaveUp?(key: WorkloadKey, attempts: number): void;
  /** The handler threw (a bug: handlers report failure by returning `retry`). Counted as a failure. */
  handlerFailed?(key: WorkloadKey, error: unknown): void;
}

export interface WorkQueueDeps {
  /** `--worker-threads`: how many keys are processed at once. */
  readonly concurrency: number;
  readonly debounce: DebounceSettings;
  readonly handler: WorkHandler;
  readonly timers: Timers;
  readonly random: RandomSource;
  /** Runs per entry before it is dropped; default {@link DEFAULT_MAX_ATTEMPTS}. */
  readonly maxAttempts?: number | undefined;
  readonly observer?: WorkQueueObserver | undefined;
}

/**
 * 1 run + 9 retries: the backoff (1 s doubling) then spans about 8.5 minutes, just short of the
 * default 10-minute resync that re-evaluates every workload anyway.
 */
export const DEFAULT_MAX_ATTEMPTS = 10;

export interface TriggerOptions {
  readonly debounced: boolean;
  readonly change?: ChangeRecord | undefined;
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

interface Waiter {
  readonly isMet: () => boolean;
  readonly resolve: () => void;
}

/**
 * The single work queue of §8. Keys are debounced per workload, handed to at most `concurrency`
 * workers in `dueAt` order, never run by two workers at once, and retried with per-key backoff.
 * p-queue bounds the concurrency; which key runs next, debounce and retry are decided here.
 */
export class WorkQueue {
  readonly #deps: WorkQueueDeps;
  readonly #pending: Debouncer<WorkloadKey>;
  readonly #inFlight = new Map<WorkloadKey, Flight>();
  readonly #failures = new Map<WorkloadKey, number>();
  readonly #retryTimers = new Map<WorkloadKey, () => void>();
  readonly #waiters = new Set<Waiter>();
  #workers: PQueue | undefined;
  #state: QueueState = 'created';
  #wakeAt: number | undefined;
  #cancelWake: (() => void) | undefined;
  #reportedDepth = 0;

  constructor(deps: WorkQueueDeps) {
    this.#deps = deps;
    this.#pending = new Debouncer({ settings: deps.debounce });
  }

  /** Pending keys, including those inside a debounce window or waiting for a retry. */
  get depth(): number {
    return this.#pending.size;
  }

  get inFlight(): readonly WorkloadKey[] {
    return [...this.#inFlight.keys()];
  }

  pendingEntry(key: WorkloadKey): PendingEntry | undefined {
    return this.#pending.get(key);
  }

  /** Starts handing keys to workers. Triggers received before are kept. */
  start(): void {
    if (this.#state === 'running') return;
    this.#state = 'running';
    this.#workers ??= new PQueue({ concurrency: this.#concurrency() });
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
    for (const cancel of this.#retryTimers.values()) cancel();
    this.#retryTimers.clear();
    this.#failures.clear();
    this.#pending.clear();
    for (const [key, flight] of this.#inFlight) {
      // Still excluded until it finishes, even if the queue is started again meanwhile.
      this.#pending.hold(key);
      flight.discarded = true;
    }
    this.#afterChange();
  }

  /**
   * `stop()`, then waits for in-flight work for at most `deadlineMs`. At the deadline the handlers'
   * signals are aborted. Resolves true when everything finished in time.
   */
  async drain(deadlineMs: number): Promise<boolean> {
    this.stop();
    if (this.#inFlight.size === 0) return true;
    return new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        isMet: () => this.#inFlight.size === 0,
        resolve: () => {
          cancel();
          resolve(true);
        },
      };
      const cancel = this.#deps.timers.schedule(deadlineMs, () => {
        this.#waiters.delete(waiter);
        const reason = new DrainDeadlineError(deadlineMs);
        for (const flight of this.#inFlight.values()) flight.controller.abort(reason);
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
    if (this.#inFlight.size === 0) return;
    await new Promise<void>((resolve) => {
      const waiter: Waiter = {
        isMet: () => this.#inFlight.size === 0,
        resolve: () => {
          cancel();
          resolve();
        },
      };
      const cancel = this.#deps.timers.schedule(maxWaitMs, () => {
        this.#waiters.delete(waiter);
        resolve();
      });
      this.#waiters.add(waiter);
    });
  }

  /** Applies one trigger at the current time (§8 items 2 and 3). Ignored while stopped. */
  trigger(key: WorkloadKey, options: TriggerOptions): TriggerOutcome | 'ignored' {
    if (this.#state === 'stopped') return 'ignored';
    const outcome = this.#pending.trigger(key, {
      at: this.#deps.timers.now(),
      debounced: options.debounced,
      change: options.change,
    });
    if (outcome === 'added') this.#deps.observer?.added?.(key);
    if (outcome === 'coalesced') this.#deps.observer?.coalesced?.(key);
    this.#reportDepth();
    this.#wake();
    return outcome;
  }

  /**
   * Forgets `key` (its workload was deleted, §8 item 7): the pending entry, a retry wait and the
   * failure count. A run in flight finishes but is not retried.
   */
  drop(key: WorkloadKey): void {
    this.#pending.drop(key);
    this.#retryTimers.get(key)?.();
    this.#retryTimers.delete(key);
    this.#failures.delete(key);
    const flight = this.#inFlight.get(key);
    if (flight === undefined) this.#pending.release(key);
    else flight.discarded = true;
    this.#afterChange();
  }

  /** Drops every key of namespace `namespace` (it left the `--namespace-selector` set, §11). */
  dropNamespace(namespace: string): void {
    const keys = new Set([
      ...this.#pending.keys(),
      ...this.#inFlight.keys(),
      ...this.#retryTimers.keys(),
    ]);
    for (const key of keys) {
      if (parseWorkloadKey(key)?.namespace === namespace) this.drop(key);
    }
  }

  #concurrency(): number {
    return Math.max(1, Math.floor(this.#deps.concurrency));
  }

  /** Makes sure a pump runs when the earliest eligible entry falls due. */
  #wake(): void {
    if (this.#state !== 'running' || this.#inFlight.size >= this.#concurrency()) return;
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

  #pump(): void {
    if (this.#state !== 'running') return;
    const now = this.#deps.timers.now();
    while (this.#inFlight.size < this.#concurrency()) {
      const due = this.#pending.takeDue(now);
      if (due === undefined) break;
      this.#dispatch(due.key, due.entry, now);
    }
    this.#reportDepth();
    this.#wake();
  }

  #dispatch(key: WorkloadKey, entry: PendingEntry, now: number): void {
    const workers = this.#workers;
    if (workers === undefined) return;
    // Held until the run (and any retry wait) ends: new triggers pend behind it.
    this.#pending.hold(key);
    const flight: Flight = { controller: new AbortController(), discarded: false };
    this.#inFlight.set(key, flight);
    const attempt = (this.#failures.get(key) ?? 0) + 1;
    this.#deps.observer?.started?.(key, now - entry.firstAt);
    workers
      .add(() => this.#run({ key, entry, flight, attempt }))
      .catch((error: unknown) => {
        this.#deps.observer?.handlerFailed?.(key, error);
      });
  }

  async #run(job: {
    readonly key: WorkloadKey;
    readonly entry: PendingEntry;
    readonly flight: Flight;
    readonly attempt: number;
  }): Promise<void> {
    const { key, flight } = job;
    let result: WorkResult = 'retry';
    try {
      result = await this.#deps.handler(key, job.entry, {
        attempt: job.attempt,
        signal: flight.controller.signal,
      });
    } catch (error: unknown) {
      this.#deps.observer?.handlerFailed?.(key, error);
    }
    this.#inFlight.delete(key);
    if (result === 'retry' && this.#state === 'running' && !flight.discarded) {
      this.#retryLater(key, job.entry);
    } else {
      if (result === 'done') this.#failures.delete(key);
      this.#pending.release(key);
    }
    this.#pump();
    this.#afterChange();
  }

  #retryLater(key: WorkloadKey, entry: PendingEntry): void {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    const maxAttempts = this.#deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (failures >= maxAttempts) {
      // Level-triggered: the next event or resync re-evaluates the workload (§8 item 6).
      this.#failures.delete(key);
      this.#deps.observer?.gaveUp?.(key, failures);
      this.#pending.release(key);
      return;
    }
    this.#failures.set(key, failures);
    const delayMs = queueRetryDelay(failures - 1, this.#deps.random);
    if (this.#pending.requeue(key, this.#deps.timers.now(), entry.changes)) {
      this.#deps.observer?.added?.(key);
    }
    this.#deps.observer?.retryScheduled?.(key, { attempt: failures + 1, delayMs });
    const cancel = this.#deps.timers.schedule(delayMs, () => {
      this.#retryTimers.delete(key);
      this.#pending.release(key);
      this.#pump();
    });
    this.#retryTimers.set(key, cancel);
  }

  #isIdle(): boolean {
    return this.#pending.size === 0 && this.#inFlight.size === 0;
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
