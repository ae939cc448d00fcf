// The Lease timings of Reloader's master and 2.0 (--leader-election-lease-duration, -renew-deadline,
// -retry-period, -release-on-cancel) with the real CLI and a real API server: the Lease records the
// configured duration, the leader renews at the configured period, and without release-on-cancel a
// stopped leader leaves the Lease to expire, so a successor waits the configured duration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { readLease, type LeaseState } from '../harness/leases.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const cluster = sharedCluster();
const LEASE_ID = `ha-timings-${Date.now().toString(36)}`;
const LEASE_DURATION_S = 6;
const RETRY_PERIOD_MS = 1_000;
/** Scheduling and request latency on a loaded 2-core machine. */
const SLACK_MS = 1_500;

const lease = (): Promise<LeaseState> => readLease(cluster.kc, LEASE_ID);

describe('--leader-election-* timings with the real controller', () => {
  const processes: KreloadProcess[] = [];
  let kubeconfig: string;
  let namespace: string;

  function startReplica(pod: string): Promise<KreloadProcess> {
    return startKreload({
      name: pod,
      kubeconfig,
      env: { POD_NAME: pod, POD_NAMESPACE: KRELOAD_NAMESPACE },
      args: [
        `--namespaces=${namespace}`,
        '--enable-ha',
        `--leader-election-id=${LEASE_ID}`,
        `--leader-election-lease-duration=${String(LEASE_DURATION_S)}s`,
        '--leader-election-renew-deadline=4s',
        `--leader-election-retry-period=${String(RETRY_PERIOD_MS)}ms`,
        '--leader-election-release-on-cancel=false',
        '--resync-period=0',
      ],
    }).then((kreload) => {
      processes.push(kreload);
      return kreload;
    });
  }

  beforeAll(async () => {
    kubeconfig = (await installKreloadIdentity(cluster)).kubeconfigPath;
    namespace = await cluster.createNamespace('ha-timings');
  });

  afterAll(async () => {
    for (const kreload of processes) await kreload.stop();
  });

  it('records the lease duration and renews every retry period', async () => {
    await startReplica('ha-timings-a');
    await pollUntil(async () => (await lease().catch(() => undefined))?.holder === 'ha-timings-a', {
      timeoutMs: 15_000,
      describe: `Lease ${LEASE_ID} held by ha-timings-a`,
    });
    const first = await lease();
    expect(first.durationSeconds).toBe(LEASE_DURATION_S);
    await pollUntil(async () => (await lease()).renewMs > first.renewMs, {
      timeoutMs: RETRY_PERIOD_MS + SLACK_MS,
      intervalMs: 50,
      describe: 'a renewal one retry period later',
    });
  });

  it('without release-on-cancel, a stopped leader keeps the Lease until it expires', async () => {
    const leader = processes.at(-1);
    if (leader === undefined) throw new Error('no leader');
    expect(await leader.stop()).toEqual({ code: 0, signal: null });
    expect((await lease()).holder).toBe('ha-timings-a');
    const startedAt = Date.now();
    await startReplica('ha-timings-b');
    await pollUntil(async () => (await lease()).holder === 'ha-timings-b', {
      timeoutMs: LEASE_DURATION_S * 1000 + RETRY_PERIOD_MS + 10_000,
      intervalMs: 100,
      describe: `Lease ${LEASE_ID} held by ha-timings-b`,
    });
    const waitedMs = Date.now() - startedAt;
    console.info(`ha-timings: successor took the unreleased Lease after ${String(waitedMs)} ms`);
    // The successor judges expiry by its own clock from its first read: a full lease duration.
    expect(waitedMs).toBeGreaterThanOrEqual(LEASE_DURATION_S * 1000);
  });
});
