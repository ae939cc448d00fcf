// `kreload explain` and GET /debug/explain for ReloadPolicy-bound workloads (docs/explain.md,
// docs/reload-policy.md): both read the policies and compute the binding with the controller's
// own code, predict a roll with rule `policy` and the policy's name, and kreload then rolls as
// predicted; a suspended policy predicts no roll and none happens; an explain user who may not
// list ReloadPolicies gets "cannot tell", never "not bound".
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { KubeJson } from '../harness/crds.ts';
import {
  askController,
  explainJson,
  runExplain,
  type ExplainJson,
  type ExplainedSource,
} from '../harness/explain.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { createPolicy, policyIdentity } from '../harness/reload-policies.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'explain-policy',
  args: ([watched]) => [
    `--namespaces=${String(watched)}`,
    '--enable-reload-policies=true',
    '--sync-delay=0',
    '--enable-debug-explain',
  ],
  identity: policyIdentity('kreload-e2e-explain-policy'),
});

const client = () => new KubeJson({ kc: fixture.cluster.kc });

const configMap = (name: string, version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name,
  data: { version },
});

/** The controller's flags, as the CLI is given them. */
const controllerFlags = () => [
  '--',
  `--namespaces=${fixture.namespace}`,
  '--enable-reload-policies=true',
  '--sync-delay=0',
];

async function viaController(name: string): Promise<ExplainJson> {
  const reply = await askController(fixture.kreload, {
    kind: 'Deployment',
    namespace: fixture.namespace,
    name,
  });
  expect(reply.status, reply.body).toBe(200);
  return JSON.parse(reply.body) as ExplainJson;
}

function sourceOf(report: ExplainJson, source: ConfigMapSpec): ExplainedSource {
  const found = report.workload?.sources.find((s) => s.key === sourceKey(source));
  if (found === undefined) throw new Error(`no ${sourceKey(source)} in ${JSON.stringify(report)}`);
  return found;
}

async function plain(name: string, labels?: Record<string, string>): Promise<WorkloadRef> {
  return fixture.workloads.create('Deployment', {
    namespace: fixture.namespace,
    name,
    podSpec: podSpec({}),
    ...(labels === undefined ? {} : { labels }),
  });
}

describe('explain for ReloadPolicy-bound workloads', () => {
  it.each([
    { how: 'by name', target: { kind: 'Deployment', name: 'xp-by-name' } },
    {
      how: 'by selector',
      target: { kind: 'Deployment', selector: { matchLabels: { 'xp-app': 'by-selector' } } },
    },
  ])('bound $how: both explains predict a roll by `policy`; kreload rolls so', async (c) => {
    const name = c.how === 'by name' ? 'xp-by-name' : 'xp-by-selector';
    const v1 = configMap(`${name}-cfg`, '1');
    await fixture.sources.create(fixture.namespace, v1);
    const ref = await plain(name, { 'xp-app': 'by-selector' });
    await createPolicy(client(), fixture.namespace, `${name}-policy`, {
      sources: [{ kind: 'ConfigMap', name: v1.name }],
      targets: [c.target],
    });
    await waitForBaseline(fixture.workloads, ref, { [sourceKey(v1)]: sourceHash(v1) });

    const expected = {
      decision: { rule: 'policy' },
      policies: [`${name}-policy`],
      verdict: 'rolls-on-change',
      because: 'policy',
      predicts: { change: 'roll' },
    };
    const cli = await explainJson(
      fixture.cluster.kubeconfigPath,
      `deployment/${name}`,
      fixture.namespace,
      controllerFlags(),
    );
    expect(sourceOf(cli, v1)).toMatchObject(expected);
    expect(cli.workload?.facts.policy).toEqual(
      expect.objectContaining({ state: 'bound', policies: [`${name}-policy`] }),
    );
    expect(sourceOf(await viaController(name), v1)).toMatchObject(expected);

    const v2 = configMap(v1.name, '2');
    await fixture.sources.replace(fixture.namespace, v2);
    await waitForEnv(fixture.workloads, ref, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
  });

  it('a suspended policy: both explains predict no roll, and none happens', async () => {
    const v1 = configMap('xp-suspended-cfg', '1');
    await fixture.sources.create(fixture.namespace, v1);
    const suspended = await plain('xp-suspended');
    // A witness that rolls on the same change: once it has, kreload has seen the change.
    const witness = await fixture.workloads.create('Deployment', {
      namespace: fixture.namespace,
      name: 'xp-witness',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: v1.name } }] } }),
    });
    await createPolicy(client(), fixture.namespace, 'xp-suspended-policy', {
      sources: [{ kind: 'ConfigMap', name: v1.name }],
      targets: [{ kind: 'Deployment', name: 'xp-suspended' }],
      suspend: true,
    });
    await waitForBaseline(fixture.workloads, witness, { [sourceKey(v1)]: sourceHash(v1) });
    const cli = await explainJson(
      fixture.cluster.kubeconfigPath,
      'deployment/xp-suspended',
      fixture.namespace,
      controllerFlags(),
    );
    const controller = await viaController('xp-suspended');
    for (const report of [cli, controller]) {
      // Bound by nothing and referenced by nothing: the source is not even shown.
      expect(report.workload?.sources.map((s) => s.key)).toEqual([]);
      expect(report.workload?.facts.policy).toBeUndefined();
    }

    await fixture.sources.replace(fixture.namespace, configMap(v1.name, '2'));
    await waitForEnv(fixture.workloads, witness, {
      container: APP,
      name: envVarName(v1),
      value: sourceHash(configMap(v1.name, '2')),
    });
    const after = await fixture.workloads.read(suspended);
    expect(after.generation).toBe(1);
    expect(after.containers.every((entry) => Object.keys(entry.env).length === 0)).toBe(true);
  });

  it('an explain user who may not list ReloadPolicies: cannot tell (exit 4)', async () => {
    const v1 = configMap('xp-forbidden-cfg', '1');
    await fixture.sources.create(fixture.namespace, v1);
    await fixture.workloads.create('Deployment', {
      namespace: fixture.namespace,
      name: 'xp-forbidden',
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: v1.name } }] } }),
    });
    const reader = await installCustomIdentity(fixture.cluster, {
      name: 'kreload-e2e-explain-no-policies',
      rules: clusterRulesWith((rule) => rule),
    });
    const run = await runExplain(reader.kubeconfigPath, [
      'deployment/xp-forbidden',
      '-n',
      fixture.namespace,
      '-o',
      'json',
      ...controllerFlags(),
    ]);
    expect(run.code, run.stderr).toBe(4);
    const report = JSON.parse(run.stdout) as ExplainJson;
    expect(sourceOf(report, v1)).toMatchObject({
      verdict: 'cannot-tell',
      because: 'policies-unreadable',
      predicts: { change: 'unknown' },
    });
    expect(report.workload?.facts.policy).toMatchObject({ state: 'unknown' });
    expect(report.assumptions).toContain(
      'ReloadPolicies could not be listed: which sources a policy binds is not known (cannot tell)',
    );
  });
});
