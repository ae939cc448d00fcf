// Issue 10 defect 5 (docs/adr/0021-per-namespace-watch-status.md): in scoped mode every namespace
// lists and watches on its own. kreload runs with `--namespaces=ma,mb` and RBAC in `ma` only: `ma`
// must work, `/readyz` and `reloader_watch_status` must name `mb` and its kinds as forbidden, and
// `mb` must start working without a restart once a Role grants it (the 60 s re-probe, §9.1 item 6).
import { describe, expect, it } from 'vitest';
import { probe } from '../cluster/probes.ts';
import { AUTO, BASELINE, stateJson } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv, waitForView } from '../harness/expectations.ts';
import { clusterRulesWith, grantInNamespace, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const IDENTITY = 'kreload-e2e-scope';
/** What a namespace's Role grants: every namespaced rule of spec §13.11. */
const NAMESPACED_RULES = clusterRulesWith((rule) =>
  rule.resources?.includes('namespaces') === true ? undefined : rule,
);
/** The re-probe interval of a forbidden list-watch, plus a list and a reconcile. */
const REPROBE_WAIT_MS = 90_000;
const KINDS = ['configmaps', 'secrets', 'deployments', 'daemonsets', 'statefulsets'] as const;

const fixture = useKreload({
  name: 'scope-forbidden',
  namespaces: 2,
  args: (namespaces) => [`--namespaces=${namespaces.join(',')}`, '--sync-delay=0'],
  // Only Events cluster-wide: every namespace needs its own Role.
  identity: (cluster) =>
    installCustomIdentity(cluster, {
      name: IDENTITY,
      rules: [{ apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] }],
    }),
  startInBeforeAll: false,
});

interface ReadyzBody {
  readonly ready?: boolean;
  readonly checks?: {
    readonly kinds?: Readonly<Record<string, string>>;
    readonly namespaces?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  };
}

async function readyz(): Promise<{ status: number; body: ReadyzBody }> {
  const response = await probe({ url: fixture.kreload.url('/readyz') });
  return { status: response.status, body: JSON.parse(response.body) as ReadyzBody };
}

const config = (data: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'scope-cfg',
  data: { v: data },
});

async function createTracked(namespace: string): Promise<WorkloadRef> {
  await fixture.sources.create(namespace, config('1'));
  return fixture.workloads.create('Deployment', {
    namespace,
    name: 'scope-dep',
    annotations: { [AUTO]: 'true' },
    podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config('1').name } }] } }),
  });
}

/** Waits for the baseline of a Deployment made by `createTracked`, then changes its ConfigMap. */
async function rollsOnChange(deployment: WorkloadRef): Promise<void> {
  await waitForBaseline(fixture.workloads, deployment, {
    [sourceKey(config('1'))]: sourceHash(config('1')),
  });
  await fixture.sources.replace(deployment.namespace, config('2'));
  await waitForEnv(fixture.workloads, deployment, {
    container: APP,
    name: envVarName(config('2')),
    value: sourceHash(config('2')),
  });
}

describe('scoped mode with a namespace kreload may not read (issue 10, defect 5)', () => {
  it('a permitted namespace works while another is forbidden', async () => {
    const [permitted = ''] = fixture.namespaces;
    await grantInNamespace(fixture.cluster, {
      name: IDENTITY,
      namespace: permitted,
      rules: NAMESPACED_RULES,
    });
    await fixture.start();
    await rollsOnChange(await createTracked(permitted));
  });

  // The default baseline store lives in kreload's namespace, where this identity may not list
  // (docs/adr/0046): kreload says so once and keeps baselines in the workloads instead.
  it('falls back to baselines in the workloads when it may not list the baseline store', async () => {
    const [permitted = ''] = fixture.namespaces;
    const log = await fixture.kreload.readLog();
    expect(log).toMatch(/cannot list the baseline store: first-sight baselines are written to/);
    const metrics = await scrapeMetrics(fixture.kreload);
    expect(metrics.value('kreload_baseline_store_in_use', {})).toBe(0);
    const late = await fixture.workloads.create('Deployment', {
      namespace: permitted,
      name: 'scope-dep-late',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config('2').name } }] } }),
    });
    const baselined = await waitForView(
      fixture.workloads,
      late,
      (view) => view.annotations[BASELINE] !== undefined,
      'a baseline in W',
    );
    expect(baselined.annotations[BASELINE]).toBe(
      stateJson({ [sourceKey(config('2'))]: sourceHash(config('2')) }),
    );
  });

  it('/readyz is ready and names the forbidden namespace and its kinds', async () => {
    const [permitted = '', forbidden = ''] = fixture.namespaces;
    const { status, body } = await readyz();
    expect(status).toBe(200);
    expect(body.ready).toBe(true);
    expect(body.checks?.namespaces?.[forbidden]).toMatchObject(
      Object.fromEntries(KINDS.map((kind) => [kind, 'forbidden'])),
    );
    expect(
      body.checks?.namespaces?.[permitted],
      'a healthy namespace is not listed',
    ).toBeUndefined();
    expect(body.checks?.kinds).toMatchObject(
      Object.fromEntries(KINDS.map((kind) => [kind, 'partial'])),
    );
  });

  it('reloader_watch_status shows each namespace and kind', async () => {
    const [permitted = '', forbidden = ''] = fixture.namespaces;
    const metrics = await scrapeMetrics(fixture.kreload);
    for (const kind of KINDS) {
      const series = { resource_type: kind };
      expect(
        metrics.value('reloader_watch_status', {
          ...series,
          namespace: forbidden,
          status: 'forbidden',
        }),
        `${forbidden} ${kind}`,
      ).toBe(1);
      expect(
        metrics.value('reloader_watch_status', { ...series, namespace: permitted, status: 'ok' }),
        `${permitted} ${kind}`,
      ).toBe(1);
      expect(
        metrics.value('reloader_watch_status', {
          ...series,
          namespace: permitted,
          status: 'forbidden',
        }),
      ).toBe(0);
    }
  });

  it(
    'a namespace permitted later works without a restart, its existing objects as baselines',
    async () => {
      const [, forbidden = ''] = fixture.namespaces;
      const pid = fixture.kreload.pid;
      // Made while kreload may not read them: they arrive with the namespace's first list.
      const deployment = await createTracked(forbidden);
      await grantInNamespace(fixture.cluster, {
        name: IDENTITY,
        namespace: forbidden,
        rules: NAMESPACED_RULES,
      });
      const recovered = await pollUntil(
        async () => {
          const { body } = await readyz();
          return body.checks?.namespaces?.[forbidden] === undefined ? body : undefined;
        },
        { timeoutMs: REPROBE_WAIT_MS, intervalMs: 1000, describe: `${forbidden} to leave /readyz` },
      );
      expect(recovered.ready).toBe(true);
      expect(recovered.checks?.kinds).toMatchObject(
        Object.fromEntries(KINDS.map((kind) => [kind, 'ok'])),
      );
      await rollsOnChange(deployment);
      const metrics = await scrapeMetrics(fixture.kreload);
      expect(
        metrics.value('reloader_watch_status', {
          namespace: forbidden,
          resource_type: 'configmaps',
          status: 'ok',
        }),
      ).toBe(1);
      expect(fixture.kreload.pid).toBe(pid);
    },
    REPROBE_WAIT_MS + 60_000,
  );
});
