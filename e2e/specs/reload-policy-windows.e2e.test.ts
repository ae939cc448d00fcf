// A ReloadPolicy's `windows` on the real control plane, kreload started as its CLI: a deny window
// in force holds the policy's target (the change recorded in kreload.io/pending-roll, nothing
// rolled); deleting the policy mid-hold ends the hold and the recorded roll happens, once, for a
// workload that uses the source itself.
import { describe, expect, it } from 'vitest';
import { AUTO, stateJson } from '../harness/annotations.ts';
import { KubeJson } from '../harness/crds.ts';
import { waitForBaseline, waitForEnv, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { createPolicy, policyIdentity, policyPath } from '../harness/reload-policies.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';

const PENDING_ROLL = 'kreload.io/pending-roll';

const fixture = useKreload({
  name: 'policy-windows',
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--enable-reload-policies=true',
    '--enable-restart-windows',
    '--sync-delay=0',
  ],
  identity: policyIdentity('kreload-e2e-policy-windows'),
});

const configMap = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'app-config',
  data: { version },
});

describe('ReloadPolicy windows', () => {
  it('a deny window in force holds the target; deleting the policy mid-hold rolls it once', async () => {
    const { namespace, workloads, sources } = fixture;
    const client = new KubeJson({ kc: fixture.cluster.kc });
    const v1 = configMap('1');
    await sources.create(namespace, v1);
    const ref = await workloads.create('Deployment', {
      namespace,
      name: 'web',
      // It uses the ConfigMap itself: the policy adds only the window, so without the policy the
      // change still rolls it (a policy that bound the source alone takes the roll with it).
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: 'app-config' } }] } }),
    });
    await createPolicy(client, namespace, 'frozen', {
      sources: [{ kind: 'ConfigMap', name: 'app-config' }],
      targets: [{ kind: 'Deployment', name: 'web' }],
      // Denied all the time: every minute opens a deny window of an hour.
      windows: { timezone: 'UTC', deny: [{ cron: '* * * * *', duration: '1h' }] },
    });
    await waitForBaseline(workloads, ref, { [sourceKey(v1)]: sourceHash(v1) });
    const v2 = configMap('2');
    await sources.replace(namespace, v2);
    const held = await waitForView(
      workloads,
      ref,
      (view) => view.annotations[PENDING_ROLL] === stateJson({ [sourceKey(v2)]: sourceHash(v2) }),
      'the change recorded as pending',
    );
    expect(held.containers.find((c) => c.name === APP)?.env).toEqual({});
    expect(held.annotations['reloader.stakater.com/restart-window']).toBeUndefined();

    await client.request({ method: 'DELETE', path: policyPath(namespace, 'frozen') });
    await waitForEnv(workloads, ref, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
    const rolled = await waitForView(
      workloads,
      ref,
      (view) => view.annotations[PENDING_ROLL] === undefined,
      'the pending record removed',
    );
    expect(rolled.containers.find((c) => c.name === APP)?.env).toEqual({
      [envVarName(v2)]: sourceHash(v2),
    });
    expect((await workloads.settledRevisions(ref, 2)).revisions).toBe(2);
  }, 120_000);
});
