/** In-memory SourceLookup: source views per namespace, per-type health and the §5.4 timestamps. */
import { sourceKeyOf } from '../core/keys.ts';
import type { SourceKey, SourceType, SourceView } from '../core/types.ts';
import type { SourceLookup } from '../reconcile/ports.ts';

function id(namespace: string, key: SourceKey): string {
  return `${namespace}/${key}`;
}

export class InMemorySources implements SourceLookup {
  readonly #views = new Map<string, SourceView>();
  readonly #unhealthy = new Set<SourceType>();
  /** `namespace/type` pairs whose watch is unhealthy while the type is healthy elsewhere. */
  readonly #unhealthyIn = new Set<string>();
  readonly #firstObserved = new Map<string, number>();
  readonly #lastChange = new Map<string, number>();

  put(view: SourceView, times: { firstObserved?: number; lastChange?: number } = {}): void {
    const key = id(view.ref.namespace, sourceKeyOf(view.ref));
    this.#views.set(key, view);
    if (times.firstObserved !== undefined) this.#firstObserved.set(key, times.firstObserved);
    if (times.lastChange !== undefined) this.#lastChange.set(key, times.lastChange);
  }

  remove(namespace: string, key: SourceKey): void {
    this.#views.delete(id(namespace, key));
  }

  setHealthy(type: SourceType, healthy: boolean): void {
    if (healthy) this.#unhealthy.delete(type);
    else this.#unhealthy.add(type);
  }

  setHealthyIn(namespace: string, type: SourceType, healthy: boolean): void {
    if (healthy) this.#unhealthyIn.delete(`${namespace}/${type}`);
    else this.#unhealthyIn.add(`${namespace}/${type}`);
  }

  get(namespace: string, type: SourceType, name: string): SourceView | undefined {
    return [...this.#views.values()].find(
      (v) => v.ref.namespace === namespace && v.ref.type === type && v.ref.name === name,
    );
  }

  namesInNamespace(namespace: string, type: SourceType): readonly string[] {
    return [...this.#views.values()]
      .filter((v) => v.ref.namespace === namespace && v.ref.type === type)
      .map((v) => v.ref.name);
  }

  isHealthy(type: SourceType, namespace: string): boolean {
    return !this.#unhealthy.has(type) && !this.#unhealthyIn.has(`${namespace}/${type}`);
  }

  firstObserved(namespace: string, key: SourceKey): number | undefined {
    return this.#firstObserved.get(id(namespace, key));
  }

  lastChange(namespace: string, key: SourceKey): number | undefined {
    return this.#lastChange.get(id(namespace, key));
  }
}
