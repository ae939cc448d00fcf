/**
 * core/v1 Event writes (§13.3), implementing events/ports.ts `EventSink`. Folding identical Events
 * into one is the recorder's job; this only creates an Event and bumps an existing one's count.
 */
import type { EventDraft, EventName, EventSink } from '../events/ports.ts';
import { toApiError } from './api-error.ts';
import type { JsonObject } from '../core/json.ts';
import { OTHER_RESOURCES, resourcePath } from './resources.ts';
import type { KubeTransport } from './transport.ts';
import { HttpMethod } from './transport.ts';
import { FIELD_MANAGER } from './workload-client.ts';

/** `metav1.Time`: RFC 3339 with whole seconds. */
export function formatTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The API object for a draft. No `eventTime`, so the server validates it as a classic Event. */
export function eventBody(event: EventDraft): JsonObject {
  const { involvedObject: object } = event;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: event.name, namespace: event.namespace },
    involvedObject: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      namespace: object.namespace,
      name: object.name,
      uid: object.uid,
    },
    type: event.type,
    reason: event.reason,
    message: event.message,
    ...(event.action === undefined ? {} : { action: event.action }),
    count: event.count,
    firstTimestamp: formatTime(event.firstTimestamp),
    lastTimestamp: formatTime(event.lastTimestamp),
    source: { component: event.sourceComponent },
    reportingComponent: event.reportingController,
    reportingInstance: event.reportingInstance,
  };
}

export interface EventClientDeps {
  readonly transport: KubeTransport;
}

/** Rejects with `ApiError`. */
export class EventClient implements EventSink {
  readonly #transport: KubeTransport;

  constructor(deps: EventClientDeps) {
    this.#transport = deps.transport;
  }

  async create(event: EventDraft): Promise<void> {
    await this.#transport.request({
      method: HttpMethod.POST,
      path: resourcePath(OTHER_RESOURCES.events, { namespace: event.namespace }),
      query: { fieldManager: FIELD_MANAGER },
      body: eventBody(event),
      contentType: 'application/json',
    });
  }

  async patchCount(
    ref: EventName,
    count: number,
    lastTimestamp: Date,
  ): Promise<'patched' | 'not-found'> {
    try {
      await this.#transport.request({
        method: HttpMethod.PATCH,
        path: resourcePath(OTHER_RESOURCES.events, ref),
        query: { fieldManager: FIELD_MANAGER },
        body: { count, lastTimestamp: formatTime(lastTimestamp) },
        contentType: 'application/merge-patch+json',
      });
      return 'patched';
    } catch (err) {
      const error = toApiError(err);
      if (error.status === 404) return 'not-found';
      throw error;
    }
  }
}
