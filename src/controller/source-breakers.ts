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

/**
 * Changes kept per source for limits first asked for later (a workload's or a policy's override):
 * their state starts from these, so an override of up to 63 changes counts from the start.
 */
const HISTORY_LENGTH = 64;
/** The longest period or cool-down any limits may have (24h): older history says nothing. */
const HISTORY_MS = 24 * 3_600_000;
/** Distinct override limits followed at once; past this they start over from the history. */
const MAX_OVERRIDES = 64;

function limitsId(limits: FlapLimits): string {
  return `${String(limits.maxChanges)}/${String(limits.periodMs)}/${String(limits.coolDownMs)}`;
}

function sameLimits(a: FlapLimits, b: FlapLimits): boolean {
  return limitsId(a) === limitsId(b);
}

/** A source's latest changes, and what its Event names. */
interface History {
  readonly ref: SourceRef;
  readonly uid: string;
  readonly times: number[];
}

/** The states of one set of limits other than the flags', by source. */
interface OverrideStates {
  readonly limits: FlapLimits;
  readonly states: Map<string, FlapState>;
}

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
  /** By source: the state under the flags' limits. */
  readonly #states = new Map<string, FlapState>();
  /** By source: its latest changes (at most HISTORY_LENGTH, within HISTORY_MS). */
  readonly #history = new Map<string, History>();
  /** By limits id: the states under a workload's or a policy's own limits. */
  readonly #overrides = new Map<string, OverrideStates>();
  #sinceSweep = 0;

  constructor(deps: SourceBreakersDeps) {
    this.#deps = deps;
  }

  /**
   * The breaker of `source` in `namespace` now, under `limits` (a workload's or a policy's
   * override; the flags' when absent).
   */
  status(namespace: string, source: SourceKey, limits: FlapLimits = this.#deps.limits): FlapStatus {
    const key = stateKey(namespace, source);
    const now = this.#deps.now();
    if (sameLimits(limits, this.#deps.limits)) {
      return flapStatus(this.#states.get(key), now, limits);
    }
    if (!breakerEnabled(limits)) return { open: false };
    const override = this.#override(limits);
    let state = override.states.get(key);
    if (state === undefined) {
      state = this.#replay(key, limits);
      if (state === undefined) return { open: false };
      override.states.set(key, state);
    }
    return flapStatus(state, now, limits);
  }

  /** The sources whose breaker is open now (under the flags' limits or an override), by name. */
  flapping(): readonly FlappingSource[] {
    const now = this.#deps.now();
    const open = new Map<string, FlappingSource>();
    const collect = (states: ReadonlyMap<string, FlapState>, limits: FlapLimits): void => {
      for (const [key, state] of states) {
        const status = flapStatus(state, now, limits);
        if (!status.open || open.has(key)) continue;
        open.set(key, {
          source: key,
          since: new Date(status.openedAt).toISOString(),
          closesAt: new Date(status.closesAt).toISOString(),
        });
      }
    };
    collect(this.#states, this.#deps.limits);
    for (const override of this.#overrides.values()) collect(override.states, override.limits);
    return [...open.values()].sort((a, b) =>
      a.source < b.source ? -1 : a.source > b.source ? 1 : 0,
    );
  }

  onSourceEvent(event: SourceCacheEvent): void {
    // Only a change of content counts: a relabel or an annotation edit rolls nothing.
    if (event.kind !== 'updated') return;
    const { ref } = event;
    const key = stateKey(ref.namespace, sourceKeyOf(ref));
    const at = event.observedAt;
    const times = this.#history.get(key)?.times ?? [];
    times.push(at);
    if (times.length > HISTORY_LENGTH) times.shift();
    this.#history.set(key, { ref, uid: event.uid, times });
    const { limits } = this.#deps;
    if (breakerEnabled(limits)) {
      const next = recordChange(this.#states.get(key), at, limits);
      this.#states.set(key, next.state);
      if (next.opened) this.#opened(ref, event.uid, next.state.changes.length, limits);
    }
    for (const override of this.#overrides.values()) {
      const state = override.states.get(key);
      // A source not asked about under these limits yet starts from its history when it is.
      if (state === undefined) continue;
      const next = recordChange(state, at, override.limits);
      override.states.set(key, next.state);
      if (next.opened) this.#opened(ref, event.uid, next.state.changes.length, override.limits);
    }
    this.#sweep();
  }

  #override(limits: FlapLimits): OverrideStates {
    const id = limitsId(limits);
    let override = this.#overrides.get(id);
    if (override === undefined) {
      if (this.#overrides.size >= MAX_OVERRIDES) this.#overrides.clear();
      override = { limits, states: new Map() };
      this.#overrides.set(id, override);
    }
    return override;
  }

  /**
   * The state under `limits` from the source's kept changes; undefined without any. A breaker
   * found open this way is announced as one that opens (once: the state is kept from now on).
   */
  #replay(key: string, limits: FlapLimits): FlapState | undefined {
    const history = this.#history.get(key);
    if (history === undefined) return undefined;
    let state: FlapState | undefined;
    for (const at of history.times) state = recordChange(state, at, limits).state;
    if (state !== undefined && flapStatus(state, this.#deps.now(), limits).open) {
      this.#opened(history.ref, history.uid, state.changes.length, limits);
    }
    return state;
  }

  #opened(ref: SourceRef, uid: string, changes: number, limits: FlapLimits): void {
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
    for (const override of this.#overrides.values()) {
      for (const [key, state] of override.states) {
        if (flapStateIdle(state, now, override.limits)) override.states.delete(key);
      }
    }
    for (const [key, history] of this.#history) {
      if ((history.times.at(-1) ?? 0) <= now - HISTORY_MS) this.#history.delete(key);
    }
  }

  onWorkloadEvent(): void {
    // Workloads do not flap sources.
  }

  onNamespaceEntered(): void {
    // Nothing is kept per namespace.
  }

  onNamespaceLeft(namespace: string): void {
    const maps = [
      this.#states,
      this.#history,
      ...[...this.#overrides.values()].map((o) => o.states),
    ];
    for (const map of maps) {
      for (const key of map.keys()) {
        if (key.startsWith(`${namespace}/`)) map.delete(key);
      }
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
