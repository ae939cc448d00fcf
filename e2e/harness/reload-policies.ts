// kreload's own CRD, ReloadPolicy (docs/reload-policy.md), on a test cluster: applied from the
// chart's crds/ file (the one users install), and read and written as wire JSON through KubeJson.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { load } from 'js-yaml';
import { REPO_ROOT } from '../cluster/paths.ts';
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { ClusterClient } from './cluster.ts';
import {
  type CustomApi,
  CrdError,
  customObjectPath,
  isApiServed,
  isRecord,
  KubeJson,
  type JsonRecord,
} from './crds.ts';
import {
  clusterRulesWith,
  grantInNamespace,
  installCustomIdentity,
  releaseNamespaceRules,
  type CustomIdentity,
} from './identity.ts';
import { pollUntil } from './poll.ts';
import { KRELOAD_NAMESPACE } from './rbac.ts';

export const POLICY_CRD_FILE = path.join(
  REPO_ROOT,
  'helm',
  'kreload',
  'crds',
  'reloadpolicies.kreload.io.yaml',
);
const POLICY_CRD_NAME = 'reloadpolicies.kreload.io';
const ESTABLISHED_TIMEOUT_MS = 60_000;

export const POLICY_API: CustomApi = {
  group: 'kreload.io',
  version: 'v1alpha1',
  plural: 'reloadpolicies',
  kind: 'ReloadPolicy',
};

/**
 * Server-side applies the chart's CRD (idempotent, so every spec may call it on the shared
 * cluster) and waits until discovery lists it: what kreload's discovery asks.
 */
export async function installPolicyCrd(cluster: ClusterClient): Promise<KubeJson> {
  const client = new KubeJson({ kc: cluster.kc });
  const crd = load(await readFile(POLICY_CRD_FILE, 'utf8'));
  if (!isRecord(crd)) throw new CrdError(`${POLICY_CRD_FILE} holds no object`);
  await client.request({
    method: 'PATCH',
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${POLICY_CRD_NAME}?fieldManager=kreload-e2e&force=true`,
    body: crd,
    contentType: 'application/apply-patch+yaml',
  });
  await pollUntil(() => isApiServed(client, POLICY_API), {
    timeoutMs: ESTABLISHED_TIMEOUT_MS,
    describe: `discovery to list ${POLICY_API.plural}`,
  });
  return client;
}

/** What kreload needs on its own kind with `--enable-reload-policies` (the chart's rules). */
export const POLICY_RBAC_RULES = [
  { apiGroups: ['kreload.io'], resources: ['reloadpolicies'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroups: ['kreload.io'],
    resources: ['reloadpolicies/status'],
    verbs: ['get', 'patch', 'update'],
  },
];

/**
 * The identity of a kreload run with `--enable-reload-policies`, for useKreload's `identity`: the
 * CRD installed, then ServiceAccount `name` with kreload's cluster rules, the policy rules and
 * `extraRules`.
 */
export function policyIdentity(
  name: string,
  extraRules: readonly V1PolicyRule[] = [],
): (cluster: ClusterClient) => Promise<CustomIdentity> {
  return async (cluster) => {
    await installPolicyCrd(cluster);
    const identity = await installCustomIdentity(cluster, {
      name,
      rules: [...clusterRulesWith((rule) => rule), ...POLICY_RBAC_RULES, ...extraRules],
    });
    // As the chart grants it: without its own namespace's Role, kreload could not write the
    // baseline store (the default) and would fall back to baselines in the workloads.
    await grantInNamespace(cluster, {
      name,
      namespace: KRELOAD_NAMESPACE,
      rules: releaseNamespaceRules(),
    });
    return identity;
  };
}

export function policyPath(namespace: string, name?: string): string {
  return customObjectPath(POLICY_API, name === undefined ? { namespace } : { namespace, name });
}

/** POSTs a ReloadPolicy; `spec` as the user writes it. */
export async function createPolicy(
  client: KubeJson,
  namespace: string,
  name: string,
  spec: JsonRecord,
): Promise<JsonRecord> {
  const created = await client.request({
    method: 'POST',
    path: policyPath(namespace),
    body: {
      apiVersion: `${POLICY_API.group}/${POLICY_API.version}`,
      kind: POLICY_API.kind,
      metadata: { name },
      spec,
    },
  });
  if (!isRecord(created)) throw new CrdError(`POST ${name} returned no object`);
  return created;
}

export async function readPolicy(
  client: KubeJson,
  namespace: string,
  name: string,
): Promise<JsonRecord> {
  const policy = await client.get(policyPath(namespace, name));
  if (!isRecord(policy)) throw new CrdError(`GET ${name} returned no object`);
  return policy;
}
