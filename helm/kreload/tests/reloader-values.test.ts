// A Reloader user's values file renders with the same meaning. The corpus in reloader-values/ holds
// the complete default values of Stakater Reloader's chart 2.2.16 and realistic user files written
// from that chart's keys; each must pass the schema and render what the Reloader chart would mean
// (args, image, pod labels, objects). e2e/specs/helm.e2e.test.ts applies the same renders strictly.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  NAMESPACE,
  RELEASE,
  RELOADER_VALUES_FILES,
  type Rendered,
  locateHelm,
  render,
  renderNotes,
  templateChart,
} from './chart-harness.ts';

const file = (name: (typeof RELOADER_VALUES_FILES)[number]): string =>
  `tests/reloader-values/${name}.yaml`;

/** kreload's tuning flags, which the chart always passes (Reloader has no equivalent values). */
const TUNING = [
  '--sync-delay=2s',
  '--sync-max-delay=30s',
  '--worker-threads=3',
  '--resync-period=10m',
  '--metrics-port=9090',
];

describe('Reloader values files', () => {
  let helm = '';
  const rendered = new Map<string, Rendered>();
  const renderFile = async (
    name: (typeof RELOADER_VALUES_FILES)[number],
    apiVersions: readonly string[] = [],
  ): Promise<Rendered> => {
    const key = `${name} ${apiVersions.join(',')}`;
    const cached = rendered.get(key);
    if (cached !== undefined) return cached;
    const result = await render(helm, { files: [file(name)], apiVersions });
    rendered.set(key, result);
    return result;
  };
  const env = (objects: Rendered): Record<string, string> =>
    Object.fromEntries(
      (objects.container().env ?? []).map((variable) => [
        variable.name,
        variable.value ?? JSON.stringify(variable.valueFrom),
      ]),
    );

  beforeAll(async () => {
    helm = await locateHelm();
  }, HELM_BUILD_TIMEOUT_MS);

  it.each(RELOADER_VALUES_FILES)('%s passes the schema and renders', async (name) => {
    const result = await templateChart(helm, { files: [file(name)] });
    expect(result.stderr).toBe('');
    expect(result.ok).toBe(true);
  });

  describe("Reloader 2.2.16's default values", () => {
    it('pass the same flags Reloader passes, and kreload its tuning defaults', async () => {
      const objects = await renderFile('default-2.2.16');
      // isOpenshift: false grants no DeploymentConfig RBAC, so kreload is told not to watch them.
      expect(objects.args().sort()).toEqual(
        ['--log-level=info', '--is-openshift=false', ...TUNING].sort(),
      );
    });

    it("run kreload's image instead of Reloader's, and NOTES.txt names the value to change", async () => {
      const objects = await renderFile('default-2.2.16');
      expect(objects.container().image).toBe('kreload:0.1.0');
      expect(objects.container().imagePullPolicy).toBe('IfNotPresent');
      const notes = await renderNotes(helm, { files: [file('default-2.2.16')] });
      expect(notes).toContain(
        "image.repository names Stakater Reloader's image ghcr.io/stakater/reloader:v1.4.21, " +
          "which cannot run kreload's flags: kreload:0.1.0 runs instead. Set image.repository " +
          '(and its tag) to your kreload image.',
      );
    });

    it('put the deployment labels on the pod, run as 65534 on a read-only root, one replica', async () => {
      const deployment = (await renderFile('default-2.2.16')).one('Deployment');
      expect(deployment.spec?.template.metadata?.labels).toMatchObject({
        provider: 'stakater',
        group: 'com.stakater.platform',
        version: 'v1.4.21',
      });
      expect(deployment.spec?.replicas).toBe(1);
      expect(deployment.spec?.template.spec?.securityContext?.runAsUser).toBe(65534);
      const container = deployment.spec?.template.spec?.containers[0];
      expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(container?.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    });

    it('create no Service for the empty service map', async () => {
      expect((await renderFile('default-2.2.16')).ofKind('Service')).toEqual([]);
    });
  });

  it('ha: replicas with leader election, a PDB, the digest, pull secrets and node placement', async () => {
    const objects = await renderFile('ha');
    const deployment = objects.one('Deployment');
    expect(deployment.spec?.replicas).toBe(3);
    expect(objects.args()).toEqual(
      expect.arrayContaining(['--enable-ha=true', '--log-level=INFO', '--log-format=json']),
    );
    expect(objects.container().image).toBe(
      'registry.example.com/platform/kreload@sha256:4c1e4c3a2f0a5d6b7e8f90123456789abcdef0123456789abcdef0123456789a',
    );
    expect(objects.container().imagePullPolicy).toBe('Always');
    expect(deployment.spec?.template.spec?.imagePullSecrets).toEqual([
      { name: 'registry-credentials' },
    ]);
    expect(objects.one('ServiceAccount').imagePullSecrets).toEqual([
      { name: 'registry-credentials' },
    ]);
    expect(deployment.spec?.template.spec?.nodeSelector).toEqual({
      'node-role.kubernetes.io/infra': '',
    });
    expect(deployment.spec?.template.spec?.priorityClassName).toBe('system-cluster-critical');
    expect(objects.one('PodDisruptionBudget').spec?.maxUnavailable).toBe(1);
    expect(objects.one('Role', `${RELEASE}-leader-election`).rules).toBeDefined();
  });

  it('scoped: Roles in the listed namespaces only, and their flags', async () => {
    const objects = await renderFile('scoped');
    expect(objects.args()).toEqual(
      expect.arrayContaining([
        '--namespaces=team-a,team-b',
        '--reload-strategy=annotations',
        '--resource-label-selector=reloader=enabled',
        '--ignored-workload-types=jobs,cronjobs',
      ]),
    );
    expect(objects.ofKind('ClusterRole')).toEqual([]);
    expect(
      objects
        .ofKind('Role')
        .filter((role) => role.metadata.name === RELEASE)
        .map((role) => role.metadata.namespace)
        .sort(),
    ).toEqual(['team-a', 'team-b']);
  });

  describe('servicemonitor', () => {
    it('without the Prometheus Operator API: no ServiceMonitor, the dual-stack Service, a warning', async () => {
      const objects = await renderFile('servicemonitor');
      expect(objects.objects.filter((object) => object.kind === 'ServiceMonitor')).toEqual([]);
      const service = objects.one('Service');
      expect(service.spec?.ipFamilyPolicy).toBe('PreferDualStack');
      expect(service.spec?.ipFamilies).toEqual(['IPv4']);
      expect(service.metadata.labels?.team).toBe('platform');
      expect(env(objects).METRICS_COUNT_BY_NAMESPACE).toBe('enabled');
      const notes = await renderNotes(helm, { files: [file('servicemonitor')] });
      expect(notes).toContain(
        'reloader.serviceMonitor.enabled: the cluster has no monitoring.coreos.com/v1 API',
      );
    });

    it('with the API: the ServiceMonitor kube-prometheus-stack selects', async () => {
      const objects = await renderFile('servicemonitor', ['monitoring.coreos.com/v1']);
      const monitor = objects.objects.find((object) => object.kind === 'ServiceMonitor') as
        | (Record<string, unknown> & {
            metadata: { namespace?: string; labels?: Record<string, string> };
          })
        | undefined;
      expect(monitor?.metadata.namespace).toBe('monitoring');
      expect(monitor?.metadata.labels?.release).toBe('kube-prometheus-stack');
      expect(monitor?.spec).toMatchObject({
        namespaceSelector: { matchNames: [NAMESPACE] },
        endpoints: [
          {
            port: 'http',
            interval: '30s',
            scrapeTimeout: '10s',
            metricRelabelings: [
              { action: 'keep', regex: 'reloader_.*', sourceLabels: ['__name__'] },
            ],
          },
        ],
      });
      expect(objects.ofKind('Service')).toHaveLength(1);
    });
  });

  it('alerts: alert env from values and an existing Secret, reload on create and delete', async () => {
    const objects = await renderFile('alerts');
    expect(env(objects)).toMatchObject({
      ALERT_ON_RELOAD: 'true',
      ALERT_SINK: 'slack',
      ALERT_ADDITIONAL_INFO: 'cluster: prod-eu-1',
      ALERT_WEBHOOK_URL: JSON.stringify({
        secretKeyRef: { name: 'reloader-slack', key: 'webhook-url' },
      }),
    });
    expect(objects.args()).toEqual(
      expect.arrayContaining(['--reload-on-create=true', '--reload-on-delete=true']),
    );
  });

  describe('resources', () => {
    it('keeps the resources; the Go memory limit sizes the V8 heap; GOMAXPROCS is ignored with a warning', async () => {
      const objects = await renderFile('resources');
      expect(objects.container().resources).toEqual({
        requests: { cpu: '50m', memory: '256Mi' },
        limits: { cpu: '1', memory: '1Gi' },
      });
      expect(env(objects).NODE_OPTIONS).toBe('--max-old-space-size=900');
      expect(Object.keys(env(objects))).not.toContain('GOMAXPROCS');
      expect(objects.container().securityContext?.readOnlyRootFilesystem).toBe(true);
      const notes = await renderNotes(helm, { files: [file('resources')] });
      expect(notes).toContain('reloader.deployment.gomaxprocsOverride is ignored');
      expect(notes).toContain(
        'reloader.verticalPodAutoscaler.enabled: the cluster has no autoscaling.k8s.io/v1 API',
      );
    });

    it('renders the VerticalPodAutoscaler for the kreload container where the API exists', async () => {
      const objects = await renderFile('resources', ['autoscaling.k8s.io/v1']);
      const vpa = objects.objects.find((object) => object.kind === 'VerticalPodAutoscaler') as
        (Record<string, unknown> & { spec?: unknown }) | undefined;
      expect(vpa?.spec).toMatchObject({
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: RELEASE },
        updatePolicy: { updateMode: 'Auto' },
        resourcePolicy: {
          containerPolicies: [
            {
              containerName: 'kreload',
              controlledValues: 'RequestsOnly',
              maxAllowed: { memory: '2Gi' },
            },
          ],
        },
      });
    });
  });

  it('tolerations: scheduling, templated pod labels and annotations, identity settings', async () => {
    const objects = await renderFile('tolerations');
    const pod = objects.one('Deployment').spec?.template;
    expect(pod?.metadata?.labels).toMatchObject({
      'azure.workload.identity/use': 'true',
      'sidecar.istio.io/inject': 'false',
      release: RELEASE,
    });
    expect(pod?.metadata?.annotations).toEqual({ owner: `${NAMESPACE}-platform` });
    expect(pod?.spec).toMatchObject({
      runtimeClassName: 'runc',
      schedulerName: 'default-scheduler',
      hostUsers: false,
      automountServiceAccountToken: true,
      tolerations: [
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
    });
    expect(pod?.spec?.topologySpreadConstraints).toHaveLength(1);
    const serviceAccount = objects.one('ServiceAccount');
    expect(serviceAccount.automountServiceAccountToken).toBe(true);
    expect(serviceAccount.metadata.annotations).toEqual({
      'azure.workload.identity/client-id': '00000000-0000-0000-0000-000000000000',
    });
  });

  it('legacy-image: the old image layout, every object in `namespace`, 2 replicas without HA as in Reloader', async () => {
    const objects = await renderFile('legacy-image');
    expect(objects.container().image).toBe('registry.example.com/mirror/kreload:0.1.0');
    const namespaces = new Set(
      objects.objects
        .map((object) => object.metadata.namespace)
        .filter((namespace) => namespace !== undefined),
    );
    expect(namespaces).toEqual(new Set(['platform-tools']));
    expect(objects.one('ClusterRoleBinding').subjects).toEqual([
      expect.objectContaining({ namespace: 'platform-tools' }),
    ]);
    // Reloader's chart runs min(replicas, 1) and passes --enable-ha=true when replicas > 1.
    expect(objects.one('Deployment').spec?.replicas).toBe(1);
    expect(objects.args()).toContain('--enable-ha=true');
    expect(objects.ofKind('PodDisruptionBudget')).toEqual([]);
    expect(env(objects).POD_NAME).toBeDefined();
    const notes = await renderNotes(helm, { files: [file('legacy-image')] });
    expect(notes).toContain('reloader.deployment.replicas is 2 without reloader.enableHA');
  });

  it('tutorial-config: the `config` block sets the same flags as reloader.*', async () => {
    const objects = await renderFile('tutorial-config');
    expect(objects.args()).toEqual(
      expect.arrayContaining([
        '--namespaces-to-ignore=kube-system,kube-public',
        '--reload-on-create=true',
        '--sync-delay=5s',
        '--worker-threads=4',
      ]),
    );
    expect(objects.args()).not.toContain('--sync-delay=2s');
    expect(objects.container().image).toBe('registry.example.com/kreload:0.1.0');
  });

  it.each([
    ['a misspelt image key', { image: { repo: 'x' } }, "at '/image': additional properties 'repo'"],
    [
      'an unknown config key',
      { config: { syncdelay: '1s' } },
      "at '/config': additional properties 'syncdelay'",
    ],
    [
      'an unknown IP family policy',
      { reloader: { service: { ipFamilyPolicy: 'DualStack' } } },
      "at '/reloader/service/ipFamilyPolicy'",
    ],
    [
      'a Go memory limit in an unknown unit',
      { reloader: { deployment: { gomemlimitOverride: '1GB' } } },
      "at '/reloader/deployment/gomemlimitOverride'",
    ],
    [
      'an unknown log level in any case',
      { reloader: { logLevel: 'VERBOSE' } },
      "at '/reloader/logLevel'",
    ],
  ])('still rejects %s', async (_why, values, at) => {
    const result = await templateChart(helm, { values });
    expect(result.ok).toBe(false);
    expect(result.stderr).toContain(at);
  });
});
