/**
 * The watch server (design card stage 1): every list-watch of one configuration, the discovery of
 * the optional APIs (also when one is served only after start, §2.2), the initial sync, the status
 * of each kind and namespace for `/readyz`, and the caches the reconciler reads. What the caches
 * observe reaches the subscribers (watch/watch-caches.ts); nothing else is called from here.
 */
import PQueue from 'p-queue';
import type { SourceType, WorkloadKey, WorkloadKindName } from '../core/types.ts';
import { ApiDiscovery } from '../kube/discovery.ts';
import { projectionSettings } from '../kube/projections.ts';
import { workloadResource } from '../kube/resources.ts';
import type { StreamingKubeTransport } from '../kube/transport.ts';
import type { Logger } from '../log/logger.ts';
import { RateLimitedLog } from '../log/rate-limited-log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Timers } from '../time/timers.ts';
import type { KindTable, WorkloadKindRow } from '../rollout/kinds.ts';
import type { ApiServerStatus, WatchState } from '../http/readiness.ts';
import { type ResourceWatch, WatchFactory } from './kube-watches.ts';
import { namespaceSink } from './namespace-filter.ts';
import { OptionalApis, type OptionalApi } from './optional-apis.ts';
import { PolicyRelevance } from './policy-relevance.ts';
import { SourceCache } from './source-cache.ts';
import { SpcDesiredState, podStatusSink, providerClassSink } from './spc-desired-state.ts';
import {
  createWatchCaches,
  type WatchCaches,
  type WatchHandler,
  WatchSubscribers,
} from './watch-caches.ts';
import { WatchErrorLog } from './watch-error-log.ts';
import {
  type KindPlanOptions,
  SOURCE_RESOURCES,
  type WatchPlanOptions,
  namespaceWatchTarget,
  plannedKinds,
  sourceWatchTargets,
  watchedSourceResources,
  workloadWatchTargets,
} from './watch-plan.ts';
import { workloadSink } from './workload-store.ts';
import { sourceTypeRow } from '../core/source-types.ts';

/**
 * List pages fetched at once across all list-watches. Unbounded, the initial lists of a scoped
 * install (one loop per namespace and kind) held hundreds of MiB of pages at once, and the process
 * kept that memory (see docs/performance.md). Pages are decoded one item at a time (ADR 0022), so
 * a page in flight holds one object and its connection's buffers, not the page: four at once let
 * kube-apiserver encode the next pages while kreload decodes one (K1, docs/performance.md).
 */
const LIST_PAGE_CONCURRENCY = 4;

const CSI_API: OptionalApi = {
  name: 'csi',
  group: 'secrets-store.csi.x-k8s.io',
  version: 'v1',
  plural: 'secretproviderclasspodstatuses',
};
const CSI_RESOURCES = sourceTypeRow('SECRETPROVIDERCLASS').watchResources;
/** kreload's own CRD (docs/reload-policy.md): optional like the other custom APIs. */
const POLICY_API: OptionalApi = {
  name: 'reloadpolicies',
  group: 'kreload.io',
  version: 'v1alpha1',
  plural: 'reloadpolicies',
};
/** What `/readyz` shows before the watches exist. */
const STARTING: WatchState = { resource: 'configmaps', namespace: undefined, status: 'syncing' };

/** D of `type` in `namespace` is known: each of its watches there is healthy (§5.1). */
function isTypeHealthy(
  watches: readonly ResourceWatch[],
  type: SourceType,
  namespace: string,
): boolean {
  // Asked for every tracked source at every reconcile, over every list-watch: no array per call.
  const resources = sourceTypeRow(type).watchResources;
  let relevant = false;
  for (const w of watches) {
    if (!resources.includes(w.resource)) continue;
    if (w.namespace !== undefined && w.namespace !== namespace) continue;
    if (w.status !== 'ok') return false;
    relevant = true;
  }
  return relevant;
}

function optionalKindApi(row: WorkloadKindRow): OptionalApi {
  const { group, version, plural } = workloadResource(row);
  return { name: row.kind, group, version, plural };
}

export interface WatchServerOptions extends WatchPlanOptions, KindPlanOptions {
  readonly annotationKeys: WatchCachesKeys;
  readonly enableCsiIntegration: boolean;
  /** Watch ReloadPolicies when their API is served (`--enable-reload-policies`). */
  readonly enableReloadPolicies: boolean;
}
type WatchCachesKeys = Parameters<typeof createWatchCaches>[0]['keys'];

export interface WatchServerDeps {
  readonly options: WatchServerOptions;
  /** The effective kind table: the kinds to watch, built in and configured. */
  readonly kinds: KindTable;
  readonly transport: StreamingKubeTransport;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly timers: Timers;
  readonly random: () => number;
  /** When kreload last wrote a workload (the write ledger of ADR 0014), for the store's reads. */
  readonly writeBasis: (key: WorkloadKey) => number | undefined;
  /** Active-active: the namespaces this replica keeps in its caches (docs/adr/0053). */
  readonly holdsNamespace?: ((namespace: string) => boolean) | undefined;
}

/** The parts a watch server is made of (createWatchServer builds them). */
export interface WatchServerParts {
  readonly deps: WatchServerDeps;
  readonly caches: WatchCaches;
  readonly subscribers: WatchSubscribers;
  /** Every list-watch, filled by `start()` and by late APIs; the caches read their health. */
  readonly watches: ResourceWatch[];
}

/** What exists from `start()` on: the list-watch factory and the optional-API discovery. */
interface Running {
  readonly factory: WatchFactory;
  readonly apis: OptionalApis;
}

export class WatchServer {
  readonly #parts: WatchServerParts;
  #running: Running | undefined;
  /** Optional workload kinds planned for this configuration, and their APIs. */
  readonly #optionalKinds = new Map<WorkloadKindName, OptionalApi>();
  #csiPlanned = false;
  #policiesPlanned = false;
  /** The startup watches exist; a late API's watches are added after them. */
  readonly #startedUp = Promise.withResolvers<undefined>();
  #watching = false;
  readonly #stopping = Promise.withResolvers<undefined>();
  #stopped = false;
  /** The last network failure of a list-watch, until some watch is healthy again (§13.1). */
  #apiUnreachable: string | undefined;

  constructor(parts: WatchServerParts) {
    this.#parts = parts;
  }

  /** The caches the reconciler reads; only the watch server writes them. */
  get caches(): WatchCaches {
    return this.#parts.caches;
  }

  /** The handler is called for every event after the caches reflect it (an informer's handler). */
  subscribe(handler: WatchHandler): void {
    this.#parts.subscribers.add(handler);
  }

  /** Discovery (§13.5 step 4), then every list-watch started. The initial lists go on after. */
  async start(): Promise<void> {
    if (this.#isStopped()) return;
    const { options } = this.#parts.deps;
    const { caches } = this.#parts;
    const running = this.#start();
    const { factory } = running;
    for (const resource of watchedSourceResources(options)) {
      const cache = caches.byType[SOURCE_RESOURCES[resource]];
      if (cache) {
        const targets = sourceWatchTargets(options, resource);
        this.#watches.push(...factory.sources(resource, targets, cache));
      }
    }
    const discovered = await this.#startupDiscovery(running.apis);
    if (discovered.csi) this.#watches.push(...this.#csiWatches(factory));
    if (await this.#policiesServed(running.apis)) {
      this.#watches.push(...this.#policyWatches(factory));
    }
    for (const kind of discovered.kinds) {
      const targets = workloadWatchTargets(options);
      this.#watches.push(
        ...factory.workloads(
          this.#parts.deps.kinds.row(kind),
          targets,
          workloadSink(caches.store, kind),
        ),
      );
    }
    const nsTarget = namespaceWatchTarget(options);
    if (nsTarget) {
      this.#watches.push(...factory.namespaces(nsTarget, namespaceSink(caches.namespaces)));
    }
    if (this.#isStopped()) return;
    for (const watch of this.#watches) watch.start();
    this.#watching = true;
    this.#startedUp.resolve(undefined);
  }

  /**
   * Every watch listed, or is forbidden or absent (§13.5 step 6), a late API's watches included;
   * or the server is stopping.
   */
  async initialSync(): Promise<void> {
    let waitedFor = -1;
    while (waitedFor !== this.#watches.length && !this.#stopped) {
      waitedFor = this.#watches.length;
      const settled = Promise.all(this.#watches.map((watch) => watch.settled));
      await Promise.race([settled, this.#stopping.promise]);
    }
  }

  /** `workloads=…, kinds=resource=status,…`, for the "caches synced" log line. */
  syncSummary(): { readonly workloads: number; readonly kinds: string } {
    const kinds = new Set(this.#watches.map((w) => `${w.resource}=${w.status}`));
    return { workloads: this.#parts.caches.store.size, kinds: [...kinds].join(',') };
  }

  /** D of `type` in `namespace` is known: each of its watches there is healthy (§5.1). */
  isTypeHealthy(type: SourceType, namespace: string): boolean {
    return isTypeHealthy(this.#watches, type, namespace);
  }

  get #watches(): ResourceWatch[] {
    return this.#parts.watches;
  }

  /** Every list-watch, for `/readyz`; before they start, one `syncing` placeholder. */
  watchStates(): readonly WatchState[] {
    return this.#watching ? this.#watches : [STARTING];
  }

  /** Optional kinds that are not watched: absent, or their discovery failed (retried). */
  unwatchedKinds(): Record<string, 'absent' | 'error'> {
    const kinds: Record<string, 'absent' | 'error'> = {};
    const apis = this.#running?.apis;
    if (apis === undefined) return kinds;
    for (const api of this.#optionalKinds.values()) {
      const availability = apis.availability(api);
      if (availability === 'absent' || availability === 'error') kinds[api.plural] = availability;
    }
    // An absent CSI API is not listed (the flag only allows it); one that cannot be discovered is.
    if (this.#csiPlanned && apis.availability(CSI_API) === 'error') {
      for (const plural of CSI_RESOURCES) kinds[plural] = 'error';
    }
    // The flag asks for policies: say why there are none (CRD not installed, or not discoverable).
    const policies = this.#policiesPlanned ? apis.availability(POLICY_API) : undefined;
    if (policies === 'absent' || policies === 'error') kinds[POLICY_API.plural] = policies;
    return kinds;
  }

  apiServerStatus(): ApiServerStatus {
    if (this.#watches.some((watch) => watch.status === 'ok')) this.#apiUnreachable = undefined;
    return this.#apiUnreachable === undefined ? 'ok' : `unreachable: ${this.#apiUnreachable}`;
  }

  /** At each resync: optional APIs found absent are asked again. */
  recheckAbsentApis(): void {
    void this.#running?.apis.recheckAbsent();
  }

  /**
   * The namespaced list-watches that can hold objects of `affected` namespaces list again
   * (active-active, docs/adr/0053): every cluster-wide one, and the per-namespace ones of those
   * namespaces. Resolves once each one's list started after this call reached its cache, or it
   * cannot list now, or it stopped.
   */
  async relist(affected: (namespace: string) => boolean = () => true): Promise<void> {
    const relisted = this.#watches.filter(
      (watch) =>
        watch.resource !== 'namespaces' &&
        (watch.namespace === undefined || affected(watch.namespace)),
    );
    await Promise.all(relisted.map((watch) => watch.relist()));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#stopping.resolve(undefined);
    this.#running?.apis.stop();
    await Promise.all(this.#watches.map((w) => w.stop()));
  }

  /** A failure is retried by the OptionalApis, never taken as absent. */
  async #startupDiscovery(
    apis: OptionalApis,
  ): Promise<{ kinds: WorkloadKindName[]; csi: boolean }> {
    const { options, logger } = this.#parts.deps;
    const table = this.#parts.deps.kinds;
    const planned = plannedKinds(options, table);
    const kinds = [...planned.always];
    for (const kind of planned.ifServed) {
      const row = table.row(kind);
      const api = optionalKindApi(row);
      this.#optionalKinds.set(kind, api);
      const availability = await apis.probe(api);
      if (availability === 'served') kinds.push(kind);
      const warning = row.absentApiWarning;
      if (availability === 'absent' && warning !== undefined) logger.warn(warning, { kind });
    }
    if (!options.enableCsiIntegration) return { kinds, csi: false };
    this.#csiPlanned = true;
    const csi = await apis.probe(CSI_API);
    if (csi === 'absent') {
      logger.warn('Secrets Store CSI API is not served; CSI integration waits for it');
    }
    return { kinds, csi: csi === 'served' };
  }

  async #policiesServed(apis: OptionalApis): Promise<boolean> {
    const { options, logger } = this.#parts.deps;
    if (!options.enableReloadPolicies || this.#parts.caches.policies === undefined) return false;
    this.#policiesPlanned = true;
    const availability = await apis.probe(POLICY_API);
    if (availability === 'absent') {
      logger.warn(
        'ReloadPolicy API (kreload.io/v1alpha1) is not served; policies are not watched until its CRD is installed',
      );
    }
    return availability === 'served';
  }

  /** ReloadPolicies in the namespaces the workloads are watched in. */
  #policyWatches(factory: WatchFactory): ResourceWatch[] {
    const { options } = this.#parts.deps;
    const store = this.#parts.caches.policies;
    if (store === undefined) return [];
    return factory.policies(workloadWatchTargets(options), store);
  }

  /** SPCPS and SecretProviderClass watches feeding the §4.4 aggregator and its source cache. */
  #csiWatches(factory: WatchFactory): ResourceWatch[] {
    const { deps, caches, subscribers } = this.#parts;
    const cache = new SourceCache({
      type: 'SECRETPROVIDERCLASS',
      clock: { now: () => deps.timers.now() },
      notify: subscribers.onSourceEvent,
    });
    caches.byType.SECRETPROVIDERCLASS = cache;
    const state = new SpcDesiredState({ cache });
    const targets = sourceWatchTargets({ ...deps.options, includeHelmSecrets: true }, 'configmaps');
    return [
      ...factory.podStatuses(targets, podStatusSink(state)),
      ...factory.providerClasses(targets, providerClassSink(state)),
    ];
  }

  /** An optional API absent or failing at start is served now: watch it, no restart (§2.2). */
  async #watchLateApi(factory: WatchFactory, api: OptionalApi): Promise<void> {
    await Promise.race([this.#startedUp.promise, this.#stopping.promise]);
    if (this.#stopped) return;
    const { options, logger } = this.#parts.deps;
    const kind = [...this.#optionalKinds].find(([, candidate]) => candidate === api)?.[0];
    const store = this.#parts.caches.store;
    const watches =
      api === POLICY_API
        ? this.#policyWatches(factory)
        : kind === undefined
          ? this.#csiWatches(factory)
          : factory.workloads(
              this.#parts.deps.kinds.row(kind),
              workloadWatchTargets(options),
              workloadSink(store, kind),
            );
    this.#watches.push(...watches);
    for (const watch of watches) watch.start();
    logger.info('API is now served; watching it', { api: api.name });
    await Promise.all(watches.map((watch) => watch.synced));
    // Policies reach the router one by one (their list is not an event): reconcile every workload.
    if (api === POLICY_API) this.#parts.subscribers.onScopeJoined('reloadpolicies', undefined);
    else this.#parts.subscribers.onKindWatched(kind);
  }

  /** A method, not the field: the answer changes across the awaits of `start()`. */
  #isStopped(): boolean {
    return this.#stopped;
  }

  #start(): Running {
    const { deps, caches, subscribers } = this.#parts;
    const { options, logger, metrics } = deps;
    const keys = options.annotationKeys;
    const watchErrors = new WatchErrorLog({
      log: new RateLimitedLog({ logger, now: () => deps.timers.now() }),
    });
    const listPages = new PQueue({ concurrency: LIST_PAGE_CONCURRENCY });
    const discoveryErrors = new RateLimitedLog({ logger, now: () => deps.timers.now() });
    const factory = new WatchFactory({
      transport: deps.transport,
      pageLimiter: (fetch) => listPages.add(fetch),
      projection: projectionSettings(options),
      metrics,
      holdsNamespace: deps.holdsNamespace,
      isFiltered: (namespace, annotations) =>
        !caches.namespaces.accepts(namespace) || annotations[keys.ignore] === 'true',
      onWatchError: (resource, namespace, error) => {
        metrics.recordError('watch_error');
        if (error.status === undefined) this.#apiUnreachable = error.message;
        watchErrors.report(resource, namespace, error);
      },
      onWatchStatus: (resource, namespace, status) => {
        if (status === 'ok') watchErrors.recovered(resource, namespace);
      },
      onNamespaceJoined: (resource, namespace) => {
        logger.info('list-watch can list now; watching it', { namespace, resource });
        subscribers.onScopeJoined(resource, namespace);
      },
    });
    const apis = new OptionalApis({
      discovery: new ApiDiscovery({ transport: deps.transport }),
      timers: deps.timers,
      random: deps.random,
      onServed: (api) =>
        this.#watchLateApi(factory, api).catch((error: unknown) => {
          logger.warn('cannot watch a newly served API', { api: api.name, error: String(error) });
        }),
      onError: (api, error, retryInMs) => {
        discoveryErrors.warn(`discovery/${api.name}`, 'API discovery failed; retrying', {
          api: `${api.group}/${api.version}`,
          error: error.message,
          retryInMs,
        });
      },
      onRecovered: (api, availability) => {
        discoveryErrors.forget(`discovery/${api.name}`);
        logger.info('API discovery answers again', { api: api.name, availability });
      },
    });
    this.#running = { factory, apis };
    return this.#running;
  }
}

/** A watch server with its caches; its list-watches and discovery are made when it starts. */
export function createWatchServer(deps: WatchServerDeps): WatchServer {
  const { options } = deps;
  const subscribers = new WatchSubscribers();
  const watches: ResourceWatch[] = [];
  const caches = createWatchCaches(
    {
      sourceTypes: watchedSourceResources(options).map((resource) => SOURCE_RESOURCES[resource]),
      keys: options.annotationKeys,
      scope: {
        mode: options.scope.mode === 'global' ? 'global' : 'scoped',
        ignored: options.scope.ignoreNamespaces,
        selectorEnabled: options.scope.namespaceSelector !== '',
      },
      clock: { now: () => deps.timers.now() },
      timers: deps.timers,
      writeBasis: deps.writeBasis,
      isTypeHealthy: (type, namespace) => isTypeHealthy(watches, type, namespace),
      reloadPolicies: options.enableReloadPolicies,
    },
    subscribers,
  );
  // First subscriber: the routers' passes read relevantSince after a policy binding moved it.
  if (caches.policies !== undefined) {
    subscribers.add(new PolicyRelevance({ policies: caches.policies, store: caches.store }));
  }
  return new WatchServer({ deps, caches, subscribers, watches });
}
