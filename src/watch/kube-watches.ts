/**
 * Builds the list-watches of one configuration on top of kube/: sources, workloads and the
 * Namespace selector, each feeding its cache or store through a view sink. Scoped mode merges the
 * per-namespace watches of one type before they reach the cache (watch/namespace-merge.ts).
 */
import type { SourceView, WorkloadView } from '../core/types.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import { NamespaceMerge, type NamespaceSink } from './namespace-merge.ts';
import type { ApiError } from '../core/api-error.ts';
import { isJsonObject, stringAt } from '../core/json.ts';
import type { ListWatchStatus } from '../kube/list-watch.ts';
import {
  projectConfigMap,
  projectNamespaceName,
  projectSecret,
  projectSecretProviderClass,
  projectSecretProviderClassPodStatus,
  sourceKeysOf,
  type ProjectionSettings,
} from '../kube/projections.ts';
import type { ApiResource } from '../kube/resources.ts';
import { OTHER_RESOURCES, workloadResource } from '../kube/resources.ts';
import { createResourceListWatch, type PageLimiter } from '../kube/resource-list-watch.ts';
import type { StreamingKubeTransport } from '../kube/transport.ts';
import { workloadProjector } from '../kube/workload-projection.ts';
import { projectReloadPolicy } from '../kube/policy-projection.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import type { Metrics, ResourceType } from '../metrics/metrics.ts';
import type { PodStatusView, ProviderClassView, ViewSink } from './ports.ts';
import type { SourceResource, WatchTarget } from './watch-plan.ts';

/** What the app needs of a running list-watch. */
export interface ResourceWatch {
  readonly resource: ResourceType;
  /** The watched namespace; `undefined` for a cluster-wide watch. */
  readonly namespace: string | undefined;
  readonly status: ListWatchStatus;
  readonly isSynced: boolean;
  /** Resolves after the first complete list reached the cache; never rejects. */
  readonly synced: Promise<void>;
  /**
   * Resolves once the initial sync need not wait for this watch: it listed, or it is forbidden or
   * its API absent (re-probed meanwhile, ADR 0021). Never rejects.
   */
  readonly settled: Promise<void>;
  start(): void;
  /** Lists again now; resolves as `ListWatch.relist()` does. */
  relist(): Promise<void>;
  stop(): Promise<void>;
}

export interface WatchFactoryDeps {
  readonly transport: StreamingKubeTransport;
  /** What each view keeps (labels under `--enable-reload-policies`: selectors read them). */
  readonly projection: ProjectionSettings;
  readonly metrics: Metrics;
  readonly onWatchError: (
    resource: ResourceType,
    namespace: string | undefined,
    error: ApiError,
  ) => void;
  /**
   * A watch of `resource` that was forbidden or absent before its first list has now listed
   * (ADR 0021): a namespace permitted later, or `undefined` for a cluster-wide watch. The
   * workloads there were reconciled without it and need another reconcile.
   */
  readonly onNamespaceJoined?: (resource: ResourceType, namespace: string | undefined) => void;
  /** A list-watch changed status (`ok` after a failure: it recovered). */
  readonly onWatchStatus?: (
    resource: ResourceType,
    namespace: string | undefined,
    status: ListWatchStatus,
  ) => void;
  /** Bounds how many list pages are fetched at once across every watch. */
  readonly pageLimiter?: PageLimiter;
  /**
   * Active-active (docs/adr/0053): objects of a namespace this replica does not keep are dropped as
   * they are decoded, before any projection; unset, every namespace is kept.
   */
  readonly holdsNamespace?: ((namespace: string) => boolean) | undefined;
  /** Events kreload will not act on (ignored source, namespace not selected): `dropped` (§13.2). */
  readonly isFiltered?: (
    namespace: string,
    annotations: Readonly<Record<string, string>>,
  ) => boolean;
}

interface WatchSpec<V> {
  readonly resource: ResourceType;
  readonly api: ApiResource;
  readonly targets: readonly WatchTarget[];
  readonly project: (obj: unknown) => V | undefined;
  readonly sink: ViewSink<V>;
  readonly idOf: (view: V) => string;
  readonly isFiltered?: (view: V) => boolean;
  readonly clusterScoped?: boolean;
}

export class WatchFactory {
  readonly #deps: WatchFactoryDeps;

  constructor(deps: WatchFactoryDeps) {
    this.#deps = deps;
  }

  sources(
    resource: SourceResource,
    targets: readonly WatchTarget[],
    sink: ViewSink<SourceView>,
  ): ResourceWatch[] {
    const keys = sourceKeysOf(this.#deps.projection);
    const project =
      resource === 'configmaps'
        ? (obj: unknown) => projectConfigMap(obj, keys)
        : (obj: unknown) => projectSecret(obj, keys);
    return this.#create({
      resource,
      api: resource === 'configmaps' ? OTHER_RESOURCES.configMaps : OTHER_RESOURCES.secrets,
      targets,
      project,
      sink,
      idOf: (view) => view.ref.name,
      isFiltered: (view) => this.#deps.isFiltered?.(view.ref.namespace, view.annotations) === true,
    });
  }

  workloads(
    row: WorkloadKindRow,
    targets: readonly WatchTarget[],
    sink: ViewSink<WorkloadView>,
  ): ResourceWatch[] {
    const api = workloadResource(row);
    const project = workloadProjector(this.#deps.projection);
    return this.#create({
      resource: api.plural,
      api,
      targets,
      project: (obj) => project(row, obj),
      sink,
      idOf: (view) => view.ref.name,
      isFiltered: (view) => this.#deps.isFiltered?.(view.ref.namespace, {}) === true,
    });
  }

  /** SPCPS objects carry no user labels: never label-filtered (D7). */
  podStatuses(targets: readonly WatchTarget[], sink: ViewSink<PodStatusView>): ResourceWatch[] {
    return this.#create({
      resource: 'secretproviderclasspodstatuses',
      api: OTHER_RESOURCES.secretProviderClassPodStatuses,
      targets: targets.map((t) => ({ ...t, labelSelector: undefined })),
      project: projectSecretProviderClassPodStatus,
      sink,
      idOf: (view) => view.name,
    });
  }

  providerClasses(
    targets: readonly WatchTarget[],
    sink: ViewSink<ProviderClassView>,
  ): ResourceWatch[] {
    const keys = sourceKeysOf(this.#deps.projection);
    return this.#create({
      resource: 'secretproviderclasses',
      api: OTHER_RESOURCES.secretProviderClasses,
      targets,
      project: (obj) => projectSecretProviderClass(obj, keys),
      sink,
      idOf: (view) => view.name,
    });
  }

  /** ReloadPolicies (docs/reload-policy.md), in the namespaces the workloads are watched in. */
  policies(targets: readonly WatchTarget[], sink: ViewSink<ReloadPolicyView>): ResourceWatch[] {
    return this.#create({
      resource: 'reloadpolicies',
      api: OTHER_RESOURCES.reloadPolicies,
      targets,
      project: projectReloadPolicy,
      sink,
      idOf: (view) => view.name,
    });
  }

  /** Cluster-scoped: never dropped by the shard's namespaces. */
  namespaces(target: WatchTarget, sink: ViewSink<string>): ResourceWatch[] {
    return this.#create({
      resource: 'namespaces',
      api: OTHER_RESOURCES.namespaces,
      targets: [target],
      project: projectNamespaceName,
      sink,
      idOf: (name) => name,
      clusterScoped: true,
    });
  }

  /** `project`, dropping objects of the namespaces this replica does not keep. */
  #shardProject<V>(spec: WatchSpec<V>): (obj: unknown) => V | undefined {
    const holds = this.#deps.holdsNamespace;
    if (holds === undefined || spec.clusterScoped === true) return spec.project;
    return (obj) => {
      const namespace = isJsonObject(obj) ? stringAt(obj, ['metadata', 'namespace']) : undefined;
      return namespace !== undefined && !holds(namespace) ? undefined : spec.project(obj);
    };
  }

  #create<V>(spec: WatchSpec<V>): ResourceWatch[] {
    const namespaces = spec.targets.map((t) => t.namespace);
    const merge =
      spec.targets.length > 1
        ? new NamespaceMerge<V>({
            namespaces: namespaces.map((ns) => ns ?? ''),
            target: spec.sink,
            idOf: spec.idOf,
            onNamespaceJoined: (namespace) =>
              this.#deps.onNamespaceJoined?.(spec.resource, namespace),
          })
        : undefined;
    const { metrics } = this.#deps;
    const project = this.#shardProject(spec);
    return spec.targets.map((target) => {
      const merged: NamespaceSink<V> | undefined = merge?.sinkFor(target.namespace ?? '');
      const sink = merged ?? spec.sink;
      metrics.setWatchStatus(target.namespace, spec.resource, 'syncing');
      let unavailableBeforeList = false;
      const unavailable = Promise.withResolvers<undefined>();
      /** Every notification is counted as received; malformed ones are dropped (§13.2). */
      const seen = (type: 'add' | 'update' | 'delete', view: V | undefined): view is V => {
        metrics.recordEventReceived(type, spec.resource);
        const dropped = view === undefined || spec.isFiltered?.(view) === true;
        metrics.recordEventProcessed(type, spec.resource, dropped ? 'dropped' : 'success');
        return view !== undefined;
      };
      const watch = createResourceListWatch<V | undefined>({
        transport: this.#deps.transport,
        resource: spec.api,
        namespace: target.namespace,
        labelSelector: target.labelSelector,
        fieldSelector: target.fieldSelector,
        pageLimiter: this.#deps.pageLimiter,
        project,
        consumer: {
          replace: (items) => {
            sink.replace(items.filter((view) => seen('add', view)));
            // Without a merge, the watch's own first list after a 403/404 is the late join.
            if (merged === undefined && unavailableBeforeList) {
              this.#deps.onNamespaceJoined?.(spec.resource, target.namespace);
            }
            unavailableBeforeList = false;
          },
          upsert: (item, added) => {
            if (seen(added ? 'add' : 'update', item)) sink.upsert(item);
          },
          remove: (item) => {
            if (seen('delete', item)) sink.remove(item);
          },
          onError: (error) => {
            metrics.recordWatchRestart(spec.resource, String(error.status ?? 'network'));
            this.#deps.onWatchError(spec.resource, target.namespace, error);
          },
          onExpired: () => {
            metrics.recordWatchRestart(spec.resource, '410');
          },
          onStatus: (status) => {
            metrics.setWatchStatus(target.namespace, spec.resource, status);
            this.#deps.onWatchStatus?.(spec.resource, target.namespace, status);
            if (status === 'forbidden' || status === 'absent') {
              unavailable.resolve(undefined);
              unavailableBeforeList ||= !watch.isSynced;
              merged?.unavailable();
            }
          },
        },
      });
      const settled = Promise.race([watch.synced, unavailable.promise]);
      return Object.assign(watch, {
        resource: spec.resource,
        namespace: target.namespace,
        settled,
      });
    });
  }
}
