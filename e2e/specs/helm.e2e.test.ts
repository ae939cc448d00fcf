// The chart's objects are valid for a real kube-apiserver: every object of every values file in
// helm/kreload/ci, of the Reloader values corpus in helm/kreload/tests/reloader-values, and of
// Reloader's own default files at each version line (helm/kreload/tests/reloader-upstream) passes
// a server-side apply with dryRun=All and fieldValidation=Strict (typed schema, unknown fields,
// admission, RBAC escalation checks). The objects are sent as rendered:
// client-node's object API would serialize them through its models and drop unknown fields.
// Running kreload under the chart's RBAC is a separate spec.
import { request, type RequestOptions } from 'node:https';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedCluster } from '../harness/shared-cluster.ts';
import {
  HELM_BUILD_TIMEOUT_MS,
  RELOADER_UPSTREAM_FILES,
  RELOADER_VALUES_FILES,
  type KubeObject,
  isRecord,
  locateHelm,
  render,
} from '../../helm/kreload/tests/chart-harness.ts';

/** Prometheus Operator CRDs are not installed in the test cluster. */
const UNSERVED_API_GROUPS = ['monitoring.coreos.com/'];
/** Keeps the dry-run objects apart from the harness's own kreload ClusterRole and ServiceAccount. */
const FULLNAME = 'kreload-chart-e2e';

interface DryRunCase {
  /** A values file relative to helm/kreload. */
  file: string;
  /** Values that point the case's extra namespaces at namespaces this spec created. */
  values?: (extra: readonly [string, string]) => Record<string, unknown>;
}

/** helm/kreload/ci/<file>-values.yaml */
const CI_FILES: DryRunCase[] = [
  { file: 'default' },
  { file: 'scoped', values: (extra) => ({ reloader: { namespaces: [...extra] } }) },
  { file: 'single-namespace' },
  { file: 'ha', values: ([lease]) => ({ reloader: { leaderElection: { namespace: lease } } }) },
  { file: 'argo-csi-openshift' },
  { file: 'ignore' },
  { file: 'ignore-jobs' },
  { file: 'custom-annotations' },
  { file: 'observability' },
  { file: 'tuning' },
  { file: 'reload-policies', values: (extra) => ({ reloader: { namespaces: [...extra] } }) },
  { file: 'reload-policies-global' },
];
const CI_CASES = CI_FILES.map((entry) => ({ ...entry, file: `ci/${entry.file}-values.yaml` }));

/** Namespaces named in a corpus file become ones this spec created. */
const RELOADER_OVERRIDES: Partial<Record<string, DryRunCase['values']>> = {
  scoped: (extra) => ({ reloader: { namespaces: [...extra] } }),
  'legacy-image': ([other]) => ({ namespace: other }),
};

const CASES: DryRunCase[] = [
  ...CI_CASES,
  ...RELOADER_VALUES_FILES.map((name) => ({
    file: `tests/reloader-values/${name}.yaml`,
    values: RELOADER_OVERRIDES[name],
  })),
  ...RELOADER_UPSTREAM_FILES.map((name) => ({ file: `tests/reloader-upstream/${name}.yaml` })),
];

/** REST resource of each kind the chart renders. */
const RESOURCES: Record<string, { plural: string; namespaced: boolean }> = {
  ClusterRole: { plural: 'clusterroles', namespaced: false },
  ClusterRoleBinding: { plural: 'clusterrolebindings', namespaced: false },
  ConfigMap: { plural: 'configmaps', namespaced: true },
  Deployment: { plural: 'deployments', namespaced: true },
  NetworkPolicy: { plural: 'networkpolicies', namespaced: true },
  PodDisruptionBudget: { plural: 'poddisruptionbudgets', namespaced: true },
  Role: { plural: 'roles', namespaced: true },
  RoleBinding: { plural: 'rolebindings', namespaced: true },
  Secret: { plural: 'secrets', namespaced: true },
  Service: { plural: 'services', namespaced: true },
  ServiceAccount: { plural: 'serviceaccounts', namespaced: true },
};

const cluster = sharedCluster();

function applyPath(object: KubeObject): string {
  const resource = RESOURCES[object.kind];
  if (resource === undefined) {
    throw new Error(`add ${object.kind} to RESOURCES in e2e/specs/helm.e2e.test.ts`);
  }
  const prefix = object.apiVersion.includes('/')
    ? `/apis/${object.apiVersion}`
    : `/api/${object.apiVersion}`;
  const scope = resource.namespaced ? `/namespaces/${object.metadata.namespace ?? ''}` : '';
  const query = 'dryRun=All&fieldValidation=Strict&force=true&fieldManager=kreload-e2e';
  return `${prefix}${scope}/${resource.plural}/${object.metadata.name}?${query}`;
}

/** A server-side apply with dryRun=All; resolves with the error text, or undefined on success. */
async function dryRunApply(object: object & KubeObject): Promise<string | undefined> {
  const url = new URL(cluster.server);
  const options: RequestOptions = {
    method: 'PATCH',
    hostname: url.hostname,
    port: url.port,
    path: applyPath(object),
    headers: { 'Content-Type': 'application/apply-patch+yaml', Accept: 'application/json' },
  };
  await cluster.kc.applyToHTTPSOptions(options);
  const { status, body } = await new Promise<{ status: number; body: string }>(
    (resolve, reject) => {
      const req = request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify(object));
    },
  );
  return status === 200 || status === 201
    ? undefined
    : `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}: ${String(status)} ${body}`;
}

describe('helm/kreload against kube-apiserver', () => {
  let helm = '';
  let releaseNamespace = '';
  let extraNamespaces: readonly [string, string] = ['', ''];

  beforeAll(async () => {
    helm = await locateHelm();
    releaseNamespace = await cluster.createNamespace('helm');
    extraNamespaces = [
      await cluster.createNamespace('helm-a'),
      await cluster.createNamespace('helm-b'),
    ];
  }, HELM_BUILD_TIMEOUT_MS);

  it.each(CASES)(
    '$file: every object passes a server-side dry-run apply',
    async ({ file, values }) => {
      const rendered = await render(helm, {
        files: [file],
        values: { fullnameOverride: FULLNAME, ...values?.(extraNamespaces) },
        namespace: releaseNamespace,
      });
      const served = rendered.objects.filter(
        (object) => !UNSERVED_API_GROUPS.some((group) => object.apiVersion.startsWith(group)),
      );
      expect(served.some((object) => object.kind === 'Deployment')).toBe(true);
      const failures: string[] = [];
      for (const object of served) {
        const failure = await dryRunApply(object);
        if (failure !== undefined) {
          failures.push(failure);
        }
      }
      expect(failures).toEqual([]);
    },
  );

  it('rejects an object with a misspelt field, so the dry run does check the schema', async () => {
    const rendered = await render(helm, {
      values: { fullnameOverride: FULLNAME },
      namespace: releaseNamespace,
    });
    const deployment: unknown = rendered.objects.find((object) => object.kind === 'Deployment');
    if (!isRecord(deployment) || !isRecord(deployment.spec)) {
      throw new Error('the chart rendered no Deployment spec');
    }
    const misspelt = { ...rendered.one('Deployment'), spec: { ...deployment.spec, replicaz: 1 } };
    expect(await dryRunApply(misspelt)).toMatch(/replicaz/);
  });
});
