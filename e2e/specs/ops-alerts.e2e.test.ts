// Spec §13.6: one alert per successful roll, in each sink's format, received by a local HTTP
// endpoint; none for baselines; failures retried (429/5xx only), counted as alert_error, and never
// in the way of the roll. Each row runs its own kreload with the alert env of §12.5.
import { afterEach, describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { HttpReceiver } from '../harness/http-receiver.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { MetricsSnapshot, scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { configMapHash, envVarName, SourceClient } from '../harness/sources.ts';
import { podSpec, WorkloadClient } from '../harness/workloads.ts';

const cluster = sharedCluster();
const sources = new SourceClient({ kc: cluster.kc });
const workloads = new WorkloadClient({ kc: cluster.kc });

const CONFIG = 'app-config';
const WORKLOAD = 'api';
const ADDITIONAL_INFO = 'cluster e2e-1';
/** The path and query often hold a token (§13.6): they must never reach the log. */
const HOOK_PATH = '/services/T000/B000/hook-secret-path?token=hook-secret-query';
const PROCESS_START = new MetricsSnapshot({ samples: [] });

interface Running {
  readonly kreload: KreloadProcess;
  readonly receiver: HttpReceiver;
}

const running: Running[] = [];

afterEach(async () => {
  for (const { kreload, receiver } of running.splice(0)) {
    await kreload.stop();
    await receiver.stop();
  }
});

/** §13.6's message for one source and one workload, with the ALERT_ADDITIONAL_INFO prefix. */
function alertMessage(namespace: string): string {
  return (
    `${ADDITIONAL_INFO} : Reloader detected changes in *${CONFIG}* of type *CONFIGMAP* in namespace *${namespace}*. ` +
    `Hence reloaded *${WORKLOAD}* of type *Deployment* in namespace *${namespace}*`
  );
}

/** A namespace with one ConfigMap and one opted-in Deployment, kreload with alerts on, baselined. */
async function startScenario(options: {
  readonly prefix: string;
  readonly sink: string;
  readonly statuses?: readonly number[];
}): Promise<Running & { readonly namespace: string }> {
  const identity = await installKreloadIdentity(cluster);
  const namespace = await cluster.createNamespace(options.prefix);
  await sources.create(namespace, { type: 'CONFIGMAP', name: CONFIG, data: { mode: 'v1' } });
  await workloads.create('Deployment', {
    namespace,
    name: WORKLOAD,
    annotations: { [AUTO]: 'true' },
    podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: CONFIG } }] } }),
  });
  const receiver = new HttpReceiver(
    options.statuses === undefined ? {} : { statuses: options.statuses },
  );
  await receiver.start();
  const kreload = await startKreload({
    name: options.prefix,
    kubeconfig: identity.kubeconfigPath,
    env: {
      ALERT_ON_RELOAD: 'true',
      ALERT_SINK: options.sink,
      ALERT_WEBHOOK_URL: `  ${receiver.url(HOOK_PATH)} `,
      ALERT_ADDITIONAL_INFO: ADDITIONAL_INFO,
    },
    args: [`--namespaces=${namespace}`, '--sync-delay=0', '--resync-period=0'],
  });
  running.push({ kreload, receiver });
  // Barrier: the first-sight baseline is written before the change (its echo is not planned).
  await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: 1 });
  return { kreload, receiver, namespace };
}

async function changeAndAwaitRoll(namespace: string): Promise<void> {
  const data = { mode: 'v2' };
  await sources.replace(namespace, { type: 'CONFIGMAP', name: CONFIG, data });
  const hash = configMapHash({ data });
  await pollUntil(
    async () => {
      const view = await workloads.read({ kind: 'Deployment', namespace, name: WORKLOAD });
      return view.containers[0]?.env[envVarName({ type: 'CONFIGMAP', name: CONFIG })] === hash;
    },
    { timeoutMs: 30_000, describe: `the roll of ${namespace}/${WORKLOAD}` },
  );
}

type Format = 'slack' | 'text-json' | 'plain';

const SINKS: readonly { sink: string; format: Format; note: string }[] = [
  { sink: 'slack', format: 'slack', note: 'attachments JSON' },
  { sink: ' Slack ', format: 'slack', note: 'lower-cased and trimmed' },
  { sink: 'teams', format: 'text-json', note: '{"text"} JSON' },
  { sink: 'gchat', format: 'text-json', note: '{"text"} JSON' },
  { sink: 'webhook', format: 'plain', note: 'text/plain without *' },
  { sink: '', format: 'plain', note: 'empty sink: raw text' },
  { sink: 'pagerduty', format: 'plain', note: 'unknown sink: raw text' },
];

function expectedBody(format: Format, message: string): { contentType: RegExp; body: unknown } {
  switch (format) {
    case 'slack':
      return {
        contentType: /^application\/json/,
        body: { attachments: [{ color: 'good', author_name: 'Reloader', text: message }] },
      };
    case 'text-json':
      return { contentType: /^application\/json/, body: { text: message } };
    case 'plain':
      return { contentType: /^text\/plain/, body: message.replaceAll('*', '') };
  }
}

describe('alert sinks (§13.6)', () => {
  it.each(SINKS)(
    'ALERT_SINK="$sink" ($note): one POST per roll, none for the baseline',
    async ({ sink, format }) => {
      const { kreload, receiver, namespace } = await startScenario({
        prefix: 'ops-alerts',
        sink,
      });
      expect(receiver.requests).toEqual([]);

      await changeAndAwaitRoll(namespace);
      const [alert] = await receiver.waitForRequests(1);
      const want = expectedBody(format, alertMessage(namespace));
      expect(alert?.method).toBe('POST');
      expect(alert?.url).toBe(HOOK_PATH);
      expect(alert?.contentType).toMatch(want.contentType);
      expect(format === 'plain' ? alert?.body : JSON.parse(alert?.body ?? '')).toEqual(want.body);

      // Barrier for "only one": the baseline and the roll are reconciled, and the alert queue is
      // FIFO, so an alert for the baseline would have arrived before this one.
      await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: 2 });
      expect(receiver.requests).toHaveLength(1);
      const log = await kreload.readLog();
      expect(log).not.toContain('hook-secret-path');
      expect(log).not.toContain('hook-secret-query');
    },
  );
});

/** A gap between attempts, rounded to the backoff step it stands for (jitter and latency aside). */
function backoffStep(gapMs: number): string {
  if (gapMs >= 900 && gapMs < 1_600) return '1 s';
  if (gapMs >= 1_800 && gapMs < 2_800) return '2 s';
  return `${gapMs} ms`;
}

describe('alert failures (§13.6): counted, retried only for 429/5xx, never blocking the roll', () => {
  it.each([
    // Up to 3 attempts, waiting 1 s and then 2 s.
    {
      case: '503 from a webhook sink',
      sink: 'webhook',
      statuses: [503],
      attempts: 3,
      delivered: false,
    },
    { case: '429 then 200', sink: 'slack', statuses: [429, 200], attempts: 2, delivered: true },
    {
      case: '201 from teams (only 200 is success)',
      sink: 'teams',
      statuses: [201],
      attempts: 1,
      delivered: false,
    },
    { case: '302 redirect', sink: 'gchat', statuses: [302], attempts: 1, delivered: false },
    { case: '404 from slack', sink: 'slack', statuses: [404], attempts: 1, delivered: false },
  ])('$case: $attempts attempt(s)', async ({ sink, statuses, attempts, delivered }) => {
    const { kreload, receiver, namespace } = await startScenario({
      prefix: 'ops-alerts-fail',
      sink,
      statuses,
    });

    await changeAndAwaitRoll(namespace);
    await waitUntilSettled(kreload, { since: PROCESS_START, minReconciles: 2 });
    // The outcome is final once the last attempt was answered and counted (or, on success, once
    // the accepted attempt arrived): only then is the number of attempts exact.
    const metrics = await pollUntil(
      async () => {
        const now = await scrapeMetrics(kreload);
        const errors = now.value('reloader_errors_total', { type: 'alert_error' });
        return receiver.requests.length >= attempts && errors === (delivered ? 0 : 1)
          ? now
          : undefined;
      },
      { timeoutMs: 20_000, describe: `${attempts} attempt(s) and the alert outcome counted` },
    );
    expect(receiver.requests).toHaveLength(attempts);
    const gaps = receiver.requests
      .slice(1)
      .map((request, index) => request.receivedAt - (receiver.requests[index]?.receivedAt ?? 0));
    expect(gaps.map(backoffStep)).toEqual(['1 s', '2 s'].slice(0, attempts - 1));
    expect(metrics.value('reloader_errors_total', { type: 'alert_error' })).toBe(delivered ? 0 : 1);
    expect(metrics.value('reloader_reload_executed_total', { success: 'true' })).toBe(1);
    expect(metrics.value('reloader_reload_executed_total', { success: 'false' })).toBe(0);
  });
});
