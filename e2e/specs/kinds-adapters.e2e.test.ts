// The roll of each non-template kind of §2.2 under both strategies (§6), one row per kind: CronJob
// (§7.3, a Job from the template), Job (§7.4, deleted and created again), Argo Rollout (§7.5, a
// template merge patch, or `spec.restartAt` with `rollout-strategy: restart`). The Rollout CRD is
// the real one from argo-rollouts' Go module; no Argo controller runs, so the Rollout object
// itself is the evidence. DeploymentConfig has its own spec (kinds-deploymentconfig).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  arrayAt,
  installCrds,
  uninstallCrds,
  KubeJson,
  OPTIONAL_APIS,
  recordAt,
  stringAt,
  type CustomApi,
} from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { createPolicy, policyIdentity, readPolicy } from '../harness/reload-policies.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import {
  annotationsOf,
  AUTO,
  awaitBaseline,
  BASELINE,
  expectBaselineMovedToW,
  BUILT_IN_APIS,
  controlledBy,
  createObject,
  keyOf,
  listObjects,
  podTemplate,
  readObject,
  SOURCE_HASHES,
  stateJson,
  STRATEGIES,
  uidOf,
  type ObjectRef,
  type RolledSource,
  type StrategyRow,
} from './kinds-support.ts';

const ROLLOUT_STRATEGY = 'reloader.stakater.com/rollout-strategy';
const INSTANTIATE = 'cronjob.kubernetes.io/instantiate';
/** Once a year: kube-controller-manager never runs it during a test. */
const NEVER_DURING_A_TEST = '0 0 1 1 *';
const ROLL_TIMEOUT_MS = 30_000;

interface RollContext {
  readonly client: KubeJson;
  readonly ref: ObjectRef;
  /** The workload as it was right before the source changed. */
  readonly before: unknown;
  readonly strategy: StrategyRow;
  /** The source with its new hash. */
  readonly source: RolledSource;
  /** When the test changed the source. */
  readonly changedAt: number;
}

interface KindCase {
  readonly title: string;
  readonly short: string;
  readonly api: CustomApi;
  readonly workloadAnnotations: Readonly<Record<string, string>>;
  /** metadata and spec of the workload; `template` reads the ConfigMap through envFrom. */
  body(name: string, configMap: string): Record<string, unknown>;
  /** Waits for this kind's evidence of one roll and asserts what §7 says about it. */
  expectRoll(context: RollContext): Promise<void>;
}

function poll<T>(describe: string, check: () => Promise<T | undefined>): Promise<T> {
  return pollUntil(check, { timeoutMs: ROLL_TIMEOUT_MS, describe });
}

const CASES: readonly KindCase[] = [
  {
    title: 'CronJob: one Job from the template; the CronJob spec untouched (§7.3)',
    short: 'cj',
    api: BUILT_IN_APIS.cronjobs,
    workloadAnnotations: { [AUTO]: 'true' },
    body: (name, configMap) => ({
      spec: {
        schedule: NEVER_DURING_A_TEST,
        jobTemplate: {
          metadata: { labels: { 'e2e.kreload.io/from': name } },
          spec: {
            backoffLimit: 0,
            template: podTemplate({ app: name, configMap, restartPolicy: 'Never' }),
          },
        },
      },
    }),
    async expectRoll({ client, ref, before, strategy, source }) {
      const cronJobUid = uidOf(before);
      const job = await poll(`a Job of CronJob ${ref.name} rolled for ${source.hash}`, async () => {
        const owned = controlledBy(
          await listObjects(client, { ...ref, api: BUILT_IN_APIS.jobs }),
          cronJobUid,
        );
        return owned.find(
          (j) => strategy.appliedHash(recordAt(j, ['spec', 'template']), source) === source.hash,
        );
      });
      const owned = controlledBy(
        await listObjects(client, { ...ref, api: BUILT_IN_APIS.jobs }),
        cronJobUid,
      );
      expect(owned.map(uidOf)).toEqual([uidOf(job)]);
      // The change window's deterministic name (docs/adr/0020), never generateName.
      expect(stringAt(job, ['metadata', 'name'])).toMatch(new RegExp(`^${ref.name}-[0-9a-f]{10}$`));
      expect(stringAt(job, ['metadata', 'generateName'])).toBeUndefined();
      expect(recordAt(job, ['metadata']).ownerReferences).toEqual([
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          name: ref.name,
          uid: cronJobUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(annotationsOf(job)).toMatchObject({
        [INSTANTIATE]: 'manual',
        [SOURCE_HASHES]: stateJson({ [keyOf(source)]: source.hash }),
      });
      expect(recordAt(job, ['metadata', 'labels'])).toMatchObject({
        'e2e.kreload.io/from': ref.name,
      });
      strategy.expectRolled(recordAt(job, ['spec', 'template']), source, 'W');
      // Step 3: the state goes to the CronJob's metadata only.
      const after = await poll(`CronJob ${ref.name} to record ${source.hash}`, async () => {
        const cronJob = await readObject(client, ref);
        return annotationsOf(cronJob)[SOURCE_HASHES] === stateJson({ [keyOf(source)]: source.hash })
          ? cronJob
          : undefined;
      });
      await expectBaselineMovedToW(client, ref, after);
      expect(recordAt(after, ['spec'])).toEqual(recordAt(before, ['spec']));
    },
  },
  {
    title: 'Job: deleted and created again with the same name and the new hash (§7.4)',
    short: 'job',
    api: BUILT_IN_APIS.jobs,
    workloadAnnotations: { [AUTO]: 'true', 'e2e.kreload.io/note': 'kept' },
    body: (name, configMap) => ({
      spec: {
        backoffLimit: 0,
        template: podTemplate({ app: name, configMap, restartPolicy: 'Never' }),
      },
    }),
    async expectRoll({ client, ref, before, strategy, source }) {
      const job = await poll(`Job ${ref.name} to be created again for ${source.hash}`, async () => {
        const current = await readObject(client, ref);
        const rolled =
          uidOf(current) !== uidOf(before) &&
          strategy.appliedHash(recordAt(current, ['spec', 'template']), source) === source.hash;
        return rolled ? current : undefined;
      });
      strategy.expectRolled(recordAt(job, ['spec', 'template']), source);
      expect(annotationsOf(job)).toMatchObject({ [AUTO]: 'true', 'e2e.kreload.io/note': 'kept' });
      // Created again from the deleted Job's metadata: W's B goes with it; the old UID's record goes.
      await expectBaselineMovedToW(client, ref, job, uidOf(before));
      // The old controller-uid labels and selector were dropped, so the server made new ones.
      const newUid = uidOf(job);
      expect(recordAt(job, ['spec', 'selector', 'matchLabels'])).toMatchObject({
        'batch.kubernetes.io/controller-uid': newUid,
      });
      expect(recordAt(job, ['spec', 'template', 'metadata', 'labels'])).toMatchObject({
        'batch.kubernetes.io/controller-uid': newUid,
        app: ref.name,
      });
    },
  },
  {
    title: 'Rollout: the pod template is patched (§7.5)',
    short: 'ro',
    api: OPTIONAL_APIS.rollouts,
    workloadAnnotations: { [AUTO]: 'true' },
    body: (name, configMap) => ({
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: podTemplate({ app: name, configMap }),
      },
    }),
    async expectRoll({ client, ref, before, strategy, source }) {
      const rollout = await poll(
        `Rollout ${ref.name} template rolled for ${source.hash}`,
        async () => {
          const current = await readObject(client, ref);
          return strategy.appliedHash(recordAt(current, ['spec', 'template']), source) ===
            source.hash
            ? current
            : undefined;
        },
      );
      const template = recordAt(rollout, ['spec', 'template']);
      strategy.expectRolled(template, source);
      // A merge patch replaces lists: the containers must come back whole (§10).
      const containers = (podTemplateObject: unknown): unknown[] =>
        arrayAt(podTemplateObject, ['spec', 'containers']).map((c) => ({
          name: stringAt(c, ['name']),
          image: stringAt(c, ['image']),
          envFrom: arrayAt(c, ['envFrom']),
        }));
      expect(containers(template)).toEqual(containers(recordAt(before, ['spec', 'template'])));
      expect(recordAt(rollout, ['spec'])).not.toHaveProperty('restartAt');
      await expectBaselineMovedToW(client, ref, rollout);
      expect(annotationsOf(rollout)).not.toHaveProperty(SOURCE_HASHES);
    },
  },
  {
    title: 'Rollout with rollout-strategy: restart: spec.restartAt, template untouched (§7.5)',
    short: 'rorst',
    api: OPTIONAL_APIS.rollouts,
    workloadAnnotations: { [AUTO]: 'true', [ROLLOUT_STRATEGY]: 'restart' },
    body: (name, configMap) => ({
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: podTemplate({ app: name, configMap }),
      },
    }),
    async expectRoll({ client, ref, before, source, changedAt }) {
      const expected = stateJson({ [keyOf(source)]: source.hash });
      const rollout = await poll(`Rollout ${ref.name} to record ${expected} in W`, async () => {
        const current = await readObject(client, ref);
        return annotationsOf(current)[SOURCE_HASHES] === expected ? current : undefined;
      });
      const restartAt = stringAt(rollout, ['spec', 'restartAt']) ?? '';
      expect(restartAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      // RFC 3339 with seconds precision: allow the truncated second.
      expect(Date.parse(restartAt)).toBeGreaterThanOrEqual(changedAt - 1000);
      expect(Date.parse(restartAt)).toBeLessThanOrEqual(Date.now());
      expect(recordAt(rollout, ['spec', 'template'])).toEqual(
        recordAt(before, ['spec', 'template']),
      );
      await expectBaselineMovedToW(client, ref, rollout);
    },
  },
];

const cluster = sharedCluster();
const client = new KubeJson({ kc: cluster.kc });
const sources = new SourceClient({ kc: cluster.kc });

beforeAll(async () => {
  await installCrds(cluster, ['rollouts']);
});

afterAll(async () => {
  await uninstallCrds(cluster, ['rollouts']);
});

describe.each(STRATEGIES)('--reload-strategy=$strategy', (strategy) => {
  const fixture = useKreload({
    name: `kinds-adapters-${strategy.strategy}`,
    args: ([namespace = '']) => [
      `--namespaces=${namespace}`,
      '--sync-delay=0',
      '--is-Argo-Rollouts=true',
      `--reload-strategy=${strategy.strategy}`,
    ],
  });

  it.each(CASES)('$title', async (kindCase) => {
    const { namespace } = fixture;
    const name = `${kindCase.short}-app`;
    const configMap = `${kindCase.short}-cfg`;
    const ref: ObjectRef = { api: kindCase.api, namespace, name };
    const first = { config: 'v1' };
    const second = { config: 'v2' };
    await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: first });
    await createObject(client, ref, {
      metadata: { name, annotations: { ...kindCase.workloadAnnotations } },
      ...kindCase.body(name, configMap),
    });
    const key = keyOf({ type: 'CONFIGMAP', name: configMap });
    const before = await awaitBaseline(client, ref, { [key]: configMapHash({ data: first }) });

    const changedAt = Date.now();
    await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: second });

    await kindCase.expectRoll({
      client,
      ref,
      before,
      strategy,
      changedAt,
      source: {
        type: 'CONFIGMAP',
        name: configMap,
        namespace,
        hash: configMapHash({ data: second }),
      },
    });
  });
});

// A ReloadPolicy's `strategy: restart` acts as the rollout-strategy annotation on each target
// Rollout (docs/reload-policy.md): the Rollout carries no kreload annotation at all.
describe('ReloadPolicy with strategy restart on an Argo Rollout', () => {
  const fixture = useKreload({
    name: 'kinds-adapters-policy',
    args: ([namespace = '']) => [
      `--namespaces=${namespace}`,
      '--sync-delay=0',
      '--is-Argo-Rollouts=true',
      '--enable-reload-policies=true',
    ],
    identity: policyIdentity('kreload-e2e-adapters-policy'),
  });

  it('spec.restartAt set, template untouched, the policy status records time and hash', async () => {
    const { namespace } = fixture;
    const name = 'canary';
    const configMap = 'canary-cfg';
    const ref: ObjectRef = { api: OPTIONAL_APIS.rollouts, namespace, name };
    const first = { config: 'v1' };
    const second = { config: 'v2' };
    await sources.create(namespace, { type: 'CONFIGMAP', name: configMap, data: first });
    await createObject(client, ref, {
      metadata: { name },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: podTemplate({ app: name, configMap }),
      },
    });
    await createPolicy(client, namespace, 'canary', {
      sources: [{ kind: 'ConfigMap', name: configMap }],
      targets: [{ kind: 'Rollout', name }],
      strategy: 'restart',
    });
    const key = keyOf({ type: 'CONFIGMAP', name: configMap });
    const before = await awaitBaseline(client, ref, { [key]: configMapHash({ data: first }) });
    expect(annotationsOf(before), 'B in the store, none written on W').not.toHaveProperty(BASELINE);
    const changedAt = Date.now();
    await sources.replace(namespace, { type: 'CONFIGMAP', name: configMap, data: second });
    const hash = configMapHash({ data: second });
    const expected = stateJson({ [key]: hash });
    const rollout = await poll(`Rollout ${name} to record ${expected} in W`, async () => {
      const current = await readObject(client, ref);
      return annotationsOf(current)[SOURCE_HASHES] === expected ? current : undefined;
    });
    const restartAt = stringAt(rollout, ['spec', 'restartAt']) ?? '';
    expect(restartAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(Date.parse(restartAt)).toBeGreaterThanOrEqual(changedAt - 1000);
    expect(recordAt(rollout, ['spec', 'template'])).toEqual(recordAt(before, ['spec', 'template']));
    await expectBaselineMovedToW(client, ref, rollout);
    expect(annotationsOf(rollout)).not.toHaveProperty(ROLLOUT_STRATEGY);
    const targets = await poll('ReloadPolicy canary: the roll recorded', async () => {
      const policy = await readPolicy(client, namespace, 'canary');
      const recorded = arrayAt(policy, ['status', 'targets']);
      return recorded.length === 1 ? recorded : undefined;
    });
    const [target] = targets;
    const reloadedAt = stringAt(target, ['lastReloadTime']) ?? '';
    expect(target).toEqual({
      kind: 'Rollout',
      name,
      lastReloadTime: reloadedAt,
      sourceHashes: [{ kind: 'ConfigMap', name: configMap, hash }],
    });
    expect(Date.parse(reloadedAt)).toBeGreaterThanOrEqual(Date.parse(restartAt) - 1000);
    expect(Date.parse(reloadedAt)).toBeLessThanOrEqual(Date.now());
  });
});
