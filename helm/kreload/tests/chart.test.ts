// `helm lint` and `helm template` over the values matrix in helm/kreload/ci, with assertions on the
// rendered objects: flags, RBAC per scoping mode and feature (spec §11, §13.11), the hardened pod,
// probes (§13.1) and high availability (§13.4).
import type { V1EnvVar } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  NAMESPACE,
  type PolicyRule,
  RELEASE,
  type Rendered,
  isRecord,
  lintChart,
  locateHelm,
  normalizeRules,
  render,
  templateChart,
} from './chart-harness.ts';

const READ = ['get', 'list', 'watch'];

/** The rows of spec §13.11. */
const RULE = {
  sources: (...resources: string[]): PolicyRule => ({ apiGroups: [''], resources, verbs: READ }),
  namespaces: { apiGroups: [''], resources: ['namespaces'], verbs: READ },
  deployments: {
    apiGroups: ['apps'],
    resources: ['deployments'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  setsOfPods: {
    apiGroups: ['apps'],
    resources: ['daemonsets', 'statefulsets'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  /** Rolls by eviction (docs/adr/0044): the pods through the owner chain, and their eviction. */
  pods: { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
  podEviction: { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  replicaSets: { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['list'] },
  cronjobs: {
    apiGroups: ['batch'],
    resources: ['cronjobs'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  jobs: {
    apiGroups: ['batch'],
    resources: ['jobs'],
    verbs: ['get', 'list', 'watch', 'create', 'delete', 'patch'],
  },
  /** CronJob rolls create a Job even when Jobs are not watched (spec §7.3). */
  jobCreation: { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create'] },
  rollouts: {
    apiGroups: ['argoproj.io'],
    resources: ['rollouts'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  deploymentConfigs: {
    apiGroups: ['apps.openshift.io'],
    resources: ['deploymentconfigs'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  deploymentConfigInstantiate: {
    apiGroups: ['apps.openshift.io'],
    resources: ['deploymentconfigs/instantiate'],
    verbs: ['create'],
  },
  csi: {
    apiGroups: ['secrets-store.csi.x-k8s.io'],
    resources: ['secretproviderclasspodstatuses', 'secretproviderclasses'],
    verbs: READ,
  },
  events: { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  reloadPolicies: { apiGroups: ['kreload.io'], resources: ['reloadpolicies'], verbs: READ },
  reloadPolicyStatus: {
    apiGroups: ['kreload.io'],
    resources: ['reloadpolicies/status'],
    verbs: ['get', 'patch', 'update'],
  },
} satisfies Record<string, PolicyRule | ((...resources: string[]) => PolicyRule)>;

/** The built-in apps kinds. */
const WORKLOAD_RULES = [RULE.deployments, RULE.setsOfPods];

/** `reloader.enableEvictStrategy`: what rolling by eviction needs (off by default). */
const EVICTION_RULES = [RULE.pods, RULE.podEviction, RULE.replicaSets];

const DEFAULT_WATCH_RULES = [
  RULE.sources('configmaps', 'secrets'),
  ...WORKLOAD_RULES,
  RULE.cronjobs,
  RULE.jobs,
  RULE.events,
];

/** `--enable-reload-policies`: the policies are read, only their status is written. */
const POLICY_WATCH_RULES = [
  RULE.sources('configmaps', 'secrets'),
  ...WORKLOAD_RULES,
  RULE.cronjobs,
  RULE.jobs,
  RULE.reloadPolicies,
  RULE.reloadPolicyStatus,
  RULE.events,
];

const META_INFO_RULES: PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    resourceNames: ['reloader-meta-info'],
    verbs: ['get', 'update'],
  },
];

const leaseRules = (id: string): PolicyRule[] => [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    resourceNames: [id],
    verbs: ['get', 'update'],
  },
];

/**
 * The Job recreation journal (docs/adr/0019): one ConfigMap, created once, then patched; and the
 * Secret with the key that signs its entries, created once, then read.
 */
const JOB_JOURNAL_RULES: PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
  {
    apiGroups: [''],
    resources: ['configmaps'],
    resourceNames: ['kreload-job-recreations'],
    verbs: ['get', 'patch'],
  },
  { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
  {
    apiGroups: [''],
    resources: ['secrets'],
    resourceNames: ['kreload-job-recreations-key'],
    verbs: ['get'],
  },
];

/** The baseline store (docs/adr/0046): ConfigMaps kreload names at run time, by label. */
const BASELINE_STORE_RULES: PolicyRule[] = [
  {
    apiGroups: [''],
    resources: ['configmaps'],
    verbs: ['get', 'list', 'watch', 'create', 'patch'],
  },
];

/** The Roles every install has in its release namespace. */
const META_INFO_ROLE = {
  [`${NAMESPACE}/${RELEASE}-meta-info`]: META_INFO_RULES,
  [`${NAMESPACE}/${RELEASE}-job-journal`]: JOB_JOURNAL_RULES,
  [`${NAMESPACE}/${RELEASE}-baseline-store`]: BASELINE_STORE_RULES,
};

const TUNING_DEFAULT_ARGS = [
  '--sync-delay=2s',
  '--sync-max-delay=30s',
  '--worker-threads=3',
  '--resync-period=10m',
];
const LOGGING_DEFAULT_ARGS = ['--log-format=json', '--log-level=info'];
/** reloader.isOpenshift: false (the default) grants no DeploymentConfig RBAC, so no watch either. */
const OPENSHIFT_OFF = '--is-openshift=false';
const BASE_ARGS = [
  OPENSHIFT_OFF,
  ...TUNING_DEFAULT_ARGS,
  ...LOGGING_DEFAULT_ARGS,
  '--metrics-port=9090',
];

interface ChartCase {
  /** helm/kreload/ci/<name>-values.yaml */
  name: string;
  args: string[];
  /** Rules of the ClusterRole; undefined when none may be rendered. */
  clusterRules: PolicyRule[] | undefined;
  /** Every Role, keyed `<namespace>/<name>`. */
  roles: Record<string, PolicyRule[]>;
}

const CASES: ChartCase[] = [
  { name: 'default', args: BASE_ARGS, clusterRules: DEFAULT_WATCH_RULES, roles: META_INFO_ROLE },
  {
    name: 'scoped',
    args: ['--namespaces=team-a,team-b', ...BASE_ARGS],
    clusterRules: undefined,
    roles: {
      [`team-a/${RELEASE}`]: DEFAULT_WATCH_RULES,
      [`team-b/${RELEASE}`]: DEFAULT_WATCH_RULES,
      ...META_INFO_ROLE,
    },
  },
  {
    name: 'reload-policies',
    args: ['--enable-reload-policies=true', '--namespaces=team-a,team-b', ...BASE_ARGS],
    clusterRules: undefined,
    roles: {
      [`team-a/${RELEASE}`]: POLICY_WATCH_RULES,
      [`team-b/${RELEASE}`]: POLICY_WATCH_RULES,
      ...META_INFO_ROLE,
    },
  },
  {
    name: 'reload-policies-global',
    args: ['--enable-reload-policies=true', ...BASE_ARGS],
    clusterRules: POLICY_WATCH_RULES,
    roles: META_INFO_ROLE,
  },
  {
    name: 'single-namespace',
    args: BASE_ARGS,
    clusterRules: undefined,
    roles: { [`${NAMESPACE}/${RELEASE}`]: DEFAULT_WATCH_RULES, ...META_INFO_ROLE },
  },
  {
    name: 'ha',
    args: [
      ...BASE_ARGS,
      '--enable-ha=true',
      '--leader-election-namespace=kreload-leases',
      '--leader-election-id=my-lease',
      '--leader-election-lease-duration=20s',
      '--leader-election-renew-deadline=12s',
      '--leader-election-retry-period=3s',
    ],
    clusterRules: DEFAULT_WATCH_RULES,
    roles: {
      [`kreload-leases/${RELEASE}-leader-election`]: leaseRules('my-lease'),
      ...META_INFO_ROLE,
    },
  },
  {
    name: 'argo-csi-openshift',
    args: [
      ...BASE_ARGS.filter((arg) => arg !== OPENSHIFT_OFF),
      '--is-Argo-Rollouts=true',
      '--enable-csi-integration=true',
      '--namespaces-to-ignore=kube-system,kube-public',
      '--namespace-selector=team=a,env in (prod,staging)',
    ],
    clusterRules: [
      ...DEFAULT_WATCH_RULES,
      ...EVICTION_RULES,
      RULE.namespaces,
      RULE.rollouts,
      RULE.deploymentConfigs,
      RULE.deploymentConfigInstantiate,
      RULE.csi,
    ],
    roles: META_INFO_ROLE,
  },
  {
    name: 'ignore',
    args: [...BASE_ARGS, '--resources-to-ignore=secrets', '--ignored-workload-types=jobs,cronjobs'],
    clusterRules: [RULE.sources('configmaps'), ...WORKLOAD_RULES, RULE.events],
    roles: META_INFO_ROLE,
  },
  {
    name: 'ignore-jobs',
    args: [...BASE_ARGS, '--resources-to-ignore=configmaps', '--ignored-workload-types=jobs'],
    clusterRules: [
      RULE.sources('secrets'),
      ...WORKLOAD_RULES,
      RULE.cronjobs,
      RULE.jobCreation,
      RULE.events,
    ],
    roles: META_INFO_ROLE,
  },
  {
    name: 'custom-annotations',
    args: [
      ...BASE_ARGS,
      '--webhook-url=https://hooks.example.com/kreload',
      '--auto-annotation=example.com/auto',
      '--configmap-auto-annotation=configmap.example.com/auto',
      '--secret-auto-annotation=secret.example.com/auto',
      '--configmap-annotation=configmap.example.com/reload',
      '--secret-annotation=secret.example.com/reload',
      '--auto-search-annotation=example.com/search',
      '--search-match-annotation=example.com/match',
      '--ignore-annotation=example.com/ignore',
      '--pause-deployment-annotation=deployment.example.com/pause-period',
      '--pause-deployment-time-annotation=deployment.example.com/paused-at',
      '--configmap-exclude-annotation=configmaps.exclude.example.com/reload',
      '--secret-exclude-annotation=secrets.exclude.example.com/reload',
      '--secretproviderclass-annotation=secretproviderclass.example.com/reload',
      '--secretproviderclass-auto-annotation=secretproviderclass.example.com/auto',
      '--secretproviderclass-exclude-annotation=secretproviderclasses.exclude.example.com/reload',
    ],
    clusterRules: DEFAULT_WATCH_RULES,
    roles: META_INFO_ROLE,
  },
  {
    name: 'observability',
    args: [
      OPENSHIFT_OFF,
      ...TUNING_DEFAULT_ARGS,
      '--log-format=text',
      '--log-level=debug',
      '--metrics-port=9090',
      '--enable-pprof=true',
      '--pprof-addr=:6061',
    ],
    clusterRules: DEFAULT_WATCH_RULES,
    roles: META_INFO_ROLE,
  },
  {
    name: 'tuning',
    args: [
      OPENSHIFT_OFF,
      '--auto-reload-all=true',
      '--reload-strategy=annotations',
      '--reload-on-create=true',
      '--reload-on-delete=true',
      '--sync-after-restart=true',
      '--include-helm-secrets=true',
      '--dry-run=true',
      '--resource-label-selector=reload=true',
      '--sync-delay=0',
      '--sync-max-delay=1m',
      '--worker-threads=8',
      '--resync-period=0',
      ...LOGGING_DEFAULT_ARGS,
      '--metrics-port=9191',
    ],
    clusterRules: DEFAULT_WATCH_RULES,
    roles: META_INFO_ROLE,
  },
];

const valuesFile = (name: string): string => `ci/${name}-values.yaml`;

function envVar(rendered: Rendered, name: string): V1EnvVar | undefined {
  return rendered.container().env?.find((variable) => variable.name === name);
}

function fieldRefOf(rendered: Rendered, name: string): string | undefined {
  return envVar(rendered, name)?.valueFrom?.fieldRef?.fieldPath;
}

function rolesByKey(rendered: Rendered): Record<string, PolicyRule[]> {
  return Object.fromEntries(
    rendered
      .ofKind('Role')
      .map((role) => [
        `${role.metadata.namespace ?? ''}/${role.metadata.name}`,
        normalizeRules(role.rules ?? []),
      ]),
  );
}

describe('helm/kreload values matrix', () => {
  let helm = '';
  const rendered = new Map<string, Rendered>();
  const get = (name: string): Rendered => {
    const result = rendered.get(name);
    if (result === undefined) {
      throw new Error(`case ${name} was not rendered`);
    }
    return result;
  };

  beforeAll(async () => {
    helm = await locateHelm();
    const results = await Promise.all(
      CASES.map(
        // A cluster with the Prometheus Operator's CRDs, so that the monitors render.
        async ({ name }) =>
          [
            name,
            await render(helm, {
              files: [valuesFile(name)],
              apiVersions: ['monitoring.coreos.com/v1'],
            }),
          ] as const,
      ),
    );
    for (const [name, result] of results) {
      rendered.set(name, result);
    }
  }, HELM_BUILD_TIMEOUT_MS);

  it.each(CASES)('$name: helm lint --strict passes', async ({ name }) => {
    const result = await lintChart(helm, { files: [valuesFile(name)] });
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    // Not even an [INFO] (e.g. "icon is recommended"): the chart's metadata is complete.
    expect(result.stderr + result.stdout).not.toMatch(/\[(INFO|WARNING|ERROR)\]/);
    expect(result.ok).toBe(true);
  });

  it.each(CASES)('$name: passes exactly the expected flags', ({ name, args }) => {
    expect([...get(name).args()].sort()).toEqual([...args].sort());
  });

  it.each(CASES)(
    '$name: grants exactly the RBAC of its mode and features',
    ({ name, clusterRules, roles }) => {
      const result = get(name);
      const clusterRoles = result.ofKind('ClusterRole');
      if (clusterRules === undefined) {
        expect(clusterRoles).toEqual([]);
        expect(result.ofKind('ClusterRoleBinding')).toEqual([]);
      } else {
        expect(clusterRoles).toHaveLength(1);
        expect(normalizeRules(clusterRoles[0]?.rules ?? [])).toEqual(normalizeRules(clusterRules));
      }
      const expectedRoles = Object.fromEntries(
        Object.entries(roles).map(([key, rules]) => [key, normalizeRules(rules)]),
      );
      expect(rolesByKey(result)).toEqual(expectedRoles);
    },
  );

  it.each(CASES)('$name: binds every role to the release ServiceAccount', ({ name }) => {
    const result = get(name);
    expect(result.one('ServiceAccount').metadata.name).toBe(RELEASE);
    const subject = [{ kind: 'ServiceAccount', name: RELEASE, namespace: NAMESPACE }];
    for (const role of result.ofKind('Role')) {
      const binding = result.one('RoleBinding', role.metadata.name, role.metadata.namespace);
      expect(binding.roleRef).toEqual({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name: role.metadata.name,
      });
      expect(binding.subjects).toEqual(subject);
    }
    for (const clusterRole of result.ofKind('ClusterRole')) {
      const binding = result.one('ClusterRoleBinding', clusterRole.metadata.name);
      expect(binding.roleRef.name).toBe(clusterRole.metadata.name);
      expect(binding.subjects).toEqual(subject);
    }
    expect(result.ofKind('RoleBinding')).toHaveLength(result.ofKind('Role').length);
  });

  it.each(CASES)('$name: runs a hardened pod with probes on the metrics port', ({ name }) => {
    const result = get(name);
    const pod = result.one('Deployment').spec?.template.spec;
    const container = result.container();
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.resources?.requests).toMatchObject({ cpu: '10m', memory: '128Mi' });
    expect(container.resources?.limits).toMatchObject({ memory: '256Mi' });

    const metricsPort = Number(
      result
        .args()
        .find((arg) => arg.startsWith('--metrics-port='))
        ?.split('=')[1],
    );
    expect(container.ports).toContainEqual({
      name: 'http',
      containerPort: metricsPort,
      protocol: 'TCP',
    });
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/live', port: 'http' });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });

    expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    expect(pod?.volumes).toContainEqual({ name: 'tmp', emptyDir: {} });
    expect(fieldRefOf(result, 'RELOADER_NAMESPACE')).toBe('metadata.namespace');
    expect(envVar(result, 'RELOADER_DEPLOYMENT_NAME')?.value).toBe(RELEASE);
  });

  it.each(CASES)('$name: puts every namespaced object in a namespace', ({ name }) => {
    const clusterScoped = new Set(['ClusterRole', 'ClusterRoleBinding']);
    for (const object of get(name).objects) {
      expect(
        object.metadata.namespace === undefined,
        `${object.kind}/${object.metadata.name}`,
      ).toBe(clusterScoped.has(object.kind));
    }
  });

  describe('scoping modes (spec §11)', () => {
    it('sets KUBERNETES_NAMESPACE from the release namespace only in single-namespace mode', () => {
      expect(fieldRefOf(get('single-namespace'), 'KUBERNETES_NAMESPACE')).toBe(
        'metadata.namespace',
      );
      for (const name of ['default', 'scoped', 'ha']) {
        expect(envVar(get(name), 'KUBERNETES_NAMESPACE'), name).toBeUndefined();
      }
    });

    it('accepts reloader.namespaces as a comma-separated string', async () => {
      const result = await render(helm, {
        values: { reloader: { namespaces: ' team-b, team-a ,' } },
      });
      expect(result.args()).toContain('--namespaces=team-a,team-b');
      expect(result.ofKind('Role').map((role) => role.metadata.namespace)).toEqual(
        expect.arrayContaining(['team-a', 'team-b']),
      );
    });

    it('treats whitespace-only namespaces as no scoped list', async () => {
      const result = await render(helm, { values: { reloader: { namespaces: [' ', ''] } } });
      expect(result.args().some((arg) => arg.startsWith('--namespaces='))).toBe(false);
      expect(result.ofKind('ClusterRole')).toHaveLength(1);
    });
  });

  describe('high availability (spec §13.4)', () => {
    it('runs two replicas with a rolling update that never drops below one ready pod', () => {
      const spec = get('ha').one('Deployment').spec;
      expect(spec?.replicas).toBe(2);
      expect(spec?.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
      });
    });

    it('passes POD_NAME and POD_NAMESPACE through the downward API', () => {
      expect(fieldRefOf(get('ha'), 'POD_NAME')).toBe('metadata.name');
      expect(fieldRefOf(get('ha'), 'POD_NAMESPACE')).toBe('metadata.namespace');
    });

    it('spreads the replicas with a pod anti-affinity and protects them with a PDB', () => {
      const result = get('ha');
      const antiAffinity = result.one('Deployment').spec?.template.spec?.affinity?.podAntiAffinity;
      const term =
        antiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm;
      expect(term?.topologyKey).toBe('kubernetes.io/hostname');
      const selector = result.one('Deployment').spec?.selector.matchLabels;
      expect(term?.labelSelector?.matchLabels).toEqual(selector);
      const pdb = result.one('PodDisruptionBudget');
      expect(pdb.spec?.minAvailable).toBe(1);
      expect(pdb.spec?.selector?.matchLabels).toEqual(selector);
    });

    it('runs one replica with leader election and no PDB when enableHA has 1 replica, as in Reloader', async () => {
      const result = await render(helm, { values: { reloader: { enableHA: true } } });
      expect(result.one('Deployment').spec?.replicas).toBe(1);
      expect(result.args()).toContain('--enable-ha=true');
      expect(result.ofKind('PodDisruptionBudget')).toEqual([]);
      expect(result.one('Deployment').spec?.template.spec?.affinity).toBeUndefined();
    });

    it('keeps more replicas when asked for them', async () => {
      const result = await render(helm, {
        values: { reloader: { enableHA: true, deployment: { replicas: 3 } } },
      });
      expect(result.one('Deployment').spec?.replicas).toBe(3);
    });

    it('grants the baseline store its ConfigMaps in the release namespace by default, not with baselineStore: workload', async () => {
      const result = await render(helm, { values: { reloader: { namespaces: ['team-a'] } } });
      const role = result.one('Role', `${RELEASE}-baseline-store`);
      expect(role.metadata.namespace).toBe(NAMESPACE);
      expect(normalizeRules(role.rules ?? [])).toEqual(normalizeRules(BASELINE_STORE_RULES));
      expect(result.args().some((arg) => arg.startsWith('--baseline-store'))).toBe(false);
      expect(get('default').one('Role', `${RELEASE}-baseline-store`).metadata.namespace).toBe(
        NAMESPACE,
      );
      const workload = await render(helm, { values: { reloader: { baselineStore: 'workload' } } });
      expect(workload.ofKind('Role').map((r) => r.metadata.name)).not.toContain(
        `${RELEASE}-baseline-store`,
      );
      expect(workload.args()).toContain('--baseline-store=workload');
    });

    it('puts the Lease rules in the release namespace by default, for the default Lease name', async () => {
      const result = await render(helm, { values: { reloader: { enableHA: true } } });
      const role = result.one('Role', `${RELEASE}-leader-election`);
      expect(role.metadata.namespace).toBe(NAMESPACE);
      expect(normalizeRules(role.rules ?? [])).toEqual(
        normalizeRules(leaseRules('kreload-leader')),
      );
      expect(result.args()).toContain('--leader-election-id=kreload-leader');
      expect(result.args().some((arg) => arg.startsWith('--leader-election-namespace'))).toBe(
        false,
      );
    });

    it('active-active: N replicas, HA flags, and Lease rules for any name with list', async () => {
      const result = await render(helm, {
        values: { reloader: { shardMode: 'active-active', deployment: { replicas: 3 } } },
      });
      expect(result.one('Deployment').spec?.replicas).toBe(3);
      expect(result.args()).toEqual(
        expect.arrayContaining(['--enable-ha=true', '--shard-mode=active-active']),
      );
      const role = result.one('Role', `${RELEASE}-leader-election`);
      expect(role.metadata.namespace).toBe(NAMESPACE);
      expect(normalizeRules(role.rules ?? [])).toEqual(
        normalizeRules([
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            verbs: ['create', 'get', 'list', 'update'],
          },
        ]),
      );
    });

    it('runs exactly one replica with Recreate and no PDB or anti-affinity without HA', () => {
      const result = get('default');
      const spec = result.one('Deployment').spec;
      expect(spec?.replicas).toBe(1);
      expect(spec?.strategy).toEqual({ type: 'Recreate' });
      expect(spec?.template.spec?.affinity).toBeUndefined();
      expect(result.ofKind('PodDisruptionBudget')).toEqual([]);
    });
  });

  describe('observability', () => {
    it('serves pprof on its own port and counts by namespace when asked', () => {
      const result = get('observability');
      expect(result.container().ports).toContainEqual({
        name: 'pprof',
        containerPort: 6061,
        protocol: 'TCP',
      });
      expect(envVar(result, 'METRICS_COUNT_BY_NAMESPACE')?.value).toBe('enabled');
      expect(envVar(get('default'), 'METRICS_COUNT_BY_NAMESPACE')).toBeUndefined();
    });

    it('renders the monitors against the http port and a Service for the ServiceMonitor', () => {
      const result = get('observability');
      const service = result.one('Service');
      expect(service.spec?.ports).toEqual([
        { name: 'http', port: 9090, targetPort: 'http', protocol: 'TCP' },
      ]);
      expect(service.spec?.selector).toEqual(result.one('Deployment').spec?.selector.matchLabels);
      const monitors = result.objects.filter((object) => object.kind.endsWith('Monitor'));
      expect(monitors.map((object) => object.kind).sort()).toEqual([
        'PodMonitor',
        'ServiceMonitor',
      ]);
    });

    it('limits ingress to the metrics port from the given peers', () => {
      const policy = get('observability').one('NetworkPolicy');
      expect(policy.spec?.ingress).toEqual([
        {
          ports: [{ port: 'http', protocol: 'TCP' }],
          from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }],
        },
      ]);
      expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    });

    it('renders nothing optional by default', () => {
      const kinds = get('default')
        .objects.map((object) => object.kind)
        .sort();
      // Three Roles in the release namespace: meta-info, the Job journal, the baseline store.
      expect(kinds).toEqual([
        'ClusterRole',
        'ClusterRoleBinding',
        'Deployment',
        'Role',
        'Role',
        'Role',
        'RoleBinding',
        'RoleBinding',
        'RoleBinding',
        'ServiceAccount',
      ]);
    });
  });

  describe('deployment settings', () => {
    it('uses the chart appVersion as the image tag, and a digest when one is given', async () => {
      // The name `npm run image` gives the image; nothing is published under another name.
      expect(get('default').container().image).toBe('kreload:0.1.0');
      const digest = `sha256:${'a'.repeat(64)}`;
      const pinned = await render(helm, { values: { image: { digest } } });
      expect(pinned.container().image).toBe(`kreload@${digest}`);
    });

    it('passes extra env from values, the chart Secret and NODE_OPTIONS', () => {
      const result = get('tuning');
      expect(envVar(result, 'ALERT_SINK')?.value).toBe('slack');
      expect(envVar(result, 'ALERT_WEBHOOK_URL')?.valueFrom?.secretKeyRef).toEqual({
        name: RELEASE,
        key: 'ALERT_WEBHOOK_URL',
      });
      expect(result.one('Secret').stringData).toEqual({
        ALERT_WEBHOOK_URL: 'https://hooks.slack.com/services/x',
      });
      expect(envVar(result, 'NODE_OPTIONS')?.value).toBe('--max-old-space-size=384');
    });

    it('merges probe overrides over the chart probes', async () => {
      const result = await render(helm, {
        values: { reloader: { deployment: { readinessProbe: { periodSeconds: 30 } } } },
      });
      expect(result.container().readinessProbe).toMatchObject({
        httpGet: { path: '/readyz', port: 'http' },
        periodSeconds: 30,
      });
    });

    it('renders no RBAC objects when rbac.enabled is false', async () => {
      const result = await render(helm, { values: { reloader: { rbac: { enabled: false } } } });
      const rbacKinds = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
      expect(result.objects.filter((object) => rbacKinds.includes(object.kind))).toEqual([]);
    });
  });

  describe('configurations kreload would reject at start fail to render', () => {
    it.each([
      {
        values: { ignoreSecrets: true, ignoreConfigMaps: true },
        message: 'reloader.ignoreSecrets and reloader.ignoreConfigMaps cannot both be true',
      },
      {
        values: { dryRun: true, webhookUrl: 'https://example.com/hook' },
        message: 'reloader.dryRun cannot be combined with reloader.webhookUrl',
      },
    ])('$message', async ({ values, message }) => {
      const result = await templateChart(helm, { values: { reloader: values } });
      expect(result.ok).toBe(false);
      expect(result.stderr).toContain(message);
    });
  });
});

describe('Grafana dashboard', () => {
  /** Metric names of spec §13.2, plus the prom-client default series the dashboard uses. */
  const KNOWN_METRICS = new Set([
    'reloader_reload_executed_total',
    'reloader_reload_executed_total_by_namespace',
    'reloader_reconcile_total',
    'reloader_reconcile_duration_seconds',
    'reloader_action_total',
    'reloader_action_latency_seconds',
    'reloader_skipped_total',
    'reloader_workqueue_depth',
    'reloader_workqueue_adds_total',
    'reloader_workqueue_latency_seconds',
    'reloader_errors_total',
    'reloader_retries_total',
    'reloader_events_received_total',
    'reloader_events_processed_total',
    'reloader_workloads_scanned_total',
    'reloader_workloads_matched_total',
    'reloader_reload_latency_seconds',
    'reloader_debounce_coalesced_total',
    'reloader_tracked_sources',
    'reloader_tracked_workloads',
    'reloader_leader',
    'rest_client_requests_total',
    'rest_client_request_duration_seconds',
    'process_resident_memory_bytes',
    'nodejs_heap_size_used_bytes',
  ]);

  let expressions: string[] = [];
  let configMapLabels: Record<string, string> = {};

  beforeAll(async () => {
    const helm = await locateHelm();
    const result = await render(helm, {
      files: ['ci/observability-values.yaml'],
      apiVersions: ['monitoring.coreos.com/v1'],
    });
    const configMap = result.one('ConfigMap', `${RELEASE}-dashboard`);
    configMapLabels = configMap.metadata.labels ?? {};
    const dashboard: unknown = JSON.parse(configMap.data?.['kreload.json'] ?? 'null');
    expressions = collectExpressions(dashboard);
  }, HELM_BUILD_TIMEOUT_MS);

  function collectExpressions(node: unknown): string[] {
    if (Array.isArray(node)) {
      return node.flatMap(collectExpressions);
    }
    if (!isRecord(node)) {
      return [];
    }
    const own = typeof node.expr === 'string' ? [node.expr] : [];
    return [...own, ...Object.values(node).flatMap(collectExpressions)];
  }

  const metricsIn = (expression: string): string[] =>
    [...expression.matchAll(/\b((?:reloader|rest_client|process|nodejs)_[a-z_]+)/g)].map((match) =>
      (match[1] ?? '').replace(/_(bucket|sum|count)$/, ''),
    );

  it('is a ConfigMap the Grafana sidecar picks up', () => {
    expect(configMapLabels.grafana_dashboard).toBe('1');
  });

  it('queries only metrics that kreload exports', () => {
    const used = new Set(expressions.flatMap(metricsIn));
    expect([...used].filter((metric) => !KNOWN_METRICS.has(metric))).toEqual([]);
  });

  it.each([
    ['reloads', 'reloader_reload_executed_total'],
    ['failures', 'reloader_errors_total'],
    ['reload latency', 'reloader_reload_latency_seconds'],
    ['queue depth', 'reloader_workqueue_depth'],
    ['memory', 'process_resident_memory_bytes'],
  ])('has a panel for %s', (_topic, metric) => {
    expect(expressions.some((expression) => metricsIn(expression).includes(metric))).toBe(true);
  });
});
