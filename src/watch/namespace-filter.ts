import type { ViewSink } from './ports.ts';

/**
 * §11: `global` watches every namespace and applies `--namespaces-to-ignore` and
 * `--namespace-selector`; `scoped` (`--namespaces`, or `KUBERNETES_NAMESPACE`) watches only the
 * listed namespaces and ignores both filters.
 */
export type NamespaceMode = 'global' | 'scoped';

export interface NamespaceScope {
  readonly mode: NamespaceMode;
  /** `--namespaces-to-ignore`: exact names. */
  readonly ignored: readonly string[];
  /** `--namespace-selector` is set (a Namespace watch feeds the selected set). */
  readonly selectorEnabled: boolean;
}

/** `--namespaces-to-ignore` applies in global mode only (server-side there too, §9.1 item 5). */
export function isNamespaceIgnored(scope: NamespaceScope, namespace: string): boolean {
  return scope.mode === 'global' && scope.ignored.includes(namespace);
}

/** Whether the selected set restricts anything in this scope. */
export function usesNamespaceSelector(scope: NamespaceScope): boolean {
  return scope.mode === 'global' && scope.selectorEnabled;
}

export interface NamespaceDiff {
  readonly entered: readonly string[];
  readonly left: readonly string[];
}

export function diffNamespaces(
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
): NamespaceDiff {
  return {
    entered: [...after].filter((name) => !before.has(name)),
    left: [...before].filter((name) => !after.has(name)),
  };
}

/**
 * `entered`: reconcile the namespace's workloads at once (§5.2). `left`: drop its pending entries
 * and write nothing more there (§11 item 1).
 */
export interface NamespaceEvent {
  readonly kind: 'entered' | 'left';
  readonly namespace: string;
}

export interface NamespaceFilterDeps {
  readonly scope: NamespaceScope;
  /** Called after the initial list only, once the set reflects the event. */
  readonly notify: (event: NamespaceEvent) => void;
}

/**
 * The set of namespaces selected by `--namespace-selector` (§9.2 item 6), fed by a Namespace
 * list-watch with that label selector, and the namespace checks that go with it.
 */
export class NamespaceFilter {
  readonly #deps: NamespaceFilterDeps;
  readonly #selected = new Set<string>();
  #synced = false;

  constructor(deps: NamespaceFilterDeps) {
    this.#deps = deps;
  }

  /** Ready for the initial reconcile: the Namespace list arrived, or no selector is in use. */
  get isSynced(): boolean {
    return this.#synced || !usesNamespaceSelector(this.#deps.scope);
  }

  selected(): readonly string[] {
    return [...this.#selected];
  }

  isSelected(namespace: string): boolean {
    return !usesNamespaceSelector(this.#deps.scope) || this.#selected.has(namespace);
  }

  /** kreload acts on this namespace: not ignored, and selected (both apply, §11). */
  accepts(namespace: string): boolean {
    return !isNamespaceIgnored(this.#deps.scope, namespace) && this.isSelected(namespace);
  }

  /** A full list; the first one seeds without events, later ones are diffed. */
  replace(names: readonly string[]): void {
    const next = new Set(names);
    const { entered, left } = diffNamespaces(this.#selected, next);
    for (const name of left) this.remove(name);
    for (const name of entered) this.upsert(name);
    this.#synced = true;
  }

  upsert(name: string): void {
    if (this.#selected.has(name)) return;
    this.#selected.add(name);
    this.#emit({ kind: 'entered', namespace: name });
  }

  /** Deleted, or its labels stopped matching the selector (the watch reports that as DELETED). */
  remove(name: string): void {
    if (!this.#selected.delete(name)) return;
    this.#emit({ kind: 'left', namespace: name });
  }

  #emit(event: NamespaceEvent): void {
    if (this.#synced) this.#deps.notify(event);
  }
}

/** The filter as the target of the Namespace list-watch (views are namespace names). */
export function namespaceSink(filter: NamespaceFilter): ViewSink<string> {
  return {
    replace: (names) => {
      filter.replace(names);
    },
    upsert: (name) => {
      filter.upsert(name);
    },
    remove: (name) => {
      filter.remove(name);
    },
  };
}
