/**
 * The flapping-source breakers (docs/windows-and-breaker.md): one state per source, fed by the
 * watch with every change of a source's content, read by the roll holds (reconcile/stages/
 * roll-holds.ts). A breaker that opens writes one Warning Event `SourceFlapping` on the source and
 * is counted; the sources flapping now are a gauge and a `/readyz` detail. The rule is
 * core/flap-breaker.ts's; states that say nothing any more are dropped as the watch goes on.
 */
import type { FlapLimits, FlapState, FlapStatus } from '../core/flap-breaker.ts';
import { breakerEnabled, flapStateIdle, flapStatus, recordChange } from '../core/flap-breaker.ts';
import { sourceKeyOf } from '../core/keys.ts';
import type { SourceKey, SourceRef } from '../core/types.ts';
import { sourceFlappingEvent } from '../events/event-messages.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import { sourceObjectRef } from '../events/object-refs.ts';
import type { SourceCacheEvent } from '../watch/source-cache.ts';
import type { WatchHandler } from '../watch/watch-caches.ts';

/** Idle states are looked for once per this many changes, so the sweep costs O(1) per change. */
const SWEEP_EVERY = 256;

export interface SourceBreakersDeps {
  readonly limits: FlapLimits;
  readonly events: { record(request: EventRequest): void };
  /** The breaker opened: the episode counter and a log line. */
  readonly opened: (source: SourceRef, changes: number) => void;
  /** ms since the epoch. */
  readonly now: () => number;
}

/** A source flapping now, for `/readyz` and explain. */
export interface FlappingSource {
  readonly source: string;
  readonly since: string;
  readonly closesAt: string;
}

function stateKey(namespace: string, source: SourceKey): string {
  return `${namespace}/${source}`;
}

export class SourceBreakers implements WatchHandler {
  readonly #deps: SourceBreakersDeps;
  readonly #states = new Map<string, FlapState>();
  #sinceSweep = 0;

  constructor(deps: SourceBreakersDeps) {
    this.#deps = deps;
  }

  /** The breaker of `source` in `namespace` now. */
  status(namespace: string, source: SourceKey): FlapStatus {
    return flapStatus(
      this.#states.get(stateKey(namespace, source)),
      this.#deps.now(),
      this.#deps.limits,
    );
  }

  /** The sources whose breaker is open now, by name. */
  flapping(): readonly FlappingSource[] {
    const now = this.#deps.now();
    const open: FlappingSource[] = [];
    for (const [key, state] of this.#states) {
      const status = flapStatus(state, now, this.#deps.limits);
      if (!status.open) continue;
      open.push({
        source: key,
        since: new Date(status.openedAt).toISOString(),
        closesAt: new Date(status.closesAt).toISOString(),
      });
    }
    return open.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  }

  onSourceEvent(event: SourceCacheEvent): void {
    // Only a change of content counts: a relabel or an annotation edit rolls nothing.
    if (event.kind !== 'updated' || !breakerEnabled(this.#deps.limits)) return;
    const { ref } = event;
    const key = stateKey(ref.namespace, sourceKeyOf(ref));
    const { limits } = this.#deps;
    const next = recordChange(this.#states.get(key), event.observedAt, limits);
    this.#states.set(key, next.state);
    if (next.opened) this.#opened(ref, event.uid, next.state.changes.length);
    this.#sweep();
  }

  #opened(ref: SourceRef, uid: string, changes: number): void {
    const { limits } = this.#deps;
    this.#deps.opened(ref, changes);
    this.#deps.events.record({
      object: sourceObjectRef(ref, uid),
      ...sourceFlappingEvent({
        source: ref,
        changes,
        periodMs: limits.periodMs,
        coolDownMs: limits.coolDownMs,
      }),
    });
  }

  #sweep(): void {
    this.#sinceSweep += 1;
    if (this.#sinceSweep < SWEEP_EVERY) return;
    this.#sinceSweep = 0;
    const now = this.#deps.now();
    for (const [key, state] of this.#states) {
      if (flapStateIdle(state, now, this.#deps.limits)) this.#states.delete(key);
    }
  }

  onWorkloadEvent(): void {
    // Workloads do not flap sources.
  }

  onNamespaceEntered(): void {
    // Nothing is kept per namespace.
  }

  onNamespaceLeft(namespace: string): void {
    for (const key of this.#states.keys()) {
      if (key.startsWith(`${namespace}/`)) this.#states.delete(key);
    }
  }

  onScopeJoined(): void {
    // A newly listed scope has no history of changes.
  }

  onKindWatched(): void {
    // Only sources count.
  }

  onPolicyEvent(): void {
    // Policies bind sources; they do not change them.
  }
}
