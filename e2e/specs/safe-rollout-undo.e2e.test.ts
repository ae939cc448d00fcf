// --undo-failed-rollouts on the real control plane, with pods on kwok nodes: three Deployments
// opted in to config revisions share a ConfigMap; waves with a canary of 1. A bad value crash-loops
// the canary's new pods; when its progress deadline passes, kreload halts the change and, in the
// same PATCH as the halt marker, puts back the template of the revision before (its snapshot of
// the good content). The canary is Available again on that snapshot and stays there; the other two
// were never rolled.
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import {
  CONFIG_REVISIONS,
  SNAPSHOTS,
  revisionsIdentity,
  snapshotOf,
} from '../harness/config-revisions.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { PodLifecycle, crashOnConfig, runnable } from '../harness/pod-lifecycle.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'safe-rollout-undo',
  identity: revisionsIdentity,
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--enable-config-revisions',
    '--rollout-waves',
    '--canary=1',
    '--max-concurrent-rollouts=2',
    '--undo-failed-rollouts',
  ],
});

const HALTED = 'kreload.io/rollout-halted';

describe('a failed canary is undone', () => {
  it('back on its previous snapshot, Available, and not rolled forward; the others never rolled', async () => {
    const { namespace, workloads, sources, cluster } = fixture;
    const pods = new PodLifecycle({ kc: cluster.kc });
    const first: ConfigMapSpec = { type: 'CONFIGMAP', name: 'shared', data: { level: 'info' } };
    const good: ConfigMapSpec = { ...first, data: { level: 'debug' } };
    const bad: ConfigMapSpec = { ...first, data: { level: 'no-such-level' } };
    await sources.create(namespace, first);
    const refs: WorkloadRef[] = [];
    for (const name of ['app-0', 'app-1', 'app-2']) {
      refs.push(
        await workloads.create('Deployment', {
          namespace,
          name,
          annotations: { [AUTO]: 'true', [CONFIG_REVISIONS]: 'true' },
          templateAnnotations: crashOnConfig(sourceHash(bad)),
          podSpec: runnable(podSpec({ app: { envFrom: [{ configMapRef: { name: 'shared' } }] } })),
          replicas: 2,
          progressDeadlineSeconds: 5,
        }),
      );
    }
    const [canary, ...rest] = refs;
    if (canary === undefined) throw new Error('no canary');
    for (const ref of refs) {
      await waitForBaseline(workloads, ref, { [sourceKey(first)]: sourceHash(first) });
      await pods.waitComplete(ref);
    }
    // A good change first: every workload rolls (in waves) onto a snapshot of it, the revision an
    // undo can go back to (the first revision references the live ConfigMap).
    await sources.replace(namespace, good);
    for (const ref of refs) {
      await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(good),
        value: sourceHash(good),
      });
      await pods.waitComplete(ref);
    }
    const generations = await Promise.all(
      refs.map(async (ref) => (await workloads.read(ref)).generation),
    );

    await sources.replace(namespace, bad);

    // The canary rolls onto the bad content's snapshot, then is undone.
    const undone = await pollUntil(
      async () => {
        const found = (await fixture.events.about(canary)).filter(
          (event) => event.reason === 'ConfigRolloutUndone',
        );
        if (found.length > 0) return found;
        throw new Error('no ConfigRolloutUndone Event yet');
      },
      { timeoutMs: 90_000, intervalMs: 500, describe: 'the ConfigRolloutUndone Event' },
    );
    expect(undone[0]?.message).toContain(snapshotOf('shared', { ...good.data }));
    await pods.waitComplete(canary, 120_000);
    const view = await workloads.read(canary);
    expect(view.templateAnnotations[SNAPSHOTS]).toContain(snapshotOf('shared', { ...good.data }));
    const env = view.containers.find((c) => c.name === APP)?.env ?? {};
    expect(env[envVarName(good)]).not.toBe(sourceHash(bad));
    expect(JSON.parse(view.annotations[HALTED] ?? '{}')).toMatchObject({ hash: sourceHash(bad) });

    // It stays there: no roll forward while the source keeps the bad content.
    const settled = (await workloads.read(canary)).generation;
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    expect((await workloads.read(canary)).generation).toBe(settled);
    expect((await pods.status(canary)).available).toBe(2);
    // The rest of the fan-out never rolled.
    for (const [i, ref] of rest.entries()) {
      expect((await workloads.read(ref)).generation).toBe(generations[i + 1]);
    }
  });
});
