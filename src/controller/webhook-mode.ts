/**
 * `--webhook-url` mode (§13.7): instead of rolling, post each observed source change once its
 * changes have settled for `--sync-delay` (capped by `--sync-max-delay`), naming the workloads that
 * would have been rolled. Nothing is written to workloads and no baseline is recorded.
 */
import { decide, trackedContainer } from '../core/decide.ts';
import { sourceKeyOf } from '../core/keys.ts';
import type { AnnotationKeys, WorkloadView } from '../core/types.ts';
import { DELETE_MARKER } from '../core/types.ts';
import type { WebhookEvent, WebhookNotification } from '../alerts/webhook-notifier.ts';
import { Debouncer } from '../queue/debouncer.ts';
import type { Timers } from '../time/timers.ts';
import type { SourceChange } from '../watch/source-cache.ts';

export interface WebhookModeDeps {
  readonly notify: (notification: WebhookNotification) => void;
  readonly timers: Timers;
  readonly syncDelayMs: number;
  readonly syncMaxDelayMs: number;
  readonly keys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  readonly reloadOnCreate: boolean;
  readonly reloadOnDelete: boolean;
}

/** The latest change of a pending source and the workloads it had then. */
interface PendingPost {
  readonly change: SourceChange;
  readonly workloads: readonly WorkloadView[];
}

const EVENT_OF: Readonly<Record<SourceChange['kind'], WebhookEvent | undefined>> = {
  created: 'create',
  updated: 'update',
  deleted: 'delete',
  annotations: undefined,
};

/** One pending post per source, debounced by the queue's §8 arithmetic (`Debouncer`). */
export class WebhookMode {
  readonly #deps: WebhookModeDeps;
  readonly #debouncer: Debouncer<string>;
  readonly #pending = new Map<string, PendingPost>();
  #cancelWake: (() => void) | undefined;

  constructor(deps: WebhookModeDeps) {
    this.#deps = deps;
    this.#debouncer = new Debouncer({ settings: deps });
  }

  /** `candidates` are the workloads the index associates with the source. */
  observe(change: SourceChange, candidates: readonly WorkloadView[]): void {
    const event = EVENT_OF[change.kind];
    if (event === undefined) return;
    if (event === 'create' && !this.#deps.reloadOnCreate) return;
    if (event === 'delete' && !this.#deps.reloadOnDelete) return;
    const id = `${change.ref.namespace}/${sourceKeyOf(change.ref)}`;
    this.#pending.set(id, { change, workloads: candidates });
    this.#debouncer.trigger(id, { at: this.#deps.timers.now(), debounced: true });
    this.#armWake();
  }

  stop(): void {
    this.#cancelWake?.();
    this.#cancelWake = undefined;
    this.#debouncer.clear();
    this.#pending.clear();
  }

  /** One timer, for the earliest due source; re-armed whenever that may have moved. */
  #armWake(): void {
    this.#cancelWake?.();
    this.#cancelWake = undefined;
    const next = this.#debouncer.nextDueAt();
    if (next === undefined) return;
    this.#cancelWake = this.#deps.timers.schedule(next - this.#deps.timers.now(), () => {
      this.#cancelWake = undefined;
      this.#flushDue();
    });
  }

  #flushDue(): void {
    const now = this.#deps.timers.now();
    for (let due = this.#debouncer.takeDue(now); due; due = this.#debouncer.takeDue(now)) {
      this.#flush(due.key);
    }
    this.#armWake();
  }

  #flush(id: string): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    const { change } = pending;
    const event = EVENT_OF[change.kind] ?? 'update';
    this.#deps.notify({
      event,
      source: change.ref,
      hash: event === 'delete' ? DELETE_MARKER : change.hash,
      workloads: pending.workloads
        .filter((view) => this.#wouldRoll(view, change))
        .map((v) => v.ref),
      observedAt: new Date(change.observedAt),
    });
  }

  /** §3.5 tracking; the §5.3 comparison needs applied state that webhook mode never writes. */
  #wouldRoll(view: WorkloadView, change: SourceChange): boolean {
    const input = {
      workload: view,
      type: change.ref.type,
      name: change.ref.name,
      sourceAnnotations: change.annotations,
      keys: this.#deps.keys,
      autoReloadAll: this.#deps.autoReloadAll,
    };
    return trackedContainer(input, decide(input)).tracked;
  }
}
