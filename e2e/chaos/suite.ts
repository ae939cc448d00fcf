// The fault suite's run: its own control plane (faults restart kube-apiserver, so never the shared
// one), toxiproxy in front of kube-apiserver, kreload's identity, and per fault and iteration a
// fresh namespace with the fleet, three change windows (before, during and after the fault) and
// the counts of checks.ts per window.
import { CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeKubeconfig } from '../cluster/kubeconfig.ts';
import { AuditLog } from '../harness/audit.ts';
import { startCluster, type StartedCluster } from '../harness/cluster.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { kreloadRequestsSince } from '../harness/ops-audit.ts';
import { pollUntil } from '../harness/poll.ts';
import {
  installKreloadIdentity,
  KRELOAD_NAMESPACE,
  KRELOAD_SERVICE_ACCOUNT,
} from '../harness/rbac.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import { converged, countWindow, type WindowCounts } from './checks.ts';
import type { FaultCheck, FaultEvidence, FaultRow } from './fault-types.ts';
import { ChaosFleet, type FleetShape, type FleetSnapshot } from './fleet.ts';
import { seededRandom } from '../bench/runner.ts';
import { KreloadReplicas } from './replicas.ts';
import { ShardLeases } from './shards.ts';
import {
  resolveToxiproxyBinary,
  startToxiproxy,
  type ToxiproxyProxy,
  type ToxiproxyServer,
} from './toxiproxy.ts';

export type ReloadStrategy = 'env-vars' | 'annotations';
export const STRATEGIES: readonly ReloadStrategy[] = ['env-vars', 'annotations'];

const SYNC_DELAY_MS = 1000;
/** After convergence: long enough for a retried write (backoff) to show up as a duplicate. */
const SETTLE_MS = 6000;
const WINDOW_TIMEOUT_MS = 60_000;
const CONFIG_MAP = 'chaos-config';
const NOISE_CONFIG_MAP = 'chaos-noise';
/** The ConfigMap's value of the "during" window's change (a crashing canary crashes on it). */
const DURING_VALUE = '2';

export type WindowName = 'before' | 'during' | 'after';

export interface WindowResult extends WindowCounts {
  readonly window: WindowName;
  /** From the change (before, after) or the end of the fault (during) to convergence; undefined: never. */
  readonly convergeMs: number | undefined;
}

export interface IterationResult {
  readonly fault: string;
  readonly iteration: number;
  readonly strategy: ReloadStrategy;
  readonly seed: number;
  readonly windows: readonly WindowResult[];
  readonly evidence: FaultEvidence;
  /** The row's checks (FaultEvidence.checks and what its verify() found). */
  readonly checks: readonly FaultCheck[];
  readonly crashes: number;
  readonly injectedKills: number;
}

export interface ChaosEnvironment {
  readonly cluster: StartedCluster;
  readonly toxiproxy: ToxiproxyServer;
  readonly proxy: ToxiproxyProxy;
  readonly audit: AuditLog;
  stop(): Promise<void>;
}

export async function startEnvironment(options: {
  readonly onProgress?: (message: string) => void;
  readonly signal?: AbortSignal;
}): Promise<ChaosEnvironment> {
  const binary = await resolveToxiproxyBinary();
  const cluster = await startCluster({ audit: true, ...options });
  let toxiproxy: ToxiproxyServer | undefined;
  try {
    toxiproxy = await startToxiproxy(binary);
    const upstream = cluster.server.replace(/^https:\/\//, '');
    const proxy = await toxiproxy.createProxy('kube-apiserver', upstream);
    const auditLogPath = cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the chaos cluster runs without an audit log');
    await installKreloadIdentity(cluster);
    const started = toxiproxy;
    return {
      cluster,
      toxiproxy: started,
      proxy,
      audit: new AuditLog({ path: auditLogPath }),
      async stop() {
        try {
          await started.stop();
        } finally {
          await cluster.stop();
        }
      },
    };
  } catch (error) {
    await toxiproxy?.stop().catch(() => undefined);
    await cluster.stop();
    throw error;
  }
}

/** kreload's ServiceAccount: its token and a kubeconfig whose server is the toxiproxy listener. */
async function kreloadCredentials(
  env: ChaosEnvironment,
): Promise<{ proxiedPath: string; token: string }> {
  const token = await env.cluster.mintToken(KRELOAD_SERVICE_ACCOUNT, KRELOAD_NAMESPACE, 3600);
  const { path } = await env.cluster.restrictedKubeconfig(token, 'kreload-proxied');
  await writeKubeconfig(path, {
    server: `https://127.0.0.1:${String(env.proxy.listenPort)}`,
    caPath: env.cluster.caPath,
    userName: 'kreload',
    token,
  });
  return { proxiedPath: path, token };
}

/** One namespace of an iteration and its fleet. */
interface FleetInNamespace {
  readonly fleet: ChaosFleet;
  readonly namespace: string;
}

interface WindowContext {
  /** The fault's fleet first, then the bystander's (if the row has one). */
  readonly fleets: readonly FleetInNamespace[];
  readonly env: ChaosEnvironment;
}

/** Every fleet's snapshot, in the order of `fleets`. */
type Snapshots = readonly FleetSnapshot[];

async function snapshots(fleets: readonly FleetInNamespace[]): Promise<Snapshots> {
  return Promise.all(fleets.map(({ fleet }) => fleet.snapshot()));
}

async function jobCreatesSince(env: ChaosEnvironment, offset: number, namespace: string) {
  const creates = new Map<string, number>();
  for (const request of await kreloadRequestsSince(env.audit, offset)) {
    if (request.verb !== 'create' || request.resource !== 'jobs') continue;
    if (request.namespace !== namespace || request.code !== 201 || request.name === '') continue;
    creates.set(request.name, (creates.get(request.name) ?? 0) + 1);
  }
  return creates;
}

/** Waits for convergence on `hash` (or the timeout), lets duplicates surface, then counts. */
async function closeWindow(
  ctx: WindowContext,
  details: {
    readonly window: WindowName;
    readonly start: Snapshots;
    readonly hash: string;
    readonly auditOffset: number;
    readonly clockFrom: number;
    readonly timeoutMs: number;
  },
): Promise<{ result: WindowResult; end: Snapshots }> {
  let convergeMs: number | undefined;
  const allConverged = (now: Snapshots): boolean =>
    now.every((end, index) => converged(details.start[index] ?? new Map(), end, details.hash));
  try {
    await pollUntil(async () => allConverged(await snapshots(ctx.fleets)), {
      timeoutMs: details.timeoutMs,
      intervalMs: 500,
      describe: `the fleet to roll to ${details.hash}`,
    });
    convergeMs = performance.now() - details.clockFrom;
  } catch {
    convergeMs = undefined;
  }
  await sleep(SETTLE_MS);
  const end = await snapshots(ctx.fleets);
  const perFleet = await Promise.all(
    ctx.fleets.map(async ({ namespace }, index) =>
      countWindow({
        start: details.start[index] ?? new Map(),
        end: end[index] ?? new Map(),
        hash: details.hash,
        jobCreates: await jobCreatesSince(ctx.env, details.auditOffset, namespace),
      }),
    ),
  );
  const counts = sumCounts(
    perFleet.map((c, index) =>
      index === 0
        ? c
        : { ...c, problems: c.problems.map((p) => `${ctx.fleets[index]?.namespace ?? ''} ${p}`) },
    ),
  );
  return { result: { window: details.window, convergeMs, ...counts }, end };
}

function sumCounts(all: readonly WindowCounts[]): WindowCounts {
  return {
    missed: all.reduce((sum, c) => sum + c.missed, 0),
    duplicated: all.reduce((sum, c) => sum + c.duplicated, 0),
    lostJobs: all.reduce((sum, c) => sum + c.lostJobs, 0),
    duplicateRuns: all.reduce((sum, c) => sum + c.duplicateRuns, 0),
    problems: all.flatMap((c) => c.problems),
  };
}

export interface IterationOptions {
  readonly env: ChaosEnvironment;
  readonly fault: FaultRow;
  readonly iteration: number;
  readonly seed: number;
  readonly shape: FleetShape;
  readonly strategy: ReloadStrategy;
  readonly onProgress?: (message: string) => void;
}

/** One fault, one iteration, in a namespace of its own that is deleted after. */
export async function runIteration(options: IterationOptions): Promise<IterationResult> {
  const { env, fault } = options;
  const say = (message: string): void =>
    options.onProgress?.(`${fault.id} #${String(options.iteration)}: ${message}`);
  const admin = env.cluster.kc;
  const shape = fault.fleet?.(options.shape) ?? options.shape;
  const sources = new SourceClient({ kc: admin });
  const fleets: FleetInNamespace[] = [];
  for (const suffix of namespaceSuffixes(fault)) {
    const created = await env.cluster.createNamespace(`chaos-${fault.id}${suffix}`);
    fleets.push({
      namespace: created,
      fleet: new ChaosFleet({
        kc: admin,
        namespace: created,
        shape,
        configMap: CONFIG_MAP,
        crashingCanaryOn:
          fault.crashingCanary === true ? configMapHash({ data: { v: DURING_VALUE } }) : undefined,
      }),
    });
  }
  const [target] = fleets;
  if (target === undefined) throw new Error('no namespace for the fault');
  const bystander = fault.bystander === true ? fleets[1] : undefined;
  const targets = bystander === undefined ? fleets : [target];
  const { namespace, fleet } = target;
  const ctx: WindowContext = { fleets, env };
  const leaseName = `chaos-${randomBytes(3).toString('hex')}`;
  const shards = fault.activeActive === undefined ? undefined : new ShardLeases(admin, leaseName);
  const credentials = await kreloadCredentials(env);
  const replicas = new KreloadReplicas({
    count: fault.replicas,
    // Active-active: pod names differ per iteration, as a Deployment's do, and so does the
    // assignment of buckets to them.
    name:
      shards === undefined ? `chaos-${fault.id}` : `chaos-${fault.id}-${options.seed.toString(36)}`,
    restartAs: shards === undefined ? 'same' : 'new',
    kubeconfig: credentials.proxiedPath,
    leaseName: fault.ha && shards === undefined ? leaseName : undefined,
    admin,
    args: [
      `--namespaces=${fleets.map((f) => f.namespace).join(',')}`,
      `--reload-strategy=${options.strategy}`,
      ...coordinationArgs(fault, leaseName),
      `--sync-delay=${String(SYNC_DELAY_MS / 1000)}s`,
      ...(fault.kreloadArgs ?? []),
    ],
  });
  try {
    for (const { fleet: each } of fleets) await each.create({ v: '0' });
    await sources.create(namespace, {
      type: 'CONFIGMAP',
      name: NOISE_CONFIG_MAP,
      data: { n: '0' },
    });
    say(
      `fleet of ${String(fleet.size)} created in ${fleets.map((f) => f.namespace).join(' and ')} (${options.strategy})`,
    );
    await pollUntil(
      async () =>
        (await snapshots(fleets)).every((snapshot) =>
          [...snapshot.values()].every(
            (s) => s.settled && (s.kind === 'CronJob' || s.kind === 'Job' || s.revisions >= 1),
          ),
        ),
      { timeoutMs: 120_000, intervalMs: 500, describe: 'the first revision of every workload' },
    );
    await replicas.start();
    await waitForIdle(replicas, fleet.size * fleets.length, shards);
    let hash = '';
    // The same data in every namespace: one hash for the window.
    const change = async (value: string): Promise<string> => {
      const data = { v: value };
      for (const { namespace: each } of fleets) {
        await sources.replace(each, { type: 'CONFIGMAP', name: CONFIG_MAP, data });
      }
      hash = configMapHash({ data });
      return hash;
    };
    const windows: WindowResult[] = [];
    let start = await snapshots(fleets);
    // The convergence clock starts when `act` returns: right after a plain change, or when the
    // fault is over.
    const runWindow = async (
      window: WindowName,
      act: () => Promise<string>,
      timeoutMs = WINDOW_TIMEOUT_MS,
    ): Promise<void> => {
      const auditOffset = await env.audit.mark();
      const hash = await act();
      const clockFrom = performance.now();
      const closed = await closeWindow(ctx, {
        window,
        start,
        hash,
        auditOffset,
        clockFrom,
        timeoutMs,
      });
      windows.push(closed.result);
      start = closed.end;
      say(`${window}: ${describeWindow(closed.result)}`);
    };
    await runWindow('before', () => change('1'));
    let evidence: FaultEvidence = { injected: 0, note: 'not injected' };
    const duringStart = start;
    await runWindow(
      'during',
      async () => {
        evidence = await fault.inject({
          changeSource: () => change(DURING_VALUE),
          changeNoise: (count) => changeNoise(sources, namespace, count),
          proxy: env.proxy,
          controlPlane: env.cluster.controlPlane,
          replicas,
          audit: env.audit,
          random: seededRandom(options.seed),
          syncDelayMs: SYNC_DELAY_MS,
          fleetSize: fleet.size,
          fleet,
          namespace,
          namespaces: targets.map((each) => each.namespace),
          shards,
          bystander:
            bystander === undefined
              ? undefined
              : {
                  namespace: bystander.namespace,
                  converged: async () =>
                    converged(duringStart[1] ?? new Map(), await bystander.fleet.snapshot(), hash),
                },
          admin,
          direct: { server: env.cluster.server, caPath: env.cluster.caPath },
          kreloadToken: credentials.token,
          mintToken: (serviceAccount, ns) => env.cluster.mintToken(serviceAccount, ns, 3600),
          kreloadMetrics: async () => {
            const leader = await replicas.leader();
            if (leader === undefined) throw new Error('no kreload leader to scrape');
            return scrapeMetrics(leader);
          },
        });
        say(`${evidence.note} (${String(evidence.injected)})`);
        return hash;
      },
      fault.convergeTimeoutMs,
    );
    const checks = [...(evidence.checks ?? []), ...((await evidence.verify?.()) ?? [])];
    for (const check of checks) {
      say(`check "${check.name}": ${check.passed ? 'passed' : 'FAILED'} (${check.detail})`);
    }
    await replicas.allRunning();
    await runWindow('after', () => change('3'));
    return {
      fault: fault.id,
      iteration: options.iteration,
      strategy: options.strategy,
      seed: options.seed,
      windows,
      evidence,
      checks,
      crashes: replicas.crashes,
      injectedKills: replicas.injectedKills,
    };
  } finally {
    await replicas.stop();
    for (const { namespace: each } of fleets) {
      await admin
        .makeApiClient(CoreV1Api)
        .deleteNamespace({ name: each })
        .catch(() => undefined);
    }
  }
}

/** `count` updates of a ConfigMap no workload uses: etcd revisions without a roll. */
async function changeNoise(sources: SourceClient, namespace: string, count: number): Promise<void> {
  for (let index = 1; index <= count; index += 1) {
    await sources.replace(namespace, {
      type: 'CONFIGMAP',
      name: NOISE_CONFIG_MAP,
      data: { n: `${String(Date.now())}-${String(index)}` },
    });
  }
}

/** The row's namespaces: one, with its bystander, or the active-active rows' several. */
function namespaceSuffixes(fault: FaultRow): string[] {
  if (fault.activeActive !== undefined) {
    return Array.from(
      { length: fault.activeActive.namespaces },
      (_unused, index) => `-${String(index)}`,
    );
  }
  return fault.bystander === true ? ['', '-free'] : [''];
}

function coordinationArgs(fault: FaultRow, leaseName: string): string[] {
  if (fault.activeActive !== undefined) {
    return ['--shard-mode=active-active', `--leader-election-id=${leaseName}`];
  }
  return fault.ha ? ['--enable-ha', `--leader-election-id=${leaseName}`] : [];
}

/**
 * kreload recorded its baselines: one reconcile per workload, and the writers' queues idle (the
 * leader's; in active-active mode every member's, once the buckets are held).
 */
async function waitForIdle(
  replicas: KreloadReplicas,
  size: number,
  shards: ShardLeases | undefined,
): Promise<void> {
  const since = new MetricsSnapshot({ samples: [] });
  if (shards === undefined) {
    const leader = await pollUntil(() => replicas.leader(), {
      timeoutMs: 60_000,
      describe: 'a kreload leader',
    });
    await waitUntilSettled(leader, { since, minReconciles: size, timeoutMs: 120_000 });
    return;
  }
  await shards.settledOver(replicas.pods, 60_000);
  await pollUntil(
    async () => {
      const scrapes = await Promise.all(replicas.running.map((each) => scrapeMetrics(each)));
      const reconciles = scrapes.reduce((sum, m) => sum + m.value('reloader_reconcile_total'), 0);
      return reconciles >= size;
    },
    {
      timeoutMs: 120_000,
      intervalMs: 500,
      describe: `${String(size)} reconciles over the members`,
    },
  );
  for (const member of replicas.running) {
    await waitUntilSettled(member, { since, timeoutMs: 120_000 });
  }
}

export function describeWindow(result: WindowResult): string {
  const time =
    result.convergeMs === undefined
      ? 'not converged'
      : `converged in ${(result.convergeMs / 1000).toFixed(1)} s`;
  const problems =
    result.problems.length === 0 ? '' : ` [${result.problems.slice(0, 5).join('; ')}]`;
  return `${time}, missed ${String(result.missed)}, duplicated ${String(result.duplicated)}, lost Jobs ${String(result.lostJobs)}, duplicate runs ${String(result.duplicateRuns)}${problems}`;
}
