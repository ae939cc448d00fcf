// One row per fault of issue 10. Each row injects its fault around the "during" change of the
// ConfigMap (it calls changeSource itself, at the moment the fault is meant to hit) and returns
// when the fault is over; the suite then measures how long kreload takes to converge. `evidence`
// says, from the audit log or the proxy, that the fault really hit kreload.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ControlPlane } from '../cluster/control-plane.ts';
import type { AuditLog } from '../harness/audit.ts';
import { countRequests } from '../harness/audit.ts';
import { isWrite, kreloadRequestsSince } from '../harness/ops-audit.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { compactToNow } from './etcd.ts';
import type { KreloadReplicas } from './replicas.ts';
import type { ToxiproxyProxy } from './toxiproxy.ts';

export interface FaultContext {
  /** The window's ConfigMap change; every fault calls it exactly once. */
  readonly changeSource: () => Promise<void>;
  /** Changes another ConfigMap of the namespace that no workload uses: etcd revisions, no rolls. */
  readonly changeNoise: (count: number) => Promise<void>;
  readonly proxy: ToxiproxyProxy;
  readonly controlPlane: ControlPlane;
  readonly replicas: KreloadReplicas;
  readonly audit: AuditLog;
  /** Seeded, per iteration: where in the fan-out a kill lands. */
  readonly random: () => number;
  /** kreload's --sync-delay: rolls start this long after the change. */
  readonly syncDelayMs: number;
  readonly fleetSize: number;
}

export interface FaultEvidence {
  /** How often the fault hit: writes whose response was lost, watches cut, kills, 429s… */
  readonly injected: number;
  readonly note: string;
}

export interface FaultRow {
  readonly id: string;
  /** The fault, as the table names it. */
  readonly title: string;
  /** How it is injected, for docs/reliability.md. */
  readonly how: string;
  /** kreload replicas (2 for a leader failover). */
  readonly replicas: number;
  /**
   * Run with --enable-ha. Off where the fault cuts kreload off for longer than the Lease lasts
   * (kreload would exit on the lost Lease and relist, hiding the fault); on for the failover, and
   * for lost responses, where the Lease renewals every 2 s keep a pooled connection open.
   */
  readonly ha: boolean;
  /** Longest wait for convergence after the fault is over. */
  readonly convergeTimeoutMs: number;
  /** Iterations of `npm run chaos` without --iterations. */
  readonly defaultIterations: number;
  inject(ctx: FaultContext): Promise<FaultEvidence>;
}

/** A window of the fan-out: between the first roll and roughly the last (3 workers, loopback). */
function fanOutPoint(ctx: FaultContext): number {
  return ctx.syncDelayMs + ctx.random() * (ctx.syncDelayMs + ctx.fleetSize * 40);
}

async function writesBetween(audit: AuditLog, offset: number, from: number, to: number) {
  const requests = await kreloadRequestsSince(audit, offset);
  return requests.filter((r) => isWrite(r) && r.receivedAt >= from && r.receivedAt <= to);
}

async function requestCount(audit: AuditLog, offset: number, key: string): Promise<number> {
  return countRequests(await audit.eventsSince(offset), KRELOAD_USER).get(key) ?? 0;
}

const WATCH_OPENS = ['watch configmaps', 'watch deployments', 'watch jobs'];

async function watchOpens(audit: AuditLog, offset: number): Promise<number> {
  const counts = await Promise.all(WATCH_OPENS.map((key) => requestCount(audit, offset, key)));
  return counts.reduce((sum, value) => sum + value, 0);
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
      const offset = await ctx.audit.mark();
      const toxic = {
        name: 'lost-response',
        stream: 'downstream',
        spec: { type: 'timeout', attributes: { timeout: 1500 } },
      } as const;
      await ctx.changeSource();
      // kreload's watch delivers the change within milliseconds; its writes start after --sync-delay.
      // A seeded start, so iterations hit different writes (PATCH, DELETE, POST) of the fan-out.
      await sleep(ctx.syncDelayMs / 2 + ctx.random() * (ctx.syncDelayMs / 2 + ctx.fleetSize * 20));
      const from = Date.now();
      await ctx.proxy.withToxics([toxic], () => sleep(ctx.syncDelayMs + 3000));
      const to = Date.now();
      await sleep(2000);
      const lost = await writesBetween(ctx.audit, offset, from, to);
      const verbs = [...new Set(lost.map((r) => `${r.verb} ${r.resource}`))].join(', ');
      return {
        injected: lost.length,
        note: `committed writes without a response: ${verbs || 'none'}`,
      };
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
      await ctx.proxy.setEnabled(false);
      try {
        await ctx.changeSource();
        await ctx.changeNoise(50);
        const revision = await compactToNow(ctx.controlPlane.info.ports.etcdClient);
        await ctx.controlPlane.killAndRestart('kube-apiserver');
        return { injected: 1, note: `etcd compacted to revision ${String(revision)}` };
      } finally {
        await ctx.proxy.setEnabled(true);
      }
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
