/**
 * Active-active memory and API server cost, per design (docs/adr/0053-active-active-caches.md):
 * one control plane, `--param`-sized namespaces of ConfigMaps, Secrets and Deployments, then in
 * turn: one replica (cluster-wide watches); three active-active replicas (cluster-wide watches
 * that drop other shards' objects while decoding); three replicas each with per-namespace watches
 * of its own share only (`--namespaces`, the share rendezvous hashing gives it). For each: every
 * replica's RSS once settled, the API server's registered watchers and long-running WATCHes, its
 * CPU and request rate over an idle window.
 *
 *   npx node e2e/bench/shard-memory.ts [namespaces=300] [configMaps=20] [secrets=20] [deployments=2]
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import { assignBuckets, bucketOf } from '../../src/shard/assignment.ts';
import { startCluster, type StartedCluster } from '../harness/cluster.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { parsePrometheusText, scrapeMetrics } from '../harness/metrics.ts';

const run = promisify(execFile);
const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((word) => word.startsWith(`${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 1));
};
const NAMESPACES = arg('namespaces', 300);
const CONFIG_MAPS = arg('configMaps', 20);
const SECRETS = arg('secrets', 20);
const DEPLOYMENTS = arg('deployments', 2);
const BUCKETS = 32;
const IDLE_WINDOW_MS = arg('idleSec', 30) * 1000;
const LEASE_NAMESPACE = 'kreload-system';
const PODS = ['m-0', 'm-1', 'm-2'];
const payload = 'x'.repeat(1024);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function apiServerMetrics(cluster: StartedCluster) {
  const { stdout } = await run(
    'kubectl',
    ['--kubeconfig', cluster.info.kubeconfigPath, 'get', '--raw', '/metrics'],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const samples = parsePrometheusText(stdout);
  const sum = (name: string, filter: (labels: Record<string, string>) => boolean = () => true) =>
    samples
      .filter((s) => s.name === name && filter(s.labels))
      .reduce((total, s) => total + s.value, 0);
  return {
    watchers: sum('apiserver_registered_watchers'),
    longrunningWatches: sum('apiserver_longrunning_requests', (l) => l.verb === 'WATCH'),
    cpuSeconds: sum('process_cpu_seconds_total'),
    requests: sum('apiserver_request_total'),
  };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${String(pid)}/status`, 'utf8');
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round((kib / 1024) * 10) / 10;
}

async function populate(cluster: StartedCluster): Promise<string[]> {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const apps = cluster.kc.makeApiClient(AppsV1Api);
  // Namespaces one queue, objects another: a namespace's task waits for its objects' slots.
  const namespaceQueue = new PQueue({ concurrency: 8 });
  const queue = new PQueue({ concurrency: 24 });
  const namespaces = Array.from({ length: NAMESPACES }, (_, i) => `team-${String(i)}`);
  await core.createNamespace({ body: { metadata: { name: LEASE_NAMESPACE } } });
  for (const namespace of namespaces) {
    void namespaceQueue.add(async () => {
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const creates: Promise<unknown>[] = [];
      for (let i = 0; i < CONFIG_MAPS; i += 1) {
        creates.push(
          queue.add(() =>
            core.createNamespacedConfigMap({
              namespace,
              body: { metadata: { name: `cm-${String(i)}` }, data: { value: payload } },
            }),
          ),
        );
      }
      for (let i = 0; i < SECRETS; i += 1) {
        creates.push(
          queue.add(() =>
            core.createNamespacedSecret({
              namespace,
              body: { metadata: { name: `secret-${String(i)}` }, stringData: { value: payload } },
            }),
          ),
        );
      }
      for (let i = 0; i < DEPLOYMENTS; i += 1) {
        creates.push(
          queue.add(() =>
            apps.createNamespacedDeployment({
              namespace,
              body: {
                metadata: {
                  name: `app-${String(i)}`,
                  annotations: { 'reloader.stakater.com/auto': 'true' },
                },
                spec: {
                  replicas: 0,
                  selector: { matchLabels: { app: `app-${String(i)}` } },
                  template: {
                    metadata: { labels: { app: `app-${String(i)}` } },
                    spec: {
                      containers: [
                        {
                          name: 'app',
                          image: 'busybox',
                          envFrom: [
                            {
                              configMapRef: { name: `cm-${String(i % Math.max(1, CONFIG_MAPS))}` },
                            },
                          ],
                        },
                      ],
                    },
                  },
                },
              },
            }),
          ),
        );
      }
      await Promise.all(creates);
    });
  }
  await namespaceQueue.onIdle();
  await queue.onIdle();
  return namespaces;
}

/** Polls every replica's cached-object gauges until two reads 10 s apart agree. */
async function settled(replicas: readonly KreloadProcess[]): Promise<number[]> {
  let last = '';
  for (let attempt = 0; attempt < 60; attempt += 1) {
    const counts = await Promise.all(
      replicas.map(async (r) => {
        const m = await scrapeMetrics(r);
        return m.value('kreload_cached_objects');
      }),
    );
    const key = JSON.stringify(counts);
    if (key === last && counts.every((c) => c > 0)) return counts;
    last = key;
    await sleep(10_000);
  }
  throw new Error('caches never settled');
}

async function measure(
  cluster: StartedCluster,
  design: string,
  starts: readonly { pod: string; args: readonly string[] }[],
) {
  const replicas = await Promise.all(
    starts.map(({ pod, args }) =>
      startKreload({
        name: `${design}-${pod}`,
        kubeconfig: cluster.info.kubeconfigPath,
        env: { POD_NAME: pod, POD_NAMESPACE: LEASE_NAMESPACE },
        args: ['--resync-period=0', '--log-level=warning', ...args],
        readyTimeoutMs: 600_000,
      }),
    ),
  );
  try {
    const cached = await settled(replicas);
    const before = await apiServerMetrics(cluster);
    const startedAt = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const after = await apiServerMetrics(cluster);
    const seconds = (performance.now() - startedAt) / 1000;
    const rss = await Promise.all(replicas.map((r) => rssMiB(r.pid)));
    const heap = await Promise.all(
      replicas.map(async (r) => {
        const bytes = (await scrapeMetrics(r)).value('nodejs_heap_size_used_bytes');
        return Math.round((bytes / 1024 / 1024) * 10) / 10;
      }),
    );
    const row = {
      design,
      replicas: replicas.length,
      cachedObjects: cached,
      rssMiB: rss,
      heapUsedMiB: heap,
      apiserverWatchers: after.watchers,
      apiserverLongrunningWatches: after.longrunningWatches,
      apiserverCpuMillicores: Math.round(((after.cpuSeconds - before.cpuSeconds) / seconds) * 1000),
      apiserverRequestsPerSecond:
        Math.round(((after.requests - before.requests) / seconds) * 10) / 10,
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
    return row;
  } finally {
    for (const r of replicas) await r.stop().catch(() => undefined);
  }
}

const cluster = await startCluster({ withoutPodLifecycle: true });
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    void cluster.stop().finally(() => process.exit(1));
  });
}
try {
  const started = performance.now();
  const namespaces = await populate(cluster);
  process.stdout.write(
    `populated ${String(NAMESPACES)} namespaces × (${String(CONFIG_MAPS)} ConfigMaps, ${String(SECRETS)} Secrets, ${String(DEPLOYMENTS)} Deployments) in ${String(Math.round((performance.now() - started) / 1000))} s\n`,
  );
  const idle = await apiServerMetrics(cluster);
  process.stdout.write(`${JSON.stringify({ design: 'none', ...idle })}\n`);
  await sleep(5_000);
  await measure(cluster, 'single', [{ pod: 'm-0', args: [] }]);
  await measure(
    cluster,
    'active-active-filter',
    PODS.map((pod) => ({
      pod,
      args: [
        '--shard-mode=active-active',
        `--shard-buckets=${String(BUCKETS)}`,
        '--leader-election-id=bench-shard',
      ],
    })),
  );
  const owners = assignBuckets(PODS, BUCKETS);
  await measure(
    cluster,
    'per-namespace-watches',
    PODS.map((pod) => ({
      pod,
      args: [
        `--namespaces=${namespaces.filter((ns) => owners[bucketOf(ns, BUCKETS)] === pod).join(',')}`,
      ],
    })),
  );
} finally {
  await cluster.stop();
}
