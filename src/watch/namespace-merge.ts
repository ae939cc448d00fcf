/**
 * Scoped mode runs one list-watch per namespace (§9.1 item 1), but a cache or store expects one
 * complete list of its type: its first `replace` seeds it, later ones are diffed by UID. This sink
 * sits between them. It holds back the first lists until every namespace has either delivered one
 * or is known to be unavailable (forbidden or absent), then seeds the target with their union; a
 * later relist of one namespace is merged with the others' current items, so nothing outside that
 * namespace looks deleted.
 *
 * Each namespace stands on its own (ADR 0021): a forbidden namespace never holds back the others.
 * When it becomes readable later, its first list is that namespace's initial list: the target
 * stores it without creations (`seedNamespace`), and `onNamespaceJoined` lets the app reconcile the
 * namespace's workloads, as a namespace entering a `--namespace-selector` would be.
 */
import type { ViewSink } from './ports.ts';

export interface NamespaceMergeDeps<V> {
  readonly namespaces: readonly string[];
  readonly target: ViewSink<V>;
  /** Identity of an item within its namespace, e.g. the object name. */
  readonly idOf: (item: V) => string;
  /**
   * A namespace delivered its first list after it had been unavailable, or after the target had
   * been seeded without it: its workloads were reconciled without it and need another reconcile.
   */
  readonly onNamespaceJoined?: (namespace: string) => void;
}

/** The sink of one namespace's list-watch. */
export interface NamespaceSink<V> extends ViewSink<V> {
  /** The list-watch cannot list this namespace (403 or 404): do not wait for its first list. */
  unavailable(): void;
}

export class NamespaceMerge<V> {
  readonly #deps: NamespaceMergeDeps<V>;
  /** Current items of every namespace that has delivered a list. */
  readonly #items = new Map<string, Map<string, V>>();
  readonly #unavailable = new Set<string>();
  #seeded = false;

  constructor(deps: NamespaceMergeDeps<V>) {
    this.#deps = deps;
  }

  /** The sink for the list-watch of `namespace`. */
  sinkFor(namespace: string): NamespaceSink<V> {
    return {
      replace: (items) => {
        this.#replace(namespace, items);
      },
      upsert: (item) => {
        this.#items.get(namespace)?.set(this.#deps.idOf(item), item);
        if (this.#seeded) this.#deps.target.upsert(item);
      },
      remove: (item) => {
        this.#items.get(namespace)?.delete(this.#deps.idOf(item));
        if (this.#seeded) this.#deps.target.remove(item);
      },
      unavailable: () => {
        if (this.#items.has(namespace)) return;
        this.#unavailable.add(namespace);
        this.#seedIfSettled();
      },
    };
  }

  #replace(namespace: string, items: readonly V[]): void {
    const firstList = !this.#items.has(namespace);
    const late = firstList && (this.#seeded || this.#unavailable.has(namespace));
    const joining = this.#seeded && firstList;
    this.#items.set(namespace, new Map(items.map((item) => [this.#deps.idOf(item), item])));
    this.#unavailable.delete(namespace);
    const { target } = this.#deps;
    if (!this.#seeded) this.#seedIfSettled();
    else if (joining && target.seedNamespace !== undefined) target.seedNamespace(namespace, items);
    else target.replace(this.#union());
    if (late) this.#deps.onNamespaceJoined?.(namespace);
  }

  /**
   * Seeds once every namespace has listed or is unavailable, and at least one has listed: while
   * none can be listed the target stays unsynced, as it would behind a single forbidden watch.
   */
  #seedIfSettled(): void {
    if (this.#seeded || this.#items.size === 0) return;
    const settled = (ns: string): boolean => this.#items.has(ns) || this.#unavailable.has(ns);
    if (!this.#deps.namespaces.every(settled)) return;
    this.#seeded = true;
    this.#deps.target.replace(this.#union());
  }

  #union(): V[] {
    return [...this.#items.values()].flatMap((byId) => [...byId.values()]);
  }
}
