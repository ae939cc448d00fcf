/**
 * The reconciler's read ports (reconcile/ports.ts) over the caches, the store and the mark store of
 * watch/. Kept apart from both so neither module depends on the other.
 */
import { parseSourceKey } from '../core/keys.ts';
import type {
  SourceKey,
  SourceType,
  SourceView,
  WorkloadKey,
  WorkloadView,
} from '../core/types.ts';
import type {
  MarkLedger,
  SourceLookup,
  WorkloadLookup,
  WorkloadMarks,
} from '../reconcile/ports.ts';
import type { Mark, MarkStore } from '../watch/marks.ts';
import type { SourceCaches, SourceEntry } from '../watch/source-cache.ts';
import type { WorkloadStore } from '../watch/workload-store.ts';
import { SYSTEM_TIMERS, type Timers } from '../time/timers.ts';

export interface CacheSourceLookupDeps {
  /** SecretProviderClasses are a cache like the others, fed by the §4.4 aggregator. */
  readonly caches: SourceCaches;
  /**
   * False while the type's list-watch of `namespace` (or its cluster-wide one) is forbidden or
   * absent, even if it once synced: scoped namespaces are healthy or not on their own (ADR 0021).
   */
  readonly isTypeHealthy: (type: SourceType, namespace: string) => boolean;
}

export class CacheSourceLookup implements SourceLookup {
  readonly #deps: CacheSourceLookupDeps;

  constructor(deps: CacheSourceLookupDeps) {
    this.#deps = deps;
  }

  get(namespace: string, type: SourceType, name: string): SourceView | undefined {
    return this.#entry(namespace, type, name)?.view;
  }

  namesInNamespace(namespace: string, type: SourceType): readonly string[] {
    return this.#deps.caches.namesInNamespace(namespace, type);
  }

  isHealthy(type: SourceType, namespace: string): boolean {
    return this.#deps.caches.isSynced(type) && this.#deps.isTypeHealthy(type, namespace);
  }

  firstObserved(namespace: string, key: SourceKey): number | undefined {
    return this.#entryByKey(namespace, key)?.firstObserved;
  }

  lastChange(namespace: string, key: SourceKey): number | undefined {
    return this.#entryByKey(namespace, key)?.lastChange;
  }

  #entryByKey(namespace: string, key: SourceKey): SourceEntry | undefined {
    const parsed = parseSourceKey(key);
    return parsed && this.#entry(namespace, parsed.type, parsed.name);
  }

  #entry(namespace: string, type: SourceType, name: string): SourceEntry | undefined {
    return this.#deps.caches.get(namespace, type, name);
  }
}

/**
 * When kreload last wrote each workload's state, as the start time of the reconcile whose reads
 * the write was based on. Every source change observed before that moment has been accounted for
 * (rolled, or absorbed into a baseline), so R7 must not count it again.
 */
export class WriteLedger {
  readonly #basis = new Map<WorkloadKey, number>();

  record(key: WorkloadKey, basisAt: number): void {
    this.#basis.set(key, Math.max(basisAt, this.#basis.get(key) ?? basisAt));
  }

  basis(key: WorkloadKey): number | undefined {
    return this.#basis.get(key);
  }

  forget(key: WorkloadKey): void {
    this.#basis.delete(key);
  }
}

export class StoreWorkloadLookup implements WorkloadLookup {
  readonly #store: WorkloadStore;
  readonly #writes: WriteLedger | undefined;
  readonly #timers: Timers;

  constructor(deps: {
    readonly store: WorkloadStore;
    readonly writes?: WriteLedger;
    readonly timers?: Timers;
  }) {
    this.#store = deps.store;
    this.#writes = deps.writes;
    this.#timers = deps.timers ?? SYSTEM_TIMERS;
  }

  get(key: WorkloadKey): WorkloadView | undefined {
    return this.#store.get(key)?.view;
  }

  /**
   * §5.4 relevantSince, moved forward to kreload's last write of the workload. Without that, a
   * GitOps tool stripping the applied hash after a roll would make the already-rolled change count
   * as "changed after tracking began" (R7) and roll again, where §5.6 item 6 wants a baseline
   * (see docs/adr/0014).
   */
  relevantSince(key: WorkloadKey): number | undefined {
    const since = this.#store.get(key)?.relevantSince;
    const basis = this.#writes?.basis(key);
    if (since === undefined || basis === undefined) return since;
    return Math.max(since, basis);
  }

  newerThan(
    key: WorkloadKey,
    resourceVersion: string,
    timeoutMs: number,
  ): Promise<WorkloadView | undefined> {
    const newer = (): WorkloadView | undefined | 'wait' => {
      const view = this.#store.get(key)?.view;
      if (view === undefined) return undefined;
      return view.resourceVersion === resourceVersion ? 'wait' : view;
    };
    const now = newer();
    if (now !== 'wait') return Promise.resolve(now);
    return new Promise((resolve) => {
      const finish = (view: WorkloadView | undefined): void => {
        stopListening();
        cancelTimeout();
        resolve(view);
      };
      const stopListening = this.#store.onUpdate(key, () => {
        const view = newer();
        if (view !== 'wait') finish(view);
      });
      const cancelTimeout = this.#timers.schedule(timeoutMs, () => {
        finish(undefined);
      });
    });
  }

  jobsOwnedBy(namespace: string, cronJobUid: string): readonly WorkloadView[] | undefined {
    if (!this.#store.isSynced('Job')) return undefined;
    return this.#store.keysInNamespace(namespace).flatMap((key) => {
      const view = this.#store.get(key)?.view;
      return view?.ref.kind === 'Job' && view.controller?.uid === cronJobUid ? [view] : [];
    });
  }
}

/**
 * The reconciler sees marks as `{creates, deletes}`; the store keeps them as one list. Consumption
 * goes by identity, so marks made while a reconcile ran survive it.
 */
export class StoreMarkLedger implements MarkLedger {
  readonly #marks: MarkStore;
  readonly #handedOut = new WeakMap<WorkloadMarks, readonly Mark[]>();

  constructor(deps: { readonly marks: MarkStore }) {
    this.#marks = deps.marks;
  }

  marksOf(key: WorkloadKey): WorkloadMarks {
    const held = this.#marks.marksOf(key);
    const marks: WorkloadMarks = {
      creates: held.flatMap((mark) =>
        mark.kind === 'create' ? [{ key: mark.sourceKey, uid: mark.uid }] : [],
      ),
      deletes: held.flatMap((mark) =>
        mark.kind === 'delete'
          ? [{ key: mark.sourceKey, uid: mark.uid, sourceAnnotations: mark.sourceAnnotations }]
          : [],
      ),
    };
    this.#handedOut.set(marks, held);
    return marks;
  }

  consume(key: WorkloadKey, marks: WorkloadMarks): void {
    const held = this.#handedOut.get(marks);
    if (held === undefined) return;
    // The ledger may be handed back a subset: consume the store marks it was built from.
    const keep = (mark: Mark): boolean =>
      mark.kind === 'create'
        ? marks.creates.some((c) => c.key === mark.sourceKey && c.uid === mark.uid)
        : marks.deletes.some((d) => d.key === mark.sourceKey && d.uid === mark.uid);
    this.#marks.consume(key, held.filter(keep));
  }
}
