// Optional APIs that are not served when kreload starts (§2.2, §12.2 --resync-period, §13.1, §14
// "API not served"): kreload starts anyway, becomes ready, says so once, and picks the API up at
// the next resync after its CRD is installed, without a restart. The shared cluster may already
// hold these CRDs (other kinds-* specs install them), so this spec boots a cluster of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { startCluster, type StartedCluster } from '../harness/cluster.ts';
import {
  CSI_APIS,
  installCrds,
  isApiServed,
  KubeJson,
  OPTIONAL_APIS,
  recordAt,
  type OptionalApiName,
} from '../harness/crds.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity } from '../harness/rbac.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import {
  APP,
  awaitBaseline,
  AUTO,
  BUILT_IN_APIS,
  createObject,
  IMAGE,
  keyOf,
  podStatusHash,
  podTemplate,
  readObject,
  strategyRow,
  type ObjectRef,
} from './kinds-support.ts';

const RESYNC_SECONDS = 30;
/** The first resync comes within period + 10 % jitter of the start (§5.2); then the list. */
const PICKUP_TIMEOUT_MS = (RESYNC_SECONDS * 1.1 + 12) * 1000;

interface ArrangeContext {
  readonly client: KubeJson;
  readonly sources: SourceClient;
  readonly namespace: string;
}

interface AbsentApiCase {
  readonly title: string;
  readonly apis: readonly OptionalApiName[];
  /** `/readyz` checks.kinds entry of a workload kind (§13.1); CSI kinds are sources, not listed. */
  readonly readyzKind?: string;
  /** The one warning at startup (§14). */
  readonly warning: RegExp;
  /** Creates a workload that tracks a source through the API; returns what its baseline must be. */
  arrange(context: ArrangeContext): Promise<{ ref: ObjectRef; baseline: Record<string, string> }>;
}

const CASES: readonly AbsentApiCase[] = [
  {
    title: 'Argo Rollouts (--is-Argo-Rollouts)',
    apis: ['rollouts'],
    readyzKind: 'rollouts',
    warning: /level=warn(ing)? msg="[^"]*Rollouts[^"]*"/,
    async arrange({ client, sources, namespace }) {
      const name = 'late-rollout';
      const configMap = 'late-rollout-cfg';
      await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: { v: '1' } });
      const ref: ObjectRef = { api: OPTIONAL_APIS.rollouts, namespace, name };
      await createObject(client, ref, {
        metadata: { name, annotations: { [AUTO]: 'true' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: name } },
          template: podTemplate({ app: name, configMap }),
        },
      });
      return {
        ref,
        baseline: {
          [keyOf({ type: 'CONFIGMAP', name: configMap })]: configMapHash({ data: { v: '1' } }),
        },
      };
    },
  },
  {
    title: 'Secrets Store CSI (--enable-csi-integration)',
    apis: CSI_APIS,
    warning: /level=warn(ing)? msg="[^"]*CSI[^"]*"/,
    async arrange({ client, namespace }) {
      const spc = 'late-spc';
      const name = 'late-csi';
      await createObject(
        client,
        { api: OPTIONAL_APIS.secretproviderclasses, namespace },
        { metadata: { name: spc }, spec: { provider: 'e2e' } },
      );
      await createObject(
        client,
        { api: OPTIONAL_APIS.secretproviderclasspodstatuses, namespace },
        {
          metadata: { name: `${name}-0-${namespace}-${spc}` },
          status: {
            podName: `${name}-0`,
            secretProviderClassName: spc,
            mounted: true,
            objects: [],
          },
        },
      );
      const ref: ObjectRef = { api: BUILT_IN_APIS.deployments, namespace, name };
      await createObject(client, ref, {
        metadata: { name, annotations: { [AUTO]: 'true' } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                { name: APP, image: IMAGE, volumeMounts: [{ name: 's', mountPath: '/mnt/s' }] },
              ],
              volumes: [
                {
                  name: 's',
                  csi: {
                    driver: 'secrets-store.csi.k8s.io',
                    volumeAttributes: { secretProviderClass: spc },
                  },
                },
              ],
            },
          },
        },
      });
      return {
        ref,
        baseline: { [keyOf({ type: 'SECRETPROVIDERCLASS', name: spc })]: podStatusHash(spc, []) },
      };
    },
  },
];

interface Readiness {
  readonly status: number;
  readonly kinds: Record<string, unknown>;
}

async function readiness(kreload: KreloadProcess): Promise<Readiness> {
  const response = await probe({ url: kreload.url('/readyz'), timeoutMs: 5000 });
  const body: unknown = JSON.parse(response.body);
  return { status: response.status, kinds: recordAt(body, ['checks', 'kinds']) };
}

describe('optional APIs missing at startup (§2.2, §14)', () => {
  let cluster: StartedCluster | undefined;
  let kreload: KreloadProcess | undefined;
  let client: KubeJson;
  let context: ArrangeContext;

  beforeAll(async () => {
    // Only what the checks below need: no workload controllers, so the 2 cores stay free.
    cluster = await startCluster({ controllers: ['serviceaccount-controller'] });
    client = new KubeJson({ kc: cluster.kc });
    const identity = await installKreloadIdentity(cluster);
    const namespace = await cluster.createNamespace('kinds-absent');
    context = { client, sources: new SourceClient({ kc: cluster.kc }), namespace };
    kreload = await startKreload({
      name: 'kinds-absent-crd',
      kubeconfig: identity.kubeconfigPath,
      args: [
        `--namespaces=${namespace}`,
        '--sync-delay=0',
        '--is-Argo-Rollouts=true',
        '--enable-csi-integration=true',
        `--resync-period=${RESYNC_SECONDS}s`,
        '--log-level=debug',
      ],
    });
  });

  afterAll(async () => {
    try {
      const exit = await kreload?.stop();
      expect(exit?.code, `kreload exit; log ${kreload?.logPath ?? ''}`).toBe(0);
    } finally {
      await cluster?.stop();
    }
  });

  it.each(CASES)('$title: ready without the API, absent, one warning', async (apiCase) => {
    if (kreload === undefined) throw new Error('kreload did not start');
    for (const name of apiCase.apis) {
      expect(await isApiServed(client, OPTIONAL_APIS[name])).toBe(false);
    }
    const ready = await readiness(kreload);
    expect(ready.status).toBe(200);
    if (apiCase.readyzKind !== undefined) {
      expect(ready.kinds[apiCase.readyzKind]).toBe('absent');
    }
    const warnings = (await kreload.readLog())
      .split('\n')
      .filter((line) => apiCase.warning.test(line));
    expect(warnings, `log ${kreload.logPath}`).toHaveLength(1);
  });

  const arranged = new Map<AbsentApiCase, { ref: ObjectRef; baseline: Record<string, string> }>();

  it('installs the CRDs and creates one workload per API while kreload runs', async () => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    for (const apiCase of CASES) {
      await installCrds(cluster, apiCase.apis);
      arranged.set(apiCase, await apiCase.arrange(context));
    }
  });

  it.each(CASES)(
    '$title: picked up at the next resync, without a restart',
    async (apiCase) => {
      if (kreload === undefined) throw new Error('kreload did not start');
      const workload = arranged.get(apiCase);
      if (workload === undefined) throw new Error('nothing arranged (see the test above)');
      await awaitBaseline(client, workload.ref, workload.baseline, PICKUP_TIMEOUT_MS);
      // Both CRDs arrive at the same resync, each list-watch syncing on its own: the other API may
      // still be listing when this one's baseline lands, so /readyz gets a moment to turn 200.
      const running = kreload;
      const ready = await pollUntil(
        async () => {
          const current = await readiness(running);
          return current.status === 200 ? current : undefined;
        },
        { timeoutMs: 10_000, describe: '/readyz 200 once both late APIs are synced' },
      );
      if (apiCase.readyzKind !== undefined) expect(ready.kinds[apiCase.readyzKind]).toBe('ok');
    },
    PICKUP_TIMEOUT_MS + 10_000,
  );

  it('rolls the late Rollout like any other', async () => {
    const rolloutCase = CASES.find((apiCase) => apiCase.apis.includes('rollouts'));
    const workload = rolloutCase && arranged.get(rolloutCase);
    if (workload === undefined) throw new Error('no Rollout arranged');
    const configMap = 'late-rollout-cfg';
    await context.sources.replace(context.namespace, {
      type: 'CONFIGMAP',
      name: configMap,
      data: { v: '2' },
    });
    const source = {
      type: 'CONFIGMAP',
      name: configMap,
      namespace: context.namespace,
      hash: configMapHash({ data: { v: '2' } }),
    } as const;
    await pollUntil(
      async () =>
        strategyRow('env-vars').appliedHash(
          recordAt(await readObject(client, workload.ref), ['spec', 'template']),
          source,
        ) === source.hash,
      { timeoutMs: 30_000, describe: `Rollout ${workload.ref.name} to roll for ${source.hash}` },
    );
  });
});
