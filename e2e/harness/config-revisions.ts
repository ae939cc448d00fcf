// What the config-revisions specs share (docs/config-revisions.md): kreload's identity with the
// extra rows --enable-config-revisions needs, ConfigMap contents and the snapshot names kreload
// gives them, the snapshots of a workload by its UID label, and kubectl as the user runs it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  AppsV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import type { ClusterClient } from './cluster.ts';
import type { KreloadLogin } from './kreload-fixture.ts';
import { KRELOAD_NAMESPACE, KRELOAD_PERMISSIONS } from './rbac.ts';
import { sourceHash } from './sources.ts';

const run = promisify(execFile);

export const CONFIG_REVISIONS = 'kreload.io/config-revisions';
export const CONFIG_REVISIONS_SECRETS = 'kreload.io/config-revisions-secrets';
export const SNAPSHOTS = 'kreload.io/snapshots';
export const REVISION_DIGEST = 'kreload.io/revision-digest';
export const UID_LABEL = 'kreload.io/snapshot-workload-uid';
const SERVICE_ACCOUNT = 'kreload-config-revisions';
const AUTO = 'reloader.stakater.com/auto';

/** kreload's own permissions plus those of --enable-config-revisions, as the chart grants them. */
export async function revisionsIdentity(cluster: ClusterClient): Promise<KreloadLogin> {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  const metadata = { name: SERVICE_ACCOUNT };
  const rules = [
    ...KRELOAD_PERMISSIONS.filter((row) => row.scope === 'cluster').map((row) => ({
      apiGroups: [...(row.apiGroups ?? [])],
      resources: [...(row.resources ?? [])],
      verbs: [...row.verbs],
    })),
    { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['create', 'patch', 'delete'] },
    { apiGroups: ['apps'], resources: ['replicasets', 'controllerrevisions'], verbs: ['list'] },
  ];
  const ignoreExists = (error: unknown) => {
    if ((error as { code?: number }).code !== 409) throw error;
  };
  await core
    .createNamespace({ body: { metadata: { name: KRELOAD_NAMESPACE } } })
    .catch(ignoreExists);
  await core
    .createNamespacedServiceAccount({ namespace: KRELOAD_NAMESPACE, body: { metadata } })
    .catch(ignoreExists);
  await rbac.createClusterRole({ body: { metadata, rules } }).catch(ignoreExists);
  await rbac.replaceClusterRole({ name: SERVICE_ACCOUNT, body: { metadata, rules } });
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata,
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: SERVICE_ACCOUNT,
        },
        subjects: [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: KRELOAD_NAMESPACE }],
      },
    })
    .catch(ignoreExists);
  const token = await cluster.mintToken(SERVICE_ACCOUNT, KRELOAD_NAMESPACE, 3600);
  const { path } = await cluster.restrictedKubeconfig(token, SERVICE_ACCOUNT);
  return { kubeconfigPath: path };
}

/** The n-th content of a test ConfigMap. */
export const v = (n: number): Record<string, string> => ({ 'app.yaml': `level: v${String(n)}` });

/** `<source>-<hash10>`, the name kreload gives the snapshot of a ConfigMap with `data`. */
export function snapshotOf(name: string, data: Record<string, string>): string {
  return `${name}-${sourceHash({ type: 'CONFIGMAP', name, data }).slice(0, 10)}`;
}

export async function putConfigMap(
  cluster: ClusterClient,
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const body: V1ConfigMap = { metadata: { name, namespace }, data };
  try {
    await core.replaceNamespacedConfigMap({ name, namespace, body });
  } catch {
    await core.createNamespacedConfigMap({ namespace, body });
  }
}

/** The snapshots kreload made for the workload with `uid` (its label), ConfigMaps and Secrets. */
export async function snapshotsOf(cluster: ClusterClient, namespace: string, uid: string) {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const selector = { namespace, labelSelector: `${UID_LABEL}=${uid}` };
  const [configMaps, secrets] = await Promise.all([
    core.listNamespacedConfigMap(selector),
    core.listNamespacedSecret(selector),
  ]);
  return { configMaps: configMaps.items, secrets: secrets.items };
}

export async function snapshotNamesOf(
  cluster: ClusterClient,
  namespace: string,
  uid: string,
): Promise<string[]> {
  const found = await snapshotsOf(cluster, namespace, uid);
  return found.configMaps.map((cm) => cm.metadata?.name ?? '').sort();
}

/** `Kind/name` of each owner, sorted. */
export function ownerKinds(object: {
  metadata?: { ownerReferences?: { kind: string; name: string }[] };
}): string[] {
  return (object.metadata?.ownerReferences ?? []).map((o) => `${o.kind}/${o.name}`).sort();
}

/** kubectl with the cluster's admin kubeconfig; its standard output. */
export async function kubectl(cluster: ClusterClient, ...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', cluster.info.kubeconfigPath, ...args]);
  return stdout;
}

/** The admin's core and apps clients. */
export function apis(cluster: ClusterClient) {
  return {
    core: cluster.kc.makeApiClient(CoreV1Api),
    apps: cluster.kc.makeApiClient(AppsV1Api),
  };
}

export interface RevisionedDeployment {
  readonly namespace: string;
  readonly name: string;
  /** Mounted as volume `config` (the snapshot's place), and by default also as `envFrom`. */
  readonly configMap: string;
  /** false: the ConfigMap is only mounted. */
  readonly envFrom?: boolean;
  /** Key `password` of this Secret as env var DB. */
  readonly secret?: string;
  /** Opts Secrets into config revisions too. */
  readonly secrets?: boolean;
  readonly historyLimit?: number;
}

/** A Deployment (no replicas) opted into auto reload and config revisions; its UID. */
export async function createRevisionedDeployment(
  cluster: ClusterClient,
  setup: RevisionedDeployment,
): Promise<string> {
  const labels = { app: setup.name };
  const env =
    setup.secret === undefined
      ? []
      : [{ name: 'DB', valueFrom: { secretKeyRef: { name: setup.secret, key: 'password' } } }];
  const created = await apis(cluster).apps.createNamespacedDeployment({
    namespace: setup.namespace,
    body: {
      metadata: {
        name: setup.name,
        annotations: {
          [AUTO]: 'true',
          [CONFIG_REVISIONS]: 'true',
          ...(setup.secrets === true ? { [CONFIG_REVISIONS_SECRETS]: 'true' } : {}),
        },
      },
      spec: {
        replicas: 0,
        revisionHistoryLimit: setup.historyLimit ?? 10,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: [
              {
                name: 'app',
                image: 'registry.invalid/app:1',
                ...(env.length === 0 ? {} : { env }),
                ...(setup.envFrom === false
                  ? {}
                  : { envFrom: [{ configMapRef: { name: setup.configMap } }] }),
                volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: setup.configMap } }],
          },
        },
      },
    },
  });
  return created.metadata?.uid ?? '';
}
