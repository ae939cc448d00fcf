import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1ReplicaSet,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../cluster/components.ts';
import { REPO_ROOT, RUNS_DIR } from '../cluster/paths.ts';
import { isPortOpen } from '../cluster/ports.ts';
import { cleanLeftoverRuns, isAlive, readPidsFile, type PidsFile } from '../cluster/processes.ts';
import { AuditLog, countRequests } from '../harness/audit.ts';
import { PollGiveUpError, pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_USER, type KreloadIdentity } from '../harness/rbac.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

// Never pulled: these pods do not tolerate the fake nodes' taint, so they stay Pending.
const IMAGE = 'registry.invalid/pause:3.10';
const CLI = path.join(REPO_ROOT, 'e2e', 'cluster', 'cli.ts');
const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

const cluster = sharedCluster();
const apps = cluster.kc.makeApiClient(AppsV1Api);
let namespace: string;

beforeAll(async () => {
  namespace = await cluster.createNamespace('control-plane');
});

function podTemplate(app: string) {
  return {
    metadata: { labels: { app } },
    spec: { containers: [{ name: 'app', image: IMAGE }] },
  };
}

function templatePatch(revision: string) {
  return {
    spec: { template: { metadata: { annotations: { 'e2e.kreload.io/revision': revision } } } },
  };
}

describe('kube-controller-manager reacts to pod template patches', () => {
  it('makes a second ReplicaSet when a Deployment template is patched', async () => {
    const name = 'web';
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: podTemplate(name),
        },
      },
    });
    const ownedReplicaSets = async (): Promise<V1ReplicaSet[]> =>
      (
        await apps.listNamespacedReplicaSet({ namespace, labelSelector: `app=${name}` })
      ).items.filter(
        (rs) =>
          rs.metadata?.ownerReferences?.some(
            (owner) => owner.kind === 'Deployment' && owner.name === name,
          ) === true,
      );
    const [first] = await pollUntil(
      async () => {
        const sets = await ownedReplicaSets();
        return sets.length === 1 ? sets : undefined;
      },
      { timeoutMs: 30_000, describe: `the first ReplicaSet of Deployment ${name}` },
    );

    await apps.patchNamespacedDeployment(
      { name, namespace, body: templatePatch('2') },
      strategicMerge,
    );

    const both = await pollUntil(
      async () => {
        const sets = await ownedReplicaSets();
        return sets.length === 2 ? sets : undefined;
      },
      { timeoutMs: 30_000, describe: `a second ReplicaSet of Deployment ${name}` },
    );
    const created = both.find((rs) => rs.metadata?.uid !== first?.metadata?.uid);
    expect(created?.spec?.template?.metadata?.annotations).toEqual({
      'e2e.kreload.io/revision': '2',
    });
  });

  it('moves status.updateRevision when a StatefulSet template is patched', async () => {
    const name = 'db';
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name },
        spec: {
          replicas: 1,
          serviceName: name,
          selector: { matchLabels: { app: name } },
          template: podTemplate(name),
        },
      },
    });
    const revisionAt = (generation: number) => async (): Promise<string | undefined> => {
      const set = await apps.readNamespacedStatefulSet({ name, namespace });
      const observed = set.status?.observedGeneration ?? 0;
      return observed >= generation ? set.status?.updateRevision : undefined;
    };
    const initial = await pollUntil(revisionAt(1), {
      timeoutMs: 30_000,
      describe: `StatefulSet ${name} to observe generation 1`,
    });

    await apps.patchNamespacedStatefulSet(
      { name, namespace, body: templatePatch('2') },
      strategicMerge,
    );

    const updated = await pollUntil(revisionAt(2), {
      timeoutMs: 30_000,
      describe: `StatefulSet ${name} to observe generation 2`,
    });
    expect(updated).not.toBe(initial);
    const revisions = await apps.listNamespacedControllerRevision({
      namespace,
      labelSelector: `app=${name}`,
    });
    expect(revisions.items.map((r) => r.metadata?.name).sort()).toEqual([initial, updated].sort());
  });
});

async function statusOf(request: Promise<unknown>): Promise<number> {
  try {
    await request;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

describe("kreload's ServiceAccount (spec §13.11 RBAC)", () => {
  let identity: KreloadIdentity;
  const probeDeployment = 'rbac-probe';

  beforeAll(async () => {
    identity = await installKreloadIdentity(cluster);
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: probeDeployment },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: probeDeployment } },
          template: podTemplate(probeDeployment),
        },
      },
    });
  });

  type Request = (clients: { core: CoreV1Api; apps: AppsV1Api }) => Promise<unknown>;
  const cases: readonly {
    readonly request: string;
    readonly status: number;
    readonly send: Request;
  }[] = [
    {
      request: 'list configmaps',
      status: 200,
      send: ({ core }) => core.listNamespacedConfigMap({ namespace }),
    },
    {
      request: 'list secrets in all namespaces',
      status: 200,
      send: ({ core }) => core.listSecretForAllNamespaces({ limit: 1 }),
    },
    {
      request: 'patch a deployment (dry run)',
      status: 200,
      send: ({ apps: client }) =>
        client.patchNamespacedDeployment(
          { name: probeDeployment, namespace, dryRun: 'All', body: templatePatch('rbac') },
          strategicMerge,
        ),
    },
    {
      request: 'list persistentvolumeclaims',
      status: 403,
      send: ({ core }) => core.listNamespacedPersistentVolumeClaim({ namespace }),
    },
    {
      request: 'create a configmap outside kreload-system',
      status: 403,
      send: ({ core }) =>
        core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'nope' } } }),
    },
    {
      request: 'delete a deployment',
      status: 403,
      send: ({ apps: client }) =>
        client.deleteNamespacedDeployment({ name: probeDeployment, namespace }),
    },
    {
      request: 'update (PUT) a deployment',
      status: 403,
      send: async ({ apps: client }) => {
        const current = await apps.readNamespacedDeployment({ name: probeDeployment, namespace });
        return client.replaceNamespacedDeployment({
          name: probeDeployment,
          namespace,
          body: current,
        });
      },
    },
  ];

  it.each(cases)('$request → $status', async ({ send, status }) => {
    const clients = {
      core: identity.kc.makeApiClient(CoreV1Api),
      apps: identity.kc.makeApiClient(AppsV1Api),
    };
    expect(await statusOf(send(clients))).toBe(status);
  });

  it('shows up in the audit log under its ServiceAccount user', async () => {
    const auditLogPath = cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    const core = identity.kc.makeApiClient(CoreV1Api);
    const offset = await audit.mark();

    await core.listNamespacedConfigMap({ namespace });
    expect(await statusOf(core.listNamespacedPersistentVolumeClaim({ namespace }))).toBe(403);

    const events = await pollUntil(
      async () => {
        const since = await audit.eventsSince(offset);
        return since.filter((e) => e.stage === 'ResponseComplete').length >= 2 ? since : undefined;
      },
      { timeoutMs: 10_000, describe: 'two completed kreload requests in the audit log' },
    );
    expect(Object.fromEntries(countRequests(events, KRELOAD_USER))).toEqual({
      'list configmaps': 1,
      'list persistentvolumeclaims': 1,
    });
    const refused = events.find(
      (e) => e.stage === 'ResponseComplete' && e.objectRef?.resource === 'persistentvolumeclaims',
    );
    expect(refused?.responseStatus?.code).toBe(403);
  });
});

interface CliRun {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly exited: Promise<number | null>;
  readonly pids: PidsFile;
  readonly apiserverPort: number;
}

/** Spawns `cli.ts up` and resolves once it printed where the run lives. */
async function startCli(): Promise<CliRun> {
  const child = spawn(process.execPath, [CLI, 'up'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    });
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const ready = await pollUntil(
    () => {
      if (exitCode !== undefined)
        throw new PollGiveUpError(`cli.ts up exited with ${String(exitCode)}:\n${output}`);
      const pidsPath = /^pids:\s+(\S+)$/m.exec(output)?.[1];
      const port = /^server:\s+https:\/\/127\.0\.0\.1:(\d+)$/m.exec(output)?.[1];
      return pidsPath !== undefined && port !== undefined
        ? { pidsPath, port: Number(port) }
        : undefined;
    },
    { timeoutMs: 120_000, describe: 'cli.ts up to report a ready control plane' },
  );
  const pids = readPidsFile(path.dirname(ready.pidsPath));
  if (pids === undefined) throw new Error(`unreadable ${ready.pidsPath}`);
  return { child, exited, pids, apiserverPort: ready.port };
}

/** The components of a run, in start order (e2e/cluster/components.ts). */
const COMPONENT_NAMES = COMPONENTS.map((component) => component.name);

describe('teardown', () => {
  afterAll(async () => {
    // A failed assertion below can leave a CLI's components behind; the shared run's owner is alive.
    await cleanLeftoverRuns({ runsDir: RUNS_DIR, onlyDeadOwners: true });
  });

  it('leaves no process, port or run directory behind after Ctrl-C on `cli.ts up`', async () => {
    const run = await startCli();
    expect(run.pids.processes.map((p) => p.name)).toEqual(COMPONENT_NAMES);
    expect(run.pids.processes.every((p) => isAlive(p.pid))).toBe(true);
    expect(await isPortOpen(run.apiserverPort)).toBe(true);

    run.child.kill('SIGINT');

    expect(await run.exited).toBe(0);
    expect(run.pids.processes.filter((p) => isAlive(p.pid))).toEqual([]);
    expect(await isPortOpen(run.apiserverPort)).toBe(false);
    expect(existsSync(run.pids.runDir)).toBe(false);
  });

  it('`cli.ts down` stops the components of a launcher that died', async () => {
    const run = await startCli();
    run.child.kill('SIGKILL');
    await run.exited;
    expect(run.pids.processes.filter((p) => isAlive(p.pid)).map((p) => p.name)).toEqual(
      COMPONENT_NAMES,
    );

    const down = spawn(process.execPath, [CLI, 'down'], { cwd: REPO_ROOT, stdio: 'ignore' });
    const code = await new Promise<number | null>((resolve) => down.once('exit', resolve));

    expect(code).toBe(0);
    expect(run.pids.processes.filter((p) => isAlive(p.pid))).toEqual([]);
    expect(await isPortOpen(run.apiserverPort)).toBe(false);
    expect(existsSync(run.pids.runDir)).toBe(false);
  });
});
