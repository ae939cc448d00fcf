import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { chartKindRules } from '../../scripts/gen-chart-kinds.ts';
import type { ClusterClient } from './cluster.ts';

export const KRELOAD_NAMESPACE = 'kreload-system';
export const KRELOAD_SERVICE_ACCOUNT = 'kreload';
/** The user kube-apiserver sees for kreload's token; the audit policy logs exactly this user. */
export const KRELOAD_USER = `system:serviceaccount:${KRELOAD_NAMESPACE}:${KRELOAD_SERVICE_ACCOUNT}`;
const ROLE_NAME = 'kreload';

interface PermissionRow extends V1PolicyRule {
  /** `cluster`: ClusterRole; `release-namespace`: Role in kreload-system. */
  readonly scope: 'cluster' | 'release-namespace';
  readonly neededFor: string;
}

/**
 * The workload kinds' rules as the chart grants them with every kind switched on (generated from
 * the kind table, scripts/gen-chart-kinds.ts); a rule another one covers is dropped.
 */
const KIND_PERMISSIONS: readonly PermissionRow[] = chartKindRules()
  .filter(
    (rule, index, all) =>
      !all.some(
        (other, otherIndex) =>
          otherIndex !== index &&
          other.apiGroup === rule.apiGroup &&
          rule.resources.every((resource) => other.resources.includes(resource)) &&
          rule.verbs.every((verb) => other.verbs.includes(verb)),
      ),
  )
  .map((rule) => ({
    scope: 'cluster',
    apiGroups: [rule.apiGroup],
    resources: [...rule.resources],
    verbs: [...rule.verbs],
    neededFor: `workload kinds: ${rule.resources.join(', ')}`,
  }));

/**
 * Spec §13.11 "Required permissions", one row per line of that table. A later issue replaces this
 * with the Helm chart's RBAC; until then it is the single place that grants kreload anything.
 */
export const KRELOAD_PERMISSIONS: readonly PermissionRow[] = [
  {
    scope: 'cluster',
    apiGroups: [''],
    resources: ['configmaps', 'secrets'],
    verbs: ['get', 'list', 'watch'],
    neededFor: 'sources',
  },
  {
    scope: 'cluster',
    apiGroups: [''],
    resources: ['namespaces'],
    verbs: ['get', 'list', 'watch'],
    neededFor: '--namespace-selector',
  },
  ...KIND_PERMISSIONS,
  {
    scope: 'cluster',
    apiGroups: ['secrets-store.csi.x-k8s.io'],
    resources: ['secretproviderclasspodstatuses', 'secretproviderclasses'],
    verbs: ['get', 'list', 'watch'],
    neededFor: 'CSI',
  },
  {
    scope: 'cluster',
    apiGroups: [''],
    resources: ['events'],
    verbs: ['create', 'patch'],
    neededFor: 'Events',
  },
  {
    scope: 'release-namespace',
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'create', 'update'],
    neededFor: 'HA, in the Lease namespace; `list`: active-active reads its shard Leases',
  },
  {
    scope: 'release-namespace',
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'create', 'update'],
    neededFor: 'meta-info',
  },
  {
    scope: 'release-namespace',
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'create', 'patch'],
    neededFor: 'Job recreation journal (docs/adr/0019), with POD_NAMESPACE set',
  },
  {
    scope: 'release-namespace',
    apiGroups: [''],
    resources: ['secrets'],
    verbs: ['get', 'create'],
    neededFor: 'the key that signs the Job recreation journal (docs/adr/0019)',
  },
];

export interface KreloadIdentity {
  readonly user: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Bound token, valid for an hour; pass `kubeconfigPath` to kreload as --kubeconfig. */
  readonly token: string;
  readonly kubeconfigPath: string;
  readonly kc: KubeConfig;
}

function rulesFor(scope: PermissionRow['scope']): V1PolicyRule[] {
  return KRELOAD_PERMISSIONS.filter((row) => row.scope === scope).map(
    ({ apiGroups, resources, verbs }) => ({
      apiGroups: [...(apiGroups ?? [])],
      resources: [...(resources ?? [])],
      verbs: [...verbs],
    }),
  );
}

/** Creates, ignoring "already exists": every spec file installs the identity in the shared cluster. */
async function createIfAbsent(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

/**
 * Namespace kreload-system, ServiceAccount kreload, a ClusterRole and a Role (release namespace)
 * with KRELOAD_PERMISSIONS and their bindings; then a token and a kubeconfig for that identity.
 */
export async function installKreloadIdentity(cluster: ClusterClient): Promise<KreloadIdentity> {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  const namespace = KRELOAD_NAMESPACE;
  const subjects = [{ kind: 'ServiceAccount', name: KRELOAD_SERVICE_ACCOUNT, namespace }];
  const metadata = { name: ROLE_NAME, labels: { 'app.kubernetes.io/name': 'kreload' } };
  await createIfAbsent(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await createIfAbsent(() =>
    core.createNamespacedServiceAccount({
      namespace,
      body: { metadata: { name: KRELOAD_SERVICE_ACCOUNT } },
    }),
  );
  await createIfAbsent(() =>
    rbac.createClusterRole({ body: { metadata, rules: rulesFor('cluster') } }),
  );
  await createIfAbsent(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLE_NAME },
        subjects,
      },
    }),
  );
  // Replaced when it exists: a shared cluster may hold the rules of an older checkout.
  const roleBody = { metadata, rules: rulesFor('release-namespace') };
  await createIfAbsent(() => rbac.createNamespacedRole({ namespace, body: roleBody }));
  await rbac.replaceNamespacedRole({ name: ROLE_NAME, namespace, body: roleBody });
  await createIfAbsent(() =>
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ROLE_NAME },
        subjects,
      },
    }),
  );
  const token = await cluster.mintToken(KRELOAD_SERVICE_ACCOUNT, namespace, 3600);
  const { kc, path } = await cluster.restrictedKubeconfig(token, 'kreload');
  return {
    user: KRELOAD_USER,
    namespace,
    serviceAccount: KRELOAD_SERVICE_ACCOUNT,
    token,
    kubeconfigPath: path,
    kc,
  };
}
