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

interface Pending {
  readonly firstAt: number;
  change: SourceChange;
  workloads: readonly WorkloadView[];
  cancel: () => void;
}

const EVENT_OF: Readonly<Record<SourceChange['kind'], WebhookEvent | undefined>> = {
  created: 'create',
  updated: 'update',
  deleted: 'delete',
  annotations: undefined,
};

export class WebhookMode {
  readonly #deps: WebhookModeDeps;
  readonly #pending = new Map<string, Pending>();

  constructor(deps: WebhookModeDeps) {
    this.#deps = deps;
  }

  /** `candidates` are the workloads the index associates with the source. */
  observe(change: SourceChange, candidates: readonly WorkloadView[]): void {
    const event = EVENT_OF[change.kind];
    if (event === undefined) return;
    if (event === 'create' && !this.#deps.reloadOnCreate) return;
    if (event === 'delete' && !this.#deps.reloadOnDelete) return;
    const id = `${change.ref.namespace}/${sourceKeyOf(change.ref)}`;
    const now = this.#deps.timers.now();
    const known = this.#pending.get(id);
    known?.cancel();
    const firstAt = known?.firstAt ?? now;
    const dueAt = Math.min(now + this.#deps.syncDelayMs, firstAt + this.#deps.syncMaxDelayMs);
    const pending: Pending = {
      firstAt,
      change,
      workloads: candidates,
      cancel: this.#deps.timers.schedule(Math.max(0, dueAt - now), () => {
        this.#flush(id);
      }),
    };
    this.#pending.set(id, pending);
  }

  stop(): void {
    for (const pending of this.#pending.values()) pending.cancel();
    this.#pending.clear();
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
