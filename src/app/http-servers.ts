/**
 * The health server with `/readyz` over the running parts and, with `--enable-debug-explain`,
 * `/debug/explain` over the controller's read ports; and the optional profiling server.
 */
// js-yaml (client-node's own YAML library, the same copy) rather than client-node's dumpYaml, which
// would load client-node's whole generated API into the controller (ADR 0032).
import { dump } from 'js-yaml';
import type { Registry } from 'prom-client';
import type { Options } from '../config/parse-options.ts';
import type { KindTable } from '../rollout/kinds.ts';
import { HealthServer } from '../http/health-server.ts';
import { ProfilingServer } from '../http/profiling-server.ts';
import { aggregateReadiness, type ReadinessSources } from '../http/readiness.ts';
import type { Logger } from '../log/logger.ts';
import { SYSTEM_CLOCK } from '../time/timers.ts';
import type { ControllerExplainPorts } from '../explain/controller-explain.ts';
import { explainFromController, queueStateOf } from '../explain/controller-explain.ts';
import type { LeadershipGate } from '../leader/leadership-gate.ts';
import type { ShardFacts } from '../explain/model.ts';
import type { WatchServer } from '../watch/watch-server.ts';
import type { Pipeline } from './pipeline.ts';
import { debugExplainReply } from '../explain/debug-endpoint.ts';

export interface HttpServers {
  readonly health: HealthServer;
  /** `--health-addr` only: the probes on a listener of their own, as Reloader 2.0 serves them. */
  readonly probes: HealthServer | undefined;
  /** `--enable-pprof` only. */
  readonly profiling: ProfilingServer | undefined;
}

export function createHttpServers(parts: {
  readonly options: Options;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly readiness: Omit<ReadinessSources, 'monotonicMs'>;
  /** Read only when --enable-debug-explain is set. */
  readonly explain: ControllerExplainPorts;
}): HttpServers {
  const { options, logger, readiness } = parts;
  const probeDeps = {
    registry: parts.registry,
    readiness: () =>
      aggregateReadiness({ ...readiness, monotonicMs: () => SYSTEM_CLOCK.monotonicMs() }),
    liveness: () => ({ alive: readiness.election?.state() !== 'lost' }),
    health: () => ({ ok: true }),
    onError: (error: unknown) => {
      logger.warn('health endpoint failed', { error: String(error) });
    },
  };
  const probes =
    options.healthAddr === undefined
      ? undefined
      : new HealthServer({
          ...probeDeps,
          host: options.healthAddr.host,
          port: options.healthAddr.port,
          probesOnly: true,
        });
  const health = new HealthServer({
    ...probeDeps,
    port: options.metricsPort,
    host: options.metricsHost,
    ...(options.enableDebugExplain
      ? {
          explain: (query: URLSearchParams) =>
            debugExplainReply(
              query,
              parts.explain.kinds,
              (target) => explainFromController(parts.explain, target),
              (value) => dump(value),
            ),
        }
      : {}),
  });
  const profiling = options.enablePprof
    ? new ProfilingServer({
        host: options.pprofAddr.host,
        port: options.pprofAddr.port,
        onError: (error) => {
          logger.warn('profile request failed', { error: String(error) });
        },
      })
    : undefined;
  return { health, probes, profiling };
}

/** `/debug/explain`'s view of the running controller: the caches, the queue and the leadership. */
export function controllerExplainPorts(parts: {
  readonly options: Options;
  readonly kinds: KindTable;
  readonly watch: WatchServer;
  readonly pipeline: Pipeline;
  readonly gate: LeadershipGate;
  /** Active-active mode: who writes each namespace. */
  readonly shard?: ((namespace: string) => ShardFacts) | undefined;
  readonly baselines?: ControllerExplainPorts['baselines'];
}): ControllerExplainPorts {
  const { options, kinds, watch, pipeline, gate, baselines } = parts;
  return {
    options,
    kinds,
    sources: watch.caches.sources,
    workloads: watch.caches.store,
    namespaceSelected: (namespace) => watch.caches.namespaces.isSelected(namespace),
    marks: pipeline.marks,
    policies: watch.caches.policies,
    recreationPendingSince: (key) => pipeline.reconciler.recreationPendingSince(key),
    breakers: pipeline.breakers,
    queue: (key) => queueStateOf(pipeline.queue, key),
    rollout: (key) => pipeline.rollouts.lastRollout(key),
    eviction: (key) => pipeline.evictions.of(key),
    workloadsInNamespace: (namespace) =>
      watch.caches.store
        .keysInNamespace(namespace)
        .flatMap((key) => watch.caches.store.get(key) ?? []),
    leading: () => gate.leading,
    shard: parts.shard,
    now: () => SYSTEM_CLOCK.now(),
    pod: options.podName,
    baselines,
  };
}
