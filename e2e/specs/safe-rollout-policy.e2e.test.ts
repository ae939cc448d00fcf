// Safe rollout set by a ReloadPolicy, not by flags, on kwok nodes: six Deployments that carry no
// kreload annotation share one Secret through a policy with `rollout: {canary: 1, haltOnFailure:
// true, maxConcurrent: 2}`. kreload runs with waves on but a canary of 5 and halting off, so only
// the policy can make the first wave one workload and halt it. A bad value crashes the canary: no
// PATCH to the other five (audit log), ConfigRolloutHalted, and `kreload explain` on another names
// the halted change. A fix rolls all six, never more than 2 in flight. In a second namespace,
// kreload is killed (-9) while the change is halted: the new process writes nothing until the fix,
// then rolls all six within the same bound. Baselines are in the default store (records in
// kreload's namespace), so every never-rolled workload's first roll also retires its record.
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../harness/audit.ts';
import { KubeJson } from '../harness/crds.ts';
import { explainJson } from '../harness/explain.ts';
import { waitForBaseline } from '../harness/expectations.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle } from '../harness/pod-lifecycle.ts';
import { createPolicy, policyIdentity } from '../harness/reload-policies.ts';
import {
  badValueHaltsAtCanary,
  changeProgress,
  createCrashingFleet,
  patchedSince,
} from '../harness/rollout-watch.ts';
import { envVarName, type SecretSpec, sourceHash, sourceKey } from '../harness/sources.ts';

const IDENTITY = 'kreload-e2e-safe-policy';
const USER = `system:serviceaccount:${KRELOAD_NAMESPACE}:${IDENTITY}`;
const COUNT = 6;

/** What the controller runs with; explain takes the same after `--`. */
const controllerArgs = (namespaces: readonly string[]): string[] => [
  `--namespaces=${namespaces.join(',')}`,
  '--enable-reload-policies=true',
  '--rollout-waves',
  '--canary=5',
  '--halt-on-failed-rollout=false',
];

const fixture = useKreload({
  name: 'safe-rollout-policy',
  namespaces: 2,
  args: (namespaces) => controllerArgs(namespaces),
  identity: policyIdentity(IDENTITY),
});

/** The audit log of the shared cluster. */
function auditLog(): AuditLog {
  const path = fixture.cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

/**
 * Six Deployments in `namespace` on Secret `db`, targeted by the policy, baselined and complete;
 * then the bad value halts the change at the canary, with 0 PATCHes to the other five.
 */
async function haltedAtCanary(namespace: string) {
  const { workloads, sources, cluster } = fixture;
  const audit = auditLog();
  const pods = new PodLifecycle({ kc: cluster.kc });
  const { secret, bad, fixed, refs } = await createCrashingFleet({
    ...{ sources, workloads, namespace, count: COUNT, prefix: 'p' },
    metadata: { labels: { reads: 'db' } },
  });
  await createPolicy(new KubeJson({ kc: cluster.kc }), namespace, 'db-readers', {
    sources: [{ kind: 'Secret', name: 'db' }],
    targets: [{ kind: 'Deployment', selector: { matchLabels: { reads: 'db' } } }],
    rollout: { canary: 1, haltOnFailure: true, maxConcurrent: 2 },
  });
  for (const ref of refs) {
    await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
    await pods.waitComplete(ref);
  }
  const [canary, held] = refs;
  if (canary === undefined || held === undefined) throw new Error(`${String(COUNT)} Deployments`);

  const beforeBad = await audit.mark();
  const halted = await badValueHaltsAtCanary({
    ...{ sources, workloads, pods, events: fixture.events },
    ...{ namespace, bad, canary },
  });
  expect(halted).toMatchObject([{ type: 'Warning' }]);
  expect(halted[0]?.message).toContain(`${String(COUNT - 1)} workload(s) held`);
  // The canary's roll and its halt marker: 0 PATCHes to the other five.
  const patched = await patchedSince(audit, beforeBad, namespace, USER);
  expect(patched.filter((name) => name !== canary.name)).toEqual([]);
  expect(patched.filter((name) => name === canary.name)).toHaveLength(2);
  return { audit, bad, fixed, canary, held };
}

/** The fix rolls all six; the most of them in flight at once, polled from the Deployments. */
async function fixRollsAll(namespace: string, fixed: SecretSpec): Promise<number> {
  const { sources, cluster } = fixture;
  await sources.replace(namespace, fixed);
  let maxInFlight = 0;
  const rolledFixed = { name: envVarName(fixed), value: sourceHash(fixed) };
  await pollUntil(
    async () => {
      const { complete, inFlight } = await changeProgress(cluster.kc, namespace, rolledFixed);
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (complete === COUNT) return complete;
      throw new Error(
        `${String(complete)} of ${String(COUNT)} complete, ${String(inFlight)} in flight`,
      );
    },
    { timeoutMs: 110_000, intervalMs: 100, describe: `all ${String(COUNT)} rolled and complete` },
  );
  return maxInFlight;
}

describe('safe rollout from a ReloadPolicy', () => {
  it('canary 1 and halt from the policy: the bad value stops at the canary; a fix rolls all', async () => {
    const namespace = fixture.namespace;
    const { bad, fixed, canary, held } = await haltedAtCanary(namespace);
    const explained = await explainJson(
      fixture.cluster.kubeconfigPath,
      `deployment/${held.name}`,
      namespace,
      ['--', ...controllerArgs(fixture.namespaces)],
    );
    expect(explained.workload?.facts.halts).toMatchObject([
      {
        source: `secret/${namespace}/db`,
        hash: sourceHash(bad),
        by: { name: canary.name },
        reason: 'ProgressDeadlineExceeded',
        resume: `kubectl annotate -n ${namespace} deployment/${canary.name} kreload.io/rollout-halted-`,
      },
    ]);
    const maxInFlight = await fixRollsAll(namespace, fixed);
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(2);
  }, 240_000);

  it('kill -9 while halted: the new process writes nothing, then a fix rolls all within 2', async () => {
    const namespace = fixture.namespaces[1];
    if (namespace === undefined) throw new Error('a second namespace');
    const { audit, fixed } = await haltedAtCanary(namespace);
    await fixture.kill9();
    const restarted = await audit.mark();
    await fixture.start();
    // Its start-up pass over every workload finds the halt in the cluster: no PATCH there.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await patchedSince(audit, restarted, namespace, USER)).toEqual([]);
    const maxInFlight = await fixRollsAll(namespace, fixed);
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(2);
  }, 240_000);
});
