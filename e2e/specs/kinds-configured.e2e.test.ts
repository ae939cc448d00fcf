// Workload kinds from configuration (docs/custom-kinds.md) on the real control plane. Two CRDs the
// test installs after kreload started (discovery finds them at a resync): Widget, with a pod
// template, rolled by a template merge patch under both reload strategies; Gadget, without one,
// rolled by evicting its pods, which a stand-in controller of the test owns and replaces. The
// kreload ServiceAccount gets, for the two resources, exactly the rules the chart renders for them.
import { CoreV1Api, RbacAuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELM_BUILD_TIMEOUT_MS, locateHelm } from '../../helm/kreload/tests/chart-harness.ts';
import { AuditLog } from '../harness/audit.ts';
import { renderRelease } from '../harness/chart.ts';
import {
  arrayAt,
  isApiServed,
  isHttpStatus,
  KubeJson,
  stringAt,
  type CustomApi,
} from '../harness/crds.ts';
import { runExplain } from '../harness/explain.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { runnable } from '../harness/pod-lifecycle.ts';
import { probe } from '../cluster/probes.ts';
import { KRELOAD_NAMESPACE, KRELOAD_SERVICE_ACCOUNT, KRELOAD_USER } from '../harness/rbac.ts';
import { configMapHash } from '../harness/sources.ts';
import { podSpec } from '../harness/workloads.ts';
import {
  annotationsOf,
  APP,
  AUTO,
  awaitBaseline,
  createObject,
  keyOf,
  podTemplate,
  readObject,
  SIDECAR,
  SOURCE_HASHES,
  stateJson,
  strategyRow,
  uidOf,
  type ObjectRef,
  type ReloadStrategy,
} from './kinds-support.ts';

const GROUP = 'example.kreload.io';
const WIDGETS: CustomApi = { group: GROUP, version: 'v1', plural: 'widgets', kind: 'Widget' };
const GADGETS: CustomApi = { group: GROUP, version: 'v1', plural: 'gadgets', kind: 'Gadget' };
const KINDS = [
  {
    group: GROUP,
    version: 'v1',
    kind: 'Widget',
    resource: 'widgets',
    shortNames: ['wd'],
    podTemplatePath: 'spec.template',
    podSelectorPath: 'spec.selector',
    status: {
      observedGeneration: 'status.observedGeneration',
      updatedReplicas: 'status.updatedReplicas',
      availableReplicas: 'status.availableReplicas',
    },
  },
  {
    group: GROUP,
    version: 'v1',
    kind: 'Gadget',
    resource: 'gadgets',
    podSelectorPath: 'spec.selector',
  },
];
const KINDS_FLAG = `--custom-workload-kinds=${JSON.stringify(KINDS)}`;
const CONFIGMAP_RELOAD = 'configmap.reloader.stakater.com/reload';
const EVICT_BEFORE = 'kreload.io/evict-before';
const ROLE = 'kreload-e2e-configured-kinds';
const ROLL_TIMEOUT_MS = 60_000;

const fixture = useKreload({
  name: 'kinds-configured',
  args: ([namespace = '']) => [
    `--namespaces=${namespace}`,
    '--sync-delay=0',
    // The shortest period: a CRD installed after startup is discovered at the next resync.
    '--resync-period=30s',
    KINDS_FLAG,
  ],
  startInBeforeAll: false,
});

function crdOf(api: CustomApi): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${api.plural}.${api.group}` },
    spec: {
      group: api.group,
      scope: 'Namespaced',
      names: { plural: api.plural, singular: api.kind.toLowerCase(), kind: api.kind },
      versions: [
        {
          name: api.version,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      ],
    },
  };
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The chart's rules for the configured resources, as `helm template` renders them. */
async function chartRules(): Promise<V1PolicyRule[]> {
  const rendered = await renderRelease(await locateHelm(), {
    fullname: 'kreload-kinds',
    namespace: KRELOAD_NAMESPACE,
    values: { reloader: { customWorkloadKinds: KINDS } },
  });
  const role = rendered.objects.find((object) => object.kind === 'ClusterRole') as
    { rules?: V1PolicyRule[] } | undefined;
  return (role?.rules ?? []).filter((rule) => rule.apiGroups?.includes(GROUP));
}

let client: KubeJson;
let chartGrants: V1PolicyRule[] = [];
let readyzAtStart = '';

beforeAll(async () => {
  const { cluster } = fixture;
  client = new KubeJson({ kc: cluster.kc });
  chartGrants = await chartRules();
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createClusterRole({ body: { metadata: { name: ROLE }, rules: chartGrants } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: ROLE },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLE },
      subjects: [
        { kind: 'ServiceAccount', name: KRELOAD_SERVICE_ACCOUNT, namespace: KRELOAD_NAMESPACE },
      ],
    },
  });
  const kreload = await fixture.start();
  readyzAtStart = (await probe({ url: kreload.url('/readyz') })).body;
  for (const api of [WIDGETS, GADGETS]) {
    await client.request({ method: 'POST', path: CRD_PATH, body: crdOf(api) });
  }
  await pollUntil(
    async () =>
      (await isApiServed(client, WIDGETS)) && (await isApiServed(client, GADGETS))
        ? true
        : undefined,
    { timeoutMs: 30_000, describe: 'the Widget and Gadget APIs served' },
  );
}, HELM_BUILD_TIMEOUT_MS + 60_000);

afterAll(async () => {
  const { cluster } = fixture;
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  for (const api of [WIDGETS, GADGETS]) {
    try {
      await client.request({ method: 'DELETE', path: `${CRD_PATH}/${api.plural}.${api.group}` });
    } catch (error) {
      if (!isHttpStatus(error, 404)) throw error;
    }
  }
  await rbac.deleteClusterRoleBinding({ name: ROLE }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: ROLE }).catch(() => undefined);
});

function widgetBody(name: string, configMap: string) {
  return {
    metadata: { name, annotations: { [AUTO]: 'true' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: podTemplate({ app: name, configMap }),
    },
  };
}

/** A Widget with `auto`, baselined, rolled for a ConfigMap change; returns the rolled object. */
async function rollWidget(name: string, strategy: ReloadStrategy): Promise<unknown> {
  const { namespace, sources } = fixture;
  const configMap = `${name}-cfg`;
  const ref: ObjectRef = { api: WIDGETS, namespace, name };
  await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '1' } });
  await createObject(client, ref, widgetBody(name, configMap));
  const key = keyOf({ type: 'CONFIGMAP', name: configMap });
  // Up to one resync (30 s) for the late API to be discovered.
  await awaitBaseline(client, ref, { [key]: configMapHash({ data: { v: '1' } }) }, ROLL_TIMEOUT_MS);
  await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '2' } });
  const source = {
    type: 'CONFIGMAP' as const,
    name: configMap,
    namespace,
    hash: configMapHash({ data: { v: '2' } }),
  };
  const row = strategyRow(strategy);
  const rolled = await pollUntil(
    async () => {
      const object = await readObject(client, ref);
      const template = (object as { spec?: { template?: unknown } }).spec?.template;
      return row.appliedHash(template, source) === source.hash ? object : undefined;
    },
    { timeoutMs: ROLL_TIMEOUT_MS, describe: `Widget ${name} rolled for ${source.hash}` },
  );
  const template = (rolled as { spec: { template: unknown } }).spec.template;
  row.expectRolled(template, source);
  // A merge patch replaces lists: the env-var roll carried the whole containers list.
  expect(arrayAt(template, ['spec', 'containers']).map((c) => stringAt(c, ['name']))).toEqual([
    APP,
    SIDECAR,
  ]);
  return rolled;
}

describe('workload kinds configured at run time', () => {
  it('the chart grants exactly the configured resources', () => {
    expect(chartGrants).toEqual([
      { apiGroups: [GROUP], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: [GROUP], resources: ['gadgets'], verbs: ['get', 'list', 'watch', 'patch'] },
    ]);
  });

  it('a configured kind whose API is not served yet is reported absent', () => {
    const body = JSON.parse(readyzAtStart) as { checks?: { kinds?: Record<string, string> } };
    expect(body.checks?.kinds).toMatchObject({ widgets: 'absent', gadgets: 'absent' });
  });

  it('a Widget rolls with env-vars; explain, metrics and Events show it like a built-in kind', async () => {
    const { namespace, events } = fixture;
    await rollWidget('w1', 'env-vars');

    const reasons = await pollUntil(
      async () => {
        const found = await events.reasonsAbout({ kind: 'Widget', namespace, name: 'w1' });
        return found.includes('Reloaded') ? found : undefined;
      },
      { timeoutMs: 20_000, describe: 'a Reloaded Event on the Widget' },
    );
    expect(reasons).toContain('Reloaded');

    const metrics = await scrapeMetrics(fixture.kreload);
    expect(
      metrics.value('reloader_action_total', { workload_kind: 'Widget', result: 'success' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metrics.value('reloader_events_received_total', { resource_type: 'widgets' }),
    ).toBeGreaterThanOrEqual(1);

    for (const word of ['widget/w1', 'wd/w1']) {
      const run = await runExplain(fixture.cluster.kubeconfigPath, [
        word,
        '-n',
        namespace,
        '--',
        KINDS_FLAG,
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('Widget');
      expect(run.stdout).toContain('w1');
    }
  });

  it('a Widget rolls with the annotations strategy', async () => {
    await fixture.stop();
    await fixture.start(['--reload-strategy=annotations']);
    await rollWidget('w2', 'annotations');
  });

  it('a Gadget without a pod template rolls by evicting each of its pods once', async () => {
    const { namespace, sources, events, cluster } = fixture;
    const core = cluster.kc.makeApiClient(CoreV1Api);
    const name = 'g1';
    const configMap = 'g1-cfg';
    const ref: ObjectRef = { api: GADGETS, namespace, name };
    await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '1' } });
    const gadget = await createObject(client, ref, {
      metadata: { name, annotations: { [CONFIGMAP_RELOAD]: configMap } },
      spec: { replicas: 2, selector: { matchLabels: { gadget: name } } },
    });
    const owner = {
      apiVersion: `${GROUP}/v1`,
      kind: 'Gadget',
      name,
      uid: uidOf(gadget),
      controller: true,
    };
    // The Gadget's stand-in controller: keeps two pods, replacing any that goes.
    const state = { running: true, created: 0 };
    const livePods = async () =>
      (await core.listNamespacedPod({ namespace, labelSelector: `gadget=${name}` })).items.filter(
        (pod) => pod.metadata?.deletionTimestamp === undefined,
      );
    const controller = (async () => {
      while (state.running) {
        if ((await livePods()).length < 2) {
          state.created += 1;
          await core.createNamespacedPod({
            namespace,
            body: {
              metadata: {
                name: `${name}-${String(state.created)}`,
                labels: { gadget: name },
                ownerReferences: [owner],
              },
              spec: runnable(
                podSpec({ app: { envFrom: [{ configMapRef: { name: configMap } }] } }),
              ),
            },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const ready = (pods: Awaited<ReturnType<typeof livePods>>) =>
      pods.length === 2 &&
      pods.every((pod) =>
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
    try {
      const original = await pollUntil(
        async () => {
          const pods = await livePods();
          return ready(pods) ? pods : undefined;
        },
        { timeoutMs: ROLL_TIMEOUT_MS, describe: 'two Ready pods of the Gadget' },
      );
      const key = keyOf({ type: 'CONFIGMAP', name: configMap });
      await awaitBaseline(
        client,
        ref,
        { [key]: configMapHash({ data: { v: '1' } }) },
        ROLL_TIMEOUT_MS,
      );
      const path = cluster.auditLogPath;
      if (path === undefined) throw new Error('the shared cluster runs without an audit log');
      const audit = new AuditLog({ path });
      const offset = await audit.mark();

      await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '2' } });
      const originalUids = new Set(original.map((pod) => pod.metadata?.uid));
      await pollUntil(
        async () => {
          const object = await readObject(client, ref);
          const pods = await livePods();
          const done =
            annotationsOf(object)[EVICT_BEFORE] === undefined &&
            annotationsOf(object)[SOURCE_HASHES] !== undefined &&
            ready(pods) &&
            pods.every((pod) => !originalUids.has(pod.metadata?.uid));
          return done ? true : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500, describe: 'every pod of the Gadget replaced' },
      );
      const object = await readObject(client, ref);
      expect(annotationsOf(object)[SOURCE_HASHES]).toBe(
        stateJson({ [key]: configMapHash({ data: { v: '2' } }) }),
      );
      const evicted = (await audit.eventsSince(offset))
        .filter(
          (event) =>
            event.user.username === KRELOAD_USER &&
            event.stage === 'ResponseComplete' &&
            event.objectRef?.subresource === 'eviction' &&
            event.responseStatus?.code === 201,
        )
        .map((event) => event.objectRef?.name ?? '');
      expect([...evicted].sort()).toEqual(original.map((pod) => pod.metadata?.name ?? '').sort());
      const reasons = await events.reasonsAbout({ kind: 'Gadget', namespace, name });
      expect(reasons.filter((reason) => reason === 'PodEvicted')).toHaveLength(2);
      expect(reasons).toContain('EvictionComplete');
    } finally {
      state.running = false;
      await controller;
    }
  });
});
