// The undo kreload sends after a failed rollout (rollout/revisions.ts `planUndo`) against the real
// API server and kube-controller-manager: the pod template of the revision below the live one comes
// back whole (fields the bad revision added are gone), as `kubectl rollout undo` would.
import { kindRow } from '../../src/rollout/kinds.ts';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/json.ts';
import type { WorkloadKind } from '../../src/core/types.ts';
import { planUndo } from '../../src/rollout/revisions.ts';
import { pollUntil } from '../harness/poll.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import { TEST_IMAGE } from '../harness/workloads.ts';

const run = promisify(execFile);
const cluster = sharedCluster();
const namespace = `undo-${randomBytes(3).toString('hex')}`;
const MARK = { 'e2e.kreload.dev/undone': 'yes' };

async function kubectl(args: readonly string[]): Promise<string> {
  const { stdout } = await run('kubectl', [`--kubeconfig=${cluster.kubeconfigPath}`, ...args]);
  return stdout;
}

async function getJson(args: readonly string[]): Promise<JsonObject> {
  return JSON.parse(await kubectl(['get', '-n', namespace, '-o', 'json', ...args])) as JsonObject;
}

function podTemplate(env: Record<string, string>) {
  return {
    metadata: { labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: TEST_IMAGE,
          env: Object.entries(env).map(([name, value]) => ({ name, value })),
        },
      ],
    },
  };
}

/** The template's env as a name → value record. */
function envOf(workload: JsonObject): Record<string, string> {
  const spec = workload.spec as {
    template: { spec: { containers: { env?: { name: string; value: string }[] }[] } };
  };
  return Object.fromEntries(
    (spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
  );
}

const REVISION_LIST: Record<string, string> = {
  Deployment: 'replicasets',
  StatefulSet: 'controllerrevisions',
};

async function undoOnce(kind: WorkloadKind, name: string): Promise<void> {
  const resource = kind.toLowerCase();
  const workload = await getJson([resource, name]);
  const list = await getJson([REVISION_LIST[kind] ?? '']);
  const plan = planUndo(kindRow(kind), workload, list, MARK);
  expect(plan.state).toBe('ready');
  if (plan.state !== 'ready') return;
  await kubectl([
    'patch',
    '-n',
    namespace,
    resource,
    name,
    '--type=strategic',
    `-p=${JSON.stringify(plan.patch)}`,
  ]);
}

describe('the undo patch on the real API server', () => {
  beforeAll(async () => {
    await cluster.kc
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: namespace } } });
  });
  afterAll(async () => {
    await cluster.kc
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
  });

  it.each(['Deployment', 'StatefulSet'] as const)(
    'a %s gets the previous template back, without what the bad one added',
    async (kind) => {
      const apps = cluster.kc.makeApiClient(AppsV1Api);
      const name = kind.toLowerCase();
      const body = {
        metadata: { name },
        spec: {
          replicas: 0,
          serviceName: name,
          selector: { matchLabels: { app: 'web' } },
          template: podTemplate({ CONFIG: 'good' }),
        },
      };
      if (kind === 'Deployment') await apps.createNamespacedDeployment({ namespace, body });
      else await apps.createNamespacedStatefulSet({ namespace, body });
      const resource = kind.toLowerCase();
      const revisions = REVISION_LIST[kind] ?? '';
      await pollUntil(
        async () => {
          const list = await getJson([revisions]);
          if ((list.items as unknown[]).length === 1) return true;
          throw new Error('no first revision yet');
        },
        { timeoutMs: 20_000, describe: `the first ${revisions}` },
      );
      const bad = { spec: { template: podTemplate({ CONFIG: 'bad', ADDED: 'by-bad' }) } };
      await kubectl([
        'patch',
        '-n',
        namespace,
        resource,
        name,
        '--type=strategic',
        `-p=${JSON.stringify(bad)}`,
      ]);
      await pollUntil(
        async () => {
          const list = await getJson([revisions]);
          const workload = await getJson([resource, name]);
          const observed = (workload.status as { observedGeneration?: number } | undefined)
            ?.observedGeneration;
          if ((list.items as unknown[]).length === 2 && observed === 2) return true;
          throw new Error('no second revision yet');
        },
        { timeoutMs: 20_000, describe: `the second ${revisions}` },
      );

      await undoOnce(kind, name);

      const undone = await getJson([resource, name]);
      expect(envOf(undone)).toEqual({ CONFIG: 'good' });
      expect(
        (undone.metadata as { annotations?: Record<string, string> }).annotations,
      ).toMatchObject(MARK);
      const labels = (undone.spec as { template: { metadata: { labels: Record<string, string> } } })
        .template.metadata.labels;
      expect(labels).toEqual({ app: 'web' });
    },
  );
});
