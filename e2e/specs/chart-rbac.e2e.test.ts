// kreload runs under helm/kreload's own ServiceAccount and RBAC, in each scoping mode the chart
// offers (spec §11): the chart is rendered with `helm template` from its ci/ values file, only its
// ServiceAccount, (Cluster)Roles and bindings are created, and dist/main.js runs with the rendered
// container's args and environment and a token of that ServiceAccount. Each mode must complete a
// reload, keep every watched kind readable (/readyz) and write its meta-info ConfigMap (§13.10).
// A namespaced install must get 403 outside its namespaces and leave workloads there untouched.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tailFile } from '../cluster/processes.ts';
import { probe } from '../cluster/probes.ts';
import { HELM_BUILD_TIMEOUT_MS, locateHelm } from '../../helm/kreload/tests/chart-harness.ts';
import { AUTO } from '../harness/annotations.ts';
import { ChartIdentityInstall, renderRelease } from '../harness/chart.ts';
import type { RestrictedKubeconfig } from '../harness/cluster.ts';
import { eventReasonsEventually, waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { EventReader } from '../harness/kube-events.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { pollUntil } from '../harness/poll.ts';
import { installPolicyCrd } from '../harness/reload-policies.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { KubeJson } from '../harness/crds.ts';
import {
  awaitBaseline,
  BUILT_IN_APIS,
  createObject,
  podTemplate,
  readObject,
  uidOf,
  type ObjectRef,
} from './kinds-support.ts';
import {
  SourceClient,
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
} from '../harness/sources.ts';
import {
  APP,
  WorkloadClient,
  podSpec,
  type WorkloadRef,
  type WorkloadView,
} from '../harness/workloads.ts';

const META_INFO = 'reloader-meta-info';
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
const META_INFO_LABEL = 'reloader.stakater.com/meta-info';
const CONFIG_NAME = 'app-config';
const APP_NAME = 'app';
const config = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: CONFIG_NAME,
  data: { version },
});

/** The namespaces of one case: the release namespace and three more. */
interface CaseNamespaces {
  readonly release: string;
  readonly others: readonly [string, string, string];
}

interface ModeCase {
  readonly mode: 'global' | 'scoped' | 'single-namespace';
  /** helm/kreload/ci/<file>-values.yaml */
  readonly file: string;
  /** Values that point the mode at this case's namespaces. */
  readonly values: (ns: CaseNamespaces) => Record<string, unknown>;
  /** Namespaces the release must act in. */
  readonly watched: (ns: CaseNamespaces) => string[];
  /** Namespaces the release has no grant in (empty in global mode). */
  readonly outside: (ns: CaseNamespaces) => string[];
}

const MODES: readonly ModeCase[] = [
  {
    mode: 'global',
    file: 'default',
    values: () => ({}),
    watched: ({ release, others }) => [release, others[0]],
    outside: () => [],
  },
  {
    mode: 'scoped',
    file: 'scoped',
    values: ({ others }) => ({ reloader: { namespaces: [others[0], others[1]] } }),
    watched: ({ others }) => [others[0], others[1]],
    outside: ({ others }) => [others[2]],
  },
  {
    // The same scoped install with --enable-reload-policies: its Roles must let kreload list the
    // policies of its namespaces (docs/reload-policy.md).
    mode: 'scoped',
    file: 'reload-policies',
    values: ({ others }) => ({ reloader: { namespaces: [others[0], others[1]] } }),
    watched: ({ others }) => [others[0], others[1]],
    outside: ({ others }) => [others[2]],
  },
  {
    mode: 'single-namespace',
    file: 'single-namespace',
    values: () => ({}),
    watched: ({ release }) => [release],
    outside: ({ others }) => [others[0]],
  },
];

interface RestrictedClients {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Reads and writes a namespaced install must not be allowed to make outside its namespaces. */
const FORBIDDEN_REQUESTS: readonly {
  readonly request: string;
  readonly send: (clients: RestrictedClients, namespace: string) => Promise<unknown>;
}[] = [
  {
    request: 'list ConfigMaps',
    send: ({ core }, namespace) => core.listNamespacedConfigMap({ namespace }),
  },
  {
    request: 'get the ConfigMap',
    send: ({ core }, namespace) => core.readNamespacedConfigMap({ namespace, name: CONFIG_NAME }),
  },
  {
    request: 'list Secrets',
    send: ({ core }, namespace) => core.listNamespacedSecret({ namespace }),
  },
  {
    request: 'create a ConfigMap',
    send: ({ core }, namespace) =>
      core.createNamespacedConfigMap({ namespace, body: { metadata: { name: META_INFO } } }),
  },
  {
    request: 'list Deployments',
    send: ({ apps }, namespace) => apps.listNamespacedDeployment({ namespace }),
  },
  {
    request: 'patch the Deployment',
    send: ({ apps }, namespace) =>
      apps.patchNamespacedDeployment(
        { namespace, name: APP_NAME, body: { metadata: { annotations: { touched: 'yes' } } } },
        mergePatch,
      ),
  },
  {
    request: 'list ConfigMaps in all namespaces',
    send: ({ core }) => core.listConfigMapForAllNamespaces(),
  },
];

async function statusOf(request: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await request;
    return 'ok';
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

interface ReadyzBody {
  readonly ready?: boolean;
  readonly checks?: { readonly kinds?: Readonly<Record<string, string>> };
}

function parseReadyz(body: string): ReadyzBody {
  const parsed: unknown = JSON.parse(body);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`/readyz body: ${body}`);
  return parsed;
}

const cluster = sharedCluster();
const json = new KubeJson({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });
const sources = new SourceClient({ kc: cluster.kc });
const events = new EventReader({ kc: cluster.kc });
const adminCore = cluster.kc.makeApiClient(CoreV1Api);

let helm = '';
beforeAll(async () => {
  helm = await locateHelm();
  await installPolicyCrd(cluster);
}, HELM_BUILD_TIMEOUT_MS);

/** Waits until RBAC has caught up with the new bindings: the token can list in `namespace`. */
function waitForGrant(kc: KubeConfig, namespace: string): Promise<true> {
  const core = kc.makeApiClient(CoreV1Api);
  return pollUntil(
    async () => {
      await core.listNamespacedConfigMap({ namespace });
      return true;
    },
    {
      timeoutMs: 15_000,
      describe: `the chart's ServiceAccount to list ConfigMaps in ${namespace}`,
    },
  );
}

/**
 * What a write by kreload would change. Not resourceVersion: kube-controller-manager writes the
 * status of a new Deployment; any kreload patch of a Deployment moves its generation.
 */
function writtenParts(view: WorkloadView): Omit<WorkloadView, 'resourceVersion' | 'uid'> {
  const { generation, annotations, templateAnnotations, containers, initContainers, paused } = view;
  return { generation, annotations, templateAnnotations, containers, initContainers, paused };
}

async function createApp(namespace: string): Promise<WorkloadRef> {
  await sources.create(namespace, config('1'));
  return workloads.create('Deployment', {
    namespace,
    name: APP_NAME,
    annotations: { [AUTO]: 'true' },
    podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: CONFIG_NAME } }] } }),
  });
}

describe.each(MODES)('chart RBAC, $mode mode ($file)', (modeCase) => {
  const suffix = randomBytes(3).toString('hex');
  const fullname = `chart-rbac-${modeCase.mode}-${suffix}`;
  let namespaces: CaseNamespaces = { release: '', others: ['', '', ''] };
  let install: ChartIdentityInstall | undefined;
  let login: RestrictedKubeconfig;
  let kreload: KreloadProcess | undefined;
  let watchedApps: WorkloadRef[] = [];
  let outsideApps: { ref: WorkloadRef; created: WorkloadView }[] = [];

  beforeAll(async () => {
    namespaces = {
      release: await cluster.createNamespace(`chart-${modeCase.mode}`),
      others: [
        await cluster.createNamespace('chart-a'),
        await cluster.createNamespace('chart-b'),
        await cluster.createNamespace('chart-c'),
      ],
    };
    const rendered = await renderRelease(helm, {
      fullname,
      namespace: namespaces.release,
      files: [`ci/${modeCase.file}-values.yaml`],
      values: modeCase.values(namespaces),
    });
    install = new ChartIdentityInstall({ cluster, rendered });
    await install.install();
    login = await install.login();
    for (const namespace of modeCase.watched(namespaces)) await waitForGrant(login.kc, namespace);

    watchedApps = [];
    for (const namespace of modeCase.watched(namespaces))
      watchedApps.push(await createApp(namespace));
    outsideApps = [];
    for (const namespace of modeCase.outside(namespaces)) {
      const ref = await createApp(namespace);
      outsideApps.push({ ref, created: await workloads.read(ref) });
    }

    const { args, env } = install.command(`${fullname}-e2e`);
    kreload = await startKreload({
      name: `chart-rbac-${modeCase.mode}`,
      kubeconfig: login.path,
      args,
      // The chart's default baseline store, not the suite's pin: its Role must be enough.
      env: { KRELOAD_BASELINE_STORE: 'namespace', ...env },
    });
  });

  afterAll(async () => {
    const running = kreload;
    kreload = undefined;
    try {
      if (running !== undefined) {
        const exit = await running.stop();
        expect(exit.code, `kreload's exit on SIGTERM; log ${running.logPath}`).toBe(0);
      }
    } finally {
      await install?.uninstall();
      await Promise.all(
        [namespaces.release, ...namespaces.others]
          .filter((name) => name !== '')
          .map((name) => adminCore.deleteNamespace({ name }).catch(() => undefined)),
      );
    }
  });

  it('renders the mode it is testing', () => {
    const kinds = install?.objects.map((object) => object.kind) ?? [];
    expect(kinds.includes('ClusterRole')).toBe(modeCase.mode === 'global');
    // Every mode: the meta-info, Job recreation journal and baseline store Roles in the release
    // namespace.
    const releaseRoles = 3;
    expect(kinds.filter((kind) => kind === 'Role').length).toBe(
      modeCase.mode === 'global'
        ? releaseRoles
        : modeCase.watched(namespaces).length + releaseRoles,
    );
  });

  it('becomes ready with every watched kind readable', async () => {
    const running = kreload!;
    const response = await probe({ url: running.url('/readyz') });
    expect(response.status).toBe(200);
    const kinds = parseReadyz(response.body).checks?.kinds ?? {};
    expect(kinds).toMatchObject({
      configmaps: 'ok',
      secrets: 'ok',
      deployments: 'ok',
      statefulsets: 'ok',
      daemonsets: 'ok',
      cronjobs: 'ok',
      jobs: 'ok',
      ...(modeCase.file === 'reload-policies' ? { reloadpolicies: 'ok' } : {}),
    });
    expect(Object.entries(kinds).filter(([, state]) => state === 'forbidden')).toEqual([]);
    const metrics = await probe({ url: running.url('/metrics') });
    expect(metrics.body, 'the baseline store is in use, not fallen back').toContain(
      'kreload_baseline_store_in_use 1',
    );
  });

  it('records the baseline, then rolls the Deployment when its ConfigMap changes', async () => {
    for (const ref of watchedApps) {
      await waitForBaseline(workloads, ref, { [sourceKey(config('1'))]: sourceHash(config('1')) });
    }
    // Outside namespaces change first: by the time the watched ones rolled, a watch that saw
    // the outside change would have acted on it too.
    for (const { ref } of outsideApps) await sources.replace(ref.namespace, config('2'));
    for (const ref of watchedApps) await sources.replace(ref.namespace, config('2'));
    for (const ref of watchedApps) {
      const rolled = await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(config('2')),
        value: sourceHash(config('2')),
      });
      expect(rolled.containers.find((c) => c.name === APP)?.env).toEqual({
        STAKATER_APP_CONFIG_CONFIGMAP: sourceHash(config('2')),
      });
      expect(await eventReasonsEventually(events, ref, ['Reloaded'])).toContain('Reloaded');
    }
    for (const { ref, created } of outsideApps) {
      expect(writtenParts(await workloads.read(ref)), `${ref.namespace}/${ref.name}`).toEqual(
        writtenParts(created),
      );
    }
  });

  it('rolls a Job: journalled and signed in the release namespace with the chart RBAC', async () => {
    const [namespace = ''] = modeCase.watched(namespaces);
    const ref: ObjectRef = { api: BUILT_IN_APIS.jobs, namespace, name: 'job-app' };
    const jobConfig = (version: string): ConfigMapSpec => ({
      ...config(version),
      name: 'job-config',
    });
    await sources.create(namespace, jobConfig('1'));
    const created = await createObject(json, ref, {
      metadata: { name: ref.name, annotations: { [AUTO]: 'true' } },
      spec: {
        suspend: true,
        template: podTemplate({ app: ref.name, configMap: 'job-config', restartPolicy: 'Never' }),
      },
    });
    await awaitBaseline(
      json,
      ref,
      { [sourceKey(jobConfig('1'))]: sourceHash(jobConfig('1')) },
      30_000,
      workloads.baselines,
    );
    await sources.replace(namespace, jobConfig('2'));
    await pollUntil(
      async () => {
        const job = await readObject(json, ref).catch(() => undefined);
        return job !== undefined && uidOf(job) !== uidOf(created);
      },
      { timeoutMs: 30_000, describe: `Job ${namespace}/job-app created again` },
    );
    // The journal and the key that signs it, both in the release namespace.
    await adminCore.readNamespacedConfigMap({
      name: 'kreload-job-recreations',
      namespace: namespaces.release,
    });
    const key = await adminCore.readNamespacedSecret({
      name: 'kreload-job-recreations-key',
      namespace: namespaces.release,
    });
    expect(key.immutable).toBe(true);
  });

  it('writes the meta-info ConfigMap into the release namespace', async () => {
    const metaInfo = await pollUntil(
      () =>
        adminCore
          .readNamespacedConfigMap({ name: META_INFO, namespace: namespaces.release })
          .catch(() => undefined),
      { timeoutMs: 15_000, describe: `ConfigMap ${namespaces.release}/${META_INFO}` },
    );
    expect(metaInfo.metadata?.labels?.[META_INFO_LABEL]).toBe('reloader');
    expect(JSON.parse(metaInfo.data?.deploymentInfo ?? 'null')).toEqual({
      name: fullname,
      namespace: namespaces.release,
    });
    // The version main.ts read from package.json, however dist/ is laid out (a bundle, ADR 0040).
    expect(JSON.parse(metaInfo.data?.buildInfo ?? 'null')).toMatchObject({
      releaseVersion: PACKAGE_VERSION,
    });
  });

  const forbidden = modeCase.mode === 'global' ? [] : FORBIDDEN_REQUESTS;
  it.each(forbidden)('is refused outside its namespaces: $request', async ({ send }) => {
    const clients: RestrictedClients = {
      core: login.kc.makeApiClient(CoreV1Api),
      apps: login.kc.makeApiClient(AppsV1Api),
    };
    for (const namespace of modeCase.outside(namespaces)) {
      expect(await statusOf(send(clients, namespace)), namespace).toBe(403);
    }
  });

  it('never had a request refused (kreload log)', async () => {
    const running = kreload!;
    const log = await running.readLog();
    // A 403 for a namespace that an earlier spec is still deleting ("unable to create new content
    // in namespace … because it is being terminated") is the namespace lifecycle admission, not
    // RBAC: a global install sees every namespace, including those of specs that ran before it.
    const refused = log
      .split('\n')
      .filter(
        (line) => /forbidden/i.test(line) && !line.includes('because it is being terminated'),
      );
    expect(refused, `log ${running.logPath}:\n${tailFile(running.logPath, 20)}`).toEqual([]);
  });
});
