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

/** Where the desired state of SecretProviderClasses comes from (§4.4), when CSI is enabled. */
export interface ProviderClassLookup {
  get(namespace: string, name: string): SourceEntry | undefined;
  namesInNamespace(namespace: string): readonly string[];
  readonly isSynced: boolean;
}

export interface CacheSourceLookupDeps {
  readonly caches: SourceCaches;
  readonly providerClasses?: ProviderClassLookup | undefined;
  /** False while a type's list-watch is forbidden or absent, even if it once synced. */
  readonly isTypeHealthy: (type: SourceType) => boolean;
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
    if (type === 'SECRETPROVIDERCLASS') {
      return this.#deps.providerClasses?.namesInNamespace(namespace) ?? [];
    }
    return this.#deps.caches.namesInNamespace(namespace, type);
  }

  isHealthy(type: SourceType): boolean {
    const synced =
      type === 'SECRETPROVIDERCLASS'
        ? (this.#deps.providerClasses?.isSynced ?? false)
        : this.#deps.caches.isSynced(type);
    return synced && this.#deps.isTypeHealthy(type);
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
    if (type === 'SECRETPROVIDERCLASS') return this.#deps.providerClasses?.get(namespace, name);
    return this.#deps.caches.get(namespace, type, name);
  }
}

export class StoreWorkloadLookup implements WorkloadLookup {
  readonly #store: WorkloadStore;

  constructor(deps: { readonly store: WorkloadStore }) {
    this.#store = deps.store;
  }

  get(key: WorkloadKey): WorkloadView | undefined {
    return this.#store.get(key)?.view;
  }

  relevantSince(key: WorkloadKey): number | undefined {
    return this.#store.get(key)?.relevantSince;
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
