// --enable-reload-policies while kreload may not list ReloadPolicies (403): kreload starts, keeps
// rolling annotated workloads, and /readyz names the policy kind as forbidden
// (docs/reload-policy.md#when-the-api-is-missing-or-forbidden).
import { describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { AUTO } from '../harness/annotations.ts';
import { KubeJson } from '../harness/crds.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { createPolicy, installPolicyCrd } from '../harness/reload-policies.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'policy-forbidden',
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--enable-reload-policies=true',
    '--sync-delay=0',
  ],
  // Every rule kreload needs for annotations, none for kreload.io.
  identity: async (cluster) => {
    await installPolicyCrd(cluster);
    return installCustomIdentity(cluster, {
      name: 'kreload-e2e-policy-forbidden',
      rules: clusterRulesWith((rule) => rule),
    });
  },
});

const config = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'forbidden-config',
  data: { version },
});

describe('ReloadPolicy kind forbidden (403)', () => {
  it('/readyz is ready and says reloadpolicies is forbidden', async () => {
    const response = await probe({ url: fixture.kreload.url('/readyz') });
    expect(response.status).toBe(200);
    const body = JSON.parse(response.body) as {
      ready: boolean;
      checks: { kinds: Record<string, string> };
    };
    expect(body.ready).toBe(true);
    expect(body.checks.kinds.reloadpolicies).toBe('forbidden');
    expect(body.checks.kinds.configmaps).toBe('ok');
  });

  it('annotated workloads still roll; a policy it cannot read binds nothing', async () => {
    const { namespace } = fixture;
    await fixture.sources.create(namespace, config('1'));
    const annotated = await fixture.workloads.create('Deployment', {
      namespace,
      name: 'annotated',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: 'forbidden-config' } }] } }),
    });
    const bound = await fixture.workloads.create('Deployment', {
      namespace,
      name: 'bound',
      podSpec: podSpec({}),
    });
    await createPolicy(new KubeJson({ kc: fixture.cluster.kc }), namespace, 'unreadable', {
      sources: [{ kind: 'ConfigMap', name: 'forbidden-config' }],
      targets: [{ kind: 'Deployment', name: 'bound' }],
    });
    await waitForBaseline(fixture.workloads, annotated, {
      [sourceKey(config('1'))]: sourceHash(config('1')),
    });
    await fixture.sources.replace(namespace, config('2'));
    await waitForEnv(fixture.workloads, annotated, {
      container: APP,
      name: envVarName(config('2')),
      value: sourceHash(config('2')),
    });
    const view = await fixture.workloads.read(bound);
    expect(await fixture.workloads.baselines.baselineOf(bound, view)).toBeUndefined();
    expect(view.containers.every((entry) => Object.keys(entry.env).length === 0)).toBe(true);
  });
});
