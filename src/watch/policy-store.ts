/**
 * The ReloadPolicy cache (docs/reload-policy.md): every policy of the watched namespaces, the
 * reconciler's read port for a workload's binding, and the lookups the change router fans out
 * through (source → policies → targets, policy → targets). A policy event reaches the subscribers
 * after the cache reflects it, as every other watch event does.
 */
import type { MemberFacts } from '../core/reload-policy-status.ts';
import {
  bindingOfWorkload,
  boundSourceKeys,
  memberMatches,
  type PolicyConflict,
  type PolicyMember,
  type NamedObject,
  type PolicyBinding,
  type ReloadPolicyView,
  type SourceCatalog,
} from '../core/reload-policy.ts';
import { workloadKey } from '../core/keys.ts';
import type {
  AnnotationKeys,
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadKind,
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
  /** Called synchronously after the cache reflects the event; never for the initial list. */
  readonly notify: (event: PolicyEvent) => void;
}

function idOf(view: { readonly namespace: string; readonly name: string }): string {
  return `${view.namespace}/${view.name}`;
}

function namedWorkload(view: WorkloadView): NamedObject<WorkloadKind> {
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
  return [...after].some((key) => !before.has(key));
}

export class PolicyStore implements ViewSink<ReloadPolicyView>, PolicyLookup {
  readonly #deps: PolicyStoreDeps;
  readonly #byNamespace = new Map<string, Map<string, ReloadPolicyView>>();
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
    const catalog: SourceCatalog = (type) => this.#deps.sourcesIn(view.ref.namespace, type);
    return bindingOfWorkload(view, this.inNamespace(view.ref.namespace), catalog, this.#deps.keys);
  }

  /** The workloads the policy targets now, in the store. */
  targetsOf(policy: ReloadPolicyView): WorkloadKey[] {
    return this.#targetViews(policy).map((view) => workloadKey(view.ref));
  }

  /** The source keys this policy binds now (named ones whether or not they exist). */
  boundSourcesOf(policy: ReloadPolicyView): SourceKey[] {
    return boundSourceKeys(policy, (type) => this.#deps.sourcesIn(policy.namespace, type));
  }

  /** `Kind/name` of each workload the policy targets now. */
  targetIdsOf(policy: ReloadPolicyView): string[] {
    return this.#targetViews(policy).map((view) => `${view.ref.kind}/${view.ref.name}`);
  }

  /** Sources named but absent, and selectors that select nothing. */
  sourceFacts(policy: ReloadPolicyView): MemberFacts {
    const missing = policy.sources.flatMap((member) => {
      const found = this.#deps
        .sourcesIn(policy.namespace, member.kind)
        .some((object) => memberMatches(member, object));
      return found ? [] : [describeMember(sourceTypeRow(member.kind).kind, member)];
    });
    return { listed: policy.sources.length, missing };
  }

  /** Targets named but absent, and selectors that select nothing. */
  targetFacts(policy: ReloadPolicyView): MemberFacts {
    const workloads = this.#deps.workloadsIn(policy.namespace).map(namedWorkload);
    const missing = policy.targets.flatMap((member) =>
      workloads.some((object) => memberMatches(member, object))
        ? []
        : [describeMember(member.kind, member)],
    );
    return { listed: policy.targets.length, missing };
  }

  /** The settings of this policy that lose on one of its targets (ADR 0034). */
  conflictsOf(policy: ReloadPolicyView): PolicyConflict[] {
    if (policy.suspend) return [];
    return this.#targetViews(policy).flatMap((view) =>
      this.bindingOf(view).conflicts.filter((conflict) => conflict.policy.name === policy.name),
    );
  }

  /**
   * Workloads a policy create or change binds to a source they were not bound to before: the
   * binding is computed with the previous version of the policy (none for a new one) and now.
   */
  gainedByPolicy(view: ReloadPolicyView, previous: ReloadPolicyView | undefined): WorkloadKey[] {
    const before = this.inNamespace(view.namespace).flatMap((policy) =>
      policy.name !== view.name ? [policy] : previous === undefined ? [] : [previous],
    );
    const catalog: SourceCatalog = (type) => this.#deps.sourcesIn(view.namespace, type);
    return this.#targetViews(view)
      .filter((workload) =>
        gains(
          bindingOfWorkload(workload, before, catalog, this.#deps.keys).sources,
          this.bindingOf(workload).sources,
        ),
      )
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
    return this.#targetViews(policy);
  }

  #targetViews(policy: ReloadPolicyView): WorkloadView[] {
    return this.#deps
      .workloadsIn(policy.namespace)
      .filter((view) =>
        policy.targets.some((member) => memberMatches(member, namedWorkload(view))),
      );
  }

  /** Workloads bound to this source through an active policy: the router's fan-out. */
  workloadsBoundTo(namespace: string, source: NamedObject<SourceType>): WorkloadKey[] {
    const keys = new Set<WorkloadKey>();
    for (const policy of this.inNamespace(namespace)) {
      if (policy.suspend || !policy.sources.some((member) => memberMatches(member, source))) {
        continue;
      }
      for (const key of this.targetsOf(policy)) keys.add(key);
    }
    return [...keys];
  }

  #upsert(view: ReloadPolicyView, notify: boolean): void {
    let policies = this.#byNamespace.get(view.namespace);
    if (policies === undefined) {
      policies = new Map();
      this.#byNamespace.set(view.namespace, policies);
    }
    const previous = policies.get(view.name);
    policies.set(view.name, view);
    if (notify) this.#deps.notify({ kind: 'upserted', view, previous });
  }

  #remove(view: ReloadPolicyView, notify: boolean): void {
    const policies = this.#byNamespace.get(view.namespace);
    const known = policies?.get(view.name);
    if (policies === undefined || known === undefined) return;
    policies.delete(view.name);
    if (policies.size === 0) this.#byNamespace.delete(view.namespace);
    if (notify) this.#deps.notify({ kind: 'removed', view: known });
  }
}
