/**
 * Turns what the caches and the workload store observe into work (§5.2): a source change fans out
 * through the in-memory index to the workloads it may concern (§9.2 item 5), records create/delete
 * marks (§5.4), opens a fan-out for the `WorkloadsReloaded` Event, and triggers a debounced
 * reconcile per workload. It is the watch server's subscriber (an informer's event handler): it
 * only enqueues keys, and no API call is made per event.
 */
import type { ReloadListCache } from '../core/annotation-values.ts';
import { decide } from '../core/decide.ts';
import { sameSpec } from '../core/reload-policy.ts';
import { sourceKeyOf } from '../core/keys.ts';
import type {
  AnnotationKeys,
  SkipReason,
  SourceType,
  WorkloadKey,
  WorkloadKindName,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import { DELETE_MARKER } from '../core/types.ts';
import type { FanoutStart } from '../events/fanout-tracker.ts';
import type { ResourceType } from '../metrics/metrics.ts';
import type { ChangeRecord } from '../queue/debouncer.ts';
import type { MarkStore } from '../watch/marks.ts';
import type { SourceCacheEvent, SourceChange, SourceRelabelled } from '../watch/source-cache.ts';
import type { WatchHandler } from '../watch/watch-caches.ts';
import type { WorkloadStore, WorkloadStoreEvent } from '../watch/workload-store.ts';
import type { PolicyEvent, PolicyStore } from '../watch/policy-store.ts';
import type { WebhookMode } from './webhook-mode.ts';

/** The queue as the router drives it. */
export interface TriggerSink {
  trigger(
    key: WorkloadKey,
    options: { debounced: boolean; change?: ChangeRecord; syncDelayMs?: number | undefined },
  ): void;
  drop(key: WorkloadKey): void;
  dropNamespace(namespace: string): void;
}

export interface ChangeRouterDeps {
  readonly store: WorkloadStore;
  /** With `--enable-reload-policies`: the policy bindings fan out too (docs/reload-policy.md). */
  readonly policies?: PolicyStore | undefined;
  readonly marks: MarkStore;
  readonly queue: TriggerSink;
  readonly keys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  readonly reloadOnDelete: boolean;
  readonly reloadLists: ReloadListCache;
  /** Namespace selector and ignore list (§11); true when the namespace is in scope. */
  readonly acceptsNamespace: (namespace: string) => boolean;
  /** In HA only the leader enqueues work; followers keep marks (§5.4, §13.4). */
  readonly isLeading: () => boolean;
  readonly onSkip: (reason: SkipReason) => void;
  readonly onFanout: (start: FanoutStart) => void;
  /** `--webhook-url` mode: changes are posted instead of rolled (§13.7). */
  readonly webhook?: WebhookMode | undefined;
  /**
   * kreload's own acknowledged patches (the write ledger): a workload change that is exactly the
   * echo of one needs no reconcile, the one that sent it already accounted for it.
   */
  readonly ownPatches?: {
    isOwnEcho(key: WorkloadKey, from: string, to: string): boolean | Promise<boolean>;
  };
}

export class ChangeRouter implements WatchHandler {
  readonly #deps: ChangeRouterDeps;

  constructor(deps: ChangeRouterDeps) {
    this.#deps = deps;
  }

  onSourceEvent(event: SourceCacheEvent): void {
    const { ref } = event;
    if (!this.#deps.acceptsNamespace(ref.namespace)) {
      this.#deps.onSkip('ignored_or_not_selected');
      return;
    }
    if (event.kind === 'unchanged') {
      this.#deps.onSkip('no_data_change');
      return;
    }
    if (event.kind === 'labels') {
      this.#relabelled(event);
      return;
    }
    if (event.kind !== 'annotations' && event.annotations[this.#deps.keys.ignore] === 'true') {
      this.#deps.onSkip('ignored_or_not_selected');
      return;
    }
    const workloads = this.#withPolicyTargets(
      event,
      this.#deps.store.fanOut(ref.namespace, ref.type, ref.name, (view) =>
        this.#listMatches(view, ref.type, ref.name),
      ),
    );
    this.#deps.marks.record(event, workloads);
    if (!this.#deps.isLeading()) return;
    if (this.#deps.webhook) {
      this.#deps.webhook.observe(event, this.#views(workloads));
      return;
    }
    this.#openFanout(event, workloads);
    const change: ChangeRecord = { sourceKey: sourceKeyOf(ref), observedAt: event.observedAt };
    for (const key of workloads) {
      this.#deps.queue.trigger(key, { debounced: true, change, syncDelayMs: this.#syncDelay(key) });
    }
  }

  onWorkloadEvent(event: WorkloadStoreEvent): void {
    if (event.kind === 'removed') {
      this.#deps.queue.drop(event.key);
      this.#deps.marks.dropWorkload(event.key);
      return;
    }
    if (!this.#triggersFor(event.view)) return;
    const own =
      event.kind === 'changed'
        ? this.#deps.ownPatches?.isOwnEcho(
            event.key,
            event.prev.resourceVersion,
            event.view.resourceVersion,
          )
        : false;
    if (own === true) return;
    if (own instanceof Promise) {
      // The echo came before the PATCH's answer: decided once the answer is in.
      void own.then((isOwn) => {
        if (!isOwn && this.#triggersFor(event.view)) {
          this.#deps.queue.trigger(event.key, { debounced: true });
        }
      });
      return;
    }
    this.#deps.queue.trigger(event.key, { debounced: true });
  }

  #triggersFor(view: WorkloadView): boolean {
    return this.#writesWorkloads() && this.#deps.acceptsNamespace(view.ref.namespace);
  }

  /** Entering the `--namespace-selector` set: reconcile its workloads at once (§5.2). */
  onNamespaceEntered(namespace: string): void {
    this.triggerAll(this.#deps.store.keysInNamespace(namespace));
  }

  /** Leaving it: its pending work is dropped and nothing more is written there (§11 item 1). */
  onNamespaceLeft(namespace: string): void {
    this.#deps.queue.dropNamespace(namespace);
  }

  /** The workloads reconciled without this watch's objects are reconciled again (ADR 0021). */
  onScopeJoined(_resource: ResourceType, namespace: string | undefined): void {
    const { store } = this.#deps;
    this.triggerAll(namespace === undefined ? store.keys() : store.keysInNamespace(namespace));
  }

  /** A kind watched late: its workloads (for the CSI API, every workload) are reconciled (§2.2). */
  onKindWatched(kind: WorkloadKindName | undefined): void {
    const keys = this.#deps.store.keys();
    const prefix = `${kind ?? ''}/`;
    this.triggerAll(kind === undefined ? keys : keys.filter((key) => key.startsWith(prefix)));
  }

  /**
   * A policy created, changed or deleted: the workloads it targeted before and targets now are
   * planned again (debounced, with no source change: only a difference found by the planner rolls,
   * and a deletion never does, ADR 0034).
   */
  onPolicyEvent(event: PolicyEvent): void {
    const { policies } = this.#deps;
    if (policies === undefined || !this.#writesWorkloads()) return;
    // The echo of a status write (kreload's own or another's): the binding is unchanged.
    if (event.kind === 'upserted' && event.previous !== undefined) {
      if (sameSpec(event.previous, event.view)) return;
    }
    const keys = new Set(policies.targetsOf(event.view));
    if (event.kind === 'upserted' && event.previous !== undefined) {
      for (const key of policies.targetsOf(event.previous)) keys.add(key);
    }
    for (const key of keys) {
      if (this.#deps.acceptsNamespace(event.view.namespace)) {
        this.#deps.queue.trigger(key, { debounced: true });
      }
    }
  }

  /**
   * Only the labels of a source changed: the workloads a policy selector binds it to before or
   * after are planned again (no source change: a new binding records a baseline, a lost one prunes
   * it). Without policies the labels are not kept and no such event comes.
   */
  #relabelled(event: SourceRelabelled): void {
    const { policies } = this.#deps;
    if (policies === undefined || !this.#writesWorkloads()) {
      this.#deps.onSkip('no_data_change');
      return;
    }
    const { ref } = event;
    const source = { kind: ref.type, name: ref.name };
    const keys = new Set([
      ...policies.workloadsBoundTo(ref.namespace, { ...source, labels: event.labels }),
      ...policies.workloadsBoundTo(ref.namespace, { ...source, labels: event.prevLabels }),
    ]);
    if (keys.size === 0) {
      this.#deps.onSkip('no_data_change');
      return;
    }
    for (const key of keys) {
      this.#deps.queue.trigger(key, { debounced: true, syncDelayMs: this.#syncDelay(key) });
    }
  }

  /** Immediate triggers: initial sync, leadership, resync, a namespace entering the selection. */
  triggerAll(keys: readonly WorkloadKey[]): void {
    if (!this.#writesWorkloads()) return;
    for (const key of keys) this.#deps.queue.trigger(key, { debounced: false });
  }

  #writesWorkloads(): boolean {
    return this.#deps.isLeading() && this.#deps.webhook === undefined;
  }

  #views(keys: readonly WorkloadKey[]): WorkloadView[] {
    return keys.flatMap((key) => {
      const view = this.#deps.store.get(key);
      return view ? [view] : [];
    });
  }

  /** Only the list part of §3.5 matters here; references are in index (a) already. */
  #listMatches(view: WorkloadView, type: SourceType, name: string): boolean {
    const decision = decide({
      workload: view,
      type,
      name,
      sourceAnnotations: {},
      keys: this.#deps.keys,
      autoReloadAll: this.#deps.autoReloadAll,
      reloadLists: this.#deps.reloadLists,
    });
    return decision.result === 'LIST';
  }

  /** A binding policy's `syncDelay` (ADR 0034: the oldest policy setting it wins). */
  #syncDelay(key: WorkloadKey): number | undefined {
    const { policies } = this.#deps;
    const view = policies === undefined ? undefined : this.#deps.store.get(key);
    return view === undefined ? undefined : policies?.bindingOf(view).syncDelayMs;
  }

  /** The index's workloads plus those an active policy binds to the source. */
  #withPolicyTargets(event: SourceChange, indexed: readonly WorkloadKey[]): readonly WorkloadKey[] {
    const { policies } = this.#deps;
    if (policies === undefined) return indexed;
    const bound = policies.workloadsBoundTo(event.ref.namespace, {
      kind: event.ref.type,
      name: event.ref.name,
      labels: event.labels,
    });
    if (bound.length === 0) return indexed;
    return [...new Set([...indexed, ...bound])];
  }

  #openFanout(change: SourceChange, workloads: readonly WorkloadKey[]): void {
    if (change.kind === 'annotations') return;
    if (change.kind === 'deleted' && !this.#deps.reloadOnDelete) return;
    const refs = workloads
      .map((key) => this.#deps.store.get(key)?.ref)
      .filter((ref): ref is WorkloadRef => ref !== undefined);
    this.#deps.onFanout({
      source: change.ref,
      uid: change.uid,
      hash: change.kind === 'deleted' ? DELETE_MARKER : change.hash,
      workloads: refs,
    });
  }
}
