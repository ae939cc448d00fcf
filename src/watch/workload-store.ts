import { hasReloadList } from '../core/decide.ts';
import { sourceKey, workloadKey } from '../core/keys.ts';
import { referencedSources } from '../core/references.ts';
import type {
  AnnotationKeys,
  Annotations,
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadKindName,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type { WorkloadLookup } from '../reconcile/ports.ts';
import { MembershipVersions } from './membership-versions.ts';
import { plainEqual } from './plain-equal.ts';
import type { Clock, Timers } from '../time/timers.ts';
import type { ViewSink } from './ports.ts';
import { SOURCE_TYPES } from '../core/source-types.ts';
import { trackedKeys } from '../core/annotations.ts';

/** A stored workload and the §5.4 fact about it. */
export interface WorkloadEntry {
  readonly view: WorkloadView;
  /** When its current opt-in annotations and references were first seen (§5.4 `relevantSince`). */
  readonly relevantSince: number;
}

/**
 * After the kind's initial sync: `added` (a new object, watch or relist), `changed` (a relevant field
 * changed, §9.2 item 4), `removed` (deleted, or missing from a relist).
 */
export type WorkloadStoreEvent =
  | { readonly kind: 'added'; readonly key: WorkloadKey; readonly view: WorkloadView }
  | {
      readonly kind: 'changed';
      readonly key: WorkloadKey;
      readonly view: WorkloadView;
      readonly prev: WorkloadView;
    }
  | { readonly kind: 'removed'; readonly key: WorkloadKey; readonly view: WorkloadView };

export interface WorkloadStoreDeps {
  /** Wall time of the §5.4 timestamps. */
  readonly clock: Pick<Clock, 'now'>;
  /** The timeout of `newerThan`. */
  readonly timers: Timers;
  readonly keys: AnnotationKeys;
  /** Called synchronously, after the store and index reflect the event. */
  readonly notify: (event: WorkloadStoreEvent) => void;
  /**
   * The start of the reconcile whose write last recorded kreload's state on the workload (the work
   * runner's WriteLedger); undefined when this process has not written it.
   */
  readonly writeBasis: (key: WorkloadKey) => number | undefined;
}

/** View fields that change without anything reconciliation reads changing. */
const IRRELEVANT_FIELDS: ReadonlySet<string> = new Set([
  'resourceVersion',
  'generation',
  'rolloutStatus',
]);

/**
 * §9.2 item 4: an update re-triggers reconciliation only when the projection changed.
 * resourceVersion and generation move with any spec change, the rollout status with every step of
 * a rollout: neither is a reason to reconcile.
 */
export function isRelevantChange(prev: WorkloadView, next: WorkloadView): boolean {
  // Field by field in place: this runs on every watch event of a workload (status updates too).
  let unmatched = 0;
  for (const field of Object.keys(prev) as (keyof WorkloadView)[]) {
    if (IRRELEVANT_FIELDS.has(field)) continue;
    if (!Object.hasOwn(next, field) || !plainEqual(prev[field], next[field])) return true;
    unmatched += 1;
  }
  for (const field of Object.keys(next)) {
    if (!IRRELEVANT_FIELDS.has(field)) unmatched -= 1;
  }
  return unmatched !== 0;
}

function sameValues(a: Annotations, b: Annotations, keys: readonly string[]): boolean {
  return keys.every((key) => a[key] === b[key]);
}

function sameSourceSet(a: readonly SourceKey[], b: readonly SourceKey[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((key) => set.has(key));
}

/** The W and PT annotation keys whose values move `relevantSince` (trackingChanged). */
interface TrackedKeys {
  readonly onWorkload: readonly string[];
  readonly onTemplate: readonly string[];
}

function trackedKeysOf(keys: AnnotationKeys): TrackedKeys {
  return { onWorkload: trackedKeys(keys, 'W'), onTemplate: trackedKeys(keys, 'PT') };
}

/**
 * Whether W's opt-in annotations (W and PT) or references changed: what moves `relevantSince`.
 * kreload's own writes (`STAKATER_*` values, `kreload.io/*`, `last-reloaded-from`, paused-at) do not.
 */
export function trackingChanged(
  prev: WorkloadView,
  next: WorkloadView,
  keys: AnnotationKeys,
): boolean {
  return referencesOrTrackedChanged(
    { view: prev, sources: referencedSources(prev.podSpec) },
    { view: next, sources: referencedSources(next.podSpec) },
    trackedKeysOf(keys),
  );
}

/** A view and its references (referencedSources), which the store has at hand. */
interface Referencing {
  readonly view: WorkloadView;
  readonly sources: readonly SourceKey[];
}

function referencesOrTrackedChanged(
  prev: Referencing,
  next: Referencing,
  tracked: TrackedKeys,
): boolean {
  return !(
    sameValues(prev.view.annotations, next.view.annotations, tracked.onWorkload) &&
    sameValues(prev.view.templateAnnotations, next.view.templateAnnotations, tracked.onTemplate) &&
    sameSourceSet(prev.sources, next.sources)
  );
}

interface IndexedAs {
  readonly namespace: string;
  readonly sources: readonly SourceKey[];
  readonly listTypes: readonly SourceType[];
}

/** §9.2 item 5, for one namespace. */
interface NamespaceIndex {
  readonly workloads: Set<WorkloadKey>;
  /** (a) source key → workloads that reference it. */
  readonly bySource: Map<SourceKey, Set<WorkloadKey>>;
  /** (b) per TYPE, the workloads that carry a non-empty reload list (W or PT). */
  readonly withList: Map<SourceType, Set<WorkloadKey>>;
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set === undefined) map.set(key, new Set([value]));
  else set.add(value);
}

function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set === undefined) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

/**
 * Every watched workload as a view (§9.2 item 3), with the per-namespace index that fans a source
 * event out without an API call (§9.2 item 5). The reconciler reads it as its WorkloadLookup.
 */
export class WorkloadStore implements WorkloadLookup {
  readonly #deps: WorkloadStoreDeps;
  readonly #entries = new Map<WorkloadKey, WorkloadEntry>();
  readonly #indexed = new Map<WorkloadKey, IndexedAs>();
  readonly #namespaces = new Map<string, NamespaceIndex>();
  readonly #membership = new MembershipVersions();
  readonly #syncedKinds = new Set<WorkloadKindName>();
  readonly #listeners = new Map<WorkloadKey, Set<() => void>>();
  #tracked: TrackedKeys | undefined;

  constructor(deps: WorkloadStoreDeps) {
    this.#deps = deps;
  }

  get size(): number {
    return this.#entries.size;
  }

  isSynced(kind: WorkloadKindName): boolean {
    return this.#syncedKinds.has(kind);
  }

  /** The stored view and its §5.4 fact. */
  entry(key: WorkloadKey): WorkloadEntry | undefined {
    return this.#entries.get(key);
  }

  get(key: WorkloadKey): WorkloadView | undefined {
    return this.#entries.get(key)?.view;
  }

  /**
   * §5.4 relevantSince, moved forward to kreload's last write of the workload. Without that, a
   * GitOps tool stripping the applied hash after a roll would make the already-rolled change count
   * as "changed after tracking began" (R7) and roll again, where §5.6 item 6 wants a baseline
   * (see docs/adr/0014).
   */
  relevantSince(key: WorkloadKey): number | undefined {
    const since = this.#entries.get(key)?.relevantSince;
    const basis = this.#deps.writeBasis(key);
    if (since === undefined || basis === undefined) return since;
    return Math.max(since, basis);
  }

  /**
   * §5.4 relevantSince moves to now without a change of the workload itself: a ReloadPolicy began
   * to bind it to a source, which counts as adding the opt-in annotation would (a baseline, no roll).
   */
  markRelevantNow(key: WorkloadKey): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.set(key, { view: entry.view, relevantSince: this.#deps.clock.now() });
    }
  }

  /** Waits on `onUpdate`, so the watch's next store or removal of `key` settles it (docs/adr/0015). */
  newerThan(
    key: WorkloadKey,
    resourceVersion: string,
    timeoutMs: number,
  ): Promise<WorkloadView | undefined> {
    const newer = (): WorkloadView | undefined | 'wait' => {
      const view = this.get(key);
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
      const stopListening = this.onUpdate(key, () => {
        const view = newer();
        if (view !== 'wait') finish(view);
      });
      const cancelTimeout = this.#deps.timers.schedule(timeoutMs, () => {
        finish(undefined);
      });
    });
  }

  controlledBy(
    kind: WorkloadKindName,
    namespace: string,
    controllerUid: string,
  ): readonly WorkloadView[] | undefined {
    if (!this.isSynced(kind)) return undefined;
    return this.keysInNamespace(namespace).flatMap((key) => {
      const view = this.get(key);
      return view?.ref.kind === kind && view.controller?.uid === controllerUid ? [view] : [];
    });
  }

  keys(): readonly WorkloadKey[] {
    return [...this.#entries.keys()];
  }

  /** Changes whenever a workload of `namespace` appears, goes or is relabelled. */
  membershipVersion(namespace: string): number {
    return this.#membership.of(namespace);
  }

  keysInNamespace(namespace: string): readonly WorkloadKey[] {
    return [...(this.#namespaces.get(namespace)?.workloads ?? [])];
  }

  /** Index (a) alone: the workloads whose pod spec references the source. */
  referencing(namespace: string, source: SourceKey): readonly WorkloadKey[] {
    return [...(this.#namespaces.get(namespace)?.bySource.get(source) ?? [])];
  }

  /**
   * The workloads a change of source `type`/`name` in `namespace` may concern:
   * (a)[K] ∪ {w in (b)[type] whose reload list matches}, where `listMatches` tells the latter
   * (it sees only workloads that carry a reload list for `type`).
   */
  fanOut(
    namespace: string,
    type: SourceType,
    name: string,
    listMatches: (view: WorkloadView) => boolean,
  ): readonly WorkloadKey[] {
    const index = this.#namespaces.get(namespace);
    if (index === undefined) return [];
    const keys = new Set(index.bySource.get(sourceKey(type, name)));
    for (const key of index.withList.get(type) ?? []) {
      const entry = this.#entries.get(key);
      if (!keys.has(key) && entry !== undefined && listMatches(entry.view)) keys.add(key);
    }
    return [...keys];
  }

  /**
   * A full list of one kind. The first seeds it (relevantSince = now, no events); later ones are
   * diffed by UID.
   */
  replace(kind: WorkloadKindName, views: readonly WorkloadView[]): void {
    const seeding = !this.#syncedKinds.has(kind);
    const listed = new Map<WorkloadKey, string>();
    for (const view of views) listed.set(workloadKey(view.ref), view.uid);
    for (const [key, entry] of this.#entries) {
      if (entry.view.ref.kind === kind && listed.get(key) !== entry.view.uid) {
        this.#delete(key, entry, !seeding);
      }
    }
    for (const view of views) this.#upsert(view, !seeding);
    this.#syncedKinds.add(kind);
  }

  /**
   * The first list of one kind in a namespace that joins after the kind's initial sync (ADR 0021):
   * stored without events, as the initial list is (relevantSince = now); the app then reconciles
   * the namespace's workloads.
   */
  seedNamespace(kind: WorkloadKindName, namespace: string, views: readonly WorkloadView[]): void {
    if (!this.#syncedKinds.has(kind)) {
      this.replace(kind, views);
      return;
    }
    // The namespace never listed before, so nothing of it is stored that the list could omit.
    for (const view of views) {
      if (view.ref.namespace === namespace) this.#upsert(view, false);
    }
  }

  /**
   * Calls `listener` after each later store or removal of `key`, until the returned function is
   * called.
   */
  onUpdate(key: WorkloadKey, listener: () => void): () => void {
    const set = this.#listeners.get(key) ?? new Set();
    const own = (): void => {
      listener();
    };
    set.add(own);
    this.#listeners.set(key, set);
    return () => {
      set.delete(own);
      if (set.size === 0 && this.#listeners.get(key) === set) this.#listeners.delete(key);
    };
  }

  upsert(view: WorkloadView): void {
    this.#upsert(view, this.#syncedKinds.has(view.ref.kind));
  }

  remove(ref: WorkloadRef): void {
    const key = workloadKey(ref);
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.#delete(key, entry, this.#syncedKinds.has(ref.kind));
  }

  #upsert(view: WorkloadView, announce: boolean): void {
    const key = workloadKey(view.ref);
    const known = this.#entries.get(key);
    if (known !== undefined && known.view.uid !== view.uid) {
      // Same name, new object: the old one is gone even though its DELETED was not seen.
      this.#delete(key, known, announce);
    }
    const prev = known?.view.uid === view.uid ? known : undefined;
    if (prev === undefined) {
      this.#store(key, { view, relevantSince: this.#deps.clock.now() });
      if (announce) this.#deps.notify({ kind: 'added', key, view });
      return;
    }
    if (!isRelevantChange(prev.view, view)) {
      // A status update or a bare resourceVersion bump, several per rollout: annotations, labels and
      // references are those already indexed, so only the view is replaced.
      this.#entries.set(key, { view, relevantSince: prev.relevantSince });
      this.#updated(key);
      return;
    }
    const sources = referencedSources(view.podSpec);
    const relevantSince = this.#relevantSinceAfter(key, prev, { view, sources });
    this.#store(key, { view, relevantSince }, sources);
    if (announce) this.#deps.notify({ kind: 'changed', key, view, prev: prev.view });
  }

  /** §5.4 after a relevant change: now if tracking changed (trackingChanged), else as it was. */
  #relevantSinceAfter(key: WorkloadKey, prev: WorkloadEntry, next: Referencing): number {
    // The index holds the references of the view stored last (a status update keeps its podSpec).
    const sources = this.#indexed.get(key)?.sources ?? referencedSources(prev.view.podSpec);
    this.#tracked ??= trackedKeysOf(this.#deps.keys);
    return referencesOrTrackedChanged({ view: prev.view, sources }, next, this.#tracked)
      ? this.#deps.clock.now()
      : prev.relevantSince;
  }

  /** `sources` are the view's references (referencedSources), when the caller has them. */
  #store(
    key: WorkloadKey,
    entry: WorkloadEntry,
    sources: readonly SourceKey[] = referencedSources(entry.view.podSpec),
  ): void {
    const known = this.#entries.get(key);
    if (known === undefined || !plainEqual(known.view.labels, entry.view.labels)) {
      this.#membership.bump(entry.view.ref.namespace);
    }
    this.#entries.set(key, entry);
    this.#unindex(key);
    const { view } = entry;
    const indexed: IndexedAs = {
      namespace: view.ref.namespace,
      sources,
      listTypes: SOURCE_TYPES.filter((type) => hasReloadList(view, type, this.#deps.keys)),
    };
    const index = this.#namespaceIndex(indexed.namespace);
    index.workloads.add(key);
    for (const source of indexed.sources) addTo(index.bySource, source, key);
    for (const type of indexed.listTypes) addTo(index.withList, type, key);
    this.#indexed.set(key, indexed);
    this.#updated(key);
  }

  #delete(key: WorkloadKey, entry: WorkloadEntry, announce: boolean): void {
    this.#entries.delete(key);
    this.#membership.bump(entry.view.ref.namespace);
    this.#unindex(key);
    this.#updated(key);
    if (announce) this.#deps.notify({ kind: 'removed', key, view: entry.view });
  }

  #updated(key: WorkloadKey): void {
    for (const listener of [...(this.#listeners.get(key) ?? [])]) listener();
  }

  #unindex(key: WorkloadKey): void {
    const indexed = this.#indexed.get(key);
    if (indexed === undefined) return;
    this.#indexed.delete(key);
    const index = this.#namespaces.get(indexed.namespace);
    if (index === undefined) return;
    index.workloads.delete(key);
    for (const source of indexed.sources) removeFrom(index.bySource, source, key);
    for (const type of indexed.listTypes) removeFrom(index.withList, type, key);
    if (index.workloads.size === 0) this.#namespaces.delete(indexed.namespace);
  }

  #namespaceIndex(namespace: string): NamespaceIndex {
    let index = this.#namespaces.get(namespace);
    if (index === undefined) {
      index = { workloads: new Set(), bySource: new Map(), withList: new Map() };
      this.#namespaces.set(namespace, index);
    }
    return index;
  }
}

/** The store as the target of the list-watch of one workload kind. */
export function workloadSink(store: WorkloadStore, kind: WorkloadKindName): ViewSink<WorkloadView> {
  return {
    replace: (views) => {
      store.replace(kind, views);
    },
    upsert: (view) => {
      store.upsert(view);
    },
    remove: (view) => {
      store.remove(view.ref);
    },
    seedNamespace: (namespace, views) => {
      store.seedNamespace(kind, namespace, views);
    },
  };
}
