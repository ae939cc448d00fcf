// DeploymentConfig (§2.2, §7.6, D2) under both strategies. No OpenShift runs: the DC API is a
// hand-written CRD (e2e/cluster/crd-modules/deploymentconfig-crd.yaml) and kreload talks to the
// cluster through kinds-openshift-proxy, which answers the strategic merge patch and the
// `instantiate` subresource the way openshift-apiserver would (see its header). So the object
// shows the template patch, and the proxy's record shows that it was a strategic merge patch and
// whether `instantiate` followed. What no test here can show: a DeploymentConfig controller
// turning either into a ReplicationController.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  arrayAt,
  installCrds,
  uninstallCrds,
  KubeJson,
  OPTIONAL_APIS,
  recordAt,
  STRATEGIC_MERGE_PATCH,
  stringAt,
} from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import {
  annotationsOf,
  AUTO,
  awaitBaseline,
  expectBaselineMovedToW,
  createObject,
  keyOf,
  podTemplate,
  readObject,
  STRATEGIES,
  type ObjectRef,
  type RolledSource,
} from './kinds-support.ts';
import { OpenShiftProxy, type InterceptedRequest } from './kinds-openshift-proxy.ts';

interface TriggerCase {
  readonly title: string;
  readonly short: string;
  readonly triggers: readonly Record<string, unknown>[];
  /** §7.6: instantiate only when no ConfigChange trigger deploys the template change. */
  readonly instantiates: boolean;
}

/** W marker of an instantiate still owed (docs/adr/0019), and the patch that removes it. */
const INSTANTIATE_PENDING = 'kreload.io/instantiate-pending';
const MARKER_REMOVAL = { metadata: { annotations: { [INSTANTIATE_PENDING]: null } } };

const TRIGGER_CASES: readonly TriggerCase[] = [
  {
    title: 'with a ConfigChange trigger: the template patch alone',
    short: 'cc',
    triggers: [{ type: 'ConfigChange' }],
    instantiates: false,
  },
  {
    title: 'without a ConfigChange trigger: the template patch, then instantiate',
    short: 'manual',
    triggers: [],
    instantiates: true,
  },
];

const cluster = sharedCluster();
const client = new KubeJson({ kc: cluster.kc });
const sources = new SourceClient({ kc: cluster.kc });
const proxy = new OpenShiftProxy({ cluster });

beforeAll(async () => {
  await installCrds(cluster, ['deploymentconfigs']);
  await proxy.start();
});

afterAll(async () => {
  await proxy.stop();
  await uninstallCrds(cluster, ['deploymentconfigs']);
});

function containerShapes(workload: unknown): unknown[] {
  return arrayAt(workload, ['spec', 'template', 'spec', 'containers']).map((c) => ({
    name: stringAt(c, ['name']),
    image: stringAt(c, ['image']),
    envFrom: arrayAt(c, ['envFrom']),
  }));
}

function requestsFor(namespace: string, name: string): InterceptedRequest[] {
  return proxy.intercepted.filter(
    (request) => request.namespace === namespace && request.name === name,
  );
}

describe.each(STRATEGIES)('--reload-strategy=$strategy', (strategy) => {
  const fixture = useKreload({
    name: `kinds-deploymentconfig-${strategy.strategy}`,
    args: ([namespace = '']) => [
      `--namespaces=${namespace}`,
      '--sync-delay=0',
      `--reload-strategy=${strategy.strategy}`,
    ],
    // kreload talks to the cluster through the proxy that plays the OpenShift API.
    identity: async (target) => ({
      kubeconfigPath: await proxy.kubeconfig((await installKreloadIdentity(target)).token),
    }),
  });

  it.each(TRIGGER_CASES)('$title', async (triggerCase) => {
    const { namespace, kreload } = fixture;
    const name = `${triggerCase.short}-dc`;
    const configMap = `${triggerCase.short}-cfg`;
    const ref: ObjectRef = { api: OPTIONAL_APIS.deploymentconfigs, namespace, name };
    await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '1' } });
    await createObject(client, ref, {
      metadata: { name, annotations: { [AUTO]: 'true' } },
      spec: {
        replicas: 0,
        selector: { app: name },
        triggers: triggerCase.triggers,
        template: podTemplate({ app: name, configMap }),
      },
    });
    const key = keyOf({ type: 'CONFIGMAP', name: configMap });
    await awaitBaseline(client, ref, { [key]: configMapHash({ data: { v: '1' } }) });
    const since = await scrapeMetrics(kreload);

    await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '2' } });
    const source: RolledSource = {
      type: 'CONFIGMAP',
      name: configMap,
      namespace,
      hash: configMapHash({ data: { v: '2' } }),
    };

    const rolled = await pollUntil(
      async () => {
        const current = await readObject(client, ref);
        return strategy.appliedHash(recordAt(current, ['spec', 'template']), source) === source.hash
          ? current
          : undefined;
      },
      { timeoutMs: 30_000, describe: `DeploymentConfig ${name} to roll for ${source.hash}` },
    );
    strategy.expectRolled(recordAt(rolled, ['spec', 'template']), source);
    await expectBaselineMovedToW(client, ref, rolled);
    // A strategic merge keeps what the patch does not name: both containers, their references.
    expect(containerShapes(rolled)).toEqual(
      containerShapes({ spec: { template: podTemplate({ app: name, configMap }) } }),
    );
    if (triggerCase.instantiates) {
      await pollUntil(
        () => requestsFor(namespace, name).some((r) => r.subresource === 'instantiate'),
        { timeoutMs: 30_000, describe: `instantiate of DeploymentConfig ${name}` },
      );
    }
    await waitUntilSettled(kreload, {
      since,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
    });

    // Every write was a strategic merge patch with kreload's field manager and a precondition
    // (§7.6 "exactly as for a Deployment", §10); the roll was one of them. The one exception is
    // the removal of kreload's own instantiate marker once instantiate succeeded (docs/adr/0019).
    const requests = requestsFor(namespace, name);
    const patches = requests.filter((r) => r.subresource === undefined);
    expect(patches.length).toBeGreaterThanOrEqual(1);
    const isMarkerRemoval = (r: (typeof patches)[number]): boolean =>
      JSON.stringify(r.body) === JSON.stringify(MARKER_REMOVAL);
    for (const patch of patches) {
      expect(patch).toMatchObject({
        method: 'PATCH',
        contentType: expect.stringContaining(STRATEGIC_MERGE_PATCH) as unknown,
        query: expect.objectContaining({ fieldManager: 'kreload' }) as unknown,
        status: 200,
      });
      if (!isMarkerRemoval(patch)) {
        expect(stringAt(patch.body, ['metadata', 'resourceVersion'])).toMatch(/^\d+$/);
      }
    }
    const markerRemovals = patches.filter(isMarkerRemoval);
    const rollPatches = patches.filter((r) => recordAt(r.body, ['spec']).template !== undefined);
    expect(rollPatches).toHaveLength(1);
    // The baseline store (the default) took the first sight: the roll is kreload's first write.
    expect(patches[0]).toBe(rollPatches[0]);
    const instantiations = requests.filter((r) => r.subresource === 'instantiate');
    if (!triggerCase.instantiates) {
      expect(instantiations).toEqual([]);
      expect(markerRemovals).toEqual([]);
      return;
    }
    expect(instantiations).toHaveLength(1);
    const [instantiation] = instantiations;
    const [rollPatch] = rollPatches;
    if (instantiation === undefined || rollPatch === undefined) throw new Error('checked above');
    expect(instantiation).toMatchObject({
      method: 'POST',
      status: 201,
      body: {
        kind: 'DeploymentRequest',
        apiVersion: 'apps.openshift.io/v1',
        name,
        latest: true,
        force: true,
      },
    });
    expect(requests.indexOf(instantiation)).toBeGreaterThan(requests.indexOf(rollPatch));
    // The roll owed the instantiate until it succeeded, then the marker went.
    expect(annotationsOf({ metadata: recordAt(rollPatch.body, ['metadata']) })).toHaveProperty(
      INSTANTIATE_PENDING,
    );
    expect(markerRemovals).toHaveLength(1);
    const [removal] = markerRemovals;
    if (removal === undefined) throw new Error('checked above');
    expect(requests.indexOf(removal)).toBeGreaterThan(requests.indexOf(instantiation));
    expect(annotationsOf(await readObject(client, ref))).not.toHaveProperty(INSTANTIATE_PENDING);
  });
});
