import PQueue from 'p-queue';
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
  readonly lastSeenMs: number;
}

const TEN_MINUTES_MS = 10 * 60_000;
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
 * its count. Writes for one (object, reason, message) are serialised, so counts never race.
 */
export class EventRecorder {
  readonly #deps: EventRecorderDeps;
  readonly #written = new Map<string, Written>();
  readonly #chains = new Map<string, Promise<void>>();
  #writers: PQueue | undefined;
  #sequence = 0;

  constructor(deps: EventRecorderDeps) {
    this.#deps = deps;
  }

  /** Fire and forget: failures go to `onError`. */
  record(request: EventRequest): void {
    if (!this.#mayWrite()) return;
    const key = foldKey(request);
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#limited(() => this.#write(key, request)))
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

  /** Resolves once every Event recorded so far has been written or has failed. */
  async idle(): Promise<void> {
    while (this.#chains.size > 0) {
      await Promise.all(this.#chains.values());
    }
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
    const now = new Date(this.#deps.clock.now());
    const written = this.#written.get(key);
    const windowMs = this.#deps.foldWindowMs ?? TEN_MINUTES_MS;
    if (written && now.getTime() - written.lastSeenMs < windowMs) {
      const count = written.count + 1;
      const outcome = await this.#deps.sink.patchCount(written.ref, count, now);
      if (outcome === 'patched') {
        this.#remember(key, { ref: written.ref, count, lastSeenMs: now.getTime() });
        return;
      }
    }
    const draft = this.#draft(request, now);
    await this.#deps.sink.create(draft);
    this.#remember(key, {
      ref: { namespace: draft.namespace, name: draft.name },
      count: 1,
      lastSeenMs: now.getTime(),
    });
  }

  #mayWrite(): boolean {
    return this.#deps.canWrite?.() ?? true;
  }

  #draft(request: EventRequest, now: Date): EventDraft {
    const { object, type, reason, message, action } = request;
    return {
      ...(action === undefined ? {} : { action }),
      name: this.#eventName(object.name, now),
      namespace: object.namespace,
      involvedObject: object,
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
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
