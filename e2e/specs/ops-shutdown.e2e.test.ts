// Spec §13.5 (SIGTERM) and §8 item 7: SIGTERM in the middle of a 50-workload fan-out stops
// dequeuing, drains in-flight writes and exits 0; the pending workloads are dropped, and the next
// process catches up by level-triggered reconciliation. Every workload ends with the new hash,
// rolled exactly once: one ReplicaSet per template, one patch per workload still to roll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../harness/audit.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { DeploymentFleet } from '../harness/fleet.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { describeRequest, isWrite, kreloadRequestsSince } from '../harness/ops-audit.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, type KreloadIdentity } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import { WorkloadClient } from '../harness/workloads.ts';

const cluster = sharedCluster();
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });
const PROCESS_START = new MetricsSnapshot({ samples: [] });

const SIZE = 50;
const CONFIG = 'fanout-config';
const V1 = { mode: 'v1' };
const V2 = { mode: 'v2' };
/** §13.5: in-flight writes get 10 s; then the process flushes its logs and exits. */
const DRAIN_MS = 10_000;

function auditLog(): AuditLog {
  const path = cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

describe('SIGTERM during a 50-workload fan-out (§13.5)', () => {
  const audit = auditLog();
  const processes: KreloadProcess[] = [];
  let identity: KreloadIdentity;
  let namespace: string;
  let fleet: DeploymentFleet;

  function start(name: string): Promise<KreloadProcess> {
    return startKreload({
      name,
      kubeconfig: identity.kubeconfigPath,
      args: [`--namespaces=${namespace}`, '--sync-delay=0', '--resync-period=0'],
    }).then((kreload) => {
      processes.push(kreload);
      return kreload;
    });
  }

  beforeAll(async () => {
    identity = await installKreloadIdentity(cluster);
    namespace = await cluster.createNamespace('ops-shutdown');
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

  it('exits 0 within the drain deadline; after a restart every workload has rolled exactly once', async () => {
    const first = await start('ops-shutdown-first');
    const h2 = configMapHash({ data: V2 });
    // First-sight baselines are the baseline store's records (the default), not on W.
    await waitForBaselines(workloads, fleet.refs);
    // One ReplicaSet each before the change, so that "two after" means "rolled exactly once".
    await fleet.waitForAll((m) => m.envHash === undefined && m.replicaSets === 1, {
      describe: 'no roll at first sight and the first ReplicaSet on all 50 Deployments',
    });
    await waitUntilSettled(first, { since: PROCESS_START, minReconciles: SIZE });

    const firstRoll = fleet.watchForFirstEnvHash(h2);
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data: V2 });
    await firstRoll;
    const signalledAt = performance.now();
    const exit = await first.stop();
    const stopMs = performance.now() - signalledAt;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(stopMs).toBeLessThan(DRAIN_MS + 2_000);

    // The process is gone and its in-flight writes were awaited: this is what it left behind.
    const leftBehind = await fleet.members();
    const rolledByFirst = [...leftBehind.values()].filter((m) => m.envHash === h2).length;
    // Precondition of the scenario ("during a fan-out"); if this fails, kreload either rolled
    // nothing before the signal (impossible: we waited for a roll) or kept dequeuing after it.
    expect(rolledByFirst, `rolled before exit; log ${first.logPath}`).toBeLessThan(SIZE);
    expect(rolledByFirst).toBeGreaterThan(0);
    expect(
      [...leftBehind.values()].filter((m) => m.envHash !== undefined && m.envHash !== h2),
    ).toEqual([]);

    const auditFrom = await audit.mark();
    // The first process's last requests can reach the audit log after the mark.
    const secondStartedAt = Date.now();
    const second = await start('ops-shutdown-second');
    const final = await fleet.waitForAll(
      (m) => m.envHash === h2 && m.replicaSets === 2 && m.observedGeneration >= m.generation,
      { describe: 'every Deployment rolled to the new hash, with exactly two ReplicaSets' },
    );
    expect([...final.values()].map((m) => m.baselineHash)).toEqual(
      Array.from({ length: SIZE }, () => undefined),
    );
    const settled = await waitUntilSettled(second, { since: PROCESS_START, minReconciles: SIZE });
    expect({
      rolled: settled.value('reloader_reload_executed_total', { success: 'true' }),
      failed: settled.value('reloader_reload_executed_total', { success: 'false' }),
    }).toEqual({ rolled: SIZE - rolledByFirst, failed: 0 });

    // The witness: one acknowledged workload patch per Deployment the first process had not
    // rolled, none for the others. A 409 (stale resourceVersion) is retried after a fresh GET
    // (§10) and must show up as a retry, not as a second roll.
    const patches = await pollUntil(
      async () => {
        const requests = (await kreloadRequestsSince(audit, auditFrom)).filter(
          (r) =>
            isWrite(r) &&
            r.resource === 'deployments' &&
            r.namespace === namespace &&
            r.receivedAt >= secondStartedAt,
        );
        return requests.filter((r) => r.code === 200).length >= SIZE - rolledByFirst
          ? requests
          : undefined;
      },
      { timeoutMs: 10_000, describe: 'the second process’s patches in the audit log' },
    );
    const rolledBySecond = [...leftBehind.values()]
      .filter((m) => m.envHash !== h2)
      .map((m) => m.name);
    expect(
      patches
        .filter((r) => r.code === 200)
        .map(describeRequest)
        .sort(),
    ).toEqual(rolledBySecond.map((name) => `patch deployments ${namespace}/${name} → 200`).sort());
    const refused = patches.filter((r) => r.code !== 200);
    expect(refused.filter((r) => r.code !== 409).map(describeRequest)).toEqual([]);
    expect(settled.value('reloader_retries_total')).toBe(refused.length);
    console.info(
      `ops-shutdown: SIGTERM → exit ${stopMs.toFixed(0)} ms; ${rolledByFirst}/${SIZE} rolled before exit, ` +
        `${SIZE - rolledByFirst} after the restart (${refused.length} patch(es) retried after 409)`,
    );
  });

  it('the restarted process reports ready and idle', async () => {
    const second = processes.at(-1);
    if (second === undefined) throw new Error('no second process');
    const metrics = await scrapeMetrics(second);
    expect(metrics.value('reloader_workqueue_depth')).toBe(0);
    expect(metrics.value('reloader_leader')).toBe(1);
  });
});
