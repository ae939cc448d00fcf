// Safe rollout on kwok nodes: ten Deployments share one Secret, kreload rolls a change in waves
// (canary 1, budget 3). A bad value crashes the canary's pods: nothing else is patched (the audit
// log says so), ConfigRolloutHalted appears, explain on another Deployment names the halt. A fixed
// value rolls all ten, never more than 3 in flight by the Deployments' own status.
import { AppsV1Api, type V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog, type AuditEvent } from '../harness/audit.ts';
import { askController, type ExplainJson } from '../harness/explain.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import {
  PodLifecycle,
  crashOnConfig,
  isRolloutComplete,
  runnable,
} from '../harness/pod-lifecycle.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
} from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'safe-rollout',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--enable-debug-explain',
    '--rollout-waves',
    '--canary=1',
    '--max-concurrent-rollouts=3',
  ],
});

/** `kubectl rollout status`'s rule on one Deployment as listed. */
function deploymentComplete(deployment: V1Deployment): boolean {
  const desired = deployment.spec?.replicas ?? 1;
  const status = deployment.status;
  return (
    (status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0) &&
    status?.updatedReplicas === desired &&
    status.replicas === desired &&
    status.readyReplicas === desired &&
    status.availableReplicas === desired
  );
}

/** Deployments kreload patched (template or metadata) since `offset`, by name, in order. */
async function patchedSince(audit: AuditLog, offset: number, namespace: string) {
  const events = await audit.eventsSince(offset);
  return events
    .filter(
      (event: AuditEvent) =>
        event.stage === 'ResponseComplete' &&
        event.verb === 'patch' &&
        event.user.username === KRELOAD_USER &&
        event.objectRef?.resource === 'deployments' &&
        event.objectRef.namespace === namespace,
    )
    .map((event) => event.objectRef?.name ?? '');
}

describe('safe rollout: waves, health gates and a halt', () => {
  it('a bad Secret halts at the canary; a fix rolls all ten in waves of at most 3', async () => {
    const { namespace, workloads, sources, cluster } = fixture;
    const auditLogPath = cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    const pods = new PodLifecycle({ kc: cluster.kc });
    const secret: SecretSpec = { type: 'SECRET', name: 'db', data: { level: 'info' } };
    const bad: SecretSpec = { ...secret, data: { level: 'no-such-level' } };
    const fixed: SecretSpec = { ...secret, data: { level: 'warn' } };
    await sources.create(namespace, secret);
    const refs: WorkloadRef[] = [];
    for (let i = 0; i < 10; i += 1) {
      refs.push(
        await workloads.create('Deployment', {
          namespace,
          name: `w${String(i).padStart(2, '0')}`,
          annotations: { [AUTO]: 'true' },
          templateAnnotations: crashOnConfig(sourceHash(bad)),
          progressDeadlineSeconds: 10,
          replicas: 1,
          podSpec: runnable(podSpec({ app: { envFrom: [{ secretRef: { name: 'db' } }] } })),
        }),
      );
    }
    for (const ref of refs) {
      await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
      await pods.waitComplete(ref);
    }
    const [canary, , , , , held] = refs;
    if (canary === undefined || held === undefined) throw new Error('ten Deployments');

    const beforeBad = await audit.mark();
    await sources.replace(namespace, bad);
    await waitForEnv(workloads, canary, {
      container: APP,
      name: envVarName(bad),
      value: sourceHash(bad),
    });
    await pods.waitProgressDeadlineExceeded(canary);
    const halted = await pollUntil(
      async () => {
        const found = (await fixture.events.about(canary)).filter(
          (event) => event.reason === 'ConfigRolloutHalted',
        );
        if (found.length > 0) return found;
        throw new Error('no ConfigRolloutHalted Event yet');
      },
      { timeoutMs: 40_000, describe: 'the ConfigRolloutHalted Event on the canary' },
    );
    expect(halted).toMatchObject([{ type: 'Warning' }]);
    expect(
      (await fixture.events.about({ kind: 'Secret', namespace, name: 'db' })).map((e) => e.reason),
    ).toContain('ConfigRolloutHalted');
    // The canary's roll and its halt marker: no PATCH to any of the other nine.
    expect(new Set(await patchedSince(audit, beforeBad, namespace))).toEqual(new Set(['w00']));
    const explained = await askController(fixture.kreload, {
      kind: 'deployment',
      namespace,
      name: held.name,
    });
    const halts = (JSON.parse(explained.body) as ExplainJson).workload?.facts.halts;
    expect(halts).toMatchObject([
      {
        by: { name: 'w00' },
        reason: 'ProgressDeadlineExceeded',
        resume: `kubectl annotate -n ${namespace} deployment/w00 kreload.io/rollout-halted-`,
      },
    ]);

    await sources.replace(namespace, fixed);
    // One LIST is one consistent snapshot of every Deployment, so two rollouts that merely follow
    // each other are never counted together.
    const apps = cluster.kc.makeApiClient(AppsV1Api);
    let maxInFlight = 0;
    await pollUntil(
      async () => {
        const list = await apps.listNamespacedDeployment({ namespace });
        let inFlight = 0;
        let complete = 0;
        for (const deployment of list.items) {
          const app = deployment.spec?.template.spec?.containers.find((c) => c.name === APP);
          const rolled = app?.env?.some(
            (v) => v.name === envVarName(fixed) && v.value === sourceHash(fixed),
          );
          if (rolled !== true) continue;
          if (deploymentComplete(deployment)) complete += 1;
          else inFlight += 1;
        }
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (complete === refs.length) return complete;
        throw new Error(`${String(complete)} of 10 complete, ${String(inFlight)} in flight`);
      },
      { timeoutMs: 110_000, intervalMs: 100, describe: 'all ten rolled and complete' },
    );
    expect(maxInFlight).toBeGreaterThan(0);
    expect(maxInFlight).toBeLessThanOrEqual(3);
  }, 240_000);

  it('rollout-priority: foo is complete before bar starts', async () => {
    const { namespace, workloads, sources, cluster } = fixture;
    const pods = new PodLifecycle({ kc: cluster.kc });
    const config: ConfigMapSpec = { type: 'CONFIGMAP', name: 'order', data: { level: 'info' } };
    const changed: ConfigMapSpec = { ...config, data: { level: 'debug' } };
    await sources.create(namespace, config);
    const create = (name: string, priority: string) =>
      workloads.create('Deployment', {
        namespace,
        name,
        annotations: { [AUTO]: 'true', 'kreload.io/rollout-priority': priority },
        replicas: 2,
        podSpec: runnable(podSpec({ app: { envFrom: [{ configMapRef: { name: 'order' } }] } })),
      });
    // Names sort the other way: only the priority puts foo first.
    const foo = await create('zz-foo', '-5');
    const bar = await create('aa-bar', '5');
    for (const ref of [foo, bar]) {
      await waitForBaseline(workloads, ref, { [sourceKey(config)]: sourceHash(config) });
      await pods.waitComplete(ref);
    }
    await sources.replace(namespace, changed);
    const expected = { container: APP, name: envVarName(changed), value: sourceHash(changed) };
    const rolledFor = async (ref: WorkloadRef): Promise<boolean> =>
      (await workloads.read(ref)).containers.find((container) => container.name === APP)?.env[
        expected.name
      ] === expected.value;
    await pollUntil(
      async () => {
        if (!(await rolledFor(bar))) throw new Error('bar not rolled yet');
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 100, describe: 'bar to roll' },
    );
    // At bar's roll, foo had rolled and was complete.
    expect(await rolledFor(foo)).toBe(true);
    expect(isRolloutComplete(await pods.status(foo))).toBe(true);
    await waitForEnv(workloads, bar, expected);
  });
});
