// Active-active mode (docs/adr/0051-active-active-sharding.md) with three real replicas:
// - the namespaces' buckets spread over the three, each bucket Lease held by its assigned member,
//   each replica's caches holding the objects of its own namespaces only;
// - a change in every namespace rolls each dependent exactly once (audit log);
// - SIGKILL of one replica mid fan-out: its buckets are taken over within the lease duration + 5 s,
//   and every dependent is rolled exactly once, none missed;
// - scaling 3 → 5 moves buckets only to the new members (measured: the share that moved).
// Every replica runs as kreload's audited ServiceAccount: the audit log shows all their writes.
import { CoordinationV1Api, CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignBuckets, bucketOf } from '../../src/shard/assignment.ts';
import { AuditLog } from '../harness/audit.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { DeploymentFleet } from '../harness/fleet.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { kreloadRequestsSince, type CompletedRequest } from '../harness/ops-audit.ts';
import { pollUntil } from '../harness/poll.ts';
import {
  installKreloadIdentity,
  KRELOAD_NAMESPACE,
  KRELOAD_SERVICE_ACCOUNT,
} from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import { WorkloadClient } from '../harness/workloads.ts';

const cluster = sharedCluster();
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });
const coordination = cluster.kc.makeApiClient(CoordinationV1Api);
const core = cluster.kc.makeApiClient(CoreV1Api);

/** Three namespaces per replica of the first three: each has a share of the fan-out. */
const PER_REPLICA = 3;
const FIRST = ['aa-0', 'aa-1', 'aa-2'];
const NAMESPACES = PER_REPLICA * FIRST.length;
const PER_NAMESPACE = 4;
const BUCKETS = 16;
const CONFIG = 'aa-config';
const LEASE_DURATION_MS = 15_000;
const LEASE_ID = `aa-${Date.now().toString(36)}`;
const SHARD_RULES_ROLE = 'kreload-e2e-shard-leases';

function auditLog(): AuditLog {
  const path = cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

/** Bucket → holder of its Lease, as the API server has it now. */
async function bucketHolders(): Promise<Map<number, string | undefined>> {
  const list = await coordination.listNamespacedLease({ namespace: KRELOAD_NAMESPACE });
  const holders = new Map<number, string | undefined>();
  for (const lease of list.items) {
    const name = lease.metadata?.name ?? '';
    const prefix = `${LEASE_ID}-bucket-`;
    if (!name.startsWith(prefix)) continue;
    holders.set(Number(name.slice(prefix.length)), lease.spec?.holderIdentity ?? undefined);
  }
  return holders;
}

/** Polls until every bucket is held by one of `members`, each of them holding some. */
async function settledOver(members: readonly string[], timeoutMs = 60_000) {
  return pollUntil(
    async () => {
      const holders = await bucketHolders();
      const all = Array.from({ length: BUCKETS }, (_, bucket) => holders.get(bucket));
      // Balanced as ADR 0057 assigns: each member holds ⌊B/M⌋ or ⌈B/M⌉ buckets.
      const fewest = Math.floor(BUCKETS / members.length);
      const most = Math.ceil(BUCKETS / members.length);
      const settled =
        all.every((holder) => holder !== undefined && members.includes(holder)) &&
        members.every((member) => {
          const held = all.filter((holder) => holder === member).length;
          return held >= fewest && held <= most;
        });
      return settled ? all : undefined;
    },
    {
      timeoutMs,
      intervalMs: 250,
      describe: `every bucket held by one of ${members.join(', ')}, balanced`,
    },
  );
}

function rollPatches(requests: readonly CompletedRequest[], namespaces: readonly string[]) {
  return requests.filter(
    (r) =>
      r.verb === 'patch' &&
      r.resource === 'deployments' &&
      namespaces.includes(r.namespace) &&
      r.code === 200,
  );
}

describe('active-active: three replicas share the namespaces over Leases', () => {
  const audit = auditLog();
  const processes = new Map<string, KreloadProcess>();
  const namespaces: string[] = [];
  const fleets: DeploymentFleet[] = [];
  let kubeconfig: string;

  async function startReplica(pod: string): Promise<KreloadProcess> {
    const kreload = await startKreload({
      name: pod,
      kubeconfig,
      env: { POD_NAME: pod, POD_NAMESPACE: KRELOAD_NAMESPACE },
      args: [
        `--namespaces=${namespaces.join(',')}`,
        '--shard-mode=active-active',
        `--shard-buckets=${String(BUCKETS)}`,
        `--leader-election-id=${LEASE_ID}`,
        '--sync-delay=0',
        '--resync-period=0',
        // One worker: the fan-out lasts long enough to be cut in the middle.
        '--worker-threads=1',
      ],
    });
    processes.set(pod, kreload);
    return kreload;
  }

  async function changeAll(data: Record<string, string>): Promise<void> {
    await Promise.all(
      namespaces.map((namespace) =>
        sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data }),
      ),
    );
  }

  async function waitAllRolledTo(hash: string, rollCount: number, timeoutMs = 90_000) {
    for (const fleet of fleets) {
      await fleet.waitForAll((m) => m.envHash === hash && m.replicaSets === rollCount + 1, {
        describe: `rolled to ${hash.slice(0, 8)}`,
        timeoutMs,
      });
    }
  }

  /** Every Deployment has exactly one acknowledged roll PATCH since `offset`. */
  async function expectOneRollEach(offset: number): Promise<Map<string, number>> {
    const expected = namespaces.flatMap((namespace, index) =>
      (fleets[index]?.names ?? []).map((name) => `${namespace}/${name}`),
    );
    const counts = await pollUntil(
      async () => {
        const patches = rollPatches(await kreloadRequestsSince(audit, offset), namespaces);
        const byWorkload = new Map<string, number>();
        for (const p of patches) {
          const key = `${p.namespace}/${p.name}`;
          byWorkload.set(key, (byWorkload.get(key) ?? 0) + 1);
        }
        return byWorkload.size >= expected.length ? byWorkload : undefined;
      },
      { timeoutMs: 15_000, describe: 'one roll PATCH per Deployment in the audit log' },
    );
    expect([...counts.keys()].sort()).toEqual([...expected].sort());
    expect([...counts.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    return counts;
  }

  beforeAll(async () => {
    kubeconfig = (await installKreloadIdentity(cluster)).kubeconfigPath;
    // Active-active lists the shard's Leases and writes Leases whose names it derives.
    const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
    const metadata = { name: SHARD_RULES_ROLE };
    await rbac
      .createNamespacedRole({
        namespace: KRELOAD_NAMESPACE,
        body: {
          metadata,
          rules: [
            {
              apiGroups: ['coordination.k8s.io'],
              resources: ['leases'],
              verbs: ['get', 'list', 'create', 'update'],
            },
          ],
        },
      })
      .catch(() => undefined);
    await rbac
      .createNamespacedRoleBinding({
        namespace: KRELOAD_NAMESPACE,
        body: {
          metadata,
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SHARD_RULES_ROLE },
          subjects: [
            { kind: 'ServiceAccount', name: KRELOAD_SERVICE_ACCOUNT, namespace: KRELOAD_NAMESPACE },
          ],
        },
      })
      .catch(() => undefined);
    // Rendezvous hashing of the pod names decides the owners: keep namespaces until each of the
    // three replicas owns PER_REPLICA of them.
    const owners = assignBuckets(FIRST, BUCKETS);
    const perOwner = new Map<string, number>();
    while (namespaces.length < NAMESPACES) {
      const namespace = await cluster.createNamespace('aa');
      const owner = owners[bucketOf(namespace, BUCKETS)] ?? '';
      if ((perOwner.get(owner) ?? 0) >= PER_REPLICA) continue;
      perOwner.set(owner, (perOwner.get(owner) ?? 0) + 1);
      namespaces.push(namespace);
      await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { v: '1' } });
      const fleet = new DeploymentFleet({
        kc: cluster.kc,
        namespace,
        prefix: 'svc',
        size: PER_NAMESPACE,
        configMap: CONFIG,
      });
      await fleet.create();
      fleets.push(fleet);
    }
  });

  afterAll(async () => {
    for (const kreload of processes.values()) await kreload.stop();
  });

  it('three replicas: every bucket held by its member; every workload baselined once', async () => {
    await Promise.all(FIRST.map(startReplica));
    const holders = await settledOver(['aa-0', 'aa-1', 'aa-2']);
    // First-sight baselines go to the baseline store's records (the default), not onto W.
    await waitForBaselines(
      workloads,
      fleets.flatMap((fleet, index) =>
        fleet.names.map((name) => ({
          kind: 'Deployment' as const,
          namespace: namespaces[index] ?? '',
          name,
        })),
      ),
    );
    for (const fleet of fleets) {
      await fleet.waitForAll((m) => m.envHash === undefined && m.replicaSets === 1, {
        describe: 'no roll at first sight',
      });
    }
    const owners = namespaces.map((namespace) => holders[bucketOf(namespace, BUCKETS)]);
    console.info(`active-active: namespaces per replica ${JSON.stringify(countBy(owners))}`);
    // Which namespaces each replica gets depends on who held buckets first (sticky, ADR 0057);
    // the buckets themselves are balanced (settledOver), and every namespace has one of the three.
    expect(owners.every((owner) => owner !== undefined && FIRST.includes(owner))).toBe(true);
    for (const pod of ['aa-0', 'aa-1', 'aa-2']) {
      const kreload = processes.get(pod);
      if (!kreload) throw new Error(pod);
      const metrics = await scrapeMetrics(kreload);
      expect(metrics.value('kreload_shard_buckets_owned')).toBe(
        holders.filter((holder) => holder === pod).length,
      );
      // Its caches hold its own share of the namespaces, nothing of the others'.
      const own = namespaces.filter((_, index) => owners[index] === pod);
      const configMaps = await Promise.all(
        own.map((namespace) => core.listNamespacedConfigMap({ namespace })),
      );
      expect(metrics.value('kreload_cached_objects', { kind: 'workload' })).toBe(
        own.length * PER_NAMESPACE,
      );
      expect(metrics.value('kreload_cached_objects', { kind: 'ConfigMap' })).toBe(
        configMaps.reduce((sum, list) => sum + list.items.length, 0),
      );
    }
  });

  it('a change in every namespace rolls each dependent exactly once', async () => {
    const mark = await audit.mark();
    await changeAll({ v: '2' });
    await waitAllRolledTo(configMapHash({ data: { v: '2' } }), 1);
    await expectOneRollEach(mark);
  });

  it('SIGKILL of one replica mid fan-out: taken over within lease duration + 5 s, none missed, none twice', async () => {
    const holders = await settledOver(['aa-0', 'aa-1', 'aa-2']);
    // The victim: the replica owning the most namespaces.
    const owners = namespaces.map((namespace) => holders[bucketOf(namespace, BUCKETS)]);
    const victim = Object.entries(countBy(owners)).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'aa-0';
    const victimBuckets = holders.flatMap((holder, bucket) => (holder === victim ? [bucket] : []));
    const mark = await audit.mark();
    const h3 = configMapHash({ data: { v: '3' } });
    await changeAll({ v: '3' });
    // Mid fan-out: the victim has rolled at least one of its workloads.
    await pollUntil(
      async () => {
        const patches = rollPatches(await kreloadRequestsSince(audit, mark), namespaces);
        return patches.length > 0 ? true : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 100, describe: 'a first roll' },
    );
    const killedAt = Date.now();
    await processes.get(victim)?.kill9();
    processes.delete(victim);
    const survivors = ['aa-0', 'aa-1', 'aa-2'].filter((pod) => pod !== victim);
    await settledOver(survivors, LEASE_DURATION_MS + 20_000);
    const takeoverMs = Date.now() - killedAt;
    console.info(
      `active-active: SIGKILL of ${victim} (${String(victimBuckets.length)} buckets) → all held by survivors after ${String(takeoverMs)} ms`,
    );
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_DURATION_MS + 5_000);
    await waitAllRolledTo(h3, 2);
    await expectOneRollEach(mark);
    const victimNamespaces = namespaces.filter(
      (namespace) => holders[bucketOf(namespace, BUCKETS)] === victim,
    );
    const patches = rollPatches(await kreloadRequestsSince(audit, mark), victimNamespaces);
    const afterKill = patches.filter((p) => p.receivedAt > killedAt).length;
    console.info(
      `active-active: the killed replica's ${String(patches.length)} workloads: ` +
        `${String(patches.length - afterKill)} rolled before the kill, ${String(afterKill)} after, by the survivors`,
    );
  });

  it('scaling to 5 members moves buckets only to the new ones', async () => {
    await startReplica('aa-3'); // back to three members
    const pods = [...processes.keys()].sort();
    const before = await settledOver(pods);
    await Promise.all(['aa-4', 'aa-5'].map(startReplica));
    const after = await settledOver([...pods, 'aa-4', 'aa-5']);
    const moved = before.flatMap((holder, bucket) => (after[bucket] === holder ? [] : [bucket]));
    const movedNamespaces = namespaces.filter((namespace) => {
      const bucket = bucketOf(namespace, BUCKETS);
      return before[bucket] !== after[bucket];
    });
    // The share of namespaces that moved, over 1,000 names placed by the measured Lease holders.
    const names = Array.from({ length: 1000 }, (_, index) => `team-${String(index)}`);
    const movedNames = names.filter((name) => moved.includes(bucketOf(name, BUCKETS)));
    console.info(
      `active-active: 3 → 5 moved ${String(moved.length)}/${String(BUCKETS)} buckets, ` +
        `${String(movedNamespaces.length)}/${String(NAMESPACES)} test namespaces, ` +
        `${String(movedNames.length)}/1000 namespace names`,
    );
    for (const bucket of moved) expect(['aa-4', 'aa-5']).toContain(after[bucket]);
    expect(moved.length / BUCKETS).toBeLessThanOrEqual(2 / 5);
    // A change after the move still rolls each dependent exactly once.
    const mark = await audit.mark();
    await changeAll({ v: '4' });
    await waitAllRolledTo(configMapHash({ data: { v: '4' } }), 3);
    await expectOneRollEach(mark);
  });
});

function countBy(values: readonly (string | undefined)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value ?? 'none'] = (counts[value ?? 'none'] ?? 0) + 1;
  return counts;
}
