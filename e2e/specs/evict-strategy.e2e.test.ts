// The `evict` strategy on real pods: kube-scheduler places them on kwok's fake nodes, the
// Deployment and ReplicaSet controllers replace what kreload evicts, and the Eviction API applies
// a PodDisruptionBudget. A stand-in owner controller reverts any template edit within ~100 ms (an
// operator that owns the Deployment): kreload must roll without ever writing the template.
import {
  AppsV1Api,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  AUTO,
  BASELINE,
  SOURCE_HASHES,
  baselineAfterRoll,
  stateJson,
} from '../harness/annotations.ts';
import { AuditLog, type AuditEvent } from '../harness/audit.ts';
import { runExplain } from '../harness/explain.ts';
import { waitForBaseline, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle, runnable } from '../harness/pod-lifecycle.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { sourceHash, sourceKey, type SecretSpec } from '../harness/sources.ts';
import { podSpec, type WorkloadRef } from '../harness/workloads.ts';

const EVICT = { 'kreload.io/rollout-strategy': 'evict' } as const;
const EVICT_BEFORE = 'kreload.io/evict-before';
const REPLICAS = 3;

const fixture = useKreload({
  name: 'evict',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
});

/**
 * Reverts every change of the Deployment's pod template, polling every 50 ms: the situation of an
 * operator that owns the workload. Counts the reverts it made.
 */
function templateGuard(ref: WorkloadRef): { stop: () => Promise<number> } {
  const apps = fixture.cluster.kc.makeApiClient(AppsV1Api);
  let reverts = 0;
  const state = { running: true };
  let owned: V1PodTemplateSpec | undefined;
  const loop = (async () => {
    while (state.running) {
      const deployment = await apps.readNamespacedDeployment(ref);
      const template = deployment.spec?.template;
      owned ??= template;
      if (deployment.spec && owned && JSON.stringify(template) !== JSON.stringify(owned)) {
        reverts += 1;
        deployment.spec.template = owned;
        await apps.replaceNamespacedDeployment({ ...ref, body: deployment });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    stop: async () => {
      state.running = false;
      await loop;
      return reverts;
    },
  };
}

/** Successful evictions by kreload since `offset`, pod names in order. */
async function evictionsSince(audit: AuditLog, offset: number): Promise<string[]> {
  const events = await audit.eventsSince(offset);
  return events
    .filter(
      (event: AuditEvent) =>
        event.user.username === KRELOAD_USER &&
        event.stage === 'ResponseComplete' &&
        event.verb === 'create' &&
        event.objectRef?.resource === 'pods' &&
        event.objectRef.subresource === 'eviction' &&
        event.responseStatus?.code === 201,
    )
    .map((event) => event.objectRef?.name ?? '');
}

/** kreload's writes to Deployments since `offset`, by verb. */
async function deploymentWrites(audit: AuditLog, offset: number): Promise<string[]> {
  const events = await audit.eventsSince(offset);
  return events
    .filter(
      (event) =>
        event.user.username === KRELOAD_USER &&
        event.stage === 'ResponseComplete' &&
        event.objectRef?.resource === 'deployments' &&
        ['patch', 'update', 'create', 'delete'].includes(event.verb),
    )
    .map((event) => `${event.verb} ${String(event.responseStatus?.code)}`);
}

function auditLog(): AuditLog {
  const path = fixture.cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

/** A Deployment of runnable pods using `secret`, with a PDB (default: maxUnavailable 1). */
async function deploymentWithBudget(
  name: string,
  secret: SecretSpec,
  budget: { readonly maxUnavailable?: number; readonly minAvailable?: number } = {
    maxUnavailable: 1,
  },
  replicas = REPLICAS,
): Promise<WorkloadRef> {
  const { namespace, workloads, sources, cluster } = fixture;
  await sources.create(namespace, secret);
  await cluster.kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
    namespace,
    body: {
      metadata: { name },
      spec: { ...budget, selector: { matchLabels: { app: name } } },
    },
  });
  const ref = await workloads.create('Deployment', {
    namespace,
    name,
    replicas,
    podSpec: runnable(podSpec({ app: { envFrom: [{ secretRef: { name: secret.name } }] } })),
  });
  await new PodLifecycle({ kc: cluster.kc }).waitComplete(ref);
  // Opted in once its pods run: the baseline is not raced by the status writes of a scale-up.
  await cluster.kc
    .makeApiClient(AppsV1Api)
    .patchNamespacedDeployment(
      { ...ref, body: { metadata: { annotations: { [AUTO]: 'true', ...EVICT } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
  return ref;
}

/** Waits until every pod is new, Ready, and the marker is gone; returns the pods' names. */
async function rolledPods(ref: WorkloadRef, before: ReadonlySet<string>): Promise<string[]> {
  const pods = new PodLifecycle({ kc: fixture.cluster.kc });
  return pollUntil(
    async () => {
      const view = await fixture.workloads.read(ref);
      const live = await pods.pods(ref);
      const done =
        view.annotations[EVICT_BEFORE] === undefined &&
        live.length === REPLICAS &&
        live.every((pod) => pod.ready && !before.has(pod.uid));
      if (done) return live.map((pod) => pod.name);
      throw new Error(
        `last seen: marker ${String(view.annotations[EVICT_BEFORE])}, pods ${JSON.stringify(live)}`,
      );
    },
    { timeoutMs: 120_000, intervalMs: 500, describe: `every pod of ${ref.name} replaced` },
  );
}

describe('the evict strategy', () => {
  it('replaces every pod exactly once on a Secret change, never writing the template', async () => {
    const { namespace, workloads, sources, events } = fixture;
    const secret: SecretSpec = { type: 'SECRET', name: 'creds', data: { password: 'one' } };
    const ref = await deploymentWithBudget('api', secret);
    const pods = new PodLifecycle({ kc: fixture.cluster.kc });
    const original = await pods.pods(ref);
    const apps = fixture.cluster.kc.makeApiClient(AppsV1Api);
    const templateBefore = JSON.stringify(
      (await apps.readNamespacedDeployment(ref)).spec?.template,
    );
    const guard = templateGuard(ref);
    const audit = auditLog();
    const offset = await audit.mark();

    const changed: SecretSpec = { ...secret, data: { password: 'two' } };
    await sources.replace(namespace, changed);
    await rolledPods(ref, new Set(original.map((pod) => pod.uid)));
    const reverts = await guard.stop();

    const evicted = await pollUntil(
      async () => {
        const names = await evictionsSince(audit, offset);
        return names.length >= REPLICAS ? names : undefined;
      },
      { timeoutMs: 10_000, describe: 'the evictions in the audit log' },
    );
    expect([...evicted].sort()).toEqual(original.map((pod) => pod.name).sort());
    expect(reverts).toBe(0);
    const view = await workloads.read(ref);
    // A Deployment's generation also moves with its annotations: the template itself is compared.
    const templateAfter = JSON.stringify((await apps.readNamespacedDeployment(ref)).spec?.template);
    expect(templateAfter).toBe(templateBefore);
    expect(view.annotations[SOURCE_HASHES]).toBe(
      stateJson({ [sourceKey(changed)]: sourceHash(changed) }),
    );
    // The roll moved B (now empty) from the baseline store into W.
    expect(view.annotations[BASELINE]).toBe(baselineAfterRoll({}, true)[BASELINE]);
    // The start (W state and marker) and the marker's removal: both metadata-only patches.
    expect(await deploymentWrites(audit, offset)).toEqual(['patch 200', 'patch 200']);

    const reasons = (await events.about({ kind: 'Deployment', namespace, name: 'api' })).map(
      (event) => event.reason,
    );
    expect(reasons.filter((reason) => reason === 'PodEvicted')).toHaveLength(REPLICAS);
    expect(reasons).toContain('EvictionComplete');

    const text = await runExplain(fixture.cluster.kubeconfigPath, [
      'deployment/api',
      '-n',
      namespace,
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('rolls by: pod eviction');

    const metrics = await scrapeMetrics(fixture.kreload);
    expect(metrics.value('kreload_pod_evictions_total', { result: 'evicted' })).toBe(REPLICAS);
    expect(metrics.value('kreload_pods_pending_eviction')).toBe(0);
  });

  it('a Deployment opted in while its pods start is baselined without waiting for a resync', async () => {
    // The deployment controller writes its status many times while the pods start: each write
    // moves the resourceVersion that kreload's baseline patch carries as its precondition.
    const { namespace, workloads, sources, events } = fixture;
    const secret: SecretSpec = { type: 'SECRET', name: 'creds-busy', data: { password: 'one' } };
    await sources.create(namespace, secret);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'busy',
      replicas: 5,
      annotations: { [AUTO]: 'true', ...EVICT },
      podSpec: runnable(podSpec({ app: { envFrom: [{ secretRef: { name: secret.name } }] } })),
    });
    await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
    const reasons = (await events.about({ kind: 'Deployment', namespace, name: 'busy' })).map(
      (event) => event.reason,
    );
    expect(reasons).not.toContain('ReloadFail');
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(metrics.value('reloader_errors_total', { type: 'write_gave_up' })).toBe(0);
  });

  it('after kill -9 mid-way, the next process evicts no pod twice', async () => {
    const { namespace, sources } = fixture;
    const secret: SecretSpec = { type: 'SECRET', name: 'creds-2', data: { password: 'one' } };
    const ref = await deploymentWithBudget('web', secret);
    const pods = new PodLifecycle({ kc: fixture.cluster.kc });
    const original = await pods.pods(ref);
    const audit = auditLog();
    const offset = await audit.mark();

    await sources.replace(namespace, { ...secret, data: { password: 'two' } });
    await pollUntil(
      async () => ((await evictionsSince(audit, offset)).length >= 1 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 100, describe: 'the first eviction' },
    );
    await fixture.kill9();
    await waitForView(
      fixture.workloads,
      ref,
      (view) => view.annotations[EVICT_BEFORE] !== undefined,
      'the marker still there after the kill',
    );
    await fixture.start();
    await rolledPods(ref, new Set(original.map((pod) => pod.uid)));

    const evicted = await evictionsSince(audit, offset);
    expect([...evicted].sort()).toEqual(original.map((pod) => pod.name).sort());
  });

  it('a budget that never allows an eviction holds the roll, with backoff and a reason', async () => {
    const { namespace, sources, events } = fixture;
    const secret: SecretSpec = { type: 'SECRET', name: 'creds-3', data: { password: 'one' } };
    const ref = await deploymentWithBudget('solo', secret, { minAvailable: 1 }, 1);
    const [pod] = await new PodLifecycle({ kc: fixture.cluster.kc }).pods(ref);
    const audit = auditLog();
    const offset = await audit.mark();

    await sources.replace(namespace, { ...secret, data: { password: 'two' } });
    const held = await pollUntil(
      async () => {
        const about = await events.about({ kind: 'Deployment', namespace, name: 'solo' });
        return about.find((event) => event.reason === 'EvictionHeld');
      },
      { timeoutMs: 30_000, describe: 'an EvictionHeld Event' },
    );
    expect(held.type).toBe('Warning');
    expect(held.message).toContain(`Eviction of pod '${String(pod?.name)}' of 'solo' held`);
    expect(held.message).toContain('disruption budget');
    await new Promise((resolve) => setTimeout(resolve, 8_000));

    const attempts = (await audit.eventsSince(offset)).filter(
      (event) =>
        event.user.username === KRELOAD_USER &&
        event.stage === 'ResponseComplete' &&
        event.objectRef?.subresource === 'eviction',
    );
    // 1 s, 2 s, 4 s … between tries: a handful in ~10 s, every one refused, never a busy loop.
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.length).toBeLessThanOrEqual(6);
    expect(attempts.every((event) => event.responseStatus?.code === 429)).toBe(true);
    const live = await new PodLifecycle({ kc: fixture.cluster.kc }).pods(ref);
    expect(live.map((p) => p.uid)).toEqual([pod?.uid]);
    const view = await fixture.workloads.read(ref);
    expect(view.annotations[EVICT_BEFORE]).toBeDefined();

    const text = await runExplain(fixture.cluster.kubeconfigPath, [
      'deployment/solo',
      '-n',
      namespace,
    ]);
    expect(text.stdout).toContain('rolls by: pod eviction');
    expect(text.stdout).toContain('progress: 0/1 pods replaced');
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(
      metrics.value('kreload_pod_evictions_total', { result: 'blocked' }),
    ).toBeGreaterThanOrEqual(attempts.length);
    expect(metrics.value('kreload_pods_pending_eviction')).toBe(1);
  });
});
