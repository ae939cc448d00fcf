// ReloadPolicy on the real control plane with kreload's real CLI (docs/reload-policy.md): policies
// bind sources to workloads that carry no kreload annotation; the status says what was found and,
// per target, when it was rolled and with which hashes. kreload runs scoped to this file's
// namespace with --enable-reload-policies and an identity that may read policies and patch their
// status, as the chart's RBAC grants (helm/kreload/ci/reload-policies-values.yaml).
import { afterEach, describe, expect, it } from 'vitest';
import {
  BASELINE,
  CONFIGMAP_RELOAD,
  LAST_RELOADED_FROM,
  PAUSED_AT,
  SOURCE_HASHES,
} from '../harness/annotations.ts';
import {
  type JsonRecord,
  KubeJson,
  KubeJsonError,
  MERGE_PATCH,
  arrayAt,
  isRecord,
  stringAt,
} from '../harness/crds.ts';
import {
  waitForBaseline,
  waitForEnv,
  waitForRecord,
  waitForView,
} from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { EventReader } from '../harness/kube-events.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import {
  createPolicy,
  policyIdentity,
  policyPath,
  readPolicy,
} from '../harness/reload-policies.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
} from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const IDENTITY = 'kreload-e2e-policy';
const STATUS_WAIT_MS = 30_000;

const fixture = useKreload({
  name: 'reload-policy',
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--enable-reload-policies=true',
    '--sync-delay=0',
  ],
  identity: policyIdentity(IDENTITY),
});

function client(): KubeJson {
  return new KubeJson({ kc: fixture.cluster.kc });
}

function events(): EventReader {
  return new EventReader({ kc: fixture.cluster.kc });
}

const configMap = (
  name: string,
  version: string,
  labels?: Record<string, string>,
): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name,
  data: { version },
  ...(labels === undefined ? {} : { labels }),
});

/** A workload that references nothing and carries no kreload annotation. */
async function plainDeployment(
  name: string,
  extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): Promise<WorkloadRef> {
  return fixture.workloads.create('Deployment', {
    namespace: fixture.namespace,
    name,
    podSpec: podSpec({}),
    ...extra,
  });
}

interface ConditionView {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

function conditionsOf(policy: JsonRecord): ConditionView[] {
  return arrayAt(policy, ['status', 'conditions']).flatMap((entry) =>
    isRecord(entry)
      ? [
          {
            type: stringAt(entry, ['type']) ?? '',
            status: stringAt(entry, ['status']) ?? '',
            reason: stringAt(entry, ['reason']) ?? '',
            message: stringAt(entry, ['message']) ?? '',
          },
        ]
      : [],
  );
}

/** Polls the policy until `accept` holds; returns it. */
function waitForPolicy(
  name: string,
  accept: (policy: JsonRecord) => boolean,
  describe: string,
): Promise<JsonRecord> {
  return pollUntil(
    async () => {
      const policy = await readPolicy(client(), fixture.namespace, name);
      return accept(policy) ? policy : undefined;
    },
    { timeoutMs: STATUS_WAIT_MS, describe: `ReloadPolicy ${name}: ${describe}` },
  );
}

function condition(policy: JsonRecord, type: string): ConditionView | undefined {
  return conditionsOf(policy).find((entry) => entry.type === type);
}

/** Whole seconds, as metav1.Time has them. */
function floorToSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

describe('ReloadPolicy: the minimal case, one ConfigMap → one Deployment', () => {
  const v1 = configMap('app-config', '1');
  const v2 = configMap('app-config', '2');
  let web: WorkloadRef;

  it('binds an unannotated Deployment: baseline first, status Ready with 1/1 found', async () => {
    await fixture.sources.create(fixture.namespace, v1);
    web = await plainDeployment('web');
    await createPolicy(client(), fixture.namespace, 'web-config', {
      sources: [{ kind: 'ConfigMap', name: 'app-config' }],
      targets: [{ kind: 'Deployment', name: 'web' }],
    });
    await waitForBaseline(fixture.workloads, web, { [sourceKey(v1)]: sourceHash(v1) });
    const policy = await waitForPolicy(
      'web-config',
      (candidate) => condition(candidate, 'Ready')?.status === 'True',
      'Ready True',
    );
    expect(conditionsOf(policy)).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'Bound',
        message: 'every source is bound to every target',
      },
      { type: 'SourcesFound', status: 'True', reason: 'AllFound', message: '1/1 sources found' },
      { type: 'TargetsFound', status: 'True', reason: 'AllFound', message: '1/1 targets found' },
      {
        type: 'Conflict',
        status: 'False',
        reason: 'NoConflict',
        message: 'no other policy or annotation overrides a setting',
      },
    ]);
    expect(policy.status).toMatchObject({
      observedGeneration: 1,
      foundSources: '1/1',
      foundTargets: '1/1',
      targets: [],
    });
  });

  it('a change rolls it (env var on the first container); status has the exact time and hash', async () => {
    const before = floorToSecond(Date.now());
    await fixture.sources.replace(fixture.namespace, v2);
    await waitForEnv(fixture.workloads, web, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
    const after = Date.now();
    const policy = await waitForPolicy(
      'web-config',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'one target recorded',
    );
    const [target] = arrayAt(policy, ['status', 'targets']);
    const reloadedAt = stringAt(target, ['lastReloadTime']) ?? '';
    expect(target).toEqual({
      kind: 'Deployment',
      name: 'web',
      lastReloadTime: reloadedAt,
      sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: sourceHash(v2) }],
    });
    expect(reloadedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(reloadedAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(reloadedAt)).toBeLessThanOrEqual(after);
    expect(stringAt(policy, ['status', 'lastReloadTime'])).toBe(reloadedAt);
  });
});

describe('ReloadPolicy: selectors, strategy, missing members, combination rules', () => {
  it('selector forms for a Secret and a Deployment, with strategy annotations', async () => {
    const secret = (version: string): SecretSpec => ({
      type: 'SECRET',
      name: 'db-credentials',
      data: { password: `p-${version}` },
      labels: { team: 'payments' },
    });
    await fixture.sources.create(fixture.namespace, secret('1'));
    const api = await plainDeployment('payments-api', { labels: { app: 'payments' } });
    await createPolicy(client(), fixture.namespace, 'payments', {
      sources: [{ kind: 'Secret', selector: { matchLabels: { team: 'payments' } } }],
      targets: [
        {
          kind: 'Deployment',
          selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['payments'] }] },
        },
      ],
      strategy: 'annotations',
    });
    await waitForBaseline(fixture.workloads, api, {
      [sourceKey(secret('1'))]: sourceHash(secret('1')),
    });
    await fixture.sources.replace(fixture.namespace, secret('2'));
    const view = await waitForView(
      fixture.workloads,
      api,
      (candidate) => candidate.templateAnnotations[SOURCE_HASHES] !== undefined,
      'source-hashes in the pod template',
    );
    expect(JSON.parse(view.templateAnnotations[SOURCE_HASHES] ?? '{}')).toEqual({
      [sourceKey(secret('2'))]: sourceHash(secret('2')),
    });
    expect(view.containers.every((entry) => Object.keys(entry.env).length === 0)).toBe(true);
  });

  it('a missing source and target are named in the conditions; both bind once they exist', async () => {
    await createPolicy(client(), fixture.namespace, 'late', {
      sources: [{ kind: 'ConfigMap', name: 'late-config' }],
      targets: [{ kind: 'Deployment', name: 'late' }],
    });
    const waiting = await waitForPolicy(
      'late',
      (candidate) => condition(candidate, 'Ready')?.status === 'False',
      'Ready False',
    );
    expect(conditionsOf(waiting).slice(0, 3)).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'SourceNotFound',
        message: 'not found: ConfigMap late-config; bound as soon as they exist',
      },
      {
        type: 'SourcesFound',
        status: 'False',
        reason: 'SourceNotFound',
        message: 'not found: ConfigMap late-config; bound as soon as they exist',
      },
      {
        type: 'TargetsFound',
        status: 'False',
        reason: 'TargetNotFound',
        message: 'not found: Deployment late; bound as soon as they exist',
      },
    ]);
    expect(waiting.status).toMatchObject({ foundSources: '0/1', foundTargets: '0/1' });
    const late = configMap('late-config', '1');
    await fixture.sources.create(fixture.namespace, late);
    const target = await plainDeployment('late');
    await waitForBaseline(fixture.workloads, target, { [sourceKey(late)]: sourceHash(late) });
    await waitForPolicy(
      'late',
      (candidate) => condition(candidate, 'Ready')?.status === 'True',
      'Ready True once both exist',
    );
  });

  it('policy plus annotation on one workload: the union of their sources rolls it', async () => {
    const annotated = configMap('annotated-config', '1');
    const bound = configMap('bound-config', '1');
    await fixture.sources.create(fixture.namespace, annotated);
    await fixture.sources.create(fixture.namespace, bound);
    const both = await plainDeployment('both', {
      annotations: { [CONFIGMAP_RELOAD]: 'annotated-config' },
    });
    await createPolicy(client(), fixture.namespace, 'both', {
      sources: [{ kind: 'ConfigMap', name: 'bound-config' }],
      targets: [{ kind: 'Deployment', name: 'both' }],
    });
    await waitForBaseline(fixture.workloads, both, {
      [sourceKey(annotated)]: sourceHash(annotated),
      [sourceKey(bound)]: sourceHash(bound),
    });
    for (const next of [configMap('annotated-config', '2'), configMap('bound-config', '2')]) {
      await fixture.sources.replace(fixture.namespace, next);
      await waitForEnv(fixture.workloads, both, {
        container: APP,
        name: envVarName(next),
        value: sourceHash(next),
      });
    }
  });

  it('conflicting strategies: the older policy wins, the newer one says Conflict', async () => {
    await fixture.sources.create(fixture.namespace, configMap('shared-config', '1'));
    await plainDeployment('shared');
    const spec = {
      sources: [{ kind: 'ConfigMap', name: 'shared-config' }],
      targets: [{ kind: 'Deployment', name: 'shared' }],
    };
    await createPolicy(client(), fixture.namespace, 'shared-first', {
      ...spec,
      strategy: 'env-vars',
    });
    // creationTimestamp has whole seconds: the second policy must be visibly younger.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await createPolicy(client(), fixture.namespace, 'shared-second', {
      ...spec,
      strategy: 'annotations',
    });
    const loser = await waitForPolicy(
      'shared-second',
      (candidate) => condition(candidate, 'Conflict')?.status === 'True',
      'Conflict True',
    );
    expect(condition(loser, 'Conflict')).toEqual({
      type: 'Conflict',
      status: 'True',
      reason: 'SettingOverridden',
      message:
        'strategy annotations is not applied to Deployment shared: policy shared-first sets it',
    });
    const winner = await waitForPolicy(
      'shared-first',
      (candidate) => condition(candidate, 'Conflict') !== undefined,
      'conditions written',
    );
    expect(condition(winner, 'Conflict')?.status).toBe('False');
    // One Warning Event on the losing policy for its entry into conflict (docs/reload-policy.md).
    const conflictEvent = {
      reason: 'ReloadPolicyConflict',
      type: 'Warning',
      message:
        'strategy annotations is not applied to Deployment shared: policy shared-first sets it',
      count: 1,
    };
    const loserRef = { kind: 'ReloadPolicy', namespace: fixture.namespace, name: 'shared-second' };
    await pollUntil(async () => ((await events().about(loserRef)).length > 0 ? true : undefined), {
      timeoutMs: STATUS_WAIT_MS,
      describe: 'the ReloadPolicyConflict Event',
    });
    expect(await events().about(loserRef)).toEqual([conflictEvent]);
    // Later status writes while the conflict holds add none: a roll is recorded on both policies.
    await fixture.sources.replace(fixture.namespace, configMap('shared-config', '2'));
    await waitForPolicy(
      'shared-second',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the roll recorded while in conflict',
    );
    expect(await events().about(loserRef)).toEqual([conflictEvent]);
    expect(
      await events().about({
        kind: 'ReloadPolicy',
        namespace: fixture.namespace,
        name: 'shared-first',
      }),
    ).toEqual([]);
  });

  it('deleting a policy rolls nothing: a later change reaches only the annotated control', async () => {
    const gone = configMap('gone-config', '1');
    await fixture.sources.create(fixture.namespace, gone);
    const unbound = await plainDeployment('unbound');
    const control = await plainDeployment('control', {
      annotations: { [CONFIGMAP_RELOAD]: 'gone-config' },
    });
    await createPolicy(client(), fixture.namespace, 'short-lived', {
      sources: [{ kind: 'ConfigMap', name: 'gone-config' }],
      targets: [{ kind: 'Deployment', name: 'unbound' }],
    });
    await waitForBaseline(fixture.workloads, unbound, { [sourceKey(gone)]: sourceHash(gone) });
    await waitForBaseline(fixture.workloads, control, { [sourceKey(gone)]: sourceHash(gone) });
    await client().request({
      method: 'DELETE',
      path: policyPath(fixture.namespace, 'short-lived'),
    });
    // The deletion re-plans `unbound` without the source: its baseline entry is pruned (its store
    // record goes, nothing is written on W), no roll.
    const before = await fixture.workloads.read(unbound);
    await waitForRecord(fixture.workloads, unbound, before, undefined);
    expect((await fixture.workloads.read(unbound)).annotations[BASELINE]).toBeUndefined();
    const next = configMap('gone-config', '2');
    await fixture.sources.replace(fixture.namespace, next);
    await waitForEnv(fixture.workloads, control, {
      container: APP,
      name: envVarName(next),
      value: sourceHash(next),
    });
    const after = await fixture.workloads.read(unbound);
    expect(after.containers).toEqual(before.containers);
    expect(after.generation).toBe(before.generation);
  });
});

describe('ReloadPolicy: syncDelay, pausePeriod, suspend', () => {
  it('syncDelay holds the roll for its quiet time (the process runs with --sync-delay=0)', async () => {
    const v1 = configMap('slow-config', '1');
    const v2 = configMap('slow-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const slow = await plainDeployment('slow');
    await createPolicy(client(), fixture.namespace, 'slow', {
      sources: [{ kind: 'ConfigMap', name: 'slow-config' }],
      targets: [{ kind: 'Deployment', name: 'slow' }],
      syncDelay: '4s',
    });
    await waitForBaseline(fixture.workloads, slow, { [sourceKey(v1)]: sourceHash(v1) });
    const changedAt = Date.now();
    await fixture.sources.replace(fixture.namespace, v2);
    await waitForEnv(fixture.workloads, slow, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
    const policy = await waitForPolicy(
      'slow',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the roll recorded',
    );
    const rolledAt = Date.parse(stringAt(policy, ['status', 'lastReloadTime']) ?? '');
    expect(rolledAt).toBeGreaterThanOrEqual(floorToSecond(changedAt + 4000));
  });

  it('pausePeriod pauses the Deployment after its roll, as the annotation would', async () => {
    const v1 = configMap('pause-config', '1');
    const v2 = configMap('pause-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('pause');
    await createPolicy(client(), fixture.namespace, 'pause', {
      sources: [{ kind: 'ConfigMap', name: 'pause-config' }],
      targets: [{ kind: 'Deployment', name: 'pause' }],
      pausePeriod: '1h',
    });
    await waitForBaseline(fixture.workloads, target, { [sourceKey(v1)]: sourceHash(v1) });
    await fixture.sources.replace(fixture.namespace, v2);
    const view = await waitForView(
      fixture.workloads,
      target,
      (candidate) => candidate.paused,
      'paused after the roll',
    );
    expect(view.containers.find((entry) => entry.name === APP)?.env).toEqual({
      [envVarName(v2)]: sourceHash(v2),
    });
    expect(view.annotations[PAUSED_AT]).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('suspend binds nothing and says so; resuming binds again', async () => {
    const v1 = configMap('suspended-config', '1');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('suspended');
    await createPolicy(client(), fixture.namespace, 'suspended', {
      sources: [{ kind: 'ConfigMap', name: 'suspended-config' }],
      targets: [{ kind: 'Deployment', name: 'suspended' }],
      suspend: true,
    });
    const policy = await waitForPolicy(
      'suspended',
      (candidate) => condition(candidate, 'Ready') !== undefined,
      'conditions written',
    );
    expect(condition(policy, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'Suspended',
      message: 'spec.suspend is true: nothing is bound',
    });
    const unbaselined = await fixture.workloads.read(target);
    expect(await fixture.workloads.baselines.baselineOf(target, unbaselined)).toBeUndefined();
    await client().request({
      method: 'PATCH',
      path: policyPath(fixture.namespace, 'suspended'),
      body: { spec: { suspend: false } },
      contentType: MERGE_PATCH,
    });
    await waitForBaseline(fixture.workloads, target, { [sourceKey(v1)]: sourceHash(v1) });
    await waitForPolicy(
      'suspended',
      (candidate) =>
        condition(candidate, 'Ready')?.status === 'True' &&
        candidate.status !== undefined &&
        isRecord(candidate.status) &&
        candidate.status.observedGeneration === 2,
      'Ready True at generation 2',
    );
  });
});

describe('ReloadPolicy: restart safety', () => {
  it('a change while kreload is down rolls once after start, and the status records it', async () => {
    const v1 = configMap('restart-config', '1');
    const v2 = configMap('restart-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('restart');
    await createPolicy(client(), fixture.namespace, 'restart', {
      sources: [{ kind: 'ConfigMap', name: 'restart-config' }],
      targets: [{ kind: 'Deployment', name: 'restart' }],
    });
    await waitForBaseline(fixture.workloads, target, { [sourceKey(v1)]: sourceHash(v1) });
    await fixture.stop();
    await fixture.sources.replace(fixture.namespace, v2);
    const down = await fixture.workloads.revisions(target);
    await fixture.start();
    await waitForEnv(fixture.workloads, target, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
    await fixture.workloads.settledRevisions(target, down.revisions + 1);
    expect((await fixture.workloads.revisions(target)).revisions).toBe(down.revisions + 1);
    const policy = await waitForPolicy(
      'restart',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the roll after the restart recorded',
    );
    expect(arrayAt(policy, ['status', 'targets'])).toMatchObject([
      {
        kind: 'Deployment',
        name: 'restart',
        sourceHashes: [{ kind: 'ConfigMap', name: 'restart-config', hash: sourceHash(v2) }],
      },
    ]);
  });
});

describe('ReloadPolicy: a label-only change re-evaluates the binding at once', () => {
  it('a source labelled into a selector: status found, a baseline (no roll for an earlier change), then a change rolls', async () => {
    const v1 = configMap('relabel-config', '1');
    const v2 = configMap('relabel-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('relabel-source');
    await createPolicy(client(), fixture.namespace, 'relabel-source', {
      sources: [{ kind: 'ConfigMap', selector: { matchLabels: { bind: 'relabel' } } }],
      targets: [{ kind: 'Deployment', name: 'relabel-source' }],
    });
    await waitForPolicy(
      'relabel-source',
      (candidate) => condition(candidate, 'SourcesFound')?.status === 'False',
      'SourcesFound False',
    );
    // A content change kreload sees while the source is not bound: it must not roll later (R7).
    await fixture.sources.replace(fixture.namespace, v2);
    await fixture.sources.patchMetadata(fixture.namespace, {
      type: 'CONFIGMAP',
      name: 'relabel-config',
      labels: { bind: 'relabel' },
    });
    const found = await waitForPolicy(
      'relabel-source',
      (candidate) => condition(candidate, 'Ready')?.status === 'True',
      'Ready True after the label',
    );
    expect(found.status).toMatchObject({ foundSources: '1/1', foundTargets: '1/1' });
    expect(condition(found, 'SourcesFound')).toEqual({
      type: 'SourcesFound',
      status: 'True',
      reason: 'AllFound',
      message: '1/1 sources found',
    });
    const baselined = await waitForBaseline(fixture.workloads, target, {
      [sourceKey(v2)]: sourceHash(v2),
    });
    expect(baselined.containers.every((entry) => Object.keys(entry.env).length === 0)).toBe(true);
    const v3 = { ...configMap('relabel-config', '3'), labels: { bind: 'relabel' } };
    await fixture.sources.replace(fixture.namespace, v3);
    await waitForEnv(fixture.workloads, target, {
      container: APP,
      name: envVarName(v3),
      value: sourceHash(v3),
    });
    // The label removed: not found again, and the baseline-free workload keeps its applied hash.
    await fixture.sources.patchMetadata(fixture.namespace, {
      type: 'CONFIGMAP',
      name: 'relabel-config',
      labels: { bind: null },
    });
    const lost = await waitForPolicy(
      'relabel-source',
      (candidate) => condition(candidate, 'SourcesFound')?.status === 'False',
      'SourcesFound False after the label went',
    );
    expect(lost.status).toMatchObject({ foundSources: '0/1' });
  });

  it('a workload labelled into a target selector: found, a baseline, then a change rolls', async () => {
    const v1 = configMap('relabel-target-config', '1');
    const v2 = configMap('relabel-target-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('relabel-target');
    await createPolicy(client(), fixture.namespace, 'relabel-target', {
      sources: [{ kind: 'ConfigMap', name: 'relabel-target-config' }],
      targets: [{ kind: 'Deployment', selector: { matchLabels: { bind: 'relabel-target' } } }],
    });
    await waitForPolicy(
      'relabel-target',
      (candidate) => condition(candidate, 'TargetsFound')?.status === 'False',
      'TargetsFound False',
    );
    await fixture.sources.replace(fixture.namespace, v2);
    await fixture.workloads.patch(target, { metadata: { labels: { bind: 'relabel-target' } } });
    const found = await waitForPolicy(
      'relabel-target',
      (candidate) => condition(candidate, 'TargetsFound')?.status === 'True',
      'TargetsFound True after the label',
    );
    expect(found.status).toMatchObject({ foundSources: '1/1', foundTargets: '1/1' });
    expect(condition(found, 'Ready')?.status).toBe('True');
    const baselined = await waitForBaseline(fixture.workloads, target, {
      [sourceKey(v2)]: sourceHash(v2),
    });
    expect(baselined.containers.every((entry) => Object.keys(entry.env).length === 0)).toBe(true);
    const v3 = configMap('relabel-target-config', '3');
    await fixture.sources.replace(fixture.namespace, v3);
    await waitForEnv(fixture.workloads, target, {
      container: APP,
      name: envVarName(v3),
      value: sourceHash(v3),
    });
  });
});

describe('ReloadPolicy: a status write lost to a crash', () => {
  it('is recovered at start from the workload: the hashes, and the time last-reloaded-from dates', async () => {
    const v1 = configMap('lost-config', '1');
    const v2 = configMap('lost-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('lost');
    await createPolicy(client(), fixture.namespace, 'lost', {
      sources: [{ kind: 'ConfigMap', name: 'lost-config' }],
      targets: [{ kind: 'Deployment', name: 'lost' }],
      strategy: 'annotations',
    });
    await waitForBaseline(fixture.workloads, target, { [sourceKey(v1)]: sourceHash(v1) });
    await fixture.sources.replace(fixture.namespace, v2);
    const rolled = await waitForView(
      fixture.workloads,
      target,
      (candidate) => candidate.templateAnnotations[LAST_RELOADED_FROM] !== undefined,
      'last-reloaded-from in the pod template',
    );
    await waitForPolicy(
      'lost',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the roll recorded',
    );
    // The state a kill -9 between the workload patch and the status write leaves: the workload
    // rolled, the policy status without its record.
    await fixture.stop();
    await client().request({
      method: 'PATCH',
      path: `${policyPath(fixture.namespace, 'lost')}/status`,
      body: { status: { targets: [], lastReloadTime: null } },
      contentType: MERGE_PATCH,
    });
    const cleared = await readPolicy(client(), fixture.namespace, 'lost');
    expect(arrayAt(cleared, ['status', 'targets'])).toEqual([]);
    await fixture.start();
    const recovered = await waitForPolicy(
      'lost',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the record recovered after the start',
    );
    const observedAt = (
      JSON.parse(rolled.templateAnnotations[LAST_RELOADED_FROM] ?? '{}') as { observedAt: number }
    ).observedAt;
    const time = new Date(observedAt * 1000).toISOString().replace('.000Z', 'Z');
    expect(arrayAt(recovered, ['status', 'targets'])).toEqual([
      {
        kind: 'Deployment',
        name: 'lost',
        lastReloadTime: time,
        sourceHashes: [{ kind: 'ConfigMap', name: 'lost-config', hash: sourceHash(v2) }],
      },
    ]);
    expect(stringAt(recovered, ['status', 'lastReloadTime'])).toBe(time);
    // Nothing rolled again for the recovery.
    expect((await fixture.workloads.read(target)).generation).toBe(rolled.generation);
  });
});

describe('ReloadPolicy: kill -9 after the roll, before the status write', () => {
  const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
  const KRELOAD = `system:serviceaccount:${KRELOAD_NAMESPACE}:${IDENTITY}`;
  let refusal = '';
  let killed = false;

  /** A dry-run status write by the admin that the refusal also denies: is it enforced now? */
  async function awaitRefusal(enforced: boolean): Promise<void> {
    await pollUntil(
      async () => {
        try {
          await client().request({
            method: 'PATCH',
            path: `${policyPath(fixture.namespace, 'killed')}/status?dryRun=All`,
            body: { status: { foundSources: 'probe' } },
            contentType: MERGE_PATCH,
          });
          return !enforced;
        } catch (error) {
          if (error instanceof KubeJsonError && error.status >= 400 && error.status < 500) {
            return enforced;
          }
          throw error;
        }
      },
      {
        timeoutMs: STATUS_WAIT_MS,
        describe: `the status refusal to be ${enforced ? 'on' : 'off'}`,
      },
    );
  }

  /** A ValidatingAdmissionPolicy that refuses kreload's status writes in this namespace. */
  async function refuseStatusWrites(): Promise<void> {
    refusal = `${fixture.namespace}-policy-status`;
    await client().request({
      method: 'POST',
      path: `${ADMISSION}/validatingadmissionpolicies`,
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: refusal },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            namespaceSelector: {
              matchLabels: { 'kubernetes.io/metadata.name': fixture.namespace },
            },
            resourceRules: [
              {
                apiGroups: ['kreload.io'],
                apiVersions: ['v1alpha1'],
                operations: ['UPDATE'],
                resources: ['reloadpolicies/status'],
              },
            ],
          },
          validations: [
            {
              expression:
                `request.userInfo.username != '${KRELOAD}' && ` +
                `!(has(object.status) && has(object.status.foundSources) && ` +
                `object.status.foundSources == 'probe')`,
              message: 'e2e: the ReloadPolicy status may not be written now',
            },
          ],
        },
      },
    });
    await client().request({
      method: 'POST',
      path: `${ADMISSION}/validatingadmissionpolicybindings`,
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: refusal },
        spec: { policyName: refusal, validationActions: ['Deny'] },
      },
    });
    await awaitRefusal(true);
  }

  async function allowStatusWrites(): Promise<void> {
    if (refusal === '') return;
    for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies']) {
      await client()
        .request({ method: 'DELETE', path: `${ADMISSION}/${kind}/${refusal}` })
        .catch(() => undefined);
    }
    refusal = '';
    await awaitRefusal(false);
  }

  afterEach(async () => {
    await allowStatusWrites();
    // A failed test must leave kreload running for the rest of the file.
    if (killed) await fixture.start();
    killed = false;
  });

  it('the status write refused, kreload killed with SIGKILL: the hashes are recovered at start', async () => {
    const v1 = configMap('killed-config', '1');
    const v2 = configMap('killed-config', '2');
    await fixture.sources.create(fixture.namespace, v1);
    const target = await plainDeployment('killed');
    await createPolicy(client(), fixture.namespace, 'killed', {
      sources: [{ kind: 'ConfigMap', name: 'killed-config' }],
      targets: [{ kind: 'Deployment', name: 'killed' }],
    });
    await waitForBaseline(fixture.workloads, target, { [sourceKey(v1)]: sourceHash(v1) });
    await waitForPolicy(
      'killed',
      (candidate) => condition(candidate, 'Ready')?.status === 'True',
      'Ready True',
    );
    await refuseStatusWrites();
    const before = await scrapeMetrics(fixture.kreload);
    await fixture.sources.replace(fixture.namespace, v2);
    await waitForEnv(fixture.workloads, target, {
      container: APP,
      name: envVarName(v2),
      value: sourceHash(v2),
    });
    // The roll is done and its status write was refused: kreload holds the record in memory only.
    await pollUntil(
      async () =>
        (await scrapeMetrics(fixture.kreload)).delta(before, 'reloader_errors_total', {
          type: 'policy_status_error',
        }) > 0 || undefined,
      { timeoutMs: STATUS_WAIT_MS, describe: 'the refused status write' },
    );
    await fixture.kill9();
    killed = true;
    await allowStatusWrites();
    expect(
      arrayAt(await readPolicy(client(), fixture.namespace, 'killed'), ['status', 'targets']),
    ).toEqual([]);
    const rolled = await fixture.workloads.read(target);
    await fixture.start();
    killed = false;
    const recovered = await waitForPolicy(
      'killed',
      (candidate) => arrayAt(candidate, ['status', 'targets']).length === 1,
      'the record recovered after the start',
    );
    // env-vars: the workload records no roll time, so the record has none (docs/reload-policy.md).
    expect(arrayAt(recovered, ['status', 'targets'])).toEqual([
      {
        kind: 'Deployment',
        name: 'killed',
        sourceHashes: [{ kind: 'ConfigMap', name: 'killed-config', hash: sourceHash(v2) }],
      },
    ]);
    expect((await fixture.workloads.read(target)).generation).toBe(rolled.generation);
  });
});
