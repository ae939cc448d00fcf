// Spec §13.4 (leader election) and §13.5 step 3 (lease release), with real processes:
// - replica A leads; replica B follows with warm caches, is ready, and writes nothing;
// - A is killed with SIGKILL in the middle of a 40-workload fan-out; B takes the Lease only once
//   it expired by B's own clock, then rolls exactly the workloads A had not rolled;
// - B is stopped with SIGTERM; it releases the Lease and replica C takes over at once;
// - someone else takes the Lease from C: C stops and exits 1.
// A and C run as a second ServiceAccount, which the audit policy does not record, so the audit log
// shows B's requests alone: no write while following, and when its first write happened.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, V1MicroTime, type V1PolicyRule } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { AuditLog } from '../harness/audit.ts';
import { DeploymentFleet } from '../harness/fleet.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import {
  describeRequest,
  isWrite,
  kreloadRequestsSince,
  type CompletedRequest,
} from '../harness/ops-audit.ts';
import { pollUntil } from '../harness/poll.ts';
import { readLease } from '../harness/leases.ts';
import { installKreloadIdentity, KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';

const cluster = sharedCluster();
const sources = new SourceClient({ kc: cluster.kc });
const coordination = cluster.kc.makeApiClient(CoordinationV1Api);
const PROCESS_START = new MetricsSnapshot({ samples: [] });

const SIZE = 40;
const CONFIG = 'ha-config';
const V1 = { mode: 'v1' };
const V2 = { mode: 'v2' };
/** §13.4 timings. */
const LEASE_DURATION_MS = 15_000;
const RETRY_PERIOD_MS = 2_000;
/** Scheduling and request latency on a loaded 2-core machine. */
const SLACK_MS = 1_000;
const LEASE_ID = `ops-ha-${Date.now().toString(36)}`;
const REPLICA = { a: 'ops-ha-a', b: 'ops-ha-b', c: 'ops-ha-c' } as const;

const LEASE_RULE: V1PolicyRule = {
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  verbs: ['get', 'create', 'update'],
};

function auditLog(): AuditLog {
  const path = cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

interface ReadyzBody {
  readonly ready: boolean;
  readonly checks: { readonly leaderElection: string };
}

async function readyz(kreload: KreloadProcess): Promise<{ status: number; body: ReadyzBody }> {
  const response = await probe({ url: kreload.url('/readyz') });
  return { status: response.status, body: JSON.parse(response.body) as ReadyzBody };
}

async function leaseHolder(): Promise<string | undefined> {
  return (await readLease(cluster.kc, LEASE_ID)).holder;
}

function isLeaseWrite(request: CompletedRequest): boolean {
  return request.resource === 'leases' && request.name === LEASE_ID && isWrite(request);
}

function isWorkloadPatch(namespace: string) {
  return (request: CompletedRequest): boolean =>
    request.verb === 'patch' &&
    request.resource === 'deployments' &&
    request.namespace === namespace;
}

describe('leader election with real replicas (§13.4)', () => {
  const audit = auditLog();
  const processes: KreloadProcess[] = [];
  let auditedLogin: string;
  let otherLogin: string;
  let namespace: string;
  let fleet: DeploymentFleet;
  let leaderA: KreloadProcess;
  let followerB: KreloadProcess;
  let auditFromB: number;

  function startReplica(pod: string, kubeconfig: string): Promise<KreloadProcess> {
    return startKreload({
      name: pod,
      kubeconfig,
      env: { POD_NAME: pod, POD_NAMESPACE: KRELOAD_NAMESPACE },
      args: [
        `--namespaces=${namespace}`,
        '--enable-ha',
        `--leader-election-id=${LEASE_ID}`,
        '--sync-delay=0',
        '--resync-period=0',
        // One worker: the fan-out lasts long enough to be cut in the middle.
        '--worker-threads=1',
      ],
    }).then((kreload) => {
      processes.push(kreload);
      return kreload;
    });
  }

  beforeAll(async () => {
    auditedLogin = (await installKreloadIdentity(cluster)).kubeconfigPath;
    otherLogin = (
      await installCustomIdentity(cluster, {
        name: 'kreload-ops-ha',
        rules: [...clusterRulesWith((rule) => rule), LEASE_RULE],
      })
    ).kubeconfigPath;
    namespace = await cluster.createNamespace('ops-ha');
    await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: V1 });
    fleet = new DeploymentFleet({
      kc: cluster.kc,
      namespace,
      prefix: 'svc',
      size: SIZE,
      configMap: CONFIG,
    });
    await fleet.create();
  });

  afterAll(async () => {
    for (const kreload of processes) await kreload.stop();
  });

  it('the first replica takes the Lease, leads and records the baselines', async () => {
    leaderA = await startReplica(REPLICA.a, otherLogin);
    await pollUntil(async () => (await leaseHolder()) === REPLICA.a, {
      timeoutMs: 10_000,
      describe: `Lease ${LEASE_ID} held by ${REPLICA.a}`,
    });
    const h1 = configMapHash({ data: V1 });
    await fleet.waitForAll(
      (m) => m.baselineHash === h1 && m.envHash === undefined && m.replicaSets === 1,
      { describe: 'first-sight baselines and the first ReplicaSet on every Deployment' },
    );
    await waitUntilSettled(leaderA, { since: PROCESS_START, minReconciles: SIZE });
    expect(await readyz(leaderA)).toMatchObject({
      status: 200,
      body: { ready: true, checks: { leaderElection: 'leader' } },
    });
    expect((await scrapeMetrics(leaderA)).value('reloader_leader')).toBe(1);
  });

  it('a second replica follows: ready, leader gauge 0, and no write of any kind', async () => {
    auditFromB = await audit.mark();
    followerB = await startReplica(REPLICA.b, auditedLogin);
    expect(await readyz(followerB)).toMatchObject({
      status: 200,
      body: { ready: true, checks: { leaderElection: 'follower' } },
    });
    // Barrier: B has synced its caches and read the Lease at least once since.
    const metrics = await waitUntilSettled(followerB, { since: PROCESS_START });
    await pollUntil(
      async () =>
        (await kreloadRequestsSince(audit, auditFromB)).some(
          (r) => r.resource === 'leases' && r.verb === 'get',
        ),
      { timeoutMs: 10_000, describe: `${REPLICA.b} reading the Lease` },
    );
    expect(metrics.value('reloader_leader')).toBe(0);
    expect(metrics.value('reloader_reconcile_total')).toBe(0);
    expect(
      (await kreloadRequestsSince(audit, auditFromB)).filter(isWrite).map(describeRequest),
    ).toEqual([]);
    expect(await leaseHolder()).toBe(REPLICA.a);
  });

  it('SIGKILL of the leader mid fan-out: the follower takes over after expiry and rolls the rest, each exactly once', async () => {
    const h2 = configMapHash({ data: V2 });
    const firstRoll = fleet.watchForFirstEnvHash(h2);
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data: V2 });
    await firstRoll;
    const killedAt = Date.now();
    expect(await leaderA.kill9()).toEqual({ code: null, signal: 'SIGKILL' });

    const final = await fleet.waitForAll(
      (m) => m.envHash === h2 && m.replicaSets === 2 && m.observedGeneration >= m.generation,
      {
        describe: 'every Deployment rolled to the new hash, with exactly two ReplicaSets',
        timeoutMs: LEASE_DURATION_MS + 4 * RETRY_PERIOD_MS + 30_000,
      },
    );
    expect([...final.values()].map((m) => m.baselineHash)).toEqual(
      Array.from({ length: SIZE }, () => undefined),
    );
    expect(await leaseHolder()).toBe(REPLICA.b);

    const metricsB = await waitUntilSettled(followerB, {
      since: PROCESS_START,
      minReconciles: SIZE,
    });
    const rolledByB = metricsB.value('reloader_reload_executed_total', { success: 'true' });
    const requests = await pollUntil(
      async () => {
        const all = await kreloadRequestsSince(audit, auditFromB);
        const acknowledged = all.filter((r) => isWorkloadPatch(namespace)(r) && r.code === 200);
        return acknowledged.length >= rolledByB ? all : undefined;
      },
      { timeoutMs: 10_000, describe: `${REPLICA.b}'s patches in the audit log` },
    );
    const takeover = requests.find(isLeaseWrite);
    const patches = requests.filter(isWorkloadPatch(namespace));
    const firstWrite = requests.find((r) => isWrite(r) && !isLeaseWrite(r));
    if (takeover === undefined || firstWrite === undefined) {
      throw new Error(
        `no takeover or no write by ${REPLICA.b}: ${requests.map(describeRequest).join('; ')}`,
      );
    }

    // "During a fan-out": A rolled some and B the rest; together exactly one roll per workload.
    expect(rolledByB).toBeGreaterThan(0);
    expect(rolledByB).toBeLessThan(SIZE);
    // One acknowledged patch per workload B rolled; a 409 is a retry after a fresh GET (§10).
    const acknowledged = patches.filter((p) => p.code === 200);
    expect(new Set(acknowledged.map((p) => p.name)).size).toBe(rolledByB);
    expect(acknowledged).toHaveLength(rolledByB);
    const refused = patches.filter((p) => p.code !== 200);
    expect(refused.filter((p) => p.code !== 409).map(describeRequest)).toEqual([]);
    expect(metricsB.value('reloader_retries_total')).toBe(refused.length);
    expect(metricsB.value('reloader_reload_executed_total', { success: 'false' })).toBe(0);
    expect(metricsB.value('reloader_leader')).toBe(1);
    // Nothing written by B before it held the Lease.
    expect(
      requests.filter((r) => isWrite(r) && r.receivedAt < takeover.receivedAt).map(describeRequest),
    ).toEqual([]);

    const takeoverMs = takeover.receivedAt - killedAt;
    const failoverMs = firstWrite.receivedAt - killedAt;
    console.info(
      `ops-ha: SIGKILL → Lease takeover ${takeoverMs} ms, → first write ${failoverMs} ms ` +
        `(${SIZE - rolledByB} rolled by the killed leader, ${rolledByB} by the new one)`,
    );
    // Expiry is judged from when B observed A's last renewal (§13.4 item 1): A renews every retry
    // period, B reads every retry period, so the takeover lands between one lease duration minus
    // a retry period and one lease duration plus two retry periods after the kill.
    expect(takeoverMs).toBeGreaterThanOrEqual(LEASE_DURATION_MS - RETRY_PERIOD_MS - SLACK_MS);
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_DURATION_MS + 2 * RETRY_PERIOD_MS + SLACK_MS);
    // On acquiring, B reconciles everything at once (§13.4 item 3).
    expect(failoverMs - takeoverMs).toBeLessThan(SLACK_MS);
    expect(await readyz(followerB)).toMatchObject({
      status: 200,
      body: { ready: true, checks: { leaderElection: 'leader' } },
    });
  });

  it('SIGTERM of the leader releases the Lease: a new follower takes over without waiting for expiry', async () => {
    const replicaC = await startReplica(REPLICA.c, otherLogin);
    expect(await readyz(replicaC)).toMatchObject({
      body: { checks: { leaderElection: 'follower' } },
    });
    const signalledAt = Date.now();
    expect(await followerB.stop()).toEqual({ code: 0, signal: null });
    await pollUntil(async () => (await leaseHolder()) === REPLICA.c, {
      timeoutMs: LEASE_DURATION_MS,
      intervalMs: 50,
      describe: `Lease ${LEASE_ID} held by ${REPLICA.c}`,
    });
    const handoverMs = Date.now() - signalledAt;
    console.info(`ops-ha: SIGTERM → successor holds the Lease after ${handoverMs} ms`);
    // Released with a 1 s duration: the successor's next read (every retry period) acquires it.
    expect(handoverMs).toBeLessThan(RETRY_PERIOD_MS + 1_000 + SLACK_MS);
    await pollUntil(async () => (await scrapeMetrics(replicaC)).value('reloader_leader') === 1, {
      timeoutMs: 5_000,
      describe: `${REPLICA.c}'s leader gauge`,
    });
  });

  it('a leader that sees another holder stops and exits 1 within 5 s (§13.4 item 5)', async () => {
    const leaderC = processes.at(-1);
    if (leaderC === undefined) throw new Error('no replica C');
    const lease = await coordination.readNamespacedLease({
      namespace: KRELOAD_NAMESPACE,
      name: LEASE_ID,
    });
    const stolenAt = Date.now();
    await coordination.replaceNamespacedLease({
      namespace: KRELOAD_NAMESPACE,
      name: LEASE_ID,
      body: {
        metadata: { name: LEASE_ID, resourceVersion: lease.metadata?.resourceVersion },
        spec: {
          holderIdentity: 'intruder',
          leaseDurationSeconds: 15,
          acquireTime: new V1MicroTime(stolenAt),
          renewTime: new V1MicroTime(stolenAt),
          leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1,
        },
      },
    });
    const exit = await Promise.race([
      leaderC.exit,
      sleep(RETRY_PERIOD_MS + 5_000 + SLACK_MS, 'still running' as const),
    ]);
    const exitMs = Date.now() - stolenAt;
    console.info(`ops-ha: Lease taken by another holder → leader exited after ${exitMs} ms`);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(await leaseHolder()).toBe('intruder');
  });
});
