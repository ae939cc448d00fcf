// The `evict` strategy without its RBAC, as the chart installs kreload by default
// (`reloader.enableEvictStrategy: false`): no pods get/list, no pods/eviction create, no
// ReplicaSet list. A workload annotated `evict` records its roll and is held with a Warning Event
// naming the missing grant, retried on a backoff (never a busy loop); a workload beside it that
// rolls by its template is not affected.
import { AppsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AUTO, SOURCE_HASHES, stateJson } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv, waitForView } from '../harness/expectations.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle, runnable } from '../harness/pod-lifecycle.ts';
import { envVarName, sourceHash, sourceKey, type SecretSpec } from '../harness/sources.ts';
import { podSpec, type WorkloadRef } from '../harness/workloads.ts';

const IDENTITY = 'kreload-e2e-no-eviction';
const EVICTION_RESOURCES = new Set(['pods', 'pods/eviction', 'replicasets']);

/** kreload's regular grants less what only the evict strategy needs (the chart's default). */
const RULES = clusterRulesWith((rule) =>
  rule.resources?.some((resource) => EVICTION_RESOURCES.has(resource)) === true ? undefined : rule,
);

const fixture = useKreload({
  name: 'evict-rbac',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
  identity: (cluster) => installCustomIdentity(cluster, { name: IDENTITY, rules: RULES }),
});

async function deploymentOn(
  name: string,
  secret: SecretSpec,
  annotations: Record<string, string>,
): Promise<WorkloadRef> {
  const { namespace, workloads, cluster } = fixture;
  const ref = await workloads.create('Deployment', {
    namespace,
    name,
    replicas: 2,
    podSpec: runnable(podSpec({ app: { envFrom: [{ secretRef: { name: secret.name } }] } })),
  });
  await new PodLifecycle({ kc: cluster.kc }).waitComplete(ref);
  await cluster.kc
    .makeApiClient(AppsV1Api)
    .patchNamespacedDeployment(
      { ...ref, body: { metadata: { annotations: { [AUTO]: 'true', ...annotations } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
  return ref;
}

describe('the evict strategy without its RBAC', () => {
  it('holds the evict workload with the reason, retries slowly, and rolls the others', async () => {
    const { namespace, sources, workloads, events, cluster } = fixture;
    const secret: SecretSpec = { type: 'SECRET', name: 'shared', data: { password: 'one' } };
    await sources.create(namespace, secret);
    const held = await deploymentOn('held', secret, { 'kreload.io/rollout-strategy': 'evict' });
    const plain = await deploymentOn('plain', secret, {});
    const podsBefore = await new PodLifecycle({ kc: cluster.kc }).pods(held);

    const changed: SecretSpec = { ...secret, data: { password: 'two' } };
    await sources.replace(namespace, changed);

    // The workload beside it rolls as usual.
    await waitForEnv(workloads, plain, {
      container: 'app',
      name: envVarName(changed),
      value: sourceHash(changed),
    });
    // The evict workload records its roll, then is held with the reason and the chart value.
    await waitForView(
      workloads,
      held,
      (view) =>
        view.annotations[SOURCE_HASHES] ===
        stateJson({ [sourceKey(changed)]: sourceHash(changed) }),
      'the roll recorded',
    );
    const hold = await pollUntil(
      async () => {
        const about = await events.about({ kind: 'Deployment', namespace, name: 'held' });
        return about.find((event) => event.reason === 'EvictionHeld');
      },
      { timeoutMs: 30_000, describe: 'an EvictionHeld Event' },
    );
    expect(hold.type).toBe('Warning');
    expect(hold.message).toContain('forbidden');
    expect(hold.message).toContain('reloader.enableEvictStrategy=true');
    await new Promise((resolve) => setTimeout(resolve, 8_000));

    // Custom identities are not in the audit log: kreload's own log counts the rounds.
    const rounds = (await fixture.kreload.readLog())
      .split('\n')
      .filter((line) => line.includes('roll by eviction held') && line.includes('workload=held'));
    // 1 s, 2 s, 4 s … between rounds: a handful in ~10 s, every one refused, never a busy loop.
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    expect(rounds.length).toBeLessThanOrEqual(7);
    expect(rounds.every((line) => line.includes('is forbidden'))).toBe(true);
    const reasons = (await events.about({ kind: 'Deployment', namespace, name: 'held' })).map(
      (event) => event.reason,
    );
    expect(reasons).not.toContain('ReloadFail');
    const podsAfter = await new PodLifecycle({ kc: cluster.kc }).pods(held);
    expect(podsAfter.map((pod) => pod.uid).sort()).toEqual(podsBefore.map((pod) => pod.uid).sort());
  });
});
