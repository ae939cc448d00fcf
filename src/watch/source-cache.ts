import { MembershipVersions } from './membership-versions.ts';
import { parseSourceKey } from '../core/keys.ts';
import type {
  Annotations,
  Labels,
  SourceKey,
  SourceRef,
  SourceType,
  SourceView,
} from '../core/types.ts';
import type { SourceLookup } from '../reconcile/ports.ts';
import type { Clock } from '../time/timers.ts';
import type { ViewSink } from './ports.ts';

/** A cached source and the §5.4 facts about it. */
export interface SourceEntry {
  readonly view: SourceView;
  /** When this object (this UID) was first seen; the time of the initial list for what it held. */
  readonly firstObserved: number;
  /** When its hash last changed for the same UID; undefined while it never did (creation is none). */
  readonly lastChange: number | undefined;
}

/**
 * - `created`: a UID not in the cache appeared after the initial sync (watch ADDED or relist);
 * - `updated`: the hash changed for the same UID (the ignore/match values may have changed too);
 * - `annotations`: only the `ignore`/`match` values changed;
 * - `deleted`: a cached object disappeared after the initial sync (watch DELETED, tombstone, relist).
 */
export type SourceChangeKind = 'created' | 'updated' | 'annotations' | 'deleted';

export interface SourceChange {
  readonly kind: SourceChangeKind;
  readonly ref: SourceRef;
  readonly uid: string;
  /** The new hash; for `deleted`, the last known one. */
  readonly hash: string;
  readonly observedAt: number;
  /** The `ignore`/`match` values now; for `deleted`, the last known ones (for the delete mark). */
  readonly annotations: Annotations;
  /** The values before; `{}` for `created`. */
  readonly prevAnnotations: Annotations;
  /** The labels now (last known for `deleted`), when kept (`--enable-reload-policies`). */
  readonly labels?: Labels | undefined;
}

/** An update that changed neither hash nor ignore/match: counted as `no_data_change`, nothing else. */
export interface SourceUnchanged {
  readonly kind: 'unchanged';
  readonly ref: SourceRef;
  readonly uid: string;
  readonly observedAt: number;
}

/**
 * Only the labels changed (they are kept with `--enable-reload-policies`): a policy selector may
 * now select the source, or no longer. Neither a content change nor a mark (docs/reload-policy.md).
 */
export interface SourceRelabelled {
  readonly kind: 'labels';
  readonly ref: SourceRef;
  readonly uid: string;
  readonly observedAt: number;
  readonly labels: Labels;
  readonly prevLabels: Labels;
}

export type SourceCacheEvent = SourceChange | SourceUnchanged | SourceRelabelled;

export interface SourceCacheDeps {
  readonly type: SourceType;
  /** Wall time of the §5.4 timestamps. */
  readonly clock: Pick<Clock, 'now'>;
  /** Called synchronously, after the cache reflects the event. Never called before the initial sync. */
  readonly notify: (event: SourceCacheEvent) => void;
}

/** Two label sets are the same; an unkept set (undefined) equals only another unkept one. */
export function sameLabels(a: Labels | undefined, b: Labels | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sameAnnotations(a, b);
}

export function sameAnnotations(a: Annotations, b: Annotations): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/**
 * The cached objects of one namespace. `namespace` is the one copy of its name that every stored
 * view's ref points to: each decoded object brings its own copy, 40 bytes per cached source.
 */
interface NamespaceEntries {
  readonly namespace: string;
  readonly names: Map<string, SourceEntry>;
}

/**
 * The objects of one source type (§9.2 item 1), by namespace and name. The first `replace` (the
 * initial list) only seeds it; after that, relists are diffed by UID and every difference is an event.
 */
export class SourceCache implements ViewSink<SourceView> {
  readonly #deps: SourceCacheDeps;
  readonly #byNamespace = new Map<string, NamespaceEntries>();
  readonly #membership = new MembershipVersions();
  #synced = false;

  constructor(deps: SourceCacheDeps) {
    this.#deps = deps;
  }

  get type(): SourceType {
    return this.#deps.type;
  }

  /** The initial list has been stored. */
  get isSynced(): boolean {
    return this.#synced;
  }

  get(namespace: string, name: string): SourceEntry | undefined {
    return this.#byNamespace.get(namespace)?.names.get(name);
  }

  /** Changes whenever an object of `namespace` appears, goes or is relabelled. */
  membershipVersion(namespace: string): number {
    return this.#membership.of(namespace);
  }

  namesInNamespace(namespace: string): readonly string[] {
    return [...(this.#byNamespace.get(namespace)?.names.keys() ?? [])];
  }

  /** Number of cached objects. */
  get size(): number {
    let size = 0;
    for (const { names } of this.#byNamespace.values()) size += names.size;
    return size;
  }

  /**
   * A full list. The first one seeds: every object counts as first
   * seen now and nothing is emitted (§5.2: the initial list is never creations or deletions). Later
   * ones are diffed by UID (§9.1 item 4).
   */
  replace(views: readonly SourceView[]): void {
    if (!this.#synced) {
      this.#seed(views);
      return;
    }
    const listed = new Map<string, string>();
    for (const view of views) listed.set(refId(view.ref), view.uid);
    for (const [namespace, { names }] of this.#byNamespace) {
      for (const [name, entry] of names) {
        if (listed.get(refId(entry.view.ref)) !== entry.view.uid) this.removeNamed(namespace, name);
      }
    }
    for (const view of views) this.upsert(view);
  }

  upsert(view: SourceView): void {
    const { namespace, name } = view.ref;
    const known = this.get(namespace, name);
    if (known !== undefined && known.view.uid !== view.uid) {
      // Same name, new object: the old one is gone even though its DELETED was not seen.
      this.removeNamed(namespace, name);
      this.#create(view);
      return;
    }
    if (known === undefined) {
      this.#create(view);
      return;
    }
    this.#update(known, view);
  }

  /** A list-watch's delete notification: the cache is the sink of its type's watches. */
  remove(view: SourceView): void {
    this.removeNamed(view.ref.namespace, view.ref.name);
  }

  removeNamed(namespace: string, name: string): void {
    const names = this.#byNamespace.get(namespace)?.names;
    const entry = names?.get(name);
    if (names === undefined || entry === undefined) return;
    names.delete(name);
    if (names.size === 0) this.#byNamespace.delete(namespace);
    this.#membership.bump(namespace);
    const { view } = entry;
    this.#emit({
      kind: 'deleted',
      ref: view.ref,
      uid: view.uid,
      hash: view.hash,
      observedAt: this.#deps.clock.now(),
      annotations: view.annotations,
      prevAnnotations: view.annotations,
      ...(view.labels === undefined ? {} : { labels: view.labels }),
    });
  }

  /**
   * The first list of a namespace that joins after the initial sync (ADR 0021): like the initial
   * list, its objects count as first seen now and nothing is emitted, so a namespace that becomes
   * readable later does not look like a burst of creations (R8).
   */
  seedNamespace(namespace: string, views: readonly SourceView[]): void {
    if (!this.#synced) {
      this.#seed(views);
      return;
    }
    this.#byNamespace.delete(namespace);
    this.#membership.bump(namespace);
    const now = this.#deps.clock.now();
    for (const view of views) {
      if (view.ref.namespace === namespace) {
        this.#store({ view, firstObserved: now, lastChange: undefined });
      }
    }
  }

  #seed(views: readonly SourceView[]): void {
    this.#byNamespace.clear();
    this.#membership.bumpAll();
    const now = this.#deps.clock.now();
    for (const view of views) this.#store({ view, firstObserved: now, lastChange: undefined });
    this.#synced = true;
  }

  #create(view: SourceView): void {
    const observedAt = this.#deps.clock.now();
    this.#store({ view, firstObserved: observedAt, lastChange: undefined });
    this.#emit({
      kind: 'created',
      ref: view.ref,
      uid: view.uid,
      hash: view.hash,
      observedAt,
      annotations: view.annotations,
      prevAnnotations: {},
      ...(view.labels === undefined ? {} : { labels: view.labels }),
    });
  }

  #update(known: SourceEntry, view: SourceView): void {
    const observedAt = this.#deps.clock.now();
    const hashChanged = known.view.hash !== view.hash;
    const annotationsChanged = !sameAnnotations(known.view.annotations, view.annotations);
    const changedAt = hashChanged && this.#synced ? observedAt : known.lastChange;
    this.#store({ view, firstObserved: known.firstObserved, lastChange: changedAt });
    if (hashChanged || annotationsChanged) {
      this.#emit({
        kind: hashChanged ? 'updated' : 'annotations',
        ref: view.ref,
        uid: view.uid,
        hash: view.hash,
        observedAt,
        annotations: view.annotations,
        prevAnnotations: known.view.annotations,
        ...(view.labels === undefined ? {} : { labels: view.labels }),
      });
    } else if (view.labels !== undefined && !sameLabels(known.view.labels, view.labels)) {
      this.#emit({
        kind: 'labels',
        ref: view.ref,
        uid: view.uid,
        observedAt,
        labels: view.labels,
        prevLabels: known.view.labels ?? {},
      });
    } else if (known.view.resourceVersion !== view.resourceVersion) {
      this.#emit({ kind: 'unchanged', ref: view.ref, uid: view.uid, observedAt });
    }
  }

  #store(entry: SourceEntry): void {
    const { type, namespace, name } = entry.view.ref;
    let bucket = this.#byNamespace.get(namespace);
    if (bucket === undefined) {
      bucket = { namespace, names: new Map() };
      this.#byNamespace.set(namespace, bucket);
    }
    const known = bucket.names.get(name);
    if (known === undefined || !sameLabels(known.view.labels, entry.view.labels)) {
      this.#membership.bump(namespace);
    }
    const ref = { type, namespace: bucket.namespace, name };
    bucket.names.set(name, { ...entry, view: { ...entry.view, ref } });
  }

  #emit(event: SourceCacheEvent): void {
    if (this.#synced) this.#deps.notify(event);
  }
}

function refId(ref: SourceRef): string {
  return `${ref.namespace}/${ref.name}`;
}

export interface SourceCachesDeps {
  /** One cache per watched type; a type without one is not watched (its sources are unknown). */
  readonly caches: Partial<Readonly<Record<SourceType, SourceCache>>>;
  /**
   * False while the type's list-watch of `namespace` (or its cluster-wide one) is forbidden or
   * absent, even if it once synced: scoped namespaces are healthy or not on their own (ADR 0021).
   */
  readonly isTypeHealthy: (type: SourceType, namespace: string) => boolean;
}

/**
 * Lookups across the source types: the reconciler's SourceLookup (§9.2). SecretProviderClasses are
 * a cache like the others, fed by the §4.4 aggregator.
 */
export class SourceCaches implements SourceLookup {
  readonly #deps: SourceCachesDeps;

  constructor(deps: SourceCachesDeps) {
    this.#deps = deps;
  }

  cache(type: SourceType): SourceCache | undefined {
    return this.#deps.caches[type];
  }

  /** The cached object and its §5.4 facts. */
  entry(namespace: string, type: SourceType, name: string): SourceEntry | undefined {
    return this.#deps.caches[type]?.get(namespace, name);
  }

  get(namespace: string, type: SourceType, name: string): SourceView | undefined {
    return this.entry(namespace, type, name)?.view;
  }

  namesInNamespace(namespace: string, type: SourceType): readonly string[] {
    return this.#deps.caches[type]?.namesInNamespace(namespace) ?? [];
  }

  /** False for a type that is not watched, not listed yet, or invalidated: its D is unknown (R1). */
  isSynced(type: SourceType): boolean {
    return this.#deps.caches[type]?.isSynced ?? false;
  }

  isHealthy(type: SourceType, namespace: string): boolean {
    return this.isSynced(type) && this.#deps.isTypeHealthy(type, namespace);
  }

  firstObserved(namespace: string, key: SourceKey): number | undefined {
    return this.#entryByKey(namespace, key)?.firstObserved;
  }

  lastChange(namespace: string, key: SourceKey): number | undefined {
    return this.#entryByKey(namespace, key)?.lastChange;
  }

  #entryByKey(namespace: string, key: SourceKey): SourceEntry | undefined {
    const parsed = parseSourceKey(key);
    return parsed && this.entry(namespace, parsed.type, parsed.name);
  }
}
