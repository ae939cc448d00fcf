/**
 * The benchmark scenarios of /work/shared/bench/scenarios.md, one row each: default parameters
 * (every one can be overridden with `--param`), the objects to create, and the load script.
 */
import { envVarName } from '../../src/core/env-name.ts';
import type { SourceType } from './resources.ts';
import { sourceHash, type KeyVersions, type SourceSpec } from './sources.ts';
import {
  envFrom,
  PAUSE_PERIOD_ANNOTATION,
  type SourceUse,
  type WorkloadSpec,
} from './workloads.ts';

export type Params = Readonly<Record<string, number>>;

export interface ScenarioSetup {
  readonly namespaces: readonly string[];
  readonly sources: readonly SourceSpec[];
  readonly workloads: readonly WorkloadSpec[];
}

/** What a load script can do; the runner implements it and records everything it does. */
export interface ScenarioContext {
  readonly params: Params;
  readonly setup: ScenarioSetup;
  /** Starts the controller; by default waits until it reacts (the canary rolled). */
  startController(options?: { waitReady?: boolean }): Promise<void>;
  /**
   * Waits until the controller has sent no request but watches for `quietMs` (audit log), e.g. its
   * first-start pass over thousands of workloads; records the time since its start as "settled".
   */
  awaitQuiet(options: { quietMs: number; timeoutMs: number }): Promise<void>;
  /** SIGTERM, waits for the exit. */
  stopController(): Promise<void>;
  /** SIGKILL: a crash. */
  killController(): Promise<void>;
  /** Sets one data key (default: the first) to its next version; records time and new hash. */
  write(source: SourceSpec, options?: { key?: string; window?: string }): Promise<void>;
  /** Changes only an annotation: the content hash stays the same. */
  touch(source: SourceSpec): Promise<void>;
  createWorkload(spec: WorkloadSpec): Promise<void>;
  deleteWorkload(spec: WorkloadSpec): Promise<void>;
  /** Calls `action` every `intervalMs` for `durationMs` without waiting for the previous call. */
  every(
    timing: { intervalMs: number; durationMs: number },
    action: (tick: number) => Promise<void>,
  ): Promise<void>;
  sleep(ms: number): Promise<void>;
  /** Seeded: the same sequence for every controller of a run. */
  pick<T>(items: readonly T[]): T;
}

export interface ScenarioDefinition {
  readonly id: string;
  readonly title: string;
  readonly expectation: string;
  readonly defaults: Params;
  readonly strategy: 'env-vars' | 'annotations';
  /** kreload keeps its default --sync-delay (K2); otherwise it runs with --sync-delay=0. */
  readonly kreloadDefaults: boolean;
  /** S12: rollouts are counted as new ReplicaSets and checked against pause windows. */
  readonly pausePeriodMs?: (params: Params) => number;
  /**
   * Pods really run (kwok nodes). The runner waits, up to this many ms, for every Deployment's
   * rollout to complete before the controller starts and again after the load, and measures from
   * each change to the rollouts it caused being complete, from ReplicaSet state.
   */
  readonly podsRunMs?: (params: Params) => number;
  /** How long to wait for outstanding deliveries after the load (default 20 s). */
  readonly drainTimeoutMs?: (params: Params) => number;
  /** Quiet time after the last delivery, to catch late extra rollouts (default 2 s). */
  readonly settleMs?: (params: Params) => number;
  /**
   * The controller watches the whole cluster (no `--namespaces`), as a sharded deployment does;
   * the run's namespaces are deleted and waited for afterwards, so that the next controller sees
   * the same objects. Run such a scenario on its own: it sees what earlier scenarios left.
   */
  readonly clusterWide?: boolean;
  /** Time allowed from controller start to its first reaction (default 120 s). */
  readonly readyTimeoutMs?: (params: Params) => number;
  readonly build: (params: Params, namespace: (index: number) => string) => ScenarioSetup;
  readonly run: (ctx: ScenarioContext) => Promise<void>;
}

/** Sources are created with every key at version 0. */
export const INITIAL_VERSIONS: KeyVersions = new Map();

const SMALL = [{ key: 'value', bytes: 64 }];

function source(
  type: SourceType,
  namespace: string,
  name: string,
  keys: SourceSpec['keys'] = SMALL,
): SourceSpec {
  return { type, namespace, name, keys };
}

function range(count: number): number[] {
  return Array.from({ length: Math.max(0, Math.floor(count)) }, (_, index) => index);
}

function p(params: Params, name: string): number {
  const value = params[name];
  if (value === undefined) throw new Error(`scenario parameter ${name} is missing`);
  return value;
}

/** `count` ConfigMaps `cm-<i>` and Deployments `app-<i>`, each referencing its own (envFrom). */
function oneToOne(
  namespace: string,
  count: number,
  options: {
    annotations?: Record<string, string>;
    keys?: SourceSpec['keys'];
    presetEnv?: (spec: SourceSpec) => Record<string, string>;
  } = {},
): ScenarioSetup {
  const sources = range(count).map((i) =>
    source('configmap', namespace, `cm-${i}`, options.keys ?? SMALL),
  );
  const workloads = sources.map((spec, i): WorkloadSpec => ({
    kind: 'Deployment',
    namespace,
    name: `app-${i}`,
    uses: [envFrom('configmap', spec.name)],
    ...(options.annotations ? { annotations: options.annotations } : {}),
    ...(options.presetEnv ? { presetEnv: options.presetEnv(spec) } : {}),
  }));
  return { namespaces: [namespace], sources, workloads };
}

/** The common load: start, then write a random source every interval for the duration. */
async function randomWrites(ctx: ScenarioContext): Promise<void> {
  await ctx.startController();
  await ctx.every(
    { intervalMs: p(ctx.params, 'intervalMs'), durationMs: p(ctx.params, 'durationSec') * 1000 },
    () => ctx.write(ctx.pick(ctx.setup.sources)),
  );
}

const burst: Omit<ScenarioDefinition, 'id' | 'title' | 'strategy'> = {
  expectation: 'each write rolls its one workload once',
  defaults: { configMaps: 10, intervalMs: 100, durationSec: 55 },
  kreloadDefaults: false,
  build: (params, ns) => oneToOne(ns(0), p(params, 'configMaps')),
  run: randomWrites,
};

/** Deployment i of S13: init (envFrom), app (valueFrom), sidecar (volume + projected of i and i+1). */
function complexUses(own: string, next: string): SourceUse[] {
  return [
    { type: 'configmap', name: own, via: 'envFrom', container: 'init' },
    { type: 'configmap', name: own, via: 'valueFrom', container: 'app' },
    { type: 'configmap', name: own, via: 'volume', container: 'sidecar' },
    { type: 'configmap', name: own, via: 'projected', container: 'sidecar' },
    { type: 'configmap', name: next, via: 'projected', container: 'sidecar' },
  ];
}

/** `deployments` runnable Deployments of `replicas` each, all on `uses(i)`. */
function runnableDeployments(
  params: Params,
  namespace: string,
  uses: (index: number) => SourceUse[],
): WorkloadSpec[] {
  return range(p(params, 'deployments')).map((i) => ({
    kind: 'Deployment',
    namespace,
    name: `app-${i}`,
    replicas: p(params, 'replicas'),
    runnable: true,
    uses: uses(i),
  }));
}

const rolloutToReady = {
  strategy: 'env-vars',
  kreloadDefaults: false,
  podsRunMs: (params: Params) => p(params, 'completeTimeoutSec') * 1000,
  drainTimeoutMs: () => 60_000,
  settleMs: () => 1000,
} as const;

export const SCENARIOS: readonly ScenarioDefinition[] = [
  { id: 'S1', title: 'burst', strategy: 'env-vars', ...burst },
  {
    id: 'S2',
    title: 'fan-out',
    expectation: 'every write rolls all dependents; completion = time until the last is patched',
    defaults: { deployments: 50, intervalMs: 5000, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const shared = source('configmap', ns(0), 'shared');
      const workloads = range(p(params, 'deployments')).map((i): WorkloadSpec => ({
        kind: 'Deployment',
        namespace: ns(0),
        name: `app-${i}`,
        uses: [envFrom('configmap', 'shared')],
      }));
      return { namespaces: [ns(0)], sources: [shared], workloads };
    },
    run: randomWrites,
  },
  {
    id: 'S3',
    title: 'high cardinality',
    expectation: 'one roll per write, in the right namespace only',
    defaults: { namespaces: 11, configMapsPerNamespace: 20, intervalMs: 200, durationSec: 55 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const parts = range(p(params, 'namespaces')).map((i) =>
        oneToOne(ns(i), p(params, 'configMapsPerNamespace')),
      );
      return {
        namespaces: parts.flatMap((part) => part.namespaces),
        sources: parts.flatMap((part) => part.sources),
        workloads: parts.flatMap((part) => part.workloads),
      };
    },
    run: randomWrites,
  },
  {
    id: 'S4',
    title: 'no-op updates',
    expectation: 'annotation-only changes: zero rolls',
    defaults: { configMaps: 10, intervalMs: 100, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => oneToOne(ns(0), p(params, 'configMaps')),
    run: async (ctx) => {
      await ctx.startController();
      await ctx.every(
        {
          intervalMs: p(ctx.params, 'intervalMs'),
          durationMs: p(ctx.params, 'durationSec') * 1000,
        },
        () => ctx.touch(ctx.pick(ctx.setup.sources)),
      );
    },
  },
  {
    id: 'S5',
    title: 'workload churn',
    expectation: 'live workloads roll; deleted ones cause no errors',
    defaults: { createIntervalMs: 500, live: 10, updateIntervalMs: 2000, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => ({
      namespaces: [ns(0)],
      sources: [source('configmap', ns(0), 'shared')],
      workloads: range(p(params, 'live')).map((i) => churnWorkload(ns(0), i)),
    }),
    run: async (ctx) => {
      await ctx.startController();
      const live = p(ctx.params, 'live');
      const namespace = ctx.setup.namespaces[0] ?? '';
      const durationMs = p(ctx.params, 'durationSec') * 1000;
      const shared = ctx.setup.sources[0];
      if (shared === undefined) throw new Error('S5 has no ConfigMap');
      await Promise.all([
        ctx.every({ intervalMs: p(ctx.params, 'createIntervalMs'), durationMs }, async (tick) => {
          await ctx.createWorkload(churnWorkload(namespace, live + tick));
          await ctx.deleteWorkload(churnWorkload(namespace, tick));
        }),
        ctx.every({ intervalMs: p(ctx.params, 'updateIntervalMs'), durationMs }, () =>
          ctx.write(shared),
        ),
      ]);
    },
  },
  {
    id: 'S6',
    title: 'controller restart',
    expectation: 'after the kill -9 and restart every workload carries its latest hash',
    defaults: { configMaps: 20, intervalMs: 200, durationSec: 40, killAtSec: 20, restartAtSec: 25 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => oneToOne(ns(0), p(params, 'configMaps')),
    run: async (ctx) => {
      await ctx.startController();
      const crash = (async () => {
        await ctx.sleep(p(ctx.params, 'killAtSec') * 1000);
        await ctx.killController();
        await ctx.sleep((p(ctx.params, 'restartAtSec') - p(ctx.params, 'killAtSec')) * 1000);
        await ctx.startController({ waitReady: false });
      })();
      await ctx.every(
        {
          intervalMs: p(ctx.params, 'intervalMs'),
          durationMs: p(ctx.params, 'durationSec') * 1000,
        },
        () => ctx.write(ctx.pick(ctx.setup.sources)),
      );
      await crash;
    },
  },
  {
    id: 'S7',
    title: 'API pressure',
    expectation: 'every final state correct (coalescing allowed); errors reported',
    defaults: { configMaps: 50, writers: 10, intervalMs: 100, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => oneToOne(ns(0), p(params, 'configMaps')),
    run: async (ctx) => {
      await ctx.startController();
      const timing = {
        intervalMs: p(ctx.params, 'intervalMs'),
        durationMs: p(ctx.params, 'durationSec') * 1000,
      };
      await Promise.all(
        range(p(ctx.params, 'writers')).map(() =>
          ctx.every(timing, () => ctx.write(ctx.pick(ctx.setup.sources))),
        ),
      );
    },
  },
  {
    id: 'S8',
    title: 'large objects',
    expectation: 'one roll per write; RSS independent of object size',
    defaults: { configMaps: 10, keyKiB: 100, intervalMs: 2000, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const bytes = p(params, 'keyKiB') * 1024;
      return oneToOne(ns(0), p(params, 'configMaps'), {
        keys: [
          { key: 'a', bytes },
          { key: 'b', bytes },
        ],
      });
    },
    run: async (ctx) => {
      await ctx.startController();
      await ctx.every(
        {
          intervalMs: p(ctx.params, 'intervalMs'),
          durationMs: p(ctx.params, 'durationSec') * 1000,
        },
        (tick) => ctx.write(ctx.pick(ctx.setup.sources), { key: tick % 2 === 0 ? 'a' : 'b' }),
      );
    },
  },
  {
    id: 'S9',
    title: 'workload kinds',
    expectation: 'every write rolls all Deployments, StatefulSets and DaemonSets',
    defaults: { deployments: 5, statefulSets: 3, daemonSets: 2, intervalMs: 5000, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const kinds = [
        ['Deployment', p(params, 'deployments')],
        ['StatefulSet', p(params, 'statefulSets')],
        ['DaemonSet', p(params, 'daemonSets')],
      ] as const;
      const workloads = kinds.flatMap(([kind, count]) =>
        range(count).map((i): WorkloadSpec => ({
          kind,
          namespace: ns(0),
          name: `${kind.toLowerCase()}-${i}`,
          uses: [envFrom('configmap', 'shared')],
        })),
      );
      return {
        namespaces: [ns(0)],
        sources: [source('configmap', ns(0), 'shared')],
        workloads,
      };
    },
    run: randomWrites,
  },
  {
    id: 'S10',
    title: 'secrets and mixed',
    expectation: 'rolls exactly the dependents of each Secret or ConfigMap',
    defaults: {
      secrets: 5,
      configMaps: 5,
      secretOnly: 5,
      configMapOnly: 3,
      mixed: 2,
      intervalMs: 500,
      durationSec: 30,
    },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const secrets = range(p(params, 'secrets')).map((i) =>
        source('secret', ns(0), `secret-${i}`),
      );
      const configMaps = range(p(params, 'configMaps')).map((i) =>
        source('configmap', ns(0), `cm-${i}`),
      );
      const nth = (list: readonly SourceSpec[], i: number): SourceSpec => {
        const found = list[i % list.length];
        if (found === undefined) throw new Error('S10 needs at least one Secret and one ConfigMap');
        return found;
      };
      const deployment = (name: string, uses: SourceUse[]): WorkloadSpec => ({
        kind: 'Deployment',
        namespace: ns(0),
        name,
        uses,
      });
      const configMapOnly = p(params, 'configMapOnly');
      const workloads = [
        ...range(p(params, 'secretOnly')).map((i) =>
          deployment(`secret-only-${i}`, [envFrom('secret', nth(secrets, i).name)]),
        ),
        ...range(configMapOnly).map((i) =>
          deployment(`cm-only-${i}`, [envFrom('configmap', nth(configMaps, i).name)]),
        ),
        ...range(p(params, 'mixed')).map((i) =>
          deployment(`mixed-${i}`, [
            envFrom('secret', nth(secrets, i).name),
            envFrom('configmap', nth(configMaps, configMapOnly + i).name),
          ]),
        ),
      ];
      return { namespaces: [ns(0)], sources: [...secrets, ...configMaps], workloads };
    },
    run: async (ctx) => {
      await ctx.startController();
      const secrets = ctx.setup.sources.filter((spec) => spec.type === 'secret');
      const configMaps = ctx.setup.sources.filter((spec) => spec.type === 'configmap');
      await ctx.every(
        {
          intervalMs: p(ctx.params, 'intervalMs'),
          durationMs: p(ctx.params, 'durationSec') * 1000,
        },
        (tick) => ctx.write(ctx.pick(tick % 2 === 0 ? secrets : configMaps)),
      );
    },
  },
  { id: 'S11', title: 'annotations strategy', strategy: 'annotations', ...burst },
  {
    id: 'S12',
    title: 'pause period',
    expectation: 'rollouts (new ReplicaSets) batched per pause window',
    defaults: { configMaps: 10, pauseSec: 15, intervalMs: 2000, durationSec: 45 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    pausePeriodMs: (params) => p(params, 'pauseSec') * 1000,
    settleMs: (params) => p(params, 'pauseSec') * 1000 + 10_000,
    build: (params, ns) =>
      oneToOne(ns(0), p(params, 'configMaps'), {
        annotations: { [PAUSE_PERIOD_ANNOTATION]: `${p(params, 'pauseSec')}s` },
      }),
    run: randomWrites,
  },
  {
    id: 'S13',
    title: 'complex references',
    expectation: 'each write rolls the 2 workloads that reference the ConfigMap',
    defaults: { configMaps: 5, intervalMs: 2000, durationSec: 30 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => {
      const count = p(params, 'configMaps');
      const sources = range(count).map((i) => source('configmap', ns(0), `cm-${i}`));
      const workloads = range(count).map((i): WorkloadSpec => ({
        kind: 'Deployment',
        namespace: ns(0),
        name: `app-${i}`,
        uses: complexUses(`cm-${i}`, `cm-${(i + 1) % count}`),
      }));
      return { namespaces: [ns(0)], sources, workloads };
    },
    run: randomWrites,
  },
  {
    id: 'R1',
    title: 'rollout to Ready, shared source',
    expectation:
      'one write to a ConfigMap all Deployments use: change → every new pod Ready, rollouts in flight at once',
    defaults: { deployments: 50, replicas: 3, completeTimeoutSec: 300 },
    ...rolloutToReady,
    build: (params, ns) => ({
      namespaces: [ns(0)],
      sources: [source('configmap', ns(0), 'shared')],
      workloads: runnableDeployments(params, ns(0), () => [envFrom('configmap', 'shared')]),
    }),
    run: async (ctx) => {
      await ctx.startController();
      const shared = ctx.setup.sources[0];
      if (shared === undefined) throw new Error('R1 has no ConfigMap');
      await ctx.write(shared);
    },
  },
  {
    id: 'R2',
    title: 'rollout to Ready, one source each',
    expectation:
      'every Deployment’s own ConfigMap written at once: change → every new pod Ready, rollouts in flight at once',
    defaults: { deployments: 50, replicas: 3, completeTimeoutSec: 300, intervalMs: 10 },
    ...rolloutToReady,
    build: (params, ns) => ({
      namespaces: [ns(0)],
      sources: range(p(params, 'deployments')).map((i) => source('configmap', ns(0), `cm-${i}`)),
      workloads: runnableDeployments(params, ns(0), (i) => [envFrom('configmap', `cm-${i}`)]),
    }),
    run: async (ctx) => {
      await ctx.startController();
      const { sources } = ctx.setup;
      const intervalMs = p(ctx.params, 'intervalMs');
      await ctx.every({ intervalMs, durationMs: sources.length * intervalMs }, (tick) => {
        const spec = sources[tick];
        return spec === undefined ? Promise.resolve() : ctx.write(spec);
      });
    },
  },
  {
    id: 'R3',
    title: 'secret storm',
    expectation:
      'both Secrets of every Deployment rotated at once: rollouts in flight (sampled from ReplicaSets), peak write rate, time until all complete',
    defaults: {
      namespaces: 10,
      deploymentsPerNamespace: 100,
      replicas: 1,
      completeTimeoutSec: 1800,
      intervalMs: 1,
    },
    ...rolloutToReady,
    // What a user runs: kreload's default debounce, which folds the two rotations of a Deployment
    // into one rollout. A budget (--max-concurrent-rollouts) is a flag of the controller's command.
    kreloadDefaults: true,
    // With a budget, templates are patched only as slots free up: the drain is the whole storm.
    drainTimeoutMs: (params) => p(params, 'completeTimeoutSec') * 1000,
    build: (params, ns) => secretStorm(params, ns),
    run: async (ctx) => {
      await ctx.startController();
      const { sources } = ctx.setup;
      const intervalMs = p(ctx.params, 'intervalMs');
      await ctx.every({ intervalMs, durationMs: sources.length * intervalMs }, (tick) => {
        const spec = sources[tick];
        return spec === undefined ? Promise.resolve() : ctx.write(spec);
      });
    },
  },
  {
    id: 'K1',
    title: 'memory at scale',
    expectation:
      'RSS, time to ready and to settle with 20 000 sources; then 100 updates roll correctly',
    defaults: {
      namespaces: 20,
      configMapsPerNamespace: 500,
      secretsPerNamespace: 500,
      deploymentsPerNamespace: 100,
      objectKiB: 10,
      updates: 100,
      intervalMs: 200,
      replicas: 1,
      quietSec: 3,
    },
    strategy: 'env-vars',
    kreloadDefaults: false,
    readyTimeoutMs: () => 600_000,
    drainTimeoutMs: () => 60_000,
    build: (params, ns) => buildScale(params, ns),
    run: (ctx) => settledUpdates(ctx, { settleTimeoutMs: 600_000 }),
  },
  {
    id: 'K5',
    title: 'sharded memory at scale',
    expectation:
      'cluster-wide, 60 000 sources and 6 000 workloads over 600 namespaces: RSS of each replica, API server watches and request rate; then changes roll correctly',
    defaults: {
      namespaces: 600,
      configMapsPerNamespace: 50,
      secretsPerNamespace: 50,
      deploymentsPerNamespace: 10,
      objectKiB: 1,
      // No pods: 6 000 pending pods would load the control plane, not the controller.
      replicas: 0,
      updates: 200,
      intervalMs: 100,
      quietSec: 5,
    },
    strategy: 'env-vars',
    kreloadDefaults: false,
    clusterWide: true,
    readyTimeoutMs: () => 900_000,
    drainTimeoutMs: () => 400_000,
    build: (params, ns) => buildScale(params, ns),
    run: (ctx) => settledUpdates(ctx, { settleTimeoutMs: 900_000 }),
  },
  {
    id: 'K2',
    title: 'coalescing',
    expectation: 'three sources changed within 200 ms roll once: 20 rollouts, not 60',
    defaults: { rounds: 20, roundIntervalMs: 5000, spreadMs: 200 },
    strategy: 'env-vars',
    kreloadDefaults: true,
    drainTimeoutMs: () => 40_000,
    settleMs: () => 5000,
    build: (_params, ns) => {
      const sources = [
        source('secret', ns(0), 'secret-a'),
        source('secret', ns(0), 'secret-b'),
        source('configmap', ns(0), 'config'),
      ];
      const workload: WorkloadSpec = {
        kind: 'Deployment',
        namespace: ns(0),
        name: 'app',
        uses: sources.map((spec) => envFrom(spec.type, spec.name)),
      };
      return { namespaces: [ns(0)], sources, workloads: [workload] };
    },
    run: async (ctx) => {
      await ctx.startController();
      const step = p(ctx.params, 'spreadMs') / Math.max(1, ctx.setup.sources.length - 1);
      const rounds = p(ctx.params, 'rounds');
      await ctx.every(
        {
          intervalMs: p(ctx.params, 'roundIntervalMs'),
          durationMs: rounds * p(ctx.params, 'roundIntervalMs'),
        },
        async (round) => {
          for (const [index, spec] of ctx.setup.sources.entries()) {
            if (index > 0) await ctx.sleep(step);
            await ctx.write(spec, { window: `round-${round}` });
          }
        },
      );
    },
  },
  {
    id: 'K3',
    title: 'migration',
    expectation:
      'Reloader-style STAKATER_* values already current: 0 rollouts at start, then exactly the dependents',
    defaults: { deployments: 20, waitSec: 30, updates: 5 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) =>
      oneToOne(ns(0), p(params, 'deployments'), { presetEnv: (spec) => presetEnvOf(spec) }),
    run: async (ctx) => {
      await ctx.startController();
      await ctx.sleep(p(ctx.params, 'waitSec') * 1000);
      for (const spec of ctx.setup.sources.slice(0, p(ctx.params, 'updates')))
        await ctx.write(spec);
    },
  },
  {
    id: 'K4',
    title: 'missed while down',
    expectation:
      'sources changed while the controller is down roll their dependents once after it starts',
    defaults: { configMaps: 20, updates: 10, settleSec: 5 },
    strategy: 'env-vars',
    kreloadDefaults: false,
    build: (params, ns) => oneToOne(ns(0), p(params, 'configMaps')),
    run: async (ctx) => {
      await ctx.startController();
      await ctx.sleep(p(ctx.params, 'settleSec') * 1000);
      await ctx.stopController();
      for (const spec of ctx.setup.sources.slice(0, p(ctx.params, 'updates')))
        await ctx.write(spec);
      await ctx.startController();
    },
  },
];

/**
 * K1, K5: start, wait until the controller's first-start pass over thousands of workloads is done
 * (the updates measure steady state, not the queue behind it), then write `updates` random
 * referenced sources every `intervalMs`.
 */
async function settledUpdates(
  ctx: ScenarioContext,
  options: { settleTimeoutMs: number },
): Promise<void> {
  await ctx.startController();
  await ctx.awaitQuiet({
    quietMs: p(ctx.params, 'quietSec') * 1000,
    timeoutMs: options.settleTimeoutMs,
  });
  const referenced = new Set(
    ctx.setup.workloads.flatMap((w) =>
      w.uses.map((use) => `${w.namespace}/${use.type}/${use.name}`),
    ),
  );
  const targets = ctx.setup.sources.filter((spec) =>
    referenced.has(`${spec.namespace}/${spec.type}/${spec.name}`),
  );
  const intervalMs = p(ctx.params, 'intervalMs');
  await ctx.every({ intervalMs, durationMs: p(ctx.params, 'updates') * intervalMs }, () =>
    ctx.write(ctx.pick(targets)),
  );
}

/** What Reloader would have written for the source's current (initial) content. */
function presetEnvOf(spec: SourceSpec): Record<string, string> {
  const name = envVarName(spec.type === 'secret' ? 'SECRET' : 'CONFIGMAP', spec.name);
  return { [name]: sourceHash(spec, INITIAL_VERSIONS) };
}

function churnWorkload(namespace: string, index: number): WorkloadSpec {
  return {
    kind: 'Deployment',
    namespace,
    name: `churn-${index}`,
    uses: [envFrom('configmap', 'shared')],
  };
}

/**
 * R3 (thousands of Secrets change at once): in each namespace, Deployment `app-<i>`
 * reads its own credentials Secret `creds-<i>` (envFrom) and mounts its own certificate Secret
 * `tls-<i>` (volume), two Secrets per Deployment, none shared: what External Secrets refreshing
 * every credential and cert-manager renewing every certificate produce. Sources are listed (and
 * written) every credentials Secret first, then every certificate Secret, namespace by namespace.
 */
function secretStorm(params: Params, ns: (index: number) => string): ScenarioSetup {
  const namespaces = range(p(params, 'namespaces')).map(ns);
  const perNamespace = range(p(params, 'deploymentsPerNamespace'));
  const sources = ['creds', 'tls'].flatMap((kind) =>
    namespaces.flatMap((namespace) =>
      perNamespace.map((i) => source('secret', namespace, `${kind}-${i}`)),
    ),
  );
  const workloads = namespaces.flatMap((namespace) =>
    perNamespace.map((i): WorkloadSpec => ({
      kind: 'Deployment',
      namespace,
      name: `app-${i}`,
      replicas: p(params, 'replicas'),
      runnable: true,
      uses: [
        envFrom('secret', `creds-${i}`),
        { type: 'secret', name: `tls-${i}`, via: 'volume', container: 'app' },
      ],
    })),
  );
  return { namespaces, sources, workloads };
}

function buildScale(params: Params, ns: (index: number) => string): ScenarioSetup {
  const bytes = p(params, 'objectKiB') * 1024;
  const keys = [{ key: 'value', bytes }];
  const configMaps = p(params, 'configMapsPerNamespace');
  const secrets = p(params, 'secretsPerNamespace');
  const deployments = p(params, 'deploymentsPerNamespace');
  const namespaces = range(p(params, 'namespaces')).map(ns);
  const sources: SourceSpec[] = [];
  const workloads: WorkloadSpec[] = [];
  for (const namespace of namespaces) {
    for (const i of range(configMaps))
      sources.push(source('configmap', namespace, `cm-${i}`, keys));
    for (const i of range(secrets)) sources.push(source('secret', namespace, `secret-${i}`, keys));
    for (const i of range(deployments)) {
      const cm = Math.floor((i * configMaps) / Math.max(1, deployments));
      const secret = Math.floor((i * secrets) / Math.max(1, deployments));
      workloads.push({
        kind: 'Deployment',
        namespace,
        name: `app-${i}`,
        replicas: p(params, 'replicas'),
        uses: [
          ...(configMaps > 0 ? [envFrom('configmap', `cm-${cm}`)] : []),
          ...(secrets > 0 ? [envFrom('secret', `secret-${secret}`)] : []),
        ],
      });
    }
  }
  return { namespaces, sources, workloads };
}

export function findScenario(id: string): ScenarioDefinition | undefined {
  return SCENARIOS.find((scenario) => scenario.id.toLowerCase() === id.toLowerCase());
}
