// Safe rollout on kwok nodes: 50 Deployments (or KRELOAD_E2E_SAFE_ROLLOUT_COUNT) share one Secret,
// kreload rolls a change in waves (canary 1, budget 5). A bad value crashes the canary's pods:
// nothing else is patched (the audit log says so), ConfigRolloutHalted appears, explain on another
// Deployment names the halt. A fixed value rolls them all, never more than 5 in flight, by the
// Deployments' own status and by their ReplicaSets and pods.
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { askController, type ExplainJson } from '../harness/explain.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle, isRolloutComplete, runnable } from '../harness/pod-lifecycle.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import {
  badValueHaltsAtCanary,
  createCrashingFleet,
  changeProgress,
  changeProgressFromPods,
  patchedSince,
} from '../harness/rollout-watch.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

/** How many Deployments share the Secret (at least 6): 50, about a minute on 2 shared cores. */
const COUNT = Number(process.env.KRELOAD_E2E_SAFE_ROLLOUT_COUNT ?? '50');
const BUDGET = 5;

const fixture = useKreload({
  name: 'safe-rollout',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--enable-debug-explain',
    '--rollout-waves',
    '--canary=1',
    `--max-concurrent-rollouts=${String(BUDGET)}`,
  ],
});

describe('safe rollout: waves, health gates and a halt', () => {
  it(
    `a bad Secret halts at the canary; a fix rolls all ${String(COUNT)} in waves of at most ${String(BUDGET)}`,
    async () => {
      const { namespace, workloads, sources, cluster } = fixture;
      const auditLogPath = cluster.auditLogPath;
      if (auditLogPath === undefined)
        throw new Error('the shared cluster runs without an audit log');
      const audit = new AuditLog({ path: auditLogPath });
      const pods = new PodLifecycle({ kc: cluster.kc });
      const { secret, bad, fixed, refs } = await createCrashingFleet({
        ...{ sources, workloads, namespace, count: COUNT, prefix: 'w' },
        metadata: { annotations: { [AUTO]: 'true' } },
      });
      for (const ref of refs) {
        await waitForBaseline(workloads, ref, { [sourceKey(secret)]: sourceHash(secret) });
        await pods.waitComplete(ref);
      }
      const [canary, , , , , held] = refs;
      if (canary === undefined || held === undefined) throw new Error('at least six Deployments');

      const beforeBad = await audit.mark();
      const halted = await badValueHaltsAtCanary({
        ...{ sources, workloads, pods, events: fixture.events },
        ...{ namespace, bad, canary },
      });
      expect(halted).toMatchObject([{ type: 'Warning' }]);
      expect(
        (await fixture.events.about({ kind: 'Secret', namespace, name: 'db' })).map(
          (e) => e.reason,
        ),
      ).toContain('ConfigRolloutHalted');
      // The canary's roll and its halt marker: no PATCH to any of the others.
      expect(new Set(await patchedSince(audit, beforeBad, namespace, KRELOAD_USER))).toEqual(
        new Set(['w00']),
      );
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
      const rolledFixed = { name: envVarName(fixed), value: sourceHash(fixed) };
      let maxInFlight = 0;
      let maxInFlightByPods = 0;
      let polls = 0;
      await pollUntil(
        async () => {
          const { complete, inFlight } = await changeProgress(cluster.kc, namespace, rolledFixed);
          maxInFlight = Math.max(maxInFlight, inFlight);
          // Two LISTs more: every other poll, to keep the pace of the Deployment snapshots.
          polls += 1;
          if (polls % 2 === 0) {
            const byPods = await changeProgressFromPods(cluster.kc, namespace, rolledFixed, 1);
            maxInFlightByPods = Math.max(maxInFlightByPods, byPods.inFlight);
          }
          if (complete === COUNT) return complete;
          throw new Error(
            `${String(complete)} of ${String(COUNT)} complete, ${String(inFlight)} in flight`,
          );
        },
        {
          timeoutMs: 20_000 + COUNT * 9_000,
          intervalMs: 100,
          describe: `all ${String(COUNT)} rolled and complete`,
        },
      );
      expect(maxInFlight).toBeGreaterThan(0);
      expect(maxInFlight).toBeLessThanOrEqual(BUDGET);
      expect(maxInFlightByPods).toBeGreaterThan(0);
      expect(maxInFlightByPods).toBeLessThanOrEqual(BUDGET);
    },
    240_000 + COUNT * 12_000,
  );

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
