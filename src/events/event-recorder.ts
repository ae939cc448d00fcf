import PQueue from 'p-queue';
import { SYSTEM_TIMERS, type Timers } from '../time/timers.ts';
import type { EventContent } from './event-messages.ts';
import type { EventClock, EventDraft, EventName, EventObjectRef, EventSink } from './ports.ts';

export interface EventRecorderDeps {
  readonly sink: EventSink;
  readonly clock: EventClock;
  /** `source.component` and `reportingController`: `kreload`. */
  readonly component: string;
  /** `reportingInstance`: `POD_NAME`. */
  readonly instance: string;
  /** An Event could not be written. The caller of `record` never sees it. */
  readonly onError?: (error: EventRecordError) => void;
  /** Writes start only while this holds (leadership and renew deadline, §13.4). Default: always. */
  readonly canWrite?: () => boolean;
  /** Identical Events closer together than this are folded; default 10 minutes (§13.3). */
  readonly foldWindowMs?: number;
  /**
   * A folded Event's count is written at most once per this interval: repeats sooner than that
   * after its last write are added up and written together when it has passed. Default 30 s (§13.3).
   */
  readonly countIntervalMs?: number;
  /** For the deferred count writes. Default: the system's. */
  readonly timers?: Timers;
  /** Bound on remembered Events; the least recently seen is forgotten first. Default 4096. */
  readonly maxRemembered?: number;
  /** At most this many Event writes at once. Default 2. */
  readonly concurrency?: number;
  /**
   * Awaited before each Event write. The app waits (bounded) for workload writes in flight: Events
   * are best-effort, and on a busy API server they must not slow down the rollouts they report.
   */
  readonly yieldTo?: () => Promise<void>;
}

export class EventRecordError extends Error {
  override readonly name = 'EventRecordError';
}

/** What one `record` call asks for. */
export interface EventRequest extends EventContent {
  readonly object: EventObjectRef;
}

/** An Event already written, as far as folding needs it. */
interface Written {
  readonly ref: EventName;
  readonly count: number;
  /** The last occurrence its count includes. */
  readonly lastSeenMs: number;
  /** When it was last created or its count patched. */
  readonly writtenMs: number;
}

/** Repeats of a written Event that wait for its count interval to pass. */
interface Deferred {
  readonly request: EventRequest;
  occurrences: number;
  readonly firstSeenMs: number;
  lastSeenMs: number;
  readonly cancel: () => void;
}

const TEN_MINUTES_MS = 10 * 60_000;
const DEFAULT_COUNT_INTERVAL_MS = 30_000;
const DEFAULT_MAX_REMEMBERED = 4096;
const DEFAULT_CONCURRENCY = 2;
/** Event names are DNS subdomains (≤ 253) and get a `.` and 16 hex digits appended. */
const MAX_OBJECT_NAME_IN_EVENT = 253 - 17;

function foldKey(request: EventRequest): string {
  const { object, reason, message } = request;
  return JSON.stringify([object.kind, object.namespace, object.name, object.uid, reason, message]);
}

/**
 * Writes core/v1 Events without ever blocking or failing its caller. An Event identical to one
 * written within the fold window (same object, reason and message) is folded into it by patching
 * its count, at most once per count interval: a burst of repeats costs one request per interval,
 * not one per repeat. Writes for one (object, reason, message) are serialised, so counts never race.
 */
export class EventRecorder {
  readonly #deps: EventRecorderDeps;
  readonly #timers: Timers;
  readonly #written = new Map<string, Written>();
  readonly #deferred = new Map<string, Deferred>();
  readonly #chains = new Map<string, Promise<void>>();
  #writers: PQueue | undefined;
  #sequence = 0;

  constructor(deps: EventRecorderDeps) {
    this.#deps = deps;
    this.#timers = deps.timers ?? SYSTEM_TIMERS;
  }

  /** Fire and forget: failures go to `onError`. */
  record(request: EventRequest): void {
    if (!this.#mayWrite()) return;
    const key = foldKey(request);
    this.#enqueue(key, request, () => this.#write(key, request));
  }

  /**
   * Resolves once every Event recorded so far has been written or has failed; counts waiting for
   * their interval are written now.
   */
  async idle(): Promise<void> {
    for (;;) {
      // A write in the chain may leave repeats waiting: flushed on the next turn.
      for (const [key, deferred] of this.#deferred) {
        deferred.cancel();
        this.#enqueueFlush(key, deferred.request);
      }
      if (this.#chains.size === 0) return;
      await Promise.all(this.#chains.values());
    }
  }

  /** Runs `write` after the writes already queued for `key`. */
  #enqueue(key: string, request: EventRequest, write: () => Promise<void>): void {
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#limited(write))
      .catch((error: unknown) => {
        this.#deps.onError?.(
          new EventRecordError(
            `cannot write ${request.reason} Event for ${request.object.kind} ` +
              `${request.object.namespace}/${request.object.name}`,
            { cause: error },
          ),
        );
      })
      .finally(() => {
        if (this.#chains.get(key) === next) this.#chains.delete(key);
      });
    this.#chains.set(key, next);
  }

  #enqueueFlush(key: string, request: EventRequest): void {
    this.#enqueue(key, request, () => this.#flush(key));
  }

  async #limited(write: () => Promise<void>): Promise<void> {
    this.#writers ??= new PQueue({
      concurrency: Math.max(1, this.#deps.concurrency ?? DEFAULT_CONCURRENCY),
    });
    // Outside the slot: under sustained load Events wait once, not once per slot turn.
    await this.#deps.yieldTo?.();
    await this.#writers.add(write);
  }

  async #write(key: string, request: EventRequest): Promise<void> {
    // Checked again here: a write queued behind another may start after leadership ended.
    if (!this.#mayWrite()) return;
    const nowMs = this.#deps.clock.now();
    const written = this.#written.get(key);
    const windowMs = this.#deps.foldWindowMs ?? TEN_MINUTES_MS;
    if (written && nowMs - written.lastSeenMs < windowMs) {
      if (this.#defer(key, request, written, nowMs)) return;
      const count = written.count + 1;
      const outcome = await this.#deps.sink.patchCount(written.ref, count, new Date(nowMs));
      if (outcome === 'patched') {
        this.#remember(key, { ref: written.ref, count, lastSeenMs: nowMs, writtenMs: nowMs });
        return;
      }
    }
    await this.#create(key, request, { count: 1, firstSeenMs: nowMs, lastSeenMs: nowMs });
  }

  /** @returns whether the repeat waits for the count interval (added to the waiting repeats). */
  #defer(key: string, request: EventRequest, written: Written, nowMs: number): boolean {
    const waiting = this.#deferred.get(key);
    if (waiting) {
      waiting.occurrences += 1;
      waiting.lastSeenMs = nowMs;
      return true;
    }
    const intervalMs = this.#deps.countIntervalMs ?? DEFAULT_COUNT_INTERVAL_MS;
    const dueInMs = written.writtenMs + intervalMs - nowMs;
    if (dueInMs <= 0) return false;
    const cancel = this.#timers.schedule(dueInMs, () => {
      this.#enqueueFlush(key, request);
    });
    this.#deferred.set(key, {
      request,
      occurrences: 1,
      firstSeenMs: nowMs,
      lastSeenMs: nowMs,
      cancel,
    });
    return true;
  }

  /** Writes the repeats that waited for the count interval, all in one count. */
  async #flush(key: string): Promise<void> {
    const deferred = this.#deferred.get(key);
    if (!deferred) return;
    this.#deferred.delete(key);
    deferred.cancel();
    if (!this.#mayWrite()) return;
    const { occurrences, lastSeenMs } = deferred;
    const written = this.#written.get(key);
    if (written) {
      const count = written.count + occurrences;
      const outcome = await this.#deps.sink.patchCount(written.ref, count, new Date(lastSeenMs));
      if (outcome === 'patched') {
        const writtenMs = this.#deps.clock.now();
        this.#remember(key, { ref: written.ref, count, lastSeenMs, writtenMs });
        return;
      }
    }
    await this.#create(key, deferred.request, {
      count: occurrences,
      firstSeenMs: deferred.firstSeenMs,
      lastSeenMs,
    });
  }

  async #create(
    key: string,
    request: EventRequest,
    seen: { readonly count: number; readonly firstSeenMs: number; readonly lastSeenMs: number },
  ): Promise<void> {
    const draft = this.#draft(request, seen);
    await this.#deps.sink.create(draft);
    this.#remember(key, {
      ref: { namespace: draft.namespace, name: draft.name },
      count: seen.count,
      lastSeenMs: seen.lastSeenMs,
      writtenMs: this.#deps.clock.now(),
    });
  }

  #mayWrite(): boolean {
    return this.#deps.canWrite?.() ?? true;
  }

  #draft(
    request: EventRequest,
    seen: { readonly count: number; readonly firstSeenMs: number; readonly lastSeenMs: number },
  ): EventDraft {
    const { object, type, reason, message, action } = request;
    const lastTimestamp = new Date(seen.lastSeenMs);
    return {
      ...(action === undefined ? {} : { action }),
      name: this.#eventName(object.name, lastTimestamp),
      namespace: object.namespace,
      involvedObject: object,
      type,
      reason,
      message,
      count: seen.count,
      firstTimestamp: new Date(seen.firstSeenMs),
      lastTimestamp,
      sourceComponent: this.#deps.component,
      reportingController: this.#deps.component,
      reportingInstance: this.#deps.instance,
    };
  }

  /** client-go's `<name>.<hex UnixNano>`; a sequence keeps names unique within a millisecond. */
  #eventName(objectName: string, now: Date): string {
    this.#sequence = (this.#sequence + 1) % 1_000_000;
    const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(this.#sequence);
    return `${objectName.slice(0, MAX_OBJECT_NAME_IN_EVENT)}.${nanos.toString(16)}`;
  }

  #remember(key: string, written: Written): void {
    this.#written.delete(key);
    this.#written.set(key, written);
    const max = this.#deps.maxRemembered ?? DEFAULT_MAX_REMEMBERED;
    for (const oldest of this.#written.keys()) {
      if (this.#written.size <= max) break;
      this.#written.delete(oldest);
    }
  }
}
