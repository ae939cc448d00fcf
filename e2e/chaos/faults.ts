// One row per fault of issue 10. Each row injects its fault around the "during" change of the
// ConfigMap (it calls changeSource itself, at the moment the fault is meant to hit) and returns
// when the fault is over; the suite then measures how long kreload takes to converge. `evidence`
// says, from the audit log or the proxy, that the fault really hit kreload.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditLog } from '../harness/audit.ts';
import { KubeJson, MERGE_PATCH, stringMapAt } from '../harness/crds.ts';
import { countRequests } from '../harness/audit.ts';
import { isWrite, kreloadRequestsSince, type CompletedRequest } from '../harness/ops-audit.ts';
import { PollTimeoutError, pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE, KRELOAD_SERVICE_ACCOUNT, KRELOAD_USER } from '../harness/rbac.ts';
import { APF_HOLDER, APF_PROBE_NAME, ApfStorm } from './apf.ts';
import { compactToNow } from './etcd.ts';
import type { FleetShape } from './fleet.ts';
import type { FaultCheck, FaultContext, FaultEvidence, FaultRow } from './fault-types.ts';
import { killShardMember, scaleShardMembers, SHARD_LEASE_DURATION_MS } from './shard-faults.ts';
import { judgeWaves, wavesByName } from './wave-checks.ts';
import { RollSampler } from './wave-sampler.ts';

/** A window of the fan-out: between the first roll and roughly the last (3 workers, loopback). */
function fanOutPoint(ctx: FaultContext): number {
  return ctx.syncDelayMs + ctx.random() * (ctx.syncDelayMs + ctx.fleetSize * 40);
}

async function writesBetween(audit: AuditLog, offset: number, from: number, to: number) {
  const requests = await kreloadRequestsSince(audit, offset);
  return requests.filter((r) => isWrite(r) && r.receivedAt >= from && r.receivedAt <= to);
}

function byVerb(requests: readonly CompletedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of requests) {
    const key = `${request.verb} ${request.resource}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export function describeByVerb(counts: Readonly<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, count]) => `${key} ${String(count)}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/**
 * toxiproxy `timeout` on the downstream for --sync-delay + 3 s from a seeded point after the
 * change: writes reach kube-apiserver and commit, their responses never arrive. The audit log's
 * writes received meanwhile are those committed without an answer, counted by verb.
 */
async function dropResponses(ctx: FaultContext, spreadPerWorkloadMs: number) {
  const offset = await ctx.audit.mark();
  const toxic = {
    name: 'lost-response',
    stream: 'downstream',
    spec: { type: 'timeout', attributes: { timeout: 1500 } },
  } as const;
  await ctx.changeSource();
  // kreload's watch delivers the change within milliseconds; its writes start after --sync-delay.
  // A seeded start, so iterations hit different writes (PATCH, DELETE, POST) of the fan-out.
  await sleep(
    ctx.syncDelayMs / 2 +
      ctx.random() * (ctx.syncDelayMs / 2 + ctx.fleetSize * spreadPerWorkloadMs),
  );
  const from = Date.now();
  await ctx.proxy.withToxics([toxic], () => sleep(ctx.syncDelayMs + 3000));
  const to = Date.now();
  await sleep(2000);
  const lost = await writesBetween(ctx.audit, offset, from, to);
  const counts = byVerb(lost);
  return {
    injected: lost.length,
    byVerb: counts,
    note: `committed writes without a response: ${describeByVerb(counts)}`,
  };
}

/** Jobs and CronJobs only, twice the Jobs: every write of a Job roll is a DELETE, POST or journal write. */
function jobsOnly(requested: FleetShape): FleetShape {
  return {
    Deployment: 0,
    StatefulSet: 0,
    DaemonSet: 0,
    CronJob: requested.CronJob,
    Job: requested.Job * 2,
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Where the time goes once kreload can reach kube-apiserver again: its first request (the end of
 * a list-watch backoff), each resource's first LIST (its relist after 410) and its first write in
 * the fleet.
 */
function reconnectTimeline(
  requests: readonly CompletedRequest[],
  reachableAt: number,
  namespace: string,
): string {
  const after = requests.filter((r) => r.receivedAt >= reachableAt);
  const at = (request: CompletedRequest | undefined): string =>
    request === undefined ? 'none' : `+${seconds(request.receivedAt - reachableAt)}`;
  const firstWrite = after.find((r) => isWrite(r) && r.namespace === namespace);
  const relists = new Map<string, CompletedRequest>();
  for (const request of after) {
    if (request.verb === 'list' && !relists.has(request.resource)) {
      relists.set(request.resource, request);
    }
  }
  const lists = [...relists].map(([resource, request]) => `${resource} ${at(request)}`);
  return [
    `first request ${at(after[0])}`,
    `LIST ${lists.join(' ') || 'none'}`,
    `first write ${at(firstWrite)}`,
  ].join(', ');
}

const STORM_MAX_MS = 60_000;
/** After the bystander converged: the throttled writes keep getting 429 a little longer. */
const STORM_TAIL_MS = 2000;

async function requestCount(audit: AuditLog, offset: number, key: string): Promise<number> {
  return countRequests(await audit.eventsSince(offset), KRELOAD_USER).get(key) ?? 0;
}

const WATCH_OPENS = ['watch configmaps', 'watch deployments', 'watch jobs'];
const WATCH_RESTARTS = 'reloader_watch_restarts_total';

async function watchOpens(audit: AuditLog, offset: number): Promise<number> {
  const counts = await Promise.all(WATCH_OPENS.map((key) => requestCount(audit, offset, key)));
  return counts.reduce((sum, value) => sum + value, 0);
}

/** Deployments only (replicas 0: complete as soon as kube-controller-manager observed the roll). */
function deploymentsOnly(requested: FleetShape): FleetShape {
  return { Deployment: requested.Deployment, StatefulSet: 0, DaemonSet: 0, CronJob: 0, Job: 0 };
}

/** The wave rows' admission: a canary of 1, then waves of 10 (the full fleet's 40: 5 waves). */
const WAVE_CANARY = 1;
const WAVE_SIZE = 10;
const WAVE_FLAGS = [
  '--rollout-waves',
  `--canary=${String(WAVE_CANARY)}`,
  `--max-concurrent-rollouts=${String(WAVE_SIZE)}`,
];
/** Longest wait for the seeded number of rolls before the kill. */
const WAVE_KILL_WAIT_MS = 60_000;

/** A change followed wave by wave: its members' waves and a sampler of their rollouts. */
interface WaveWatch {
  /** Audit log offset before the change. */
  readonly offset: number;
  readonly sampler: RollSampler;
  /** Member name → wave, for the Deployments the sampler follows. */
  readonly waves: ReadonlyMap<string, number>;
  /** The first wave a kill may be seeded in (earlier ones are over). */
  readonly firstWave: number;
}

/**
 * A kill (of kreload, or of the leader) in a seeded wave, as soon as its first member is seen
 * rolled for the change; the sampler follows every Deployment's rollout until the window is
 * over, and verify() judges the wave order and the budget from it and the audit log.
 */
async function killMidWave(
  ctx: FaultContext,
  kill: () => Promise<void>,
  what: string,
): Promise<FaultEvidence> {
  const offset = await ctx.audit.mark();
  const sampler = new RollSampler({
    kc: ctx.admin,
    namespace: ctx.namespace,
    source: ctx.fleet.source,
  });
  const hash = await ctx.changeSource();
  sampler.start(hash);
  const waves = wavesByName(ctx.fleet.names('Deployment'), WAVE_CANARY, WAVE_SIZE);
  return killInWave(ctx, { offset, sampler, waves, firstWave: 0 }, kill, what);
}

async function killInWave(
  ctx: FaultContext,
  watch: WaveWatch,
  kill: () => Promise<void>,
  what: string,
): Promise<FaultEvidence> {
  const { offset, sampler, waves } = watch;
  // A seeded wave; the kill as soon as its first member is seen rolled, while the wave runs.
  const lastWave = Math.max(watch.firstWave, ...waves.values());
  const wave = watch.firstWave + Math.floor(ctx.random() * (lastWave - watch.firstWave + 1));
  const target = 1 + [...waves.values()].filter((each) => each < wave).length;
  let reached = true;
  try {
    await pollUntil(() => Promise.resolve(sampler.rolled >= target), {
      timeoutMs: WAVE_KILL_WAIT_MS,
      intervalMs: 20,
      describe: `${String(target)} Deployments rolled`,
    });
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
    reached = false;
  }
  const atKill = { rolled: sampler.rolled, unfinished: sampler.unfinished };
  await kill();
  return {
    injected: 1,
    note: `${what} in wave ${String(wave)}: ${String(atKill.rolled)} of ${String(waves.size)} Deployments rolled, ${String(atKill.unfinished)} not complete`,
    verify: async () => {
      const samples = await sampler.stop();
      const firstPatchAt = new Map<string, number>();
      for (const request of await kreloadRequestsSince(ctx.audit, offset)) {
        // Any response: a PATCH whose sender was killed is logged with 504, and may have committed.
        if (request.verb !== 'patch' || request.resource !== 'deployments') continue;
        if (request.namespace !== ctx.namespace || !waves.has(request.name)) continue;
        if (!firstPatchAt.has(request.name)) firstPatchAt.set(request.name, request.receivedAt);
      }
      const verdict = judgeWaves({ waves, firstPatchAt, samples });
      return [
        {
          name: 'kill landed mid-wave',
          passed: reached && atKill.unfinished > 0,
          detail: `at the kill ${String(atKill.rolled)} rolled, ${String(atKill.unfinished)} pending or in flight`,
        },
        {
          name: 'wave order and gates preserved',
          passed: verdict.violations.length === 0 && verdict.patched === waves.size,
          detail: `order violations ${String(verdict.violations.length)}, ${String(verdict.patched)} Deployments PATCHed${verdict.violations.length === 0 ? '' : `: ${verdict.violations.slice(0, 3).join('; ')}`}`,
        },
        {
          name: `in flight ≤ ${String(WAVE_SIZE)}`,
          passed: verdict.maxInFlight <= WAVE_SIZE,
          detail: `max in flight ${String(verdict.maxInFlight)} over ${String(samples.length)} samples`,
        },
      ];
    },
  };
}

/**
 * The active-active rows' fleet, per namespace: an eighth of the requested one, every kind at least
 * once (full: 5 Deployments, 1 StatefulSet, 1 DaemonSet, 2 CronJobs, 1 Job; 8 namespaces: 80).
 */
function perShardNamespace(requested: FleetShape): FleetShape {
  const share = (count: number): number => Math.max(1, Math.ceil(count / SHARD_NAMESPACES));
  return {
    Deployment: share(requested.Deployment),
    StatefulSet: share(requested.StatefulSet),
    DaemonSet: share(requested.DaemonSet),
    CronJob: share(requested.CronJob),
    Job: share(requested.Job),
  };
}

const SHARD_NAMESPACES = 8;
const SHARD_FLAGS = [`--leader-election-lease-duration=${String(SHARD_LEASE_DURATION_MS / 1000)}s`];

/** What the active-active rows share: three members, the fleet spread over the namespaces. */
const ACTIVE_ACTIVE_ROW = {
  replicas: 3,
  ha: true,
  activeActive: { namespaces: SHARD_NAMESPACES },
  convergeTimeoutMs: 120_000,
  defaultIterations: 10,
  fleet: perShardNamespace,
  kreloadArgs: SHARD_FLAGS,
} satisfies Partial<FaultRow>;

/** kreload's halt marker on a workload's metadata (docs/safe-rollouts.md). */
const ROLLOUT_HALTED = 'kreload.io/rollout-halted';
/** Longest wait for the canary to fail and kreload to halt the change (5 s progress deadline). */
const HALT_WAIT_MS = 90_000;
/** How long the restarted kreload is watched holding the halt: listed, every member reconciled. */
const HALT_HOLD_MS = 15_000;

/** Longest wait for the follower to take the Lease of a killed leader. */
const FAILOVER_WAIT_MS = 90_000;

/** How a halt row kills kreload: once while the change is halted, once mid-wave after the resume. */
interface HaltKills {
  /** Kills kreload during the halt; resolves once a kreload leads again, with what happened. */
  readonly whileHalted: (ctx: FaultContext) => Promise<string>;
  /** Kills kreload mid-wave of the resumed change. */
  readonly midWave: (ctx: FaultContext) => Promise<void>;
  /** The mid-wave kill, for the note: `resumed, killed`. */
  readonly what: string;
  /** The check that the halt held across the first kill. */
  readonly heldCheck: string;
}

async function killAndRestart(ctx: FaultContext): Promise<void> {
  await ctx.replicas.kill9();
  await ctx.replicas.allRunning();
}

const KILL_AFTER_HALT: HaltKills = {
  whileHalted: async (ctx) => {
    await killAndRestart(ctx);
    return 'killed';
  },
  midWave: killAndRestart,
  what: 'resumed, killed',
  heldCheck: 'halt kept across kill -9',
};

/**
 * SIGKILL to the Lease holder, then waits until another process holds the Lease: the follower, or
 * the killed replica started again if it wins the Lease back after it expired.
 */
async function failLeaderOver(ctx: FaultContext): Promise<string> {
  const victim = await ctx.replicas.leader();
  const began = performance.now();
  await ctx.replicas.kill9(victim);
  const successor = await pollUntil(
    async () => {
      const leader = await ctx.replicas.leader();
      if (leader !== undefined && leader.pid !== victim?.pid) return leader;
      throw new Error('the Lease is not held by another kreload yet');
    },
    { timeoutMs: FAILOVER_WAIT_MS, intervalMs: 200, describe: 'a new Lease holder' },
  );
  const ready = await fetch(successor.url('/readyz')).then((response) => response.status);
  return `leader (pid ${String(victim?.pid)}) killed, pid ${String(successor.pid)} led after ${seconds(performance.now() - began)} (readyz ${String(ready)})`;
}

const FAILOVER_AFTER_HALT: HaltKills = {
  whileHalted: failLeaderOver,
  midWave: (ctx) => ctx.replicas.kill9(),
  what: 'resumed, leader killed',
  heldCheck: 'halt kept across failover',
};

/**
 * The window's change fails its canary (the fleet's crashing canary) and kreload halts it; kreload
 * is killed -9 (and started again, or its follower takes over), and the kreload that leads then
 * must keep the halt: no PATCH to another Deployment, the marker unchanged. The marker is then
 * removed (the resume a user does), and kreload is killed again mid-wave of the rest: the waves
 * after the canary must keep their order and budget.
 */
async function killAfterHalt(ctx: FaultContext, kills: HaltKills): Promise<FaultEvidence> {
  const { namespace } = ctx;
  const offset = await ctx.audit.mark();
  const [canary = '', ...rest] = [...ctx.fleet.names('Deployment')].sort();
  // The canary crash-loops for good: the sampler follows the rest, whose waves start at 1.
  const sampler = new RollSampler({
    kc: ctx.admin,
    namespace,
    source: ctx.fleet.source,
    exclude: canary,
  });
  const hash = await ctx.changeSource();
  sampler.start(hash);
  const kube = new KubeJson({ kc: ctx.admin });
  const path = `/apis/apps/v1/namespaces/${namespace}/deployments/${canary}`;
  const marker = async (): Promise<string | undefined> => {
    const annotations = stringMapAt(await kube.get(path), ['metadata', 'annotations']);
    return annotations[ROLLOUT_HALTED];
  };
  let halted: string | undefined;
  try {
    halted = await pollUntil(
      async () => {
        const found = await marker();
        if (found?.includes(hash) === true) return found;
        throw new Error(`no halt marker on ${canary} yet`);
      },
      { timeoutMs: HALT_WAIT_MS, intervalMs: 200, describe: `the halt marker on ${canary}` },
    );
  } catch (error) {
    if (!(error instanceof PollTimeoutError)) throw error;
  }
  const firstKill = await kills.whileHalted(ctx);
  await sleep(HALT_HOLD_MS);
  const kept = await marker();
  const others = new Set<string>();
  for (const request of await kreloadRequestsSince(ctx.audit, offset)) {
    if (request.verb !== 'patch' || request.resource !== 'deployments') continue;
    if (request.namespace === namespace && request.name !== canary) others.add(request.name);
  }
  const held: FaultCheck[] = [
    {
      name: 'halted before the kill',
      passed: halted !== undefined,
      detail: halted === undefined ? 'no halt marker' : `marker ${halted}`,
    },
    {
      name: kills.heldCheck,
      passed: halted !== undefined && kept === halted && others.size === 0,
      detail: `marker ${kept === halted ? 'unchanged' : `now ${kept ?? 'gone'}`}, ${String(others.size)} other Deployments PATCHed${others.size === 0 ? '' : `: ${[...others].slice(0, 3).join(', ')}`}`,
    },
  ];
  // Resume: the user removes the marker; the canary's failure is accepted, wave 1 starts.
  await kube.request({
    method: 'PATCH',
    path,
    body: { metadata: { annotations: { [ROLLOUT_HALTED]: null } } },
    contentType: MERGE_PATCH,
  });
  const waves = new Map(wavesByName(rest, 0, WAVE_SIZE));
  const evidence = await killInWave(
    ctx,
    { offset, sampler, waves, firstWave: 1 },
    () => kills.midWave(ctx),
    kills.what,
  );
  return {
    ...evidence,
    injected: 2,
    note: `halted, ${firstKill}, held ${String(HALT_HOLD_MS / 1000)} s; ${evidence.note}`,
    checks: held,
  };
}

export const FAULTS: readonly FaultRow[] = [
  {
    id: 'reset-watch',
    title: 'connection reset mid-watch',
    how: 'toxiproxy `reset_peer` (timeout 0) on the downstream of every kreload connection for 3 s; the change lands while its watches are cut',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 90_000,
    defaultIterations: 2,
    async inject(ctx) {
      const offset = await ctx.audit.mark();
      const toxic = {
        name: 'reset-watch',
        stream: 'downstream',
        spec: { type: 'reset_peer', attributes: { timeout: 0 } },
      } as const;
      await ctx.proxy.withToxics([toxic], async () => {
        await sleep(500);
        await ctx.changeSource();
        await sleep(2500);
      });
      await sleep(3000);
      return {
        injected: await watchOpens(ctx.audit, offset),
        note: 'watches reopened after the resets',
      };
    },
  },
  {
    id: 'reset-list',
    title: 'connection reset mid-list',
    how: 'toxiproxy `limit_data` (16 KiB, then close) on the downstream while kreload restarts and lists, 8 s',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      const offset = await ctx.audit.mark();
      const toxic = {
        name: 'reset-list',
        stream: 'downstream',
        spec: { type: 'limit_data', attributes: { bytes: 16_384 } },
      } as const;
      await ctx.replicas.kill9();
      await ctx.changeSource();
      await ctx.proxy.withToxics([toxic], () => sleep(8000));
      await ctx.replicas.allRunning();
      const lists = await Promise.all(
        ['list configmaps', 'list deployments', 'list jobs'].map((key) =>
          requestCount(ctx.audit, offset, key),
        ),
      );
      return {
        injected: lists.reduce((a, b) => a + b, 0),
        note: 'LISTs of configmaps, deployments, jobs sent (cut ones included)',
      };
    },
  },
  {
    id: 'lost-response',
    title: 'committed write, response lost (PATCH, DELETE, POST)',
    how: 'toxiproxy `timeout` (drop, close after 1.5 s) on the downstream for 4 s from a seeded point of the fan-out: writes on pooled connections reach kube-apiserver and commit, their responses never arrive',
    replicas: 1,
    ha: true,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      return dropResponses(ctx, 20);
    },
  },
  {
    id: 'lost-response-jobs',
    title: 'committed DELETE and POST, response lost (Jobs, CronJobs)',
    how: 'as `lost-response`, on a fleet of Jobs and CronJobs only (twice the Jobs, no apps kinds), so the dropped answers are those of Job DELETEs, Job and CronJob-run POSTs and journal writes',
    replicas: 1,
    ha: true,
    convergeTimeoutMs: 120_000,
    defaultIterations: 4,
    fleet: jobsOnly,
    async inject(ctx) {
      return dropResponses(ctx, 60);
    },
  },
  {
    id: 'apiserver-kill',
    title: 'kube-apiserver kill -9 and restart',
    how: 'SIGKILL to kube-apiserver at a seeded point of the fan-out, restarted on the same etcd, certificates and port',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      await ctx.changeSource();
      await sleep(fanOutPoint(ctx));
      const began = performance.now();
      await ctx.controlPlane.killAndRestart('kube-apiserver');
      return {
        injected: 1,
        note: `kube-apiserver back in ${((performance.now() - began) / 1000).toFixed(1)} s`,
      };
    },
  },
  {
    id: 'watch-expiry',
    title: 'watch expiry (410)',
    how: 'kreload cut off (proxy disabled); the change, 50 other writes, etcd compaction to the current revision, kube-apiserver restart (fresh watch cache); then kreload reconnects with a compacted resourceVersion',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      const before = await ctx.kreloadMetrics();
      const offset = await ctx.audit.mark();
      const cutAt = Date.now();
      let revision: number;
      let restartMs: number;
      await ctx.proxy.setEnabled(false);
      try {
        await ctx.changeSource();
        await ctx.changeNoise(50);
        revision = await compactToNow(ctx.controlPlane.info.ports.etcdClient);
        const restarting = performance.now();
        await ctx.controlPlane.killAndRestart('kube-apiserver');
        restartMs = performance.now() - restarting;
      } finally {
        await ctx.proxy.setEnabled(true);
      }
      const reachableAt = Date.now();
      return {
        injected: 1,
        note: `etcd compacted to revision ${String(revision)}; kube-apiserver back in ${seconds(restartMs)}; kreload cut off for ${seconds(reachableAt - cutAt)}`,
        verify: async () => {
          const relists = (await ctx.kreloadMetrics()).delta(before, WATCH_RESTARTS, {
            reason: '410',
          });
          const timeline = reconnectTimeline(
            await kreloadRequestsSince(ctx.audit, offset),
            reachableAt,
            ctx.namespace,
          );
          return [
            {
              name: 'expired relists ≥ 1',
              passed: relists >= 1,
              detail: `${String(relists)} list-watches relisted after 410 (reloader_watch_restarts_total{reason="410"}); after the proxy came back: ${timeline}`,
            },
          ];
        },
      };
    },
  },
  {
    id: '429-storm',
    title: '429 storm (APF, one of two namespaces)',
    how: "a FlowSchema for kreload's ServiceAccount's writes in the fleet's namespace, on a PriorityLevelConfiguration with no seats (`nominalConcurrencyShares: 0`, nothing lent or borrowed, `Reject`), kept busy by a seat holder (a dry-run POST of another ServiceAccount whose body never ends): every such write gets 429 at once; a bystander namespace with the same fleet, watched by the same kreload, is not throttled. The change lands in both; the storm ends 2 s after the bystander converged",
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    bystander: true,
    async inject(ctx) {
      const bystander = ctx.bystander;
      if (bystander === undefined) throw new Error('429-storm needs its bystander namespace');
      const storm = new ApfStorm({
        admin: ctx.admin,
        ...ctx.direct,
        name: `chaos-storm-${randomBytes(3).toString('hex')}`,
        kreload: {
          namespace: KRELOAD_NAMESPACE,
          name: KRELOAD_SERVICE_ACCOUNT,
          token: ctx.kreloadToken,
        },
        namespace: ctx.namespace,
        mintHolderToken: () => ctx.mintToken(APF_HOLDER, KRELOAD_NAMESPACE),
      });
      await storm.begin();
      const offset = await ctx.audit.mark();
      const changedAt = performance.now();
      let bystanderMs: number | undefined;
      try {
        await ctx.changeSource();
        try {
          await pollUntil(() => bystander.converged(), {
            timeoutMs: STORM_MAX_MS,
            intervalMs: 250,
            describe: `the bystander namespace ${bystander.namespace} to converge`,
          });
          bystanderMs = performance.now() - changedAt;
        } catch (error) {
          if (!(error instanceof PollTimeoutError)) throw error;
        }
        await sleep(STORM_TAIL_MS);
      } finally {
        await storm.end();
      }
      const stormMs = performance.now() - changedAt;
      const rejected = (await kreloadRequestsSince(ctx.audit, offset)).filter(
        (r) => r.code === 429 && r.namespace === ctx.namespace && r.name !== APF_PROBE_NAME,
      );
      const counts = byVerb(rejected);
      return {
        injected: rejected.length,
        byVerb: counts,
        note: `429s to kreload in ${ctx.namespace}: ${describeByVerb(counts)}; storm ${seconds(stormMs)}, bystander converged in ${bystanderMs === undefined ? 'never' : seconds(bystanderMs)}`,
        checks: [
          {
            name: 'free namespace converged before the storm ended',
            passed: bystanderMs !== undefined,
            detail:
              bystanderMs === undefined
                ? `not within ${seconds(STORM_MAX_MS)}`
                : `in ${seconds(bystanderMs)} of a ${seconds(stormMs)} storm`,
          },
          {
            name: 'throttled writes got 429',
            passed: rejected.length > 0,
            detail: `${String(rejected.length)} writes rejected`,
          },
        ],
      };
    },
  },
  {
    id: 'kreload-kill',
    title: 'kreload kill -9 at random points of a fan-out',
    how: 'SIGKILL to kreload at a seeded point between the change and the end of the fan-out; started again at once',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 20,
    async inject(ctx) {
      await ctx.changeSource();
      const at = fanOutPoint(ctx);
      await sleep(at);
      await ctx.replicas.kill9();
      await ctx.replicas.allRunning();
      return { injected: 1, note: `killed ${String(Math.round(at))} ms after the change` };
    },
  },
  {
    id: 'leader-failover',
    title: 'leader failover mid fan-out',
    how: 'two replicas with --enable-ha; SIGKILL to the Lease holder at a seeded point of the fan-out (the follower takes over when the Lease expires)',
    replicas: 2,
    ha: true,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      await ctx.changeSource();
      const at = fanOutPoint(ctx);
      await sleep(at);
      await ctx.replicas.kill9();
      return { injected: 1, note: `leader killed ${String(Math.round(at))} ms after the change` };
    },
  },
  {
    id: 'wave-kreload-kill',
    title: 'kreload kill -9 mid-wave (waves, canary 1, budget 10)',
    how: 'Deployments only (replicas 0), kreload with `--rollout-waves --canary=1 --max-concurrent-rollouts=10`; SIGKILL as soon as the first Deployment of a seeded wave (canary included) is seen rolled; started again at once',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 10,
    fleet: deploymentsOnly,
    kreloadArgs: WAVE_FLAGS,
    async inject(ctx) {
      return killMidWave(
        ctx,
        async () => {
          await ctx.replicas.kill9();
          await ctx.replicas.allRunning();
        },
        'killed',
      );
    },
  },
  {
    id: 'wave-leader-failover',
    title: 'leader failover mid-wave (waves, canary 1, budget 10)',
    how: 'as `wave-kreload-kill`, with two replicas and `--enable-ha`: SIGKILL to the Lease holder; the follower takes over when the Lease expires',
    replicas: 2,
    ha: true,
    convergeTimeoutMs: 120_000,
    defaultIterations: 10,
    fleet: deploymentsOnly,
    kreloadArgs: WAVE_FLAGS,
    async inject(ctx) {
      return killMidWave(ctx, () => ctx.replicas.kill9(), 'leader killed');
    },
  },
  {
    id: 'wave-halt-kill',
    title: 'kreload kill -9 after a halt, then mid-wave of the resumed change',
    how: 'as `wave-kreload-kill`, the canary (first Deployment) with one pod that crash-loops on the change: kreload halts the change; SIGKILL, started again, watched 15 s (the halt must hold: no other PATCH, the marker kept); the marker removed (resume); SIGKILL as soon as the first Deployment of a seeded later wave is seen rolled',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 180_000,
    defaultIterations: 10,
    fleet: deploymentsOnly,
    crashingCanary: true,
    kreloadArgs: WAVE_FLAGS,
    inject: (ctx) => killAfterHalt(ctx, KILL_AFTER_HALT),
  },
  {
    id: 'wave-halt-failover',
    title: 'leader failover after a halt, then mid-wave of the resumed change',
    how: 'as `wave-halt-kill`, with two replicas and `--enable-ha`: kreload halts the change; SIGKILL to the Lease holder, the follower takes over, watched 15 s from then (the halt must hold: no other PATCH, the marker kept); the marker removed (resume); SIGKILL to the Lease holder as soon as the first Deployment of a seeded later wave is seen rolled',
    replicas: 2,
    ha: true,
    convergeTimeoutMs: 180_000,
    defaultIterations: 10,
    fleet: deploymentsOnly,
    crashingCanary: true,
    kreloadArgs: WAVE_FLAGS,
    inject: (ctx) => killAfterHalt(ctx, FAILOVER_AFTER_HALT),
  },
  {
    id: 'shard-kill',
    title: 'active-active member kill -9 mid fan-out (1 of 3)',
    how: 'three replicas with `--shard-mode=active-active`, the fleet spread over 8 namespaces; SIGKILL to a seeded member as soon as a seeded number of the workloads of its namespaces were written; it comes back as a new pod',
    ...ACTIVE_ACTIVE_ROW,
    inject: killShardMember,
  },
  {
    id: 'shard-scale',
    title: 'active-active 3 → 5 → 2 replicas mid fan-out',
    how: 'as `shard-kill`; two replicas start as soon as a seeded number of workloads were written; once the buckets settled over the five, three seeded members leave within a second (one SIGKILL, one SIGTERM, the third by seed), not replaced',
    ...ACTIVE_ACTIVE_ROW,
    inject: scaleShardMembers,
  },
  {
    id: 'slow-api',
    title: 'slow API (latency 500 ms, bandwidth limit)',
    how: 'toxiproxy `latency` 500 ms ± 100 ms on both directions and `bandwidth` 64 KB/s downstream for 20 s around the change',
    replicas: 1,
    ha: false,
    convergeTimeoutMs: 120_000,
    defaultIterations: 2,
    async inject(ctx) {
      const toxics = [
        {
          name: 'slow-up',
          stream: 'upstream',
          spec: { type: 'latency', attributes: { latency: 500, jitter: 100 } },
        },
        {
          name: 'slow-down',
          stream: 'downstream',
          spec: { type: 'latency', attributes: { latency: 500, jitter: 100 } },
        },
        {
          name: 'narrow',
          stream: 'downstream',
          spec: { type: 'bandwidth', attributes: { rate: 64 } },
        },
      ] as const;
      await ctx.proxy.withToxics(toxics, async () => {
        await sleep(1000);
        await ctx.changeSource();
        await sleep(19_000);
      });
      return { injected: 1, note: 'latency and bandwidth toxics for 20 s' };
    },
  },
];

export function faultById(id: string): FaultRow {
  const row = FAULTS.find((candidate) => candidate.id === id);
  if (row === undefined) {
    throw new Error(`unknown fault ${id}; known: ${FAULTS.map((f) => f.id).join(', ')}`);
  }
  return row;
}
