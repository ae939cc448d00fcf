/**
 * Which list-watches a configuration needs (§9.1, §11): one per resource type and watched
 * namespace, with the server-side filters. Pure, so the scoping rules are table-tested.
 */
import type { SourceType, WorkloadKindName } from '../core/types.ts';
import type { KindTable } from '../rollout/kinds.ts';

export type SourceResource = 'configmaps' | 'secrets';

export interface WatchPlanOptions {
  readonly scope: {
    readonly mode: 'scoped' | 'single' | 'global';
    readonly namespaces: readonly string[];
    readonly ignoreNamespaces: readonly string[];
    readonly namespaceSelector: string;
  };
  readonly resourceLabelSelector: string;
  readonly resourcesToIgnore: readonly string[];
  readonly includeHelmSecrets: boolean;
}

/** Filters of one list-watch; `undefined` namespace means all namespaces. */
export interface WatchTarget {
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
}

export const SOURCE_RESOURCES: Readonly<Record<SourceResource, SourceType>> = {
  configmaps: 'CONFIGMAP',
  secrets: 'SECRET',
};

/** D1: rarely consumed by pods, yet they dominate memory and watch traffic. */
const EXCLUDED_SECRET_TYPES = ['helm.sh/release.v1', 'kubernetes.io/service-account-token'];

/** Namespaces of the list-watches: every listed one, or `undefined` for one cluster-wide watch. */
export function watchedNamespaces(options: WatchPlanOptions): readonly (string | undefined)[] {
  return options.scope.mode === 'global' ? [undefined] : options.scope.namespaces;
}

function namespaceTerms(options: WatchPlanOptions): string[] {
  if (options.scope.mode !== 'global') return [];
  return options.scope.ignoreNamespaces.map((ns) => `metadata.namespace!=${ns}`);
}

function fieldSelector(terms: readonly string[]): string | undefined {
  return terms.length > 0 ? terms.join(',') : undefined;
}

/** The source types that are watched; `--resources-to-ignore` drops one (§11 item 4). */
export function watchedSourceResources(options: WatchPlanOptions): readonly SourceResource[] {
  const ignored = new Set(options.resourcesToIgnore.map((r) => r.toLowerCase()));
  return (Object.keys(SOURCE_RESOURCES) as SourceResource[]).filter((r) => !ignored.has(r));
}

export function sourceWatchTargets(
  options: WatchPlanOptions,
  resource: SourceResource,
): readonly WatchTarget[] {
  const terms = namespaceTerms(options);
  if (resource === 'secrets' && !options.includeHelmSecrets) {
    terms.push(...EXCLUDED_SECRET_TYPES.map((type) => `type!=${type}`));
  }
  return watchedNamespaces(options).map((namespace) => ({
    namespace,
    labelSelector: options.resourceLabelSelector || undefined,
    fieldSelector: fieldSelector(terms),
  }));
}

/** Workloads are never filtered by label; ignored namespaces are excluded server-side. */
export function workloadWatchTargets(options: WatchPlanOptions): readonly WatchTarget[] {
  const terms = namespaceTerms(options);
  return watchedNamespaces(options).map((namespace) => ({
    namespace,
    labelSelector: undefined,
    fieldSelector: fieldSelector(terms),
  }));
}

/** The Namespace watch exists only for `--namespace-selector` in global mode (§11 item 1). */
export function namespaceWatchTarget(options: WatchPlanOptions): WatchTarget | undefined {
  if (options.scope.mode !== 'global' || options.scope.namespaceSelector === '') return undefined;
  return {
    namespace: undefined,
    labelSelector: options.scope.namespaceSelector,
    fieldSelector: undefined,
  };
}

export interface KindPlanOptions {
  readonly ignoredWorkloadTypes: readonly string[];
  readonly isArgoRollouts: boolean;
  /** `--is-openshift`: `auto` and `true` both leave DeploymentConfigs to discovery. */
  readonly isOpenshift: 'auto' | 'true' | 'false';
}

function optionAllows(value: boolean | KindPlanOptions['isOpenshift']): boolean {
  return value === true || value === 'auto' || value === 'true';
}

/** Kinds watched without asking discovery, and the optional ones that need their API served. */
export function plannedKinds(
  options: KindPlanOptions,
  kinds: KindTable,
): {
  readonly always: readonly WorkloadKindName[];
  readonly ifServed: readonly WorkloadKindName[];
} {
  const ignored = new Set(options.ignoredWorkloadTypes);
  const planned = kinds.rows.filter(
    (row) =>
      !(row.ignorable && ignored.has(row.plural)) &&
      (row.enabledByOption === undefined || optionAllows(options[row.enabledByOption])),
  );
  return {
    always: planned.filter((row) => !row.optionalApi).map((row) => row.kind),
    ifServed: planned.filter((row) => row.optionalApi).map((row) => row.kind),
  };
}
