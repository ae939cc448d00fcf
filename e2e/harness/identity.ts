// A second ServiceAccount for specs that need kreload to run with less than spec §13.11 grants
// (RBAC bad-input rows). The regular identity stays in rbac.ts; this one only derives from it.
import {
  ApiException,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import type { ClusterClient } from './cluster.ts';
import { KRELOAD_NAMESPACE, KRELOAD_PERMISSIONS } from './rbac.ts';

export interface CustomIdentity {
  readonly user: string;
  readonly kubeconfigPath: string;
}

async function createIfAbsent(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
}

/** KRELOAD_PERMISSIONS' cluster-scoped rules, each passed through `edit` (undefined drops it). */
export function clusterRulesWith(
  edit: (rule: V1PolicyRule) => V1PolicyRule | undefined,
): V1PolicyRule[] {
  return KRELOAD_PERMISSIONS.filter((row) => row.scope === 'cluster').flatMap((row) => {
    const edited = edit({
      apiGroups: [...(row.apiGroups ?? [])],
      resources: [...(row.resources ?? [])],
      verbs: [...row.verbs],
    });
    return edited === undefined ? [] : [edited];
  });
}

/** KRELOAD_PERMISSIONS' rules in kreload's own namespace (journal, meta-info, baseline store). */
export function releaseNamespaceRules(): V1PolicyRule[] {
  return KRELOAD_PERMISSIONS.filter((row) => row.scope === 'release-namespace').map((row) => ({
    apiGroups: [...(row.apiGroups ?? [])],
    resources: [...(row.resources ?? [])],
    verbs: [...row.verbs],
  }));
}

/**
 * ServiceAccount `name` in kreload-system bound to a ClusterRole `name` with `rules`, and a
 * kubeconfig for it. Names must be unique per spec: existing objects are reused as they are.
 */
export async function installCustomIdentity(
  cluster: ClusterClient,
  options: { readonly name: string; readonly rules: readonly V1PolicyRule[] },
): Promise<CustomIdentity> {
  const core = cluster.kc.makeApiClient(CoreV1Api);
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  const namespace = KRELOAD_NAMESPACE;
  const { name } = options;
  await createIfAbsent(() => core.createNamespace({ body: { metadata: { name: namespace } } }));
  await createIfAbsent(() =>
    core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }),
  );
  await createIfAbsent(() =>
    rbac.createClusterRole({ body: { metadata: { name }, rules: [...options.rules] } }),
  );
  await createIfAbsent(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    }),
  );
  const token = await cluster.mintToken(name, namespace, 3600);
  const { path } = await cluster.restrictedKubeconfig(token, name);
  return { user: `system:serviceaccount:${namespace}:${name}`, kubeconfigPath: path };
}

/**
 * A Role `name` with `rules` in `namespace`, bound to the ServiceAccount `name` of kreload-system:
 * what a scoped install grants per namespace instead of a ClusterRole.
 */
export async function grantInNamespace(
  cluster: ClusterClient,
  options: {
    readonly name: string;
    readonly namespace: string;
    readonly rules: readonly V1PolicyRule[];
  },
): Promise<void> {
  const rbac = cluster.kc.makeApiClient(RbacAuthorizationV1Api);
  const { name, namespace } = options;
  await createIfAbsent(() =>
    rbac.createNamespacedRole({
      namespace,
      body: { metadata: { name }, rules: [...options.rules] },
    }),
  );
  await createIfAbsent(() =>
    rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace: KRELOAD_NAMESPACE }],
      },
    }),
  );
}
