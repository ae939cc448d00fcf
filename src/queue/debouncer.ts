import type { SourceKey } from '../core/types.ts';
import { MinHeap } from './min-heap.ts';

/** `--sync-delay` and `--sync-max-delay`, in milliseconds (§8, §12.2). */
export interface DebounceSettings {
  readonly syncDelayMs: number;
  readonly syncMaxDelayMs: number;
}

/** A source change that caused a trigger, with the time kreload observed it. */
export interface ChangeRecord {
  readonly sourceKey: SourceKey;
  readonly observedAt: number;
}

/** What the queue holds for one workload key until a worker takes it (§8 item 1). */
export interface PendingEntry {
  readonly firstAt: number;
  readonly dueAt: number;
  /** One record per source key, with the earliest observation: enough for the reload latency. */
  readonly changes: readonly ChangeRecord[];
}

export interface Trigger {
  readonly at: number;
  /** Source and workload events are debounced; initial sync, leadership, resync, namespace are not. */
  readonly debounced: boolean;
  readonly change?: ChangeRecord | undefined;
  /** This workload's own quiet time (a ReloadPolicy's `syncDelay`); default `--sync-delay`. */
  readonly syncDelayMs?: number | undefined;
}

/** `added`: the key became pending; `coalesced`: a debounced trigger folded into a pending key. */
export type TriggerOutcome = 'added' | 'coalesced' | 'unchanged';

function withChange(
  changes: readonly ChangeRecord[],
  change: ChangeRecord | undefined,
): readonly ChangeRecord[] {
  if (change === undefined) return changes;
  const index = changes.findIndex((known) => known.sourceKey === change.sourceKey);
  if (index < 0) return [...changes, change];
  const known = changes[index];
  if (known === undefined || known.observedAt <= change.observedAt) return changes;
  return changes.map((record, i) => (i === index ? change : record));
}

/** Merges two change lists, keeping the earliest observation of each source key. */
export function mergeChanges(
  into: readonly ChangeRecord[],
  from: readonly ChangeRecord[],
): readonly ChangeRecord[] {
  return from.reduce<readonly ChangeRecord[]>(
    (changes, change) => withChange(changes, change),
    into,
  );
}

/**
 * The §8 arithmetic for one trigger, exactly:
 * - debounced, not pending: `firstAt = t`, `dueAt = t + syncDelay`;
 * - debounced, pending: `dueAt = min(max(dueAt, t + syncDelay), firstAt + syncMaxDelay)` (coalesced);
 * - immediate, not pending: `firstAt = dueAt = t`;
 * - immediate, pending: timing unchanged, so it never cuts a debounce window short.
 */
export function applyTrigger(
  entry: PendingEntry | undefined,
  trigger: Trigger,
  settings: DebounceSettings,
): { readonly entry: PendingEntry; readonly outcome: TriggerOutcome } {
  const { at, debounced, change } = trigger;
  // A policy's own delay is capped like every window: no roll waits past --sync-max-delay.
  const syncDelayMs = Math.min(
    trigger.syncDelayMs ?? settings.syncDelayMs,
    settings.syncMaxDelayMs,
  );
  if (entry === undefined) {
    const dueAt = debounced ? at + syncDelayMs : at;
    return { entry: { firstAt: at, dueAt, changes: withChange([], change) }, outcome: 'added' };
  }
  const changes = withChange(entry.changes, change);
  if (!debounced) return { entry: { ...entry, changes }, outcome: 'unchanged' };
  const dueAt = Math.min(
    Math.max(entry.dueAt, at + syncDelayMs),
    entry.firstAt + settings.syncMaxDelayMs,
  );
  return { entry: { firstAt: entry.firstAt, dueAt, changes }, outcome: 'coalesced' };
}

/**
 * Due entries that carry source changes go before catch-up entries (initial sync, resync,
 * leadership, workload events), so a real change is not queued behind thousands of first-start
 * baselines (docs/adr/0017). While both lanes have due keys, this many change entries are taken
 * per catch-up entry, so neither lane starves.
 */
export const CHANGES_PER_CATCH_UP = 3;

export type Lane = 'changes' | 'catch-up';

export function laneOf(entry: PendingEntry): Lane {
  return entry.changes.length > 0 ? 'changes' : 'catch-up';
}

interface Slot {
  readonly entry: PendingEntry;
  /** When the key became pending: the last tie-breaker, so equal entries leave in FIFO order. */
  readonly seq: number;
  /** Unique per stored value; heap nodes carrying an older version are stale. */
  readonly version: number;
}

interface HeapNode<K> {
  readonly key: K;
  readonly dueAt: number;
  readonly firstAt: number;
  readonly seq: number;
  readonly version: number;
}

function nodeBefore<K>(a: HeapNode<K>, b: HeapNode<K>): boolean {
  return (a.dueAt - b.dueAt || a.firstAt - b.firstAt || a.seq - b.seq) < 0;
}

export interface DebouncerDeps {
  readonly settings: DebounceSettings;
}

/**
 * Pending entries per key, with the §8 arithmetic and worker order. Holds no timers: the owner asks
 * `nextDueAt()` and `takeDue(now)`. A *held* key (in flight, or waiting out a retry backoff) keeps
 * collecting triggers but is not handed out until released.
 */
export class Debouncer<K extends string> {
  readonly #deps: DebouncerDeps;
  readonly #slots = new Map<K, Slot>();
  readonly #held = new Set<K>();
  readonly #heaps: Readonly<Record<Lane, MinHeap<HeapNode<K>>>> = {
    changes: new MinHeap<HeapNode<K>>(nodeBefore),
    'catch-up': new MinHeap<HeapNode<K>>(nodeBefore),
  };
  #counter = 0;
  /** Change entries taken in a row while catch-up entries were also due. */
  #changeRun = 0;

  constructor(deps: DebouncerDeps) {
    this.#deps = deps;
  }

  /** Number of pending keys, held ones included (the `reloader_workqueue_depth` gauge). */
  get size(): number {
    return this.#slots.size;
  }

  get(key: K): PendingEntry | undefined {
    return this.#slots.get(key)?.entry;
  }

  keys(): readonly K[] {
    return [...this.#slots.keys()];
  }

  trigger(key: K, trigger: Trigger): TriggerOutcome {
    const slot = this.#slots.get(key);
    const { entry, outcome } = applyTrigger(slot?.entry, trigger, this.#deps.settings);
    this.#store(key, entry, slot?.seq);
    return outcome;
  }

  /**
   * Puts the changes of a failed run back (retry): merged into the key's pending entry when there is
   * one, else a new entry due at `at`. Reports whether the key became pending.
   */
  requeue(key: K, at: number, changes: readonly ChangeRecord[]): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) {
      this.#store(key, { firstAt: at, dueAt: at, changes: mergeChanges([], changes) }, undefined);
      return true;
    }
    this.#store(
      key,
      { ...slot.entry, changes: mergeChanges(slot.entry.changes, changes) },
      slot.seq,
    );
    return false;
  }

  hold(key: K): void {
    this.#held.add(key);
  }

  release(key: K): void {
    if (!this.#held.delete(key)) return;
    const slot = this.#slots.get(key);
    if (slot !== undefined) this.#push(key, slot);
  }

  isHeld(key: K): boolean {
    return this.#held.has(key);
  }

  /** Smallest `dueAt` among keys that are not held. */
  nextDueAt(): number | undefined {
    const changes = this.#peekEligible('changes')?.dueAt;
    const catchUp = this.#peekEligible('catch-up')?.dueAt;
    if (changes === undefined) return catchUp;
    return catchUp === undefined ? changes : Math.min(changes, catchUp);
  }

  /**
   * Removes and returns an eligible entry with `dueAt ≤ now`: the first of its lane, the lane chosen
   * by CHANGES_PER_CATCH_UP.
   */
  takeDue(now: number): { readonly key: K; readonly entry: PendingEntry } | undefined {
    const due = (lane: Lane): HeapNode<K> | undefined => {
      const node = this.#peekEligible(lane);
      return node !== undefined && node.dueAt <= now ? node : undefined;
    };
    const changes = due('changes');
    const catchUp = due('catch-up');
    const lane: Lane | undefined =
      changes !== undefined && (catchUp === undefined || this.#changeRun < CHANGES_PER_CATCH_UP)
        ? 'changes'
        : catchUp === undefined
          ? undefined
          : 'catch-up';
    if (lane === undefined) return undefined;
    if (catchUp !== undefined) this.#changeRun = lane === 'changes' ? this.#changeRun + 1 : 0;
    const node = this.#heaps[lane].pop();
    if (node === undefined) return undefined;
    const { key } = node;
    const slot = this.#slots.get(key);
    if (slot === undefined) return undefined;
    this.#slots.delete(key);
    return { key, entry: slot.entry };
  }

  /** Drops the pending entry of `key` (the hold, if any, stays with its owner). */
  drop(key: K): boolean {
    return this.#slots.delete(key);
  }

  /** Drops every pending entry whose key satisfies `predicate`; returns how many. */
  dropWhere(predicate: (key: K) => boolean): number {
    let dropped = 0;
    for (const key of this.#slots.keys()) {
      if (predicate(key)) {
        this.#slots.delete(key);
        dropped += 1;
      }
    }
    return dropped;
  }

  clear(): void {
    this.#slots.clear();
    this.#held.clear();
    this.#heaps.changes.clear();
    this.#heaps['catch-up'].clear();
    this.#changeRun = 0;
  }

  #store(key: K, entry: PendingEntry, seq: number | undefined): void {
    const previous = this.#slots.get(key);
    this.#counter += 1;
    const slot: Slot = { entry, seq: seq ?? this.#counter, version: this.#counter };
    this.#slots.set(key, slot);
    // An unchanged position keeps its heap node valid: a storm of triggers does not grow the heap.
    if (
      previous?.entry.dueAt === entry.dueAt &&
      previous.entry.firstAt === entry.firstAt &&
      laneOf(previous.entry) === laneOf(entry)
    ) {
      this.#slots.set(key, { ...slot, version: previous.version });
      return;
    }
    if (!this.#held.has(key)) this.#push(key, slot);
  }

  #push(key: K, slot: Slot): void {
    const { dueAt, firstAt } = slot.entry;
    const node = { key, dueAt, firstAt, seq: slot.seq, version: slot.version };
    this.#heaps[laneOf(slot.entry)].push(node);
  }

  /** The first node of `lane` that is current and not held; stale and held nodes are discarded. */
  #peekEligible(lane: Lane): HeapNode<K> | undefined {
    const heap = this.#heaps[lane];
    for (;;) {
      const node = heap.peek();
      if (node === undefined) return undefined;
      const { key } = node;
      const slot = this.#slots.get(key);
      // A held key is pushed again when released, and a key that changed lanes has a node in
      // the other heap, so this one can go.
      if (slot?.version === node.version && !this.#held.has(key)) return node;
      heap.pop();
    }
  }
}
