// Secrets Store CSI rotation (§2.1, §4.4, D6): three pods of one Deployment mount one
// SecretProviderClass, so there are three SecretProviderClassPodStatus objects. The driver would
// update each one as it rotates its pod's mount; here the test writes them. Rotating all three
// must roll the Deployment once: one new template hash, one new ReplicaSet, one counted roll.
// The CRDs are the real ones from the secrets-store-csi-driver Go module.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CSI_APIS,
  installCrds,
  uninstallCrds,
  KubeJson,
  OPTIONAL_APIS,
  recordAt,
  valueAt,
} from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { createPolicy, policyIdentity, readPolicy } from '../harness/reload-policies.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import {
  APP,
  awaitBaseline,
  BUILT_IN_APIS,
  controlledBy,
  createObject,
  IMAGE,
  keyOf,
  listObjects,
  mergePatchObject,
  podStatusHash,
  readObject,
  SIDECAR,
  STRATEGIES,
  strategyRow,
  uidOf,
  type ObjectRef,
  type RolledSource,
  type SecretObject,
} from './kinds-support.ts';

const SPC_AUTO = 'secretproviderclass.reloader.stakater.com/auto';
const PODS = ['web-0', 'web-1', 'web-2'] as const;

function secretObjects(version: string): SecretObject[] {
  return [
    { id: 'secret/db-pass', version },
    { id: 'secret/api-key', version },
  ];
}

const cluster = sharedCluster();
const client = new KubeJson({ kc: cluster.kc });

beforeAll(async () => {
  await installCrds(cluster, CSI_APIS);
});

afterAll(async () => {
  await uninstallCrds(cluster, CSI_APIS);
});

it('computes hashes as §4.2 vectors 9 and 10 say', () => {
  expect(
    podStatusHash('my-spc', [
      { id: 'secret/db-pass', version: 'v2' },
      { id: 'secret/api-key', version: 'v1' },
    ]),
  ).toBe('c695e5b2d20998c25dce659e5b19e52936c3591e');
  expect(podStatusHash('my-spc', [])).toBe('40c125ef6cd81879ba7d9bf324830530eaee9893');
});

describe.each(STRATEGIES)('--reload-strategy=$strategy', (strategy) => {
  const fixture = useKreload({
    name: `kinds-csi-${strategy.strategy}`,
    args: ([namespace = '']) => [
      `--namespaces=${namespace}`,
      '--sync-delay=0',
      '--enable-csi-integration=true',
      `--reload-strategy=${strategy.strategy}`,
    ],
  });

  it('rotating the SecretProviderClassPodStatus objects of three pods rolls the Deployment once', async () => {
    const { namespace, kreload } = fixture;
    const spc = 'vault-db';
    const name = 'web';
    const ref: ObjectRef = { api: BUILT_IN_APIS.deployments, namespace, name };
    const podStatus = (pod: string): ObjectRef => ({
      api: OPTIONAL_APIS.secretproviderclasspodstatuses,
      namespace,
      name: `${pod}-${namespace}-${spc}`,
    });
    await createObject(
      client,
      { api: OPTIONAL_APIS.secretproviderclasses, namespace },
      { metadata: { name: spc }, spec: { provider: 'e2e', parameters: { objects: 'db-pass' } } },
    );
    for (const pod of PODS) {
      await createObject(client, podStatus(pod), {
        metadata: { name: podStatus(pod).name },
        status: {
          podName: pod,
          secretProviderClassName: spc,
          mounted: true,
          targetPath: `/var/lib/kubelet/pods/${pod}/volumes/kubernetes.io~csi/secrets/mount`,
          objects: secretObjects('v1'),
        },
      });
    }
    await createObject(client, ref, {
      metadata: { name, annotations: { [SPC_AUTO]: 'true' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            containers: [
              {
                name: APP,
                image: IMAGE,
                volumeMounts: [{ name: 'secrets', mountPath: '/mnt/secrets', readOnly: true }],
              },
              { name: SIDECAR, image: IMAGE },
            ],
            volumes: [
              {
                name: 'secrets',
                csi: {
                  driver: 'secrets-store.csi.k8s.io',
                  readOnly: true,
                  volumeAttributes: { secretProviderClass: spc },
                },
              },
            ],
          },
        },
      },
    });
    const key = keyOf({ type: 'SECRETPROVIDERCLASS', name: spc });
    const created = await awaitBaseline(client, ref, {
      [key]: podStatusHash(spc, secretObjects('v1')),
    });
    const replicaSets = async (): Promise<number> =>
      controlledBy(
        await listObjects(client, { api: BUILT_IN_APIS.replicasets, namespace }),
        uidOf(created),
      ).length;
    await pollUntil(async () => (await replicaSets()) === 1, {
      timeoutMs: 30_000,
      describe: `the first ReplicaSet of ${name}`,
    });
    const since = await scrapeMetrics(kreload);

    const source: RolledSource = {
      type: 'SECRETPROVIDERCLASS',
      name: spc,
      namespace,
      hash: podStatusHash(spc, secretObjects('v2')),
    };
    const rotate = (pod: string): Promise<unknown> =>
      mergePatchObject(client, podStatus(pod), { status: { objects: secretObjects('v2') } });
    // The driver rotates one pod's mount first. That SPCPS is now the one most recently seen to
    // change, so it alone sets the desired hash (§4.4 item 1), although it is not the newest.
    const [firstPod, ...otherPods] = PODS;
    await rotate(firstPod);
    const rolled = await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        return strategy.appliedHash(recordAt(current, ['spec', 'template']), source) === source.hash
          ? current
          : undefined;
      },
      { timeoutMs: 30_000, describe: `${name} to roll for ${source.hash}` },
    );
    // The other pods converge on the same versions: nothing more to roll (§4.4 item 4).
    for (const pod of otherPods) await rotate(pod);
    strategy.expectRolled(recordAt(rolled, ['spec', 'template']), source);
    const settled = await waitUntilSettled(kreload, {
      since,
      events: [
        { resource: 'secretproviderclasspodstatuses', event: 'update', atLeast: PODS.length },
      ],
    });
    expect(settled.delta(since, 'reloader_reload_executed_total', { success: 'true' })).toBe(1);
    expect(settled.delta(since, 'reloader_reload_executed_total', { success: 'false' })).toBe(0);
    // kube-controller-manager saw one template change: one new ReplicaSet.
    const final = await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        const observed = valueAt(current, ['status', 'observedGeneration']);
        return observed === valueAt(current, ['metadata', 'generation']) ? current : undefined;
      },
      { timeoutMs: 30_000, describe: `${name} to be observed by the deployment controller` },
    );
    expect(strategy.appliedHash(recordAt(final, ['spec', 'template']), source)).toBe(source.hash);
    expect(await replicaSets()).toBe(2);
  });
});

// A ReloadPolicy selects SecretProviderClasses by their labels (docs/reload-policy.md), which
// kreload keeps only with --enable-reload-policies. The Deployment names no SPC: the policy binds it.
describe('ReloadPolicy: a SecretProviderClass source by selector', () => {
  const fixture = useKreload({
    name: 'kinds-csi-policy',
    args: ([namespace = '']) => [
      `--namespaces=${namespace}`,
      '--sync-delay=0',
      '--enable-csi-integration=true',
      '--enable-reload-policies=true',
    ],
    identity: policyIdentity('kreload-e2e-csi-policy'),
  });

  it('a labelled SPC is found and bound; a rotation rolls the unannotated target', async () => {
    const { namespace } = fixture;
    const spc = 'vault-pay';
    const ref: ObjectRef = { api: BUILT_IN_APIS.deployments, namespace, name: 'pay' };
    const podStatus: ObjectRef = {
      api: OPTIONAL_APIS.secretproviderclasspodstatuses,
      namespace,
      name: `pay-0-${namespace}-${spc}`,
    };
    await createObject(
      client,
      { api: OPTIONAL_APIS.secretproviderclasses, namespace },
      {
        metadata: { name: spc, labels: { team: 'payments' } },
        spec: { provider: 'e2e', parameters: { objects: 'db-pass' } },
      },
    );
    await createObject(client, podStatus, {
      metadata: { name: podStatus.name },
      status: {
        podName: 'pay-0',
        secretProviderClassName: spc,
        mounted: true,
        targetPath: '/var/lib/kubelet/pods/pay-0/volumes/kubernetes.io~csi/secrets/mount',
        objects: secretObjects('v1'),
      },
    });
    await createObject(client, ref, {
      metadata: { name: 'pay' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'pay' } },
        template: {
          metadata: { labels: { app: 'pay' } },
          spec: { containers: [{ name: APP, image: IMAGE }] },
        },
      },
    });
    await createPolicy(client, namespace, 'pay', {
      sources: [{ kind: 'SecretProviderClass', selector: { matchLabels: { team: 'payments' } } }],
      targets: [{ kind: 'Deployment', name: 'pay' }],
    });
    const key = keyOf({ type: 'SECRETPROVIDERCLASS', name: spc });
    await awaitBaseline(client, ref, { [key]: podStatusHash(spc, secretObjects('v1')) });
    const found = await pollUntil(
      async () => {
        const policy = await readPolicy(client, namespace, 'pay');
        return valueAt(policy, ['status', 'foundSources']) === '1/1' ? policy : undefined;
      },
      { timeoutMs: 30_000, describe: 'ReloadPolicy pay: 1/1 sources found' },
    );
    expect(valueAt(found, ['status', 'foundTargets'])).toBe('1/1');
    const source: RolledSource = {
      type: 'SECRETPROVIDERCLASS',
      name: spc,
      namespace,
      hash: podStatusHash(spc, secretObjects('v2')),
    };
    await mergePatchObject(client, podStatus, { status: { objects: secretObjects('v2') } });
    const envVars = strategyRow('env-vars');
    await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        return envVars.appliedHash(recordAt(current, ['spec', 'template']), source) === source.hash
          ? current
          : undefined;
      },
      { timeoutMs: 30_000, describe: `pay to roll for ${source.hash}` },
    );
    const recorded = await pollUntil(
      async () => {
        const policy = await readPolicy(client, namespace, 'pay');
        const targets = valueAt(policy, ['status', 'targets']);
        return Array.isArray(targets) && targets.length === 1 ? targets : undefined;
      },
      { timeoutMs: 30_000, describe: 'ReloadPolicy pay: the roll recorded' },
    );
    expect(recorded).toMatchObject([
      {
        kind: 'Deployment',
        name: 'pay',
        sourceHashes: [{ kind: 'SecretProviderClass', name: spc, hash: source.hash }],
      },
    ]);
  });
});
