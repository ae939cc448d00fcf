// A ReloadPolicy's `spec.configRevisions` (docs/reload-policy.md, ADR 0038) on the real control
// plane: a Deployment that carries no kreload annotation at all is opted into config revisions by
// the policy alone; its roll creates the immutable snapshot and points the template at it, as the
// `kreload.io/config-revisions` annotation would (docs/config-revisions.md). kreload runs with
// --enable-config-revisions, which the policy field still requires. A selector policy over many
// Deployments that share one snapshot rolls every one of them: the workloads that reuse the
// snapshot made by the first do not lose their binding on the way.
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeJson, arrayAt } from '../harness/crds.ts';
import { waitForBaseline, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { createPolicy, policyIdentity, readPolicy } from '../harness/reload-policies.ts';
import { sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { podSpec } from '../harness/workloads.ts';

const SNAPSHOTS = 'kreload.io/snapshots';
const RULES = [
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
  identity: policyIdentity('kreload-e2e-policy-revisions', RULES),
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

describe('ReloadPolicy spec.configRevisions over a selector', () => {
  const FLEET = 30;
  const shared = (version: string): ConfigMapSpec => ({
    type: 'CONFIGMAP',
    name: 'shared',
    data: { version },
  });
  const names = Array.from(
    { length: FLEET },
    (_unused, i) => `tier-web-${String(i).padStart(2, '0')}`,
  );

  /** The fleet's Deployments whose template names `snapshot`, and those that do not (by name). */
  async function pinnedTo(namespace: string, snapshot: string) {
    const apps = fixture.cluster.kc.makeApiClient(AppsV1Api);
    const { items } = await apps.listNamespacedDeployment({ namespace, labelSelector: 'tier=web' });
    const pins = (d: V1Deployment) =>
      d.spec?.template.spec?.containers[0]?.envFrom?.[0]?.configMapRef?.name === snapshot;
    return {
      pinned: items.filter(pins).length,
      behind: items.filter((d) => !pins(d)).map((d) => d.metadata?.name ?? ''),
      // Where the planner reads B: W's annotation, else the baseline store's record.
      baselines: await Promise.all(
        items.map(
          async (d) =>
            (await fixture.workloads.baselines.baselineOf(
              { kind: 'Deployment', namespace },
              { uid: d.metadata?.uid ?? '', annotations: d.metadata?.annotations ?? {} },
            )) ?? '',
        ),
      ),
    };
  }

  it('one policy selecting 30 Deployments, two changes: every Deployment rolls onto each snapshot', async () => {
    const { namespace } = fixture;
    await fixture.sources.create(namespace, shared('1'));
    for (let start = 0; start < FLEET; start += 10) {
      await Promise.all(
        names.slice(start, start + 10).map((name) =>
          fixture.workloads.create('Deployment', {
            namespace,
            name,
            labels: { tier: 'web' },
            podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: 'shared' } }] } }),
          }),
        ),
      );
    }
    await createPolicy(new KubeJson({ kc: fixture.cluster.kc }), namespace, 'web', {
      sources: [{ kind: 'ConfigMap', name: 'shared' }],
      targets: [{ kind: 'Deployment', selector: { matchLabels: { tier: 'web' } } }],
      configRevisions: { configMaps: true },
    });
    const baseline = JSON.stringify({ [sourceKey(shared('1'))]: sourceHash(shared('1')) });
    await pollUntil(
      async () => {
        const { baselines } = await pinnedTo(namespace, '');
        return baselines.length === FLEET && baselines.every((b) => b === baseline);
      },
      { timeoutMs: 60_000, describe: 'every Deployment of the fleet baselined at version 1' },
    );
    const before = await scrapeMetrics(fixture.kreload);
    for (const version of ['2', '3']) {
      await fixture.sources.replace(namespace, shared(version));
      const snapshot = `shared-${sourceHash(shared(version)).slice(0, 10)}`;
      let behind: string[] = [];
      await pollUntil(
        async () => {
          const state = await pinnedTo(namespace, snapshot);
          behind = state.behind;
          return state.pinned === FLEET;
        },
        {
          timeoutMs: 90_000,
          intervalMs: 500,
          get describe() {
            return `all ${String(FLEET)} Deployments on ${snapshot} (behind: ${behind.join(' ')})`;
          },
        },
      );
    }
    const after = await scrapeMetrics(fixture.kreload);
    expect(after.delta(before, 'reloader_reload_executed_total', { success: 'false' })).toBe(0);
    expect(after.delta(before, 'reloader_reload_executed_total', { success: 'true' })).toBe(
      2 * FLEET,
    );
  });
});
