/**
 * Scoped mode runs one list-watch per namespace (§9.1 item 1), but a cache or store expects one
 * complete list of its type: its first `replace` seeds it, later ones are diffed by UID. This sink
 * sits between them. It holds back the first lists until every namespace has delivered one, then
 * seeds the target with their union; a later relist of one namespace is merged with the others'
 * current items, so nothing outside that namespace looks deleted.
 */
import type { ViewSink } from '../watch/ports.ts';

export interface NamespaceMergeDeps<V> {
  readonly namespaces: readonly string[];
  readonly target: ViewSink<V>;
  /** Identity of an item within its namespace, e.g. the object name. */
  readonly idOf: (item: V) => string;
}

export class NamespaceMerge<V> {
  readonly #deps: NamespaceMergeDeps<V>;
  readonly #items = new Map<string, Map<string, V>>();
  #seeded = false;

  constructor(deps: NamespaceMergeDeps<V>) {
    this.#deps = deps;
  }

  /** The sink for the list-watch of `namespace`. */
  sinkFor(namespace: string): ViewSink<V> {
    return {
      replace: (items) => {
        this.#replace(namespace, items);
      },
      upsert: (item) => {
        this.#namespaceItems(namespace).set(this.#deps.idOf(item), item);
        if (this.#seeded) this.#deps.target.upsert(item);
      },
      remove: (item) => {
        this.#namespaceItems(namespace).delete(this.#deps.idOf(item));
        if (this.#seeded) this.#deps.target.remove(item);
      },
    };
  }

  #replace(namespace: string, items: readonly V[]): void {
    this.#items.set(namespace, new Map(items.map((item) => [this.#deps.idOf(item), item])));
    if (!this.#seeded && !this.#deps.namespaces.every((ns) => this.#items.has(ns))) return;
    this.#seeded = true;
    this.#deps.target.replace([...this.#items.values()].flatMap((byId) => [...byId.values()]));
  }

  #namespaceItems(namespace: string): Map<string, V> {
    let byId = this.#items.get(namespace);
    if (byId === undefined) {
      byId = new Map();
      this.#items.set(namespace, byId);
    }
    return byId;
  }
}
