/**
 * The ReloadPolicy cache (docs/reload-policy.md): every policy of the watched namespaces, the
 * reconciler's read port for a workload's binding, and the lookups the change router fans out
 * through (source → policies → targets, policy → targets). A policy event reaches the subscribers
 * after the cache reflects it, as every other watch event does.
 */
import type { MemberFacts } from '../core/reload-policy-status.ts';
import {
  annotatedSettings,
  bindingOf,
  type BoundSources,
  boundSourceKeys,
  comparePolicyAge,
  memberMatches,
  NO_BINDING,
  sameSpec,
  targetsWorkload,
  unionOfBoundSources,
  type PolicyConflict,
  type PolicyMember,
  type NamedObject,
  type PolicyBinding,
  type ReloadPolicyView,
} from '../core/reload-policy.ts';
import { workloadKey } from '../core/keys.ts';
import type {
  AnnotationKeys,
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadKindName,
  WorkloadView,
} from '../core/types.ts';
import type { PolicyLookup } from '../reconcile/ports.ts';
import type { ViewSink } from './ports.ts';
import { sourceTypeRow } from '../core/source-types.ts';

/**
 * - `upserted`: created or changed (`previous` is the view before, undefined for a new one);
 * - `removed`: deleted; its targets are re-planned without it, nothing rolls for the deletion.
 */
export type PolicyEvent =
  | {
      readonly kind: 'upserted';
      readonly view: ReloadPolicyView;
      readonly previous: ReloadPolicyView | undefined;
    }
  | { readonly kind: 'removed'; readonly view: ReloadPolicyView };

export interface PolicyStoreDeps {
  readonly keys: Pick<AnnotationKeys, 'rolloutStrategy' | 'pausePeriod'>;
  /** The sources of one type in one namespace, with their labels (for source selectors). */
  readonly sourcesIn: (namespace: string, type: SourceType) => readonly NamedObject<SourceType>[];
  /** The workloads of one namespace (for target selectors). */
  readonly workloadsIn: (namespace: string) => readonly WorkloadView[];
  /** One workload as stored now. */
  readonly workloadOf: (key: WorkloadKey) => WorkloadView | undefined;
  /**
   * Changes whenever a source or workload of the namespace appears, goes or is relabelled: the
   * index of the namespace is rebuilt only then, not per event.
   */
  readonly membershipVersion: (namespace: string) => string;
  /** Called synchronously after the cache reflects the event; never for the initial list. */
  readonly notify: (event: PolicyEvent) => void;
}

function idOf(view: { readonly namespace: string; readonly name: string }): string {
  return `${view.namespace}/${view.name}`;
}

function namedWorkload(view: WorkloadView): NamedObject<WorkloadKindName> {
  return { kind: view.ref.kind, name: view.ref.name, labels: view.labels };
}

/** `ConfigMap app-config`, or `Deployment selector app=web,tier in (a,b)`. */
function describeMember(kind: string, member: PolicyMember<string>): string {
  if (member.name !== undefined) return `${kind} ${member.name}`;
  const terms = [
    ...Object.entries(member.selector.matchLabels).map(([key, value]) => `${key}=${value}`),
    ...member.selector.matchExpressions.map((term) =>
      term.values.length === 0
        ? `${term.operator === 'DoesNotExist' ? '!' : ''}${term.key}`
        : `${term.key} ${term.operator === 'In' ? 'in' : 'notin'} (${term.values.join(',')})`,
    ),
  ];
  return `${kind} selector ${terms.join(',')}`;
}

function gains(before: ReadonlySet<SourceKey>, after: ReadonlySet<SourceKey>): boolean {
  for (const key of after) if (!before.has(key)) return true;
  return false;
}

/**
 * What the policies of one namespace bind, computed once per version of the namespace (its
 * objects, their labels, its policies' specs) and then read by every event: the fan-out, the
 * planner's binding, the status. Each part is filled on first use.
 */
interface NamespaceIndex {
  readonly namespace: string;
  readonly version: string;
  /** Oldest first (ADR 0034), suspended ones included. */
  readonly policies: readonly ReloadPolicyView[];
  readonly catalogs: Map<SourceType, readonly NamedObject<SourceType>[]>;
  members: Members | undefined;
  /** The source keys each policy binds, by policy name. */
  readonly boundKeys: Map<string, ReadonlySet<SourceKey>>;
  /** The union for one set of active policies, by their names: shared by every workload. */
  readonly unions: Map<string, BoundSources>;
  /** Each workload's binding, with the annotation facts it was computed for. */
  readonly bindings: Map<
    WorkloadKey,
    { readonly settings: string; readonly binding: PolicyBinding }
  >;
  readonly facts: Map<string, { readonly sources: MemberFacts; readonly targets: MemberFacts }>;
}

/** The workloads of the namespace and which policies target each. */
interface Members {
  readonly workloads: readonly NamedObject<WorkloadKindName>[];
  /** By policy name: the keys of its targets. */
  readonly targets: ReadonlyMap<string, readonly WorkloadKey[]>;
  /** By workload: the policies targeting it (oldest first) and the labels they matched. */
  readonly targeting: ReadonlyMap<
    WorkloadKey,
    { readonly policies: readonly ReloadPolicyView[]; readonly labels: WorkloadView['labels'] }
  >;
}

function sameLabelSet(a: WorkloadView['labels'], b: WorkloadView['labels']): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

export class PolicyStore implements ViewSink<ReloadPolicyView>, PolicyLookup {
  readonly #deps: PolicyStoreDeps;
  readonly #byNamespace = new Map<string, Map<string, ReloadPolicyView>>();
  /** Bumped per namespace when a policy's spec changes, appears or goes (never for its status). */
  readonly #specVersions = new Map<string, number>();
  readonly #indexes = new Map<string, NamespaceIndex>();
  #specTick = 0;
  #synced = false;

  constructor(deps: PolicyStoreDeps) {
    this.#deps = deps;
  }

  get isSynced(): boolean {
    return this.#synced;
  }

  get size(): number {
    let size = 0;
    for (const policies of this.#byNamespace.values()) size += policies.size;
    return size;
  }

  inNamespace(namespace: string): readonly ReloadPolicyView[] {
    return [...(this.#byNamespace.get(namespace)?.values() ?? [])];
  }

  all(): readonly ReloadPolicyView[] {
    return [...this.#byNamespace.values()].flatMap((policies) => [...policies.values()]);
  }

  get(namespace: string, name: string): ReloadPolicyView | undefined {
    return this.#byNamespace.get(namespace)?.get(name);
  }

  replace(views: readonly ReloadPolicyView[]): void {
    const seeding = !this.#synced;
    const listed = new Set(views.map(idOf));
    for (const policy of this.all()) {
      if (!listed.has(idOf(policy))) this.#remove(policy, !seeding);
    }
    for (const view of views) this.#upsert(view, !seeding);
    this.#synced = true;
  }

  upsert(view: ReloadPolicyView): void {
    this.#upsert(view, true);
  }

  remove(view: ReloadPolicyView): void {
    this.#remove(view, true);
  }

  /** The reconciler's read port: which sources and settings the policies give this workload. */
  bindingOf(view: WorkloadView): PolicyBinding {
    const { namespace } = view.ref;
    if (!this.#byNamespace.has(namespace)) return NO_BINDING;
    const index = this.#index(namespace);
    const key = workloadKey(view.ref);
    const targeted = this.#members(index).targeting.get(key);
    if (targeted === undefined || !sameLabelSet(targeted.labels, view.labels)) {
      // Not the stored labels (a view from before a change, or from a GET): matched afresh.
      return this.#bindingAmong(index, view, index.policies);
    }
    const annotated = annotatedSettings(view, this.#deps.keys);
    const settings = JSON.stringify(annotated);
    const known = index.bindings.get(key);
    if (known?.settings === settings) return known.binding;
    const binding = this.#bindingAmong(index, view, targeted.policies);
    index.bindings.set(key, { settings, binding });
    return binding;
  }

  /** The workloads the policy targets now, in the store. */
  targetsOf(policy: ReloadPolicyView): readonly WorkloadKey[] {
    const index = this.#index(policy.namespace);
    const known = this.#members(index).targets.get(policy.name);
    if (known !== undefined && index.policies.some((p) => p === policy || sameSpec(p, policy))) {
      return known;
    }
    // A version of the policy the store no longer holds (the one before a change).
    return this.#members(index)
      .workloads.filter((workload) => targetsWorkload(policy, workload))
      .map((workload) => workloadKey({ ...workload, namespace: policy.namespace }));
  }

  /** The source keys this policy binds now (named ones whether or not they exist). */
  boundSourcesOf(policy: ReloadPolicyView): ReadonlySet<SourceKey> {
    const index = this.#index(policy.namespace);
    const held = index.policies.find((p) => p.name === policy.name);
    if (held === undefined || (held !== policy && !sameSpec(held, policy))) {
      return new Set(boundSourceKeys(policy, (type) => this.#catalog(index, type)));
    }
    return this.#boundKeys(index, held);
  }

  /** `Kind/name` of each workload the policy targets now. */
  targetIdsOf(policy: ReloadPolicyView): string[] {
    return this.targetsOf(policy).map((key) => {
      const view = this.#deps.workloadOf(key);
      return view === undefined ? key : `${view.ref.kind}/${view.ref.name}`;
    });
  }

  /** Sources named but absent, and selectors that select nothing. */
  sourceFacts(policy: ReloadPolicyView): MemberFacts {
    return this.#facts(policy).sources;
  }

  /** Targets named but absent, and selectors that select nothing. */
  targetFacts(policy: ReloadPolicyView): MemberFacts {
    return this.#facts(policy).targets;
  }

  /** The settings of this policy that lose on one of its targets (ADR 0034). */
  conflictsOf(policy: ReloadPolicyView): PolicyConflict[] {
    if (policy.suspend) return [];
    return this.targetViewsOf(policy).flatMap((view) =>
      this.bindingOf(view).conflicts.filter((conflict) => conflict.policy.name === policy.name),
    );
  }

  /**
   * Workloads a policy create or change binds to a source they were not bound to before: the
   * binding is computed with the previous version of the policy (none for a new one) and now. A
   * change of status alone binds nothing new.
   */
  gainedByPolicy(view: ReloadPolicyView, previous: ReloadPolicyView | undefined): WorkloadKey[] {
    if (previous !== undefined && sameSpec(previous, view)) return [];
    const index = this.#index(view.namespace);
    const before = index.policies.flatMap((policy) =>
      policy.name !== view.name ? [policy] : previous === undefined ? [] : [previous],
    );
    const unions = new Map<string, BoundSources>();
    const keysOf = (policy: ReloadPolicyView): ReadonlySet<SourceKey> =>
      policy === previous
        ? new Set(boundSourceKeys(policy, (type) => this.#catalog(index, type)))
        : this.#boundKeys(index, policy);
    return this.targetViewsOf(view)
      .filter((workload) => {
        const was = bindingOf({
          workload: namedWorkload(workload),
          policies: before,
          catalog: (type) => this.#catalog(index, type),
          annotated: annotatedSettings(workload, this.#deps.keys),
          boundSources: (active) => shared(unions, active, keysOf),
        });
        return gains(was.sources, this.bindingOf(workload).sources);
      })
      .map((workload) => workloadKey(workload.ref));
  }

  /** Workloads a source's new labels bind to it through a policy selector that did not before. */
  gainedBySourceLabels(
    namespace: string,
    source: NamedObject<SourceType>,
    prevLabels: NamedObject<SourceType>['labels'],
  ): WorkloadKey[] {
    const before = new Set(this.workloadsBoundTo(namespace, { ...source, labels: prevLabels }));
    return this.workloadsBoundTo(namespace, source).filter((key) => !before.has(key));
  }

  /** Whether a workload's label change made a policy bind it to a source it was not bound to. */
  gainedByWorkloadLabels(view: WorkloadView, prev: WorkloadView): boolean {
    return gains(this.bindingOf(prev).sources, this.bindingOf(view).sources);
  }

  /** The workloads the policy targets now, in the store. */
  targetViewsOf(policy: ReloadPolicyView): WorkloadView[] {
    return this.targetsOf(policy).flatMap((key) => this.#deps.workloadOf(key) ?? []);
  }

  /** Workloads bound to this source through an active policy: the router's fan-out. */
  workloadsBoundTo(namespace: string, source: NamedObject<SourceType>): WorkloadKey[] {
    if (!this.#byNamespace.has(namespace)) return [];
    const index = this.#index(namespace);
    const keys = new Set<WorkloadKey>();
    for (const policy of index.policies) {
      if (policy.suspend || !policy.sources.some((member) => memberMatches(member, source))) {
        continue;
      }
      for (const key of this.#members(index).targets.get(policy.name) ?? []) keys.add(key);
    }
    return [...keys];
  }

  /** The namespace's index at its current version, rebuilt (lazily, part by part) when stale. */
  #index(namespace: string): NamespaceIndex {
    const version = `${this.#deps.membershipVersion(namespace)}/${String(this.#specVersions.get(namespace) ?? 0)}`;
    const known = this.#indexes.get(namespace);
    if (known?.version === version) return known;
    const index: NamespaceIndex = {
      namespace,
      version,
      policies: [...(this.#byNamespace.get(namespace)?.values() ?? [])].sort(comparePolicyAge),
      catalogs: new Map(),
      members: undefined,
      boundKeys: new Map(),
      unions: new Map(),
      bindings: new Map(),
      facts: new Map(),
    };
    if (index.policies.length === 0) this.#indexes.delete(namespace);
    else this.#indexes.set(namespace, index);
    return index;
  }

  #catalog(index: NamespaceIndex, type: SourceType): readonly NamedObject<SourceType>[] {
    let catalog = index.catalogs.get(type);
    if (catalog === undefined) {
      catalog = this.#deps.sourcesIn(index.namespace, type);
      index.catalogs.set(type, catalog);
    }
    return catalog;
  }

  #members(index: NamespaceIndex): Members {
    if (index.members !== undefined) return index.members;
    const views = this.#deps.workloadsIn(index.namespace);
    const targets = new Map<string, WorkloadKey[]>();
    const targeting = new Map<
      WorkloadKey,
      { policies: ReloadPolicyView[]; labels: WorkloadView['labels'] }
    >();
    for (const policy of index.policies) targets.set(policy.name, []);
    for (const view of views) {
      const key = workloadKey(view.ref);
      const named = namedWorkload(view);
      const policies = index.policies.filter((policy) => targetsWorkload(policy, named));
      if (policies.length === 0) continue;
      targeting.set(key, { policies, labels: view.labels });
      for (const policy of policies) targets.get(policy.name)?.push(key);
    }
    index.members = { workloads: views.map(namedWorkload), targets, targeting };
    return index.members;
  }

  #boundKeys(index: NamespaceIndex, policy: ReloadPolicyView): ReadonlySet<SourceKey> {
    let keys = index.boundKeys.get(policy.name);
    if (keys === undefined) {
      keys = new Set(boundSourceKeys(policy, (type) => this.#catalog(index, type)));
      index.boundKeys.set(policy.name, keys);
    }
    return keys;
  }

  #bindingAmong(
    index: NamespaceIndex,
    view: WorkloadView,
    policies: readonly ReloadPolicyView[],
  ): PolicyBinding {
    if (policies.length === 0) return NO_BINDING;
    return bindingOf({
      workload: namedWorkload(view),
      policies,
      catalog: (type) => this.#catalog(index, type),
      annotated: annotatedSettings(view, this.#deps.keys),
      boundSources: (active) =>
        shared(index.unions, active, (policy) => this.#boundKeys(index, policy)),
    });
  }

  #facts(policy: ReloadPolicyView): { sources: MemberFacts; targets: MemberFacts } {
    const index = this.#index(policy.namespace);
    const held = index.policies.find((p) => p.name === policy.name);
    const cacheable = held !== undefined && (held === policy || sameSpec(held, policy));
    const known = cacheable ? index.facts.get(policy.name) : undefined;
    if (known !== undefined) return known;
    const sources = policy.sources.flatMap((member) =>
      this.#catalog(index, member.kind).some((object) => memberMatches(member, object))
        ? []
        : [describeMember(sourceTypeRow(member.kind).kind, member)],
    );
    const { workloads } = this.#members(index);
    const targets = policy.targets.flatMap((member) =>
      workloads.some((object) => memberMatches(member, object))
        ? []
        : [describeMember(member.kind, member)],
    );
    const facts = {
      sources: { listed: policy.sources.length, missing: sources },
      targets: { listed: policy.targets.length, missing: targets },
    };
    if (cacheable) index.facts.set(policy.name, facts);
    return facts;
  }

  #upsert(view: ReloadPolicyView, notify: boolean): void {
    let policies = this.#byNamespace.get(view.namespace);
    if (policies === undefined) {
      policies = new Map();
      this.#byNamespace.set(view.namespace, policies);
    }
    const previous = policies.get(view.name);
    policies.set(view.name, view);
    if (previous === undefined || !sameSpec(previous, view)) this.#specChanged(view.namespace);
    if (notify) this.#deps.notify({ kind: 'upserted', view, previous });
  }

  #remove(view: ReloadPolicyView, notify: boolean): void {
    const policies = this.#byNamespace.get(view.namespace);
    const known = policies?.get(view.name);
    if (policies === undefined || known === undefined) return;
    policies.delete(view.name);
    if (policies.size === 0) this.#byNamespace.delete(view.namespace);
    this.#specChanged(view.namespace);
    if (notify) this.#deps.notify({ kind: 'removed', view: known });
  }

  #specChanged(namespace: string): void {
    this.#specTick += 1;
    this.#specVersions.set(namespace, this.#specTick);
  }
}

/** The union for one set of active policies, computed once per set. */
function shared(
  unions: Map<string, BoundSources>,
  active: readonly ReloadPolicyView[],
  keysOf: (policy: ReloadPolicyView) => Iterable<SourceKey>,
): BoundSources {
  const id = active.map((policy) => `${policy.name}@${policy.uid}`).join(' ');
  let union = unions.get(id);
  if (union === undefined) {
    union = unionOfBoundSources(active, keysOf);
    unions.set(id, union);
  }
  return union;
}
