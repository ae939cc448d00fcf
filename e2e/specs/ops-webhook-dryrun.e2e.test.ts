// Spec §13.7 (--webhook-url) and §13.8 (--dry-run): both modes decide as usual but write no
// workload. Webhook mode posts the §13.7 JSON body to a local receiver; dry run records
// DryRunReload Events (once per distinct desired state) and counts skipped{reason="dry_run"}.
// "No write" is read from kube-apiserver's audit log of kreload's ServiceAccount.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTO, BASELINE, CONFIGMAP_RELOAD, SEARCH } from '../harness/annotations.ts';
import { AuditLog, countRequests } from '../harness/audit.ts';
import { HttpReceiver } from '../harness/http-receiver.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { runKreloadToExit } from '../harness/kreload-runs.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { PollTimeoutError, pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_USER } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, DELETE_MARKER_HASH, SourceClient } from '../harness/sources.ts';
import { podSpec, WorkloadClient, type WorkloadView } from '../harness/workloads.ts';

const cluster = sharedCluster();
const core = cluster.kc.makeApiClient(CoreV1Api);
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });
const PROCESS_START = new MetricsSnapshot({ samples: [] });

const CONFIG = 'app-config';
const UNUSED = 'unused-config';
/** Opted in with auto. */
const AUTO_WORKLOAD = 'api';
/** Opted in with an explicit reload list. */
const LISTED_WORKLOAD = 'worker';
/** References CONFIG without opting in. */
const PLAIN_WORKLOAD = 'plain';
const WORKLOAD_RESOURCES = ['deployments', 'statefulsets', 'daemonsets', 'jobs', 'cronjobs'];

function auditLog(): AuditLog {
  const path = cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

/** kreload's requests other than get/list/watch in `namespace`, by `verb resource`. */
async function writesSince(audit: AuditLog, offset: number, namespace: string) {
  const events = (await audit.eventsSince(offset)).filter(
    (event) => event.objectRef?.namespace === namespace,
  );
  return Object.fromEntries(
    [...countRequests(events, KRELOAD_USER)].filter(
      ([request]) => !/^(get|list|watch) /.test(request),
    ),
  );
}

function workloadWrites(writes: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(writes).filter(([request]) =>
      WORKLOAD_RESOURCES.includes(request.split(' ')[1]?.split('/')[0] ?? ''),
    ),
  );
}

async function createWorkloads(namespace: string): Promise<void> {
  const env = podSpec({ app: { envFrom: [{ configMapRef: { name: CONFIG } }] } });
  await workloads.create('Deployment', {
    namespace,
    name: AUTO_WORKLOAD,
    annotations: { [AUTO]: 'true' },
    podSpec: env,
  });
  await workloads.create('Deployment', {
    namespace,
    name: LISTED_WORKLOAD,
    annotations: { [CONFIGMAP_RELOAD]: CONFIG },
    podSpec: podSpec({}),
  });
  await workloads.create('Deployment', { namespace, name: PLAIN_WORKLOAD, podSpec: env });
}

/** What a workload write would change (kube-controller-manager only writes status). */
function writableParts(view: WorkloadView) {
  return {
    generation: view.generation,
    annotations: view.annotations,
    templateAnnotations: view.templateAnnotations,
    containers: view.containers,
  };
}

async function readAll(namespace: string) {
  const names = [AUTO_WORKLOAD, LISTED_WORKLOAD, PLAIN_WORKLOAD];
  return Promise.all(
    names.map(async (name) =>
      writableParts(await workloads.read({ kind: 'Deployment', namespace, name })),
    ),
  );
}

describe('webhook mode (§13.7)', () => {
  const receiver = new HttpReceiver();
  const audit = auditLog();
  let namespace: string;
  let kreload: KreloadProcess;
  let auditStart: number;
  let initial: Awaited<ReturnType<typeof readAll>>;

  beforeAll(async () => {
    const identity = await installKreloadIdentity(cluster);
    namespace = await cluster.createNamespace('ops-webhook');
    await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { mode: 'v1' } });
    await sources.create(namespace, { type: 'CONFIGMAP', name: UNUSED, data: { mode: 'v1' } });
    await createWorkloads(namespace);
    await receiver.start();
    auditStart = await audit.mark();
    kreload = await startKreload({
      name: 'ops-webhook',
      kubeconfig: identity.kubeconfigPath,
      args: [
        `--namespaces=${namespace}`,
        `--webhook-url=${receiver.url('/hook?token=webhook-secret')}`,
        // A window, so that two quick changes are posted once (§13.7 item 1).
        '--sync-delay=1s',
        '--resync-period=0',
        '--reload-on-create=true',
        '--reload-on-delete=true',
      ],
    });
    await waitUntilSettled(kreload, { since: PROCESS_START });
    initial = await readAll(namespace);
  });

  afterAll(async () => {
    await kreload.stop();
    await receiver.stop();
  });

  function bodies(): unknown[] {
    return receiver.requests.map((request): unknown => JSON.parse(request.body));
  }

  function sourceBody(options: {
    event: string;
    name: string;
    hash: string;
    workloads: readonly string[];
  }) {
    return {
      webhook: 'update successful',
      event: options.event,
      source: { kind: 'ConfigMap', namespace, name: options.name, hash: options.hash },
      workloads: options.workloads.map((name) => ({ kind: 'Deployment', namespace, name })),
      observedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/) as unknown,
    };
  }

  it('logs one startup warning and records no baseline', async () => {
    const log = await kreload.readLog();
    expect(
      log.split('\n').filter((line) => line.includes('level=warn') && /webhook/i.test(line)),
    ).toHaveLength(1);
    expect(log).not.toContain('webhook-secret');
    expect(await readAll(namespace)).toEqual(initial);
    expect(initial.map((parts) => parts.annotations[BASELINE])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Nor in the baseline store, where the default keeps never-rolled workloads' baselines.
    expect(await workloads.baselines.recordsOf(namespace)).toEqual(new Map());
    expect(receiver.requests).toEqual([]);
  });

  it('posts one JSON body per change naming the workloads that would roll', async () => {
    const before = Date.now();
    const data = { mode: 'v2' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    const [request] = await receiver.waitForRequests(1);
    const after = Date.now();

    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/hook?token=webhook-secret');
    expect(request?.contentType).toMatch(/^application\/json/);
    expect(request?.body.startsWith('{"webhook":"update successful",')).toBe(true);
    expect(bodies()).toEqual([
      sourceBody({
        event: 'update',
        name: CONFIG,
        hash: configMapHash({ data }),
        workloads: [AUTO_WORKLOAD, LISTED_WORKLOAD],
      }),
    ]);
    const observedAt = Date.parse(String(Reflect.get(bodies()[0] as object, 'observedAt')));
    expect(observedAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(observedAt).toBeLessThanOrEqual(after);
  });

  it('posts changes of a source nobody tracks, with no workloads', async () => {
    const data = { mode: 'v2' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: UNUSED, data });
    await receiver.waitForRequests(2);
    expect(bodies()[1]).toEqual(
      sourceBody({ event: 'update', name: UNUSED, hash: configMapHash({ data }), workloads: [] }),
    );
  });

  it('coalesces two changes inside --sync-delay into one POST with the latest hash', async () => {
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { mode: 'v3' } });
    const latest = { mode: 'v4' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data: latest });
    await receiver.waitForRequests(3);
    // Barrier: v3 would have been due before v4, so it would be here by now.
    expect(bodies().slice(2)).toEqual([
      sourceBody({
        event: 'update',
        name: CONFIG,
        hash: configMapHash({ data: latest }),
        workloads: [AUTO_WORKLOAD, LISTED_WORKLOAD],
      }),
    ]);
  });

  it('posts creations and deletions (with MARKER) when --reload-on-create/-delete are true', async () => {
    const data = { mode: 'new' };
    await sources.create(namespace, { type: 'CONFIGMAP', name: 'created-config', data });
    await receiver.waitForRequests(4);
    await sources.delete(namespace, { type: 'CONFIGMAP', name: UNUSED });
    await receiver.waitForRequests(5);
    expect(bodies().slice(3)).toEqual([
      sourceBody({
        event: 'create',
        name: 'created-config',
        hash: configMapHash({ data }),
        workloads: [],
      }),
      sourceBody({ event: 'delete', name: UNUSED, hash: DELETE_MARKER_HASH, workloads: [] }),
    ]);
  });

  it('never wrote a workload', async () => {
    // Barrier: the queue is idle and every POST above has arrived.
    await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    expect(await readAll(namespace)).toEqual(initial);
    expect(workloadWrites(await writesSince(audit, auditStart, namespace))).toEqual({});
    const metrics = await scrapeMetrics(kreload);
    expect(metrics.value('reloader_reload_executed_total')).toBe(0);
    expect(metrics.value('reloader_errors_total', { type: 'webhook_error' })).toBe(0);
  });
});

describe('dry run (§13.8)', () => {
  const receiver = new HttpReceiver();
  const audit = auditLog();
  let namespace: string;
  let kreload: KreloadProcess;
  let auditStart: number;
  let initial: Awaited<ReturnType<typeof readAll>>;

  beforeAll(async () => {
    const identity = await installKreloadIdentity(cluster);
    namespace = await cluster.createNamespace('ops-dryrun');
    await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { mode: 'v1' } });
    await createWorkloads(namespace);
    await receiver.start();
    auditStart = await audit.mark();
    kreload = await startKreload({
      name: 'ops-dryrun',
      kubeconfig: identity.kubeconfigPath,
      env: {
        POD_NAME: 'kreload-ops-dryrun-0',
        // Alerts are on, and must still not be sent (§13.8).
        ALERT_ON_RELOAD: 'true',
        ALERT_SINK: 'webhook',
        ALERT_WEBHOOK_URL: receiver.url('/alerts'),
      },
      args: [`--namespaces=${namespace}`, '--dry-run', '--sync-delay=0', '--resync-period=0'],
    });
    // Barrier: the first-sight reconciles of the two opted-in workloads are over.
    await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: 2 });
    initial = await readAll(namespace);
  });

  afterAll(async () => {
    await kreload.stop();
    await receiver.stop();
  });

  async function dryRunEvents(): Promise<{ object: string; message: string; count: number }[]> {
    const { items } = await core.listNamespacedEvent({ namespace });
    return items
      .filter((event) => event.reason === 'DryRunReload')
      .map((event) => ({
        object: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
        type: event.type,
        message: event.message ?? '',
        count: event.count ?? 1,
      }))
      .map(({ type, ...rest }) => {
        expect(type).toBe('Normal');
        return rest;
      })
      .sort((a, b) => `${a.object}${a.message}`.localeCompare(`${b.object}${b.message}`));
  }

  function wouldRoll(workload: string, hash: string) {
    return `Dry run: would roll '${workload}' of type 'Deployment' for configmap/${CONFIG}=${hash.slice(0, 12)}`;
  }

  /** The workload Event and the source Event with the same text (§13.3), each counted once. */
  function expectedEvents(hashes: readonly string[]) {
    return hashes
      .flatMap((hash) =>
        [AUTO_WORKLOAD, LISTED_WORKLOAD].flatMap((workload) => [
          { object: `Deployment/${workload}`, message: wouldRoll(workload, hash), count: 1 },
          { object: `ConfigMap/${CONFIG}`, message: wouldRoll(workload, hash), count: 1 },
        ]),
      )
      .sort((a, b) => `${a.object}${a.message}`.localeCompare(`${b.object}${b.message}`));
  }

  /** The Events once there are `count`, or whatever is there after 20 s (to show the diff). */
  async function waitForEvents(count: number) {
    try {
      return await pollUntil(
        async () => {
          const events = await dryRunEvents();
          return events.length >= count ? events : undefined;
        },
        { timeoutMs: 20_000, describe: `${count} DryRunReload Events in ${namespace}` },
      );
    } catch (error) {
      if (!(error instanceof PollTimeoutError)) throw error;
      return dryRunEvents();
    }
  }

  it('writes no baseline at first sight and reports no roll for it', async () => {
    expect(await readAll(namespace)).toEqual(initial);
    expect(initial.map((parts) => parts.annotations[BASELINE])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Nor in the baseline store, where the default keeps never-rolled workloads' baselines.
    expect(await workloads.baselines.recordsOf(namespace)).toEqual(new Map());
    expect(await dryRunEvents()).toEqual([]);
  });

  it('a change: DryRunReload on each workload and on the source, skipped{dry_run} per workload', async () => {
    const before = await scrapeMetrics(kreload);
    const data = { mode: 'v2' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    const events = await waitForEvents(4);
    const after = await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
      minReconciles: 2,
    });

    expect(events).toEqual(expectedEvents([configMapHash({ data })]));
    expect({
      dryRun: after.delta(before, 'reloader_skipped_total', { reason: 'dry_run' }),
      executed: after.delta(before, 'reloader_reload_executed_total'),
      actions: after.delta(before, 'reloader_action_total'),
      reconcileSuccess: after.delta(before, 'reloader_reconcile_total', { result: 'success' }),
    }).toEqual({ dryRun: 2, executed: 0, actions: 0, reconcileSuccess: 0 });
  });

  it('reports a (workload, desired state) pair once, however often it is reconciled', async () => {
    const before = await scrapeMetrics(kreload);
    // `search: "false"` is a §3.1 key, so the workload is reconciled again; the decision and the
    // desired state stay the same.
    await workloads.patch(
      { kind: 'Deployment', namespace, name: AUTO_WORKLOAD },
      { metadata: { annotations: { [SEARCH]: 'false' } } },
    );
    const after = await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'deployments', event: 'update', atLeast: 1 }],
      minReconciles: 1,
    });
    expect(after.delta(before, 'reloader_skipped_total', { reason: 'dry_run' })).toBe(1);
    expect(await dryRunEvents()).toEqual(expectedEvents([configMapHash({ data: { mode: 'v2' } })]));
  });

  it('a second change is a new desired state: new Events', async () => {
    const data = { mode: 'v3' };
    await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
    expect(await waitForEvents(8)).toEqual(
      expectedEvents([configMapHash({ data: { mode: 'v2' } }), configMapHash({ data })]),
    );
  });

  it('never wrote a workload and sent no alert', async () => {
    await waitUntilSettled(kreload, { since: await scrapeMetrics(kreload) });
    const now = await readAll(namespace);
    // The admin's own `search` patch aside, nothing moved.
    const template = (parts: (typeof now)[number]) => ({
      templateAnnotations: parts.templateAnnotations,
      containers: parts.containers,
    });
    expect(now.map(template)).toEqual(initial.map(template));
    expect(now.map((parts) => parts.annotations[BASELINE])).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    // Nor in the baseline store, where the default keeps never-rolled workloads' baselines.
    expect(await workloads.baselines.recordsOf(namespace)).toEqual(new Map());
    expect(workloadWrites(await writesSince(audit, auditStart, namespace))).toEqual({});
    expect(receiver.requests).toEqual([]);
  });
});

describe('--dry-run with --webhook-url (§13.8, §12.6)', () => {
  it('is a configuration error: exit 2, nothing contacted', async () => {
    const run = await runKreloadToExit({
      args: ['--dry-run', '--webhook-url=http://127.0.0.1:9/hook', '--kubeconfig=/nonexistent'],
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^kreload: invalid configuration: .*dry-run/m);
  });
});
