/**
 * Composition root (§13.5): builds every component for one set of options and runs them in the
 * startup order of the contract: HTTP (not ready) → discovery → watches → initial sync → ready →
 * leader election or immediate reconcile. Stop reverses it within the drain deadline.
 */
import PQueue from 'p-queue';
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync, readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { AlertSender } from './alerts/alert-sender.ts';
import { createHttpTransport } from './alerts/http-transport.ts';
import type { AppDeps, App } from './cli/run.ts';
import { resolveKubeconfig } from './config/kubeconfig.ts';
import type { Options } from './config/parse-options.ts';
import { ChangeRouter } from './controller/change-router.ts';
import {
  CacheSourceLookup,
  StoreMarkLedger,
  StoreWorkloadLookup,
  WriteLedger,
} from './controller/lookups.ts';
import { ReconcileReporter } from './controller/reconcile-reporter.ts';
import { WebhookMode } from './controller/webhook-mode.ts';
import { TrackingTally } from './controller/tracking-tally.ts';
import { type ReconcileResume, WorkRunner } from './controller/work-runner.ts';
import { WebhookNotifier } from './alerts/webhook-notifier.ts';
import { ReloadListCache } from './core/annotation-values.ts';
import type { SourceType, WorkloadKind } from './core/types.ts';
import { EventRecorder } from './events/event-recorder.ts';
import { FanoutTracker } from './events/fanout-tracker.ts';
import { buildReadinessReport } from './http/readiness.ts';
import type {
  ApiServerStatus,
  KindStatus,
  LeaderElectionStatus,
  WatchState,
} from './http/readiness.ts';
import { HealthServer } from './http/health-server.ts';
import { ApiDiscovery } from './kube/discovery.ts';
import { EventClient } from './kube/event-client.ts';
import { LeaseClient } from './kube/lease-client.ts';
import { workloadResource } from './kube/resources.ts';
import { ConfigMapClient } from './kube/config-map-client.ts';
import { createKubeTransport } from './kube/transport.ts';
import type { KubeTransport } from './kube/transport.ts';
import { ProfilingServer } from './http/profiling-server.ts';
import { drainAndRelease } from './app/shutdown.ts';
import { META_INFO_NAME, metaInfoConfigMap } from './app/meta-info.ts';
import type { BuildInfo } from './app/meta-info.ts';
import { WorkloadClient } from './kube/workload-client.ts';
import { KubeWorkloadWriter } from './kube/workload-writer.ts';
import { JOURNAL_NAME, KubeRecreationJournal } from './kube/recreation-journal.ts';
import type { RecreationJournal } from './reconcile/ports.ts';
import { LeaderElector } from './leader/leader-elector.ts';
import { systemClock, systemTimers } from './leader/system-time.ts';
import type { Logger } from './log/logger.ts';
import { createMetrics } from './metrics/metrics.ts';
import type { Metrics } from './metrics/metrics.ts';
import { SYSTEM_TIMERS } from './queue/timers.ts';
import { WorkQueue } from './queue/work-queue.ts';
import { Reconciler } from './reconcile/reconciler.ts';
import { findKindRow } from './rollout/kinds.ts';
import { MarkStore, markMaxAgeMs } from './watch/marks.ts';
import { NamespaceFilter, namespaceSink } from './watch/namespace-filter.ts';
import { SourceCache, SourceCaches, sourceSink } from './watch/source-cache.ts';
import { WorkloadStore, workloadSink } from './watch/workload-store.ts';
import { SpcDesiredState, podStatusSink, providerClassSink } from './watch/spc-desired-state.ts';
import type { ResourceWatch } from './watch/kube-watches.ts';
import { WatchFactory } from './watch/kube-watches.ts';
import { WatchErrorLog } from './watch/watch-error-log.ts';
import { OptionalApis, type OptionalApi } from './watch/optional-apis.ts';
import { RateLimitedLog } from './log/rate-limited-log.ts';
import {
  SOURCE_RESOURCES,
  namespaceWatchTarget,
  plannedKinds,
  sourceWatchTargets,
  watchedSourceResources,
  workloadWatchTargets,
} from './watch/watch-plan.ts';

/**
 * List pages fetched at once across all list-watches. Each page can hold 500 objects of up to
 * ~1 MiB; unbounded, the initial lists of a scoped install (one loop per namespace and kind) held
 * hundreds of MiB of pages at once, and the process kept that memory (see docs/performance.md).
 */
const LIST_PAGE_CONCURRENCY = 2;
/** How long an Event waits at most for workload writes in flight to finish (ADR 0015). */
const EVENTS_YIELD_MAX_MS = 2_000;

/** The list-watches whose health decides whether a source type's D is known (§5.1). */
const SOURCE_TYPE_RESOURCES: Readonly<Record<SourceType, readonly string[]>> = {
  CONFIGMAP: ['configmaps'],
  SECRET: ['secrets'],
  SECRETPROVIDERCLASS: ['secretproviderclasspodstatuses', 'secretproviderclasses'],
};
const SYNC_POLL_MS = 100;
const CSI_API: OptionalApi = {
  name: 'csi',
  group: 'secrets-store.csi.x-k8s.io',
  version: 'v1',
  plural: 'secretproviderclasspodstatuses',
};
const CSI_RESOURCES = ['secretproviderclasspodstatuses', 'secretproviderclasses'] as const;

function optionalKindApi(kind: WorkloadKind): OptionalApi {
  const { group, version, plural } = workloadResource(kind);
  return { name: kind, group, version, plural };
}
/** What `/readyz` shows before the watches exist. */
const STARTING: WatchState = { resource: 'configmaps', namespace: undefined, status: 'syncing' };
const RESYNC_JITTER = 0.1;

function buildInfo(): BuildInfo {
  let releaseVersion = 'unknown';
  try {
    const manifest = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { version?: unknown };
    if (typeof manifest.version === 'string') releaseVersion = manifest.version;
  } catch {
    // Only the version string is lost.
  }
  return { nodeVersion: process.version, releaseVersion, commitHash: '', commitTime: '' };
}

/** The first match of §12.5's lookup; run.ts has already checked that it exists and parses. */
function loadKubeConfig(options: Options): KubeConfig {
  const lookup = resolveKubeconfig(options, existsSync);
  const kc = new KubeConfig();
  if (lookup.source === undefined) {
    throw new Error(`no cluster configuration: ${lookup.problems.join('; ')}`);
  }
  if (lookup.source.kind === 'in-cluster') kc.loadFromCluster();
  else kc.loadFromFile(lookup.source.path);
  return kc;
}

interface Runtime {
  readonly metrics: Metrics;
  readonly registry: Registry;
  readonly health: HealthServer;
  readonly watches: ResourceWatch[];
  readonly queue: WorkQueue<ReconcileResume>;
  readonly router: ChangeRouter;
  readonly store: WorkloadStore;
  readonly marks: MarkStore;
  readonly namespaces: NamespaceFilter;
  readonly events: EventRecorder;
  readonly alerts: AlertSender | undefined;
  readonly elector: LeaderElector | undefined;
  readonly kinds: Map<string, KindStatus>;
  readonly reconciler: Reconciler;
  readonly transport: KubeTransport;
  readonly factory: WatchFactory;
  readonly csi: CsiWiring;
}

/** What CSI watches need, at startup or when the API appears later. */
interface CsiWiring {
  readonly caches: Partial<Record<SourceType, SourceCache>>;
  readonly factory: WatchFactory;
  readonly routing: { router?: ChangeRouter };
}

class KreloadApp implements App {
  readonly #options: Options;
  readonly #deps: AppDeps;
  #runtime: Runtime | undefined;
  #leading = false;
  #shuttingDown = false;
  #cancelResync: (() => void) | undefined;
  readonly #stoppers: (() => Promise<void> | void)[] = [];
  readonly #runtimeReady = Promise.withResolvers<Runtime>();
  #apis: OptionalApis | undefined;
  /** The optional workload kinds planned for this configuration, and their APIs. */
  readonly #optionalKinds = new Map<WorkloadKind, OptionalApi>();
  #csiApi: OptionalApi | undefined;
  /** The last network failure of a list-watch, until some watch is healthy again (§13.1). */
  #apiUnreachable: string | undefined;

  constructor(options: Options, deps: AppDeps) {
    this.#options = options;
    this.#deps = deps;
  }

  async start(): Promise<void> {
    const options = this.#options;
    const logger = this.#deps.logger;
    const kc = loadKubeConfig(options);
    const registry = new Registry();
    const metrics = createMetrics(registry, { countByNamespace: options.metricsCountByNamespace });
    const transport = createKubeTransport({ kubeConfig: kc, metrics });
    metrics.setLeader(!options.leaderElection.enabled);
    this.#leading = !options.leaderElection.enabled;
    const kinds = new Map<string, KindStatus>();
    const health = new HealthServer({
      port: options.metricsPort,
      registry,
      readiness: () => this.#readiness(),
      liveness: () => ({ alive: this.#runtime?.elector?.state() !== 'lost' }),
      health: () => ({ ok: true }),
      onError: (error) => {
        logger.warn('health endpoint failed', { error: String(error) });
      },
    });
    const port = await health.start();
    logger.debug('HTTP listener started', { metricsPort: port });
    if (options.enablePprof) {
      const profiling = new ProfilingServer({
        host: options.pprofAddr.host,
        port: options.pprofAddr.port,
        onError: (error) => {
          logger.warn('profile request failed', { error: String(error) });
        },
      });
      const pprofPort = await profiling.start();
      this.#stoppers.push(() => profiling.stop());
      logger.info('profiling listener started', { port: pprofPort });
    }

    const keys = options.annotationKeys;
    const reloadLists = new ReloadListCache();
    const marks = new MarkStore();
    const clock = { now: () => Date.now() };
    const routing: { router?: ChangeRouter } = {};
    const caches: Partial<Record<SourceType, SourceCache>> = {};
    for (const resource of watchedSourceResources(options)) {
      const type = SOURCE_RESOURCES[resource];
      caches[type] = new SourceCache({
        type,
        clock,
        notify: (event) => routing.router?.onSourceEvent(event),
      });
    }
    const sourceCaches = new SourceCaches({ caches });
    const store = new WorkloadStore({
      clock,
      keys,
      notify: (event) => routing.router?.onWorkloadEvent(event),
    });
    const namespaces = new NamespaceFilter({
      scope: {
        mode: options.scope.mode === 'global' ? 'global' : 'scoped',
        ignored: options.scope.ignoreNamespaces,
        selectorEnabled: options.scope.namespaceSelector !== '',
      },
      notify: (event) => {
        if (event.kind === 'entered') {
          routing.router?.triggerAll(store.keysInNamespace(event.namespace));
        } else this.#runtime?.queue.dropNamespace(event.namespace);
      },
    });

    const events = new EventRecorder({
      sink: new EventClient({ transport }),
      clock: { now: () => new Date() },
      component: 'kreload',
      instance: options.podName ?? 'kreload',
      canWrite: () => this.#mayWrite(),
      yieldTo: () =>
        this.#runtime?.queue.whenNoWorkInFlight(EVENTS_YIELD_MAX_MS) ?? Promise.resolve(),
      onError: (error) => {
        logger.warn('cannot write Event', {
          error: error.cause instanceof Error ? error.cause.message : error.message,
        });
      },
    });
    const fanouts = new FanoutTracker({ events, clock: { now: () => new Date() } });
    const alerts = this.#createAlerts(metrics, logger);

    const watches: ResourceWatch[] = [];
    const watchErrors = new WatchErrorLog({
      log: new RateLimitedLog({ logger, now: () => Date.now() }),
    });
    const listPages = new PQueue({ concurrency: LIST_PAGE_CONCURRENCY });
    const factory = new WatchFactory({
      transport,
      pageLimiter: (fetch) => listPages.add(fetch),
      keys,
      metrics,
      isFiltered: (namespace, annotations) =>
        !namespaces.accepts(namespace) || annotations[keys.ignore] === 'true',
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
        routing.router?.triggerAll(
          namespace === undefined ? store.keys() : store.keysInNamespace(namespace),
        );
      },
    });
    for (const resource of watchedSourceResources(options)) {
      const cache = caches[SOURCE_RESOURCES[resource]];
      if (cache) {
        watches.push(
          ...factory.sources(resource, sourceWatchTargets(options, resource), sourceSink(cache)),
        );
      }
    }
    const apis = this.#createOptionalApis(transport, logger);
    this.#apis = apis;
    const csi: CsiWiring = { caches, factory, routing };
    const discovered = await this.#startupDiscovery(apis);
    if (discovered.csi) watches.push(...this.#csiWatches(csi));
    for (const kind of discovered.kinds) {
      watches.push(
        ...factory.workloads(kind, workloadWatchTargets(options), workloadSink(store, kind)),
      );
    }
    const nsTarget = namespaceWatchTarget(options);
    if (nsTarget) watches.push(...factory.namespaces(nsTarget, namespaceSink(namespaces)));

    const writes = new WriteLedger();
    const reporter = new ReconcileReporter({
      logger,
      metrics,
      events,
      alerts,
      pausePeriodKey: keys.pausePeriod,
      sourceUid: (ref) => sourceCaches.get(ref.namespace, ref.type, ref.name)?.view.uid,
    });
    const reconciler = new Reconciler({
      workloads: new StoreWorkloadLookup({ store, writes }),
      sources: new CacheSourceLookup({
        caches: sourceCaches,
        isTypeHealthy: (type, namespace) => this.#sourceTypeHealthy(type, namespace),
      }),
      marks: new StoreMarkLedger({ marks }),
      writer: new KubeWorkloadWriter({ client: new WorkloadClient({ transport }), keys }),
      observer: reporter,
      options: {
        strategy: options.reloadStrategy,
        reloadOnCreate: options.reloadOnCreate,
        reloadOnDelete: options.reloadOnDelete,
        keys,
        autoReloadAll: options.autoReloadAll,
        dryRun: options.dryRun,
      },
      now: () => Date.now(),
      random: Math.random,
      reloadLists,
      mayWrite: () => this.#mayWrite(),
      journal: this.#recreationJournal(transport, logger),
    });
    const runner = new WorkRunner({
      reconcile: (key, trigger, resume) => reconciler.reconcile(key, trigger, resume),
      metrics,
      onFanoutFinish: (finish) => {
        fanouts.finish(finish);
      },
      now: () => Date.now(),
      tally: new TrackingTally({ gauges: metrics }),
      writes,
    });
    const queue = new WorkQueue<ReconcileResume>({
      concurrency: options.workerThreads,
      debounce: { syncDelayMs: options.syncDelay, syncMaxDelayMs: options.syncMaxDelay },
      handler: runner.handle,
      timers: SYSTEM_TIMERS,
      random: Math.random,
      observer: {
        depthChanged: (depth) => {
          metrics.setQueueDepth(depth);
        },
        added: () => {
          metrics.recordQueueAdd();
        },
        coalesced: () => {
          metrics.recordCoalesced();
        },
        started: (_key, latencyMs) => {
          metrics.recordQueueLatency(latencyMs / 1000);
        },
        handlerFailed: (key, error) => {
          metrics.recordError('handler_error');
          logger.error('reconcile failed', { workload: key, error: String(error) });
        },
      },
    });
    const webhook = this.#createWebhookMode(metrics, logger);
    const router = new ChangeRouter({
      webhook,
      store,
      marks,
      queue,
      keys,
      autoReloadAll: options.autoReloadAll,
      reloadOnDelete: options.reloadOnDelete,
      reloadLists,
      acceptsNamespace: (ns) => namespaces.accepts(ns),
      isLeading: () => this.#leading,
      onSkip: (reason) => {
        metrics.recordSkip(reason);
      },
      onFanout: (start) => {
        fanouts.begin(start);
      },
    });
    routing.router = router;
    this.#runtime = {
      metrics,
      registry,
      health,
      watches,
      queue,
      router,
      store,
      marks,
      namespaces,
      events,
      alerts,
      elector: undefined,
      kinds,
      reconciler,
      transport,
      factory,
      csi,
    };
    this.#runtimeReady.resolve(this.#runtime);
    for (const watch of watches) watch.start();
    await this.#waitForInitialSync();
    logger.info('caches synced', {
      workloads: store.size,
      kinds: [...new Set(watches.map((w) => `${w.resource}=${w.status}`))].join(','),
    });
    if (options.leaderElection.enabled) this.#startElection(transport, logger);
    else this.#lead();
    this.#scheduleResync();
  }

  async stop(reason: string): Promise<void> {
    this.#shuttingDown = true;
    const runtime = this.#runtime;
    this.#cancelResync?.();
    if (!runtime) return;
    this.#deps.logger.info('stopping', { reason });
    runtime.queue.stop();
    await drainAndRelease({
      queue: runtime.queue,
      elector: runtime.elector,
      logger: this.#deps.logger,
      onDrained: () => {
        this.#leading = false;
      },
    });
    await Promise.all(runtime.watches.map((w) => w.stop()));
    await runtime.alerts?.stop();
    for (const stopper of this.#stoppers) await stopper();
    await runtime.health.stop();
  }

  #createAlerts(metrics: Metrics, logger: Logger): AlertSender | undefined {
    const { alerts } = this.#options;
    if (!alerts.enabled || alerts.webhookUrl === undefined) return undefined;
    const transport = createHttpTransport({ proxyUrl: alerts.proxy });
    const sender = new AlertSender({
      url: alerts.webhookUrl,
      sink: alerts.sink,
      additionalInfo: alerts.additionalInfo,
      fetch: transport.fetch,
      timers: systemTimers,
      errors: metrics,
      onFailure: (error) => {
        logger.warn('alert not delivered', { error: error.message });
      },
      canSend: () => this.#mayWrite(),
    });
    sender.start();
    return sender;
  }

  #createWebhookMode(metrics: Metrics, logger: Logger): WebhookMode | undefined {
    const options = this.#options;
    if (options.webhookUrl === undefined) return undefined;
    const transport = createHttpTransport({});
    const notifier = new WebhookNotifier({
      url: options.webhookUrl,
      fetch: transport.fetch,
      timers: systemTimers,
      errors: metrics,
      onFailure: (error) => {
        logger.warn('webhook not delivered', { error: error.message });
      },
      canSend: () => this.#leading,
    });
    notifier.start();
    this.#stoppers.push(() => notifier.stop());
    const mode = new WebhookMode({
      notify: (notification) => {
        notifier.notify(notification);
      },
      timers: SYSTEM_TIMERS,
      syncDelayMs: options.syncDelay,
      syncMaxDelayMs: options.syncMaxDelay,
      keys: options.annotationKeys,
      autoReloadAll: options.autoReloadAll,
      reloadOnCreate: options.reloadOnCreate,
      reloadOnDelete: options.reloadOnDelete,
    });
    this.#stoppers.push(() => {
      mode.stop();
    });
    return mode;
  }

  /** SPCPS and SecretProviderClass watches feeding the §4.4 aggregator and its source cache. */
  #csiWatches(csi: CsiWiring): ResourceWatch[] {
    const cache = new SourceCache({
      type: 'SECRETPROVIDERCLASS',
      clock: { now: () => Date.now() },
      notify: (event) => csi.routing.router?.onSourceEvent(event),
    });
    csi.caches.SECRETPROVIDERCLASS = cache;
    const state = new SpcDesiredState({ cache });
    const options = this.#options;
    const targets = sourceWatchTargets({ ...options, includeHelmSecrets: true }, 'configmaps');
    return [
      ...csi.factory.podStatuses(targets, podStatusSink(state)),
      ...csi.factory.providerClasses(targets, providerClassSink(state)),
    ];
  }

  /** Discovery at startup (§13.5 step 4); a failure is retried by #apis, never taken as absent. */
  async #startupDiscovery(apis: OptionalApis): Promise<{ kinds: WorkloadKind[]; csi: boolean }> {
    const logger = this.#deps.logger;
    const planned = plannedKinds(this.#options);
    const kinds = planned.always.filter((kind) => findKindRow(kind) !== undefined);
    for (const kind of planned.ifServed) {
      const api = optionalKindApi(kind);
      this.#optionalKinds.set(kind, api);
      const availability = await apis.probe(api);
      if (availability === 'served') kinds.push(kind);
      if (availability === 'absent' && kind === 'Rollout') {
        logger.warn('Argo Rollouts API is not served; Rollouts are not watched until it is', {
          kind,
        });
      }
    }
    if (!this.#options.enableCsiIntegration) return { kinds, csi: false };
    this.#csiApi = CSI_API;
    const csi = await apis.probe(CSI_API);
    if (csi === 'absent') {
      logger.warn('Secrets Store CSI API is not served; CSI integration waits for it');
    }
    return { kinds, csi: csi === 'served' };
  }

  /** An optional API absent or failing at start is served now: watch it, no restart (§2.2). */
  async #watchLateApi(api: OptionalApi): Promise<void> {
    const runtime = await this.#runtimeReady.promise;
    if (this.#shuttingDown) return;
    const kind = [...this.#optionalKinds].find(([, candidate]) => candidate === api)?.[0];
    const watches =
      kind === undefined
        ? this.#csiWatches(runtime.csi)
        : runtime.factory.workloads(
            kind,
            workloadWatchTargets(this.#options),
            workloadSink(runtime.store, kind),
          );
    runtime.watches.push(...watches);
    for (const watch of watches) watch.start();
    this.#deps.logger.info('API is now served; watching it', { api: api.name });
    await Promise.all(watches.map((watch) => watch.synced));
    const prefix = `${kind ?? ''}/`;
    const keys = runtime.store.keys();
    runtime.router.triggerAll(kind === undefined ? keys : keys.filter((k) => k.startsWith(prefix)));
  }

  #createOptionalApis(transport: KubeTransport, logger: Logger): OptionalApis {
    const discoveryErrors = new RateLimitedLog({ logger, now: () => Date.now() });
    const apis = new OptionalApis({
      discovery: new ApiDiscovery({ transport }),
      timers: SYSTEM_TIMERS,
      random: Math.random,
      onServed: (api) =>
        this.#watchLateApi(api).catch((error: unknown) => {
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
    this.#stoppers.push(() => {
      apis.stop();
    });
    return apis;
  }

  #sourceTypeHealthy(type: SourceType, namespace: string): boolean {
    const resources = SOURCE_TYPE_RESOURCES[type];
    const watches =
      this.#runtime?.watches.filter(
        (w) =>
          resources.includes(w.resource) &&
          (w.namespace === undefined || w.namespace === namespace),
      ) ?? [];
    return watches.length > 0 && watches.every((w) => w.status === 'ok');
  }

  async #waitForInitialSync(): Promise<void> {
    const runtime = this.#runtime;
    if (!runtime) return;
    const settled = (w: ResourceWatch): boolean =>
      w.isSynced || w.status === 'forbidden' || w.status === 'absent';
    while (!this.#shuttingDown && !runtime.watches.every(settled)) {
      await new Promise((resolve) => setTimeout(resolve, SYNC_POLL_MS));
    }
  }

  #startElection(transport: ReturnType<typeof createKubeTransport>, logger: Logger): void {
    const runtime = this.#runtime;
    const { leaderElection } = this.#options;
    if (!runtime || leaderElection.namespace === undefined) return;
    const elector = new LeaderElector({
      store: new LeaseClient({ transport }),
      identity: leaderElection.identity ?? this.#options.podName ?? 'kreload',
      name: leaderElection.id,
      namespace: leaderElection.namespace,
      clock: systemClock,
      timers: systemTimers,
      onStartedLeading: () => {
        logger.info('leadership acquired', { lease: leaderElection.id });
        this.#lead();
      },
      onLostLeading: (reason) => {
        this.#leading = false;
        runtime.metrics.setLeader(false);
        runtime.queue.stop();
        logger.error('leadership lost; exiting', { reason });
        this.#deps.onFatal(new Error(`leadership lost: ${reason}`));
      },
      onError: (error) => {
        logger.warn('lease request failed', { error: error.message });
      },
    });
    this.#runtime = { ...runtime, elector };
    elector.start();
  }

  /** Acquiring leadership, or starting without HA: reconcile every workload at once (§5.2). */
  #lead(): void {
    const runtime = this.#runtime;
    if (!runtime || this.#shuttingDown) return;
    this.#leading = true;
    runtime.metrics.setLeader(true);
    runtime.queue.start();
    runtime.router.triggerAll(runtime.store.keys());
    this.#replayRecreations(runtime);
    this.#writeMetaInfo(runtime.transport);
  }

  /**
   * The Job recreation journal (docs/adr/0019) in kreload's own namespace. Without `POD_NAMESPACE`
   * (outside a cluster) it lives in this process only, and a crash between a Job's DELETE and its
   * CREATE loses the Job: said once at start.
   */
  #recreationJournal(transport: KubeTransport, logger: Logger): RecreationJournal | undefined {
    const namespace = this.#options.podNamespace;
    if (this.#options.ignoredWorkloadTypes.includes('jobs')) return undefined;
    if (namespace === undefined) {
      logger.warn(
        'POD_NAMESPACE is not set: Job recreations are journalled in memory only, and a Job ' +
          'deleted by a roll is lost if kreload stops before creating it again',
      );
      return undefined;
    }
    return new KubeRecreationJournal({
      transport,
      namespace,
      onInvalidEntry: (key, reason) => {
        logger.warn('ignoring an invalid Job recreation journal entry', {
          journal: `${namespace}/${JOURNAL_NAME}`,
          key,
          reason,
        });
      },
    });
  }

  /**
   * Reads the journal and enqueues every Job whose recreation is pending (docs/adr/0019): on gaining
   * leadership and at each resync, so a recreation another process journalled is finished here.
   * Never in dry-run: finishing one is a write.
   */
  #replayRecreations(runtime: Runtime): void {
    if (this.#options.dryRun) return;
    runtime.reconciler
      .replayRecreations()
      .then((keys) => {
        runtime.router.triggerAll(keys);
      })
      .catch((error: unknown) => {
        this.#deps.logger.warn(
          'cannot read the Job recreation journal; retried at the next resync',
          {
            error: error instanceof Error ? error.message : String(error),
          },
        );
        runtime.router.triggerAll(runtime.reconciler.pendingRecreations());
      });
  }

  /** Once per leadership term; a failure is logged and ignored (§13.10). */
  #writeMetaInfo(transport: KubeTransport): void {
    const namespace = this.#options.metaInfo.namespace;
    if (namespace === undefined || this.#options.dryRun) return;
    const body = metaInfoConfigMap({ options: this.#options, build: buildInfo(), namespace });
    new ConfigMapClient({ transport })
      .upsert(namespace, META_INFO_NAME, body)
      .catch((error: unknown) => {
        this.#deps.logger.warn('cannot write the meta-info ConfigMap', {
          namespace,
          error: error instanceof Error ? error.message : String(error),
        });
      });
  }

  #mayWrite(): boolean {
    if (this.#shuttingDown && !this.#leading) return false;
    const elector = this.#runtime?.elector;
    return this.#leading && (elector === undefined || elector.canWrite());
  }

  #scheduleResync(): void {
    const period = this.#options.resyncPeriod;
    if (period <= 0) return;
    const delay = period * (1 - RESYNC_JITTER + Math.random() * 2 * RESYNC_JITTER);
    this.#cancelResync = SYSTEM_TIMERS.schedule(delay, () => {
      const runtime = this.#runtime;
      if (runtime && !this.#shuttingDown) {
        runtime.marks.expire(Date.now(), markMaxAgeMs(this.#options.syncMaxDelay));
        runtime.router.triggerAll(runtime.store.keys());
        // Jobs deleted but not re-created are no longer in the store; the queue keeps their
        // retries exclusive with any other work on the same key (§7.4 item 4).
        this.#replayRecreations(runtime);
        void this.#apis?.recheckAbsent();
        this.#scheduleResync();
      }
    });
  }

  /** Optional kinds that are not watched: absent, or their discovery failed (retried). */
  #unwatchedKinds(): Record<string, 'absent' | 'error'> {
    const kinds: Record<string, 'absent' | 'error'> = {};
    const apis = this.#apis;
    if (apis === undefined) return kinds;
    for (const api of this.#optionalKinds.values()) {
      const availability = apis.availability(api);
      if (availability === 'absent' || availability === 'error') kinds[api.plural] = availability;
    }
    // An absent CSI API is not listed (the flag only allows it); one that cannot be discovered is.
    if (this.#csiApi !== undefined && apis.availability(this.#csiApi) === 'error') {
      for (const plural of CSI_RESOURCES) kinds[plural] = 'error';
    }
    return kinds;
  }

  #apiServerStatus(): ApiServerStatus {
    const watches = this.#runtime?.watches ?? [];
    if (watches.some((watch) => watch.status === 'ok')) this.#apiUnreachable = undefined;
    return this.#apiUnreachable === undefined ? 'ok' : `unreachable: ${this.#apiUnreachable}`;
  }

  #readiness(): ReturnType<typeof buildReadinessReport> {
    const runtime = this.#runtime;
    const elector = runtime?.elector;
    let leaderElection: LeaderElectionStatus = 'disabled';
    if (this.#options.leaderElection.enabled) leaderElection = elector?.state() ?? 'follower';
    const lastRead = elector?.lastObservedAt;
    return buildReadinessReport({
      watches: runtime?.watches ?? [STARTING],
      unwatched: this.#unwatchedKinds(),
      apiServer: this.#apiServerStatus(),
      leaderElection,
      leaseReadAgoMs: lastRead === undefined ? undefined : systemClock.monotonicMs() - lastRead,
      shuttingDown: this.#shuttingDown,
    });
  }
}

export function createApp(options: Options, deps: AppDeps): App {
  return new KreloadApp(options, deps);
}
