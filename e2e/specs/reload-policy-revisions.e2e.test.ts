// A ReloadPolicy's `spec.configRevisions` (docs/reload-policy.md, ADR 0038) on the real control
// plane: a Deployment that carries no kreload annotation at all is opted into config revisions by
// the policy alone; its roll creates the immutable snapshot and points the template at it, as the
// `kreload.io/config-revisions` annotation would (docs/config-revisions.md). kreload runs with
// --enable-config-revisions, which the policy field still requires.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeJson, arrayAt } from '../harness/crds.ts';
import { waitForBaseline, waitForView } from '../harness/expectations.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import {
  createPolicy,
  installPolicyCrd,
  readPolicy,
  POLICY_RBAC_RULES,
} from '../harness/reload-policies.ts';
import { sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { podSpec } from '../harness/workloads.ts';

const SNAPSHOTS = 'kreload.io/snapshots';
const RULES = [
  ...POLICY_RBAC_RULES,
  // What --enable-config-revisions needs (docs/config-revisions.md#rbac).
  { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['create', 'patch', 'delete'] },
  { apiGroups: ['apps'], resources: ['replicasets', 'controllerrevisions'], verbs: ['list'] },
];

const fixture = useKreload({
  name: 'policy-revisions',
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--enable-reload-policies=true',
    '--enable-config-revisions',
    '--sync-delay=0',
  ],
  identity: async (cluster) => {
    await installPolicyCrd(cluster);
    return installCustomIdentity(cluster, {
      name: 'kreload-e2e-policy-revisions',
      rules: [...clusterRulesWith((rule) => rule), ...RULES],
    });
  },
});

const configMap = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'app-config',
  data: { version },
});

describe('ReloadPolicy spec.configRevisions', () => {
  it('the roll of a policy-bound Deployment creates the snapshot and points the template at it', async () => {
    const { namespace } = fixture;
    const v1 = configMap('1');
    const v2 = configMap('2');
    await fixture.sources.create(namespace, v1);
    const web = await fixture.workloads.create('Deployment', {
      namespace,
      name: 'web',
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: 'app-config' } }] } }),
    });
    await createPolicy(new KubeJson({ kc: fixture.cluster.kc }), namespace, 'pin', {
      sources: [{ kind: 'ConfigMap', name: 'app-config' }],
      targets: [{ kind: 'Deployment', name: 'web' }],
      configRevisions: { configMaps: true },
    });
    await waitForBaseline(fixture.workloads, web, { [sourceKey(v1)]: sourceHash(v1) });
    await fixture.sources.replace(namespace, v2);
    const snapshot = `app-config-${sourceHash(v2).slice(0, 10)}`;
    const rolled = await waitForView(
      fixture.workloads,
      web,
      (view) => view.templateAnnotations[SNAPSHOTS] !== undefined,
      'the template points at a snapshot',
    );
    expect(JSON.parse(rolled.templateAnnotations[SNAPSHOTS] ?? '{}')).toEqual({
      [sourceKey(v2)]: snapshot,
    });
    // The workload still carries no opt-in annotation: the policy is the only opt-in.
    expect(rolled.annotations['kreload.io/config-revisions']).toBeUndefined();
    const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
    const deployment = await fixture.cluster.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: 'web', namespace });
    const app = deployment.spec?.template.spec?.containers.find((c) => c.name === 'app');
    expect(app?.envFrom).toEqual([{ configMapRef: { name: snapshot } }]);
    const copy = await core.readNamespacedConfigMap({ name: snapshot, namespace });
    expect(copy.immutable).toBe(true);
    expect(copy.data).toEqual(v2.data);
    expect(copy.metadata?.labels).toMatchObject({
      'kreload.io/snapshot-of': 'app-config',
      'kreload.io/snapshot-hash': sourceHash(v2).slice(0, 10),
    });
    // The policy records the roll with the live source's hash: tracking stays on app-config.
    const recorded = await pollUntil(
      async () => {
        const policy = await readPolicy(new KubeJson({ kc: fixture.cluster.kc }), namespace, 'pin');
        const targets = arrayAt(policy, ['status', 'targets']);
        return targets.length === 1 ? targets : undefined;
      },
      { timeoutMs: 30_000, describe: 'ReloadPolicy pin: the roll recorded' },
    );
    expect(recorded).toMatchObject([
      {
        kind: 'Deployment',
        name: 'web',
        sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: sourceHash(v2) }],
      },
    ]);
  });
});
