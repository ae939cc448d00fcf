import type { Clock } from '../time/timers.ts';

/** The object an Event is about (`involvedObject`). */
export interface EventObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export type EventType = 'Normal' | 'Warning';

/** A core/v1 Event as kreload writes it; the kube adapter turns it into the API object. */
export interface EventDraft {
  /** `<object name>.<hex nanoseconds>`, unique per recorder. */
  readonly name: string;
  /** The involved object's namespace. */
  readonly namespace: string;
  readonly involvedObject: EventObjectRef;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  /** `action`, when the content has one. */
  readonly action?: string | undefined;
  readonly count: number;
  readonly firstTimestamp: Date;
  readonly lastTimestamp: Date;
  /** `source.component`. */
  readonly sourceComponent: string;
  readonly reportingController: string;
  /** `POD_NAME`. */
  readonly reportingInstance: string;
}

export interface EventName {
  readonly namespace: string;
  readonly name: string;
}

/** Event writes (`create`, `patch` on events), implemented by kube/ and in memory for tests. */
export interface EventSink {
  create(event: EventDraft): Promise<void>;
  /** Sets `count` and `lastTimestamp`; `not-found` when the Event has expired or was deleted. */
  patchCount(ref: EventName, count: number, lastTimestamp: Date): Promise<'patched' | 'not-found'>;
}

/** Wall-clock time: Event timestamps and the 10-minute folding window. */
export type EventClock = Pick<Clock, 'now'>;
