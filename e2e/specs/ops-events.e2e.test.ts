// Spec §13.3: the core/v1 Events kreload records, read back through the API as the admin: reasons,
// types, exact messages, the reporting fields, folding of identical Events into a count, the
// fan-out summary on the source, and ReloadFail when a roll is refused (§10, §14 "RBAC 403 on a
// write").
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import {
  clusterRulesWith,
  grantInNamespace,
  installCustomIdentity,
  releaseNamespaceRules,
} from '../harness/identity.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { MetricsSnapshot, waitUntilSettled } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, SourceClient } from '../harness/sources.ts';
import { podSpec, WorkloadClient } from '../harness/workloads.ts';

const cluster = sharedCluster();
const core = cluster.kc.makeApiClient(CoreV1Api);
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });

const POD_NAME = 'kreload-ops-events-0';
const CONFIG = 'app-config';
const DEPLOYMENTS = ['api', 'worker'];
/** Every counter of a fresh process is 0: deltas from here are totals. */
const PROCESS_START = new MetricsSnapshot({ samples: [] });

/** What a spec asserts about one Event, whoever wrote it. */
interface EventFacts {
  readonly object: string;
  readonly reason: string;
  readonly type: string;
  readonly message: string;
  readonly count: number;
}

async function kreloadEvents(namespace: string): Promise<CoreV1Event[]> {
  const { items } = await core.listNamespacedEvent({ namespace });
  return items.filter(
    (event) => event.source?.component === 'kreload' || event.reportingComponent === 'kreload',
  );
}

function factsOf(event: CoreV1Event): EventFacts {
  return {
    object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
    reason: event.reason ?? '',
    type: event.type ?? '',
    message: event.message ?? '',
    count: event.count ?? 1,
  };
}

function byObjectAndMessage(a: EventFacts, b: EventFacts): number {
  return `${a.object} ${a.message}`.localeCompare(`${b.object} ${b.message}`);
}

/**
 * Polls until kreload's Events in `namespace` are exactly `expected` (any order). A folded repeat's
 * count is written up to 30 s after the Event's last write (§13.3), hence the wait.
 */
async function expectEvents(namespace: string, expected: readonly EventFacts[]): Promise<void> {
  const want = [...expected].sort(byObjectAndMessage);
  let last: EventFacts[] = [];
  try {
    await pollUntil(
      async () => {
        last = (await kreloadEvents(namespace)).map(factsOf).sort(byObjectAndMessage);
        return JSON.stringify(last) === JSON.stringify(want);
      },
      { timeoutMs: 45_000, describe: `kreload's Events in ${namespace}` },
    );
  } catch {
    // Show the difference rather than a timeout.
    expect(last).toEqual(want);
  }
}

function reloaded(namespace: string, workload: string, count: number): EventFacts {
  return {
    object: `Deployment/${workload}`,
    reason: 'Reloaded',
    type: 'Normal',
    message:
      `Changes detected in '${CONFIG}' of type 'CONFIGMAP' in namespace '${namespace}', ` +
      `Updated '${workload}' of type 'Deployment' in namespace '${namespace}'`,
    count,
  };
}

function workloadsReloaded(hash: string): EventFacts {
  return {
    object: `ConfigMap/${CONFIG}`,
    reason: 'WorkloadsReloaded',
    type: 'Normal',
    message: `Change to ConfigMap '${CONFIG}' (hash ${hash.slice(0, 12)}) rolled 2 workload(s): Deployment/api, Deployment/worker`,
    count: 1,
  };
}

async function createScenario(prefix: string, names: readonly string[]): Promise<string> {
  const namespace = await cluster.createNamespace(prefix);
  await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { mode: 'v1' } });
  for (const name of names) {
    await workloads.create('Deployment', {
      namespace,
      name,
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: CONFIG } }] } }),
    });
  }
  return namespace;
}

describe('Events of successful rolls (§13.3)', () => {
  let namespace: string;
  let kreload: KreloadProcess;

  beforeAll(async () => {
    const identity = await installKreloadIdentity(cluster);
    namespace = await createScenario('ops-events', DEPLOYMENTS);
    kreload = await startKreload({
      name: 'ops-events',
      kubeconfig: identity.kubeconfigPath,
      env: { POD_NAME, POD_NAMESPACE: 'kreload-system' },
      args: [`--namespaces=${namespace}`, '--sync-delay=0', '--resync-period=0'],
    });
  });

  afterAll(async () => {
    await kreload.stop();
  });

  it('records no Event for first-sight baselines', async () => {
    // Barrier: both baselines written (their echoes are not planned).
    await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: DEPLOYMENTS.length });
    expect(await kreloadEvents(namespace)).toEqual([]);
  });

  it('one change: Reloaded on each workload and one WorkloadsReloaded on the ConfigMap', async () => {
    const data = { mode: 'v2' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    await expectEvents(namespace, [
      reloaded(namespace, 'api', 1),
      reloaded(namespace, 'worker', 1),
      workloadsReloaded(configMapHash({ data })),
    ]);
  });

  it('names kreload as source and reporting controller, POD_NAME as instance, and the object by UID', async () => {
    const events = await kreloadEvents(namespace);
    const api = await workloads.read({ kind: 'Deployment', namespace, name: 'api' });
    const config = await core.readNamespacedConfigMap({ namespace, name: CONFIG });
    const reporting = events.map((event) => ({
      object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
      component: event.source?.component,
      reportingComponent: event.reportingComponent,
      reportingInstance: event.reportingInstance,
    }));
    expect(reporting).toContainEqual({
      object: 'Deployment/api',
      component: 'kreload',
      reportingComponent: 'kreload',
      reportingInstance: POD_NAME,
    });
    const onApi = events.find((event) => event.involvedObject.name === 'api');
    expect(onApi?.involvedObject).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace,
      name: 'api',
      uid: api.uid,
    });
    const onConfig = events.find((event) => event.involvedObject.kind === 'ConfigMap');
    expect(onConfig?.involvedObject).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace,
      name: CONFIG,
      uid: config.metadata?.uid,
    });
  });

  it('a second change folds each identical Reloaded into a count of 2; the summary names the new hash', async () => {
    const first = configMapHash({ data: { mode: 'v2' } });
    const data = { mode: 'v3' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    await expectEvents(namespace, [
      reloaded(namespace, 'api', 2),
      reloaded(namespace, 'worker', 2),
      workloadsReloaded(first),
      workloadsReloaded(configMapHash({ data })),
    ]);
  });

  it('a change that rolls its only workload writes Reloaded on it and no summary on the source', async () => {
    const solo = 'solo-config';
    await sources.create(namespace, { type: 'CONFIGMAP', name: solo, data: { mode: 'v1' } });
    await workloads.create('Deployment', {
      namespace,
      name: 'solo',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: solo } }] } }),
    });
    const settled = await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: 1 });
    await sources.replace(namespace, { type: 'CONFIGMAP', name: solo, data: { mode: 'v2' } });
    await waitUntilSettled(kreload, {
      since: settled,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
      minReconciles: 1,
    });
    const message =
      `Changes detected in '${solo}' of type 'CONFIGMAP' in namespace '${namespace}', ` +
      `Updated 'solo' of type 'Deployment' in namespace '${namespace}'`;
    await pollUntil(
      async () =>
        (await kreloadEvents(namespace)).some(
          (event) => event.reason === 'Reloaded' && event.message === message,
        ),
      { timeoutMs: 20_000, describe: "solo's Reloaded Event" },
    );
    const onSolo = (await kreloadEvents(namespace))
      .map(factsOf)
      .filter((facts) => facts.object === `ConfigMap/${solo}`);
    expect(onSolo).toEqual([]);
  });
});

describe('ReloadFail when the API refuses the roll (§10 "Not retried: 403")', () => {
  let namespace: string;
  let kreload: KreloadProcess;

  beforeAll(async () => {
    // Everything kreload needs except `patch` on the apps kinds.
    const identity = await installCustomIdentity(cluster, {
      name: 'kreload-ops-events-nopatch',
      rules: clusterRulesWith((rule) =>
        rule.resources?.includes('deployments') === true
          ? {
              apiGroups: rule.apiGroups,
              resources: rule.resources,
              verbs: rule.verbs.filter((verb) => verb !== 'patch'),
            }
          : rule,
      ),
    });
    // The chart's Role in kreload's namespace: the baseline store works, so the roll's PATCH is
    // the only write the API refuses (without it, the store's refusal would send first-sight
    // baselines to the workload as well, a second refused write at an unpredictable moment).
    await grantInNamespace(cluster, {
      name: 'kreload-ops-events-nopatch',
      namespace: KRELOAD_NAMESPACE,
      rules: releaseNamespaceRules(),
    });
    namespace = await createScenario('ops-events-403', ['locked']);
    kreload = await startKreload({
      name: 'ops-events-403',
      kubeconfig: identity.kubeconfigPath,
      env: { POD_NAME, POD_NAMESPACE: 'kreload-system' },
      args: [`--namespaces=${namespace}`, '--sync-delay=0', '--resync-period=0'],
    });
  });

  afterAll(async () => {
    await kreload.stop();
  });

  it('records a Warning ReloadFail on the workload, counts one failed roll and retries nothing', async () => {
    // Barrier: the first-sight reconcile (its baseline patch is refused too) is over.
    const settledBefore = await waitUntilSettled(kreload, {
      since: PROCESS_START,
      minReconciles: 1,
    });
    const untouched = await workloads.read({ kind: 'Deployment', namespace, name: 'locked' });

    const data = { mode: 'v2' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    const after = await waitUntilSettled(kreload, {
      since: settledBefore,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
      minReconciles: 1,
    });

    expect({
      executedFalse: after.delta(settledBefore, 'reloader_reload_executed_total', {
        success: 'false',
      }),
      executedTrue: after.delta(settledBefore, 'reloader_reload_executed_total', {
        success: 'true',
      }),
      actionError: after.delta(settledBefore, 'reloader_action_total', {
        workload_kind: 'Deployment',
        result: 'error',
      }),
      reconcileError: after.delta(settledBefore, 'reloader_reconcile_total', { result: 'error' }),
      retries: after.delta(settledBefore, 'reloader_retries_total'),
      gaveUp: after.delta(settledBefore, 'reloader_errors_total', { type: 'write_gave_up' }),
    }).toEqual({
      executedFalse: 1,
      executedTrue: 0,
      actionError: 1,
      reconcileError: 1,
      retries: 0,
      gaveUp: 0,
    });

    const hash12 = configMapHash({ data }).slice(0, 12);
    const facts = await pollUntil(
      async () => {
        const events = (await kreloadEvents(namespace)).map(factsOf);
        return events.some((e) => e.reason === 'WorkloadsReloaded' && e.message.includes(hash12))
          ? events
          : undefined;
      },
      { timeoutMs: 20_000, describe: 'the WorkloadsReloaded summary of the failed fan-out' },
    );
    const failures = facts.filter((e) => e.reason === 'ReloadFail');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ object: 'Deployment/locked', type: 'Warning' });
    expect(failures[0]?.message).toMatch(
      new RegExp(
        `^Update for 'locked' of type 'Deployment' in namespace '${namespace}' failed with error .*forbidden`,
        's',
      ),
    );
    const summary = facts.find((e) => e.reason === 'WorkloadsReloaded');
    expect(summary?.message).toBe(
      `Change to ConfigMap '${CONFIG}' (hash ${hash12}) rolled 0 workload(s); 1 failed`,
    );
    expect(facts.filter((e) => e.reason === 'Reloaded')).toEqual([]);
    const view = await workloads.read({ kind: 'Deployment', namespace, name: 'locked' });
    expect(view.containers).toEqual(untouched.containers);
  });
});
