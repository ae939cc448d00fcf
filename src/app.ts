/**
 * Composition root (§13.5): constructs every component, then starts them in the contract's order:
 * HTTP (not ready) → discovery → watches → initial sync → ready → leader election or immediate
 * lead. Stop reverses it within the drain deadline. The route of a change: docs/architecture.md.
 */
import { Registry } from 'prom-client';
import type { App, AppDeps, Runtime } from './app/app-types.ts';
import { replayRecreations, recreationJournal, writeMetaInfo } from './app/leader-term.ts';
import { type BaselineStoreRuntime, createBaselineStore } from './app/baseline-store.ts';
import { createAlerts, createEventNotifications, createWebhookMode } from './app/notifications.ts';
import { createElector } from './app/election.ts';
import {
  createShard,
  keysInBucket,
  shardCacheFilter,
  keysOwned,
  shardFacts,
  shardPorts,
  shardReadiness,
} from './app/shard.ts';
import { controllerExplainPorts, createHttpServers } from './app/http-servers.ts';
import { loadKubeConfig } from './app/kube-config.ts';
import { createPipeline, reconcileOptionsOf } from './app/pipeline.ts';
import { drainAndRelease } from './app/shutdown.ts';
import type { Options } from './config/parse-options.ts';
import { WriteLedger } from './controller/write-ledger.ts';
import type { WatchReadiness } from './http/readiness.ts';
import { createKubeTransport } from './kube/transport.ts';
import { PolicyStatusClient } from './kube/policy-status-client.ts';
import { WorkloadClient } from './kube/workload-client.ts';
import { KubePodClient } from './kube/pod-client.ts';
import { KubeSnapshotClient } from './kube/snapshot-client.ts';
import { projectionSettings } from './kube/projections.ts';
import { LeadershipGate } from './leader/leadership-gate.ts';
import { createBaselineStoreMetrics } from './metrics/baseline-store-metrics.ts';
import { createMetrics } from './metrics/metrics.ts';
import { registerCacheMetrics } from './metrics/cache-metrics.ts';
import { PeriodicResync } from './queue/resync.ts';
import { kindTable } from './rollout/kinds.ts';
import { yieldToEventLoop } from './time/event-loop.ts';
import { SYSTEM_TIMERS } from './time/timers.ts';
import { markMaxAgeMs } from './watch/marks.ts';
import { cachedObjectCounts } from './watch/watch-caches.ts';
import { createWatchServer } from './watch/watch-server.ts';

/** The watches' readiness, with the baseline store's first list beside them when it is in use. */
function watchReadiness(
  watch: WatchReadiness,
  baselines: BaselineStoreRuntime | undefined,
): WatchReadiness {
  if (baselines === undefined) return watch;
  return {
    watchStates: () => [...watch.watchStates(), ...baselines.readiness()],
    unwatchedKinds: () => watch.unwatchedKinds(),
    apiServerStatus: () => watch.apiServerStatus(),
  };
}

class KreloadApp implements App {
  readonly #options: Options;
  readonly #deps: AppDeps;
  #runtime: Runtime | undefined;
  readonly #stopping = Promise.withResolvers<undefined>();

  constructor(options: Options, deps: AppDeps) {
    this.#options = options;
    this.#deps = deps;
  }

  async start(): Promise<void> {
    const runtime = this.#construct();
    this.#runtime = runtime;
    const { logger } = this.#deps;
    logger.debug('HTTP listener started', { metricsPort: await runtime.health.start() });
    if (runtime.probes) {
      logger.debug('probe listener started', { healthPort: await runtime.probes.start() });
    }
    if (runtime.profiling) {
      logger.info('profiling listener started', { port: await runtime.profiling.start() });
    }
    await runtime.watch.start();
    runtime.baselines?.watch.start();
    await runtime.watch.initialSync();
    if (runtime.baselines) await this.#baselineStoreSynced(runtime.baselines);
    if (runtime.gate.shuttingDown) return;
    logger.info('caches synced', {
      ...runtime.watch.syncSummary(),
      ...(runtime.baselines && { baselineStore: runtime.baselines.namespace }),
    });
    if (runtime.elector) runtime.elector.start();
    else this.#lead(runtime);
    // Active-active: each bucket's workloads are reconciled as its Lease is acquired.
    runtime.shard?.coordinator.start();
    runtime.resync.start();
  }

  /**
   * A first sight must see the store's records (docs/adr/0046): nothing is reconciled before its
   * first list. Shutdown ends the wait.
   */
  async #baselineStoreSynced(baselines: BaselineStoreRuntime): Promise<void> {
    await Promise.race([baselines.settled, this.#stopping.promise]);
  }

  async stop(reason: string): Promise<void> {
    const runtime = this.#runtime;
    if (!runtime) return;
    this.#stopping.resolve(undefined);
    runtime.gate.beginShutdown();
    runtime.resync.stop();
    this.#deps.logger.info('stopping', { reason });
    const { queue } = runtime.pipeline;
    queue.stop();
    await drainAndRelease({
      queue,
      elector: runtime.elector ?? runtime.shard?.coordinator,
      logger: this.#deps.logger,
      onDrained: () => {
        runtime.gate.stepDown();
      },
    });
    await runtime.baselines?.store.stop();
    await runtime.baselines?.watch.stop();
    await runtime.watch.stop();
    for (const sender of runtime.senders) await sender.stop();
    await runtime.profiling?.stop();
    await runtime.health.stop();
    await runtime.probes?.stop();
  }

  #construct(): Runtime {
    const options = this.#options;
    const { logger } = this.#deps;
    const registry = new Registry();
    const metrics = createMetrics(registry, { countByNamespace: options.metricsCountByNamespace });
    const kubeConfig = loadKubeConfig(options);
    const transport = createKubeTransport({ kubeConfig, metrics });
    const shard = createShard({
      options,
      transport,
      logger,
      metrics,
      onAcquired: (bucket) => {
        this.#reconcileBucket(bucket);
      },
      refill: (affected) => this.#refill(affected),
    });
    const elector = createElector({
      options,
      transport,
      logger,
      onStartedLeading: () => {
        if (this.#runtime) this.#lead(this.#runtime);
      },
      onLostLeading: (reason) => {
        this.#runtime?.gate.stepDown();
        this.#runtime?.pipeline.queue.stop();
        this.#deps.onFatal(new Error(`leadership lost: ${reason}`));
      },
    });
    const gate = new LeadershipGate({
      lease: elector,
      onLeadingChanged: (leading) => {
        metrics.setLeader(leading);
      },
    });
    metrics.setLeader(gate.leading);
    const writes = new WriteLedger();
    const kinds = kindTable(options.customWorkloadKinds);
    const workloadWriter = new WorkloadClient({
      transport,
      projection: projectionSettings(options),
      kinds,
    });
    const ports = shardPorts(shard, {
      writer: workloadWriter,
      pods: new KubePodClient({ transport }),
      rollouts: options.rollouts,
    });
    const baselines = createBaselineStore({
      options,
      transport,
      logger,
      timers: SYSTEM_TIMERS,
      random: Math.random,
      mayWrite: () => gate.mayWrite(),
      fence: ports.baselines,
      contextNamespace: kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace,
      onFellBack: () => {
        this.#resync();
      },
      metrics: createBaselineStoreMetrics(registry, () => this.#runtime?.baselines?.store),
      testFailpoint: this.#deps.testFailpoint,
    });
    const watch = createWatchServer({
      options,
      kinds,
      transport,
      metrics,
      logger,
      timers: SYSTEM_TIMERS,
      random: Math.random,
      writeBasis: (key) => writes.basis(key),
      holdsNamespace: shardCacheFilter(shard),
    });
    registerCacheMetrics(registry, () => cachedObjectCounts(watch.caches));
    const context = { options, transport, metrics, logger, gate, version: this.#deps.version };
    const alerts = createAlerts(context);
    const webhook = createWebhookMode(context);
    const pipeline = createPipeline({
      watch,
      writes,
      writer: ports.writer,
      reconcile: reconcileOptionsOf(options, kinds),
      concurrency: options.workerThreads,
      debounce: { syncDelayMs: options.syncDelay, syncMaxDelayMs: options.syncMaxDelay },
      metrics,
      logger,
      notifications: (work) => createEventNotifications(context, work),
      alerts,
      gate,
      journal: recreationJournal(context, {
        contextNamespace: kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace,
        isSelected: (namespace) => watch.caches.namespaces.isSelected(namespace),
      }),
      snapshots: options.enableConfigRevisions ? new KubeSnapshotClient({ transport }) : undefined,
      pods: ports.pods,
      webhook: webhook?.mode,
      timers: SYSTEM_TIMERS,
      random: Math.random,
      pause: yieldToEventLoop,
      policyStatus: options.enableReloadPolicies
        ? new PolicyStatusClient({ transport })
        : undefined,
      rollouts: ports.rollouts,
      holds: { windowsEnabled: options.enableRestartWindows, flapLimits: options.flapBreaker },
      baselines: baselines?.store,
      owns: ports.owns,
    });
    const { health, probes, profiling } = createHttpServers({
      options,
      registry,
      logger,
      readiness: {
        watch: watchReadiness(watch, baselines),
        election: shard ? shardReadiness(shard.coordinator) : elector,
        shuttingDown: () => gate.shuttingDown,
        haltedRollouts: () =>
          pipeline.reconciler
            .haltedChanges()
            .map(({ source, hash }) => `${source}@${hash.slice(0, 12)}`),
        breakers: pipeline.breakers,
      },
      explain: controllerExplainPorts({
        ...{ options, kinds, watch, pipeline, gate },
        shard: shard && shardFacts(shard.coordinator),
        baselines: baselines?.store,
      }),
    });
    const resync = new PeriodicResync({
      periodMs: options.resyncPeriod,
      timers: SYSTEM_TIMERS,
      random: Math.random,
      onResync: () => {
        this.#resync();
      },
    });
    const senders = [...(alerts ? [alerts] : []), ...(webhook ? [webhook] : [])];
    return {
      ...{ health, probes, profiling, watch, gate, elector, pipeline, resync, senders, context },
      baselines,
      shard,
    };
  }

  /** Acquiring leadership, or starting without HA: reconcile every workload at once (§5.2). */
  #lead(runtime: Runtime): void {
    if (!runtime.gate.lead()) return;
    runtime.pipeline.adoptRollouts();
    runtime.pipeline.queue.start();
    this.#reconcileAll(runtime);
    this.#flushFirstSights(runtime);
    writeMetaInfo(runtime.context);
  }

  /**
   * The lead's first pass records a first-sight baseline per workload without state; they go out
   * as soon as the pass is over rather than at the store's next interval, which would hold the
   * pass's last records up to a second longer (docs/adr/0046).
   */
  #flushFirstSights(runtime: Runtime): void {
    const store = runtime.baselines?.store;
    if (store === undefined) return;
    void runtime.pipeline.queue
      .idle()
      .then(async () => {
        if (!runtime.gate.shuttingDown) await store.flush();
      })
      .catch(() => undefined);
  }

  /** The shard's cache scope changed (active-active): the caches list again to fill or empty. */
  async #refill(affected: (namespace: string) => boolean): Promise<void> {
    await this.#runtime?.watch.relist(affected);
  }

  /** A bucket's Lease acquired (active-active): its workloads, as on taking the lead. */
  #reconcileBucket(bucket: number): void {
    const runtime = this.#runtime;
    if (!runtime?.shard || runtime.gate.shuttingDown) return;
    const { coordinator } = runtime.shard;
    const keys = runtime.watch.caches.store.keys();
    runtime.pipeline.router.triggerAll(keysInBucket(keys, bucket, coordinator));
    // A Job its previous owner deleted and did not create again is in no cache: only in the journal.
    replayRecreations(runtime.context, runtime.pipeline, (journalled) =>
      keysInBucket(journalled, bucket, coordinator),
    );
  }

  /** Every workload and every policy status again; Jobs deleted but not re-created replayed. */
  #reconcileAll(runtime: Runtime): void {
    const keys = runtime.watch.caches.store.keys();
    const { shard } = runtime;
    runtime.pipeline.router.triggerAll(shard ? keysOwned(keys, shard.coordinator) : keys);
    runtime.pipeline.policyStatus?.refreshAll();
    replayRecreations(
      runtime.context,
      runtime.pipeline,
      shard && ((journalled) => keysOwned(journalled, shard.coordinator)),
    );
    this.#sweepBaselines(runtime);
  }

  /**
   * The leader removes the store's records of workloads that no longer exist (docs/adr/0046), at
   * every full reconcile; only when every watch is read, so a namespace it cannot list now never
   * looks empty. Never in dry-run or webhook mode, which record no baseline and remove none
   * (§13.7, §13.8).
   */
  #sweepBaselines(runtime: Runtime): void {
    const { baselines, watch, gate, context } = runtime;
    if (baselines === undefined || !gate.leading) return;
    if (context.options.dryRun || context.options.webhookUrl !== undefined) return;
    if (watch.watchStates().some((state) => state.status !== 'ok')) return;
    const live = new Set<string>();
    for (const key of watch.caches.store.keys()) {
      const uid = watch.caches.store.get(key)?.uid;
      if (uid !== undefined) live.add(uid);
    }
    // Active-active: another replica writes the records of its own namespaces, perhaps of a
    // workload this replica's caches have not seen yet.
    const { shard } = runtime;
    const mine = (namespace: string) => shard?.coordinator.owns(namespace) ?? true;
    const removed = baselines.store.sweep((namespace, uid) => mine(namespace) && !live.has(uid));
    if (removed > 0) {
      this.#deps.logger.info('baseline records of deleted workloads removed', {
        namespace: baselines.namespace,
        records: removed,
      });
    }
  }

  /** Every workload again (§5.2); Jobs deleted but not re-created are replayed from the journal. */
  #resync(): void {
    const runtime = this.#runtime;
    if (!runtime || runtime.gate.shuttingDown) return;
    runtime.pipeline.marks.expire(Date.now(), markMaxAgeMs(this.#options.syncMaxDelay));
    this.#reconcileAll(runtime);
    runtime.watch.recheckAbsentApis();
  }
}

export function createApp(options: Options, deps: AppDeps): App {
  return new KreloadApp(options, deps);
}
