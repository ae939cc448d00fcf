// A Secret rewritten every second for five minutes (two controllers fighting over one Secret), with
// kreload's breaker at its documented starting point (--flap-max-changes=10 in --flap-period=5m)
// and stakater/Reloader 1.4.21 beside it in a second namespace, fed by the same writer in the same
// run. Rolls are counted from a watch on the Deployments (every template change that brings a new
// value of the Secret's env var), not from either controller's report.
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type V1Deployment,
} from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { E2E_LOGS_DIR, REPO_ROOT } from '../cluster/paths.ts';
import { spawnDetached, tailFile, type SpawnedProcess } from '../cluster/processes.ts';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { completedRequests } from '../harness/audit-objects.ts';
import { waitForBaseline } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { envVarName, sourceHash, sourceKey, type SecretSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const FLAP_MAX_CHANGES = 10;
const COOL_DOWN_S = 60;
const WRITER_SECONDS = 300;
const DEPLOYMENTS = 3;
/** The measuring stick beside the project: `../shared/tools/reloader/` of the checkout or a parent. */
function reloaderBinary(): string | undefined {
  if (process.env.KRELOAD_E2E_RELOADER !== undefined) return process.env.KRELOAD_E2E_RELOADER;
  for (let dir = REPO_ROOT; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(path.dirname(dir), 'shared', 'tools', 'reloader', 'reloader');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}
const PEER_LABEL = 'kreload-e2e-flapping-peer';

const fixture = useKreload({
  name: 'flapping',
  namespaces: 2,
  args: ([kreloadNamespace]) => [
    `--namespaces=${String(kreloadNamespace)}`,
    '--sync-delay=0',
    `--flap-max-changes=${String(FLAP_MAX_CHANGES)}`,
    '--flap-period=5m',
    `--flap-cool-down=${String(COOL_DOWN_S)}s`,
  ],
});

let reloader: SpawnedProcess | undefined;
afterAll(() => {
  reloader?.signal('SIGKILL');
});

const secret = (value: string): SecretSpec => ({ type: 'SECRET', name: 'flappy', data: { value } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Counts, per Deployment of `namespace`, the template changes that bring a new value of `envVar`,
 * as a reflector would: list, then watch from the list; when the client ends the watch, list again
 * (a value changed in between counts once) and watch on.
 */
async function countRolls(namespace: string, envVar: string) {
  const apps = fixture.cluster.kc.makeApiClient(AppsV1Api);
  const last = new Map<string, string | undefined>();
  const rolls = new Map<string, number>();
  const valueOf = (object: V1Deployment) =>
    object.spec?.template.spec?.containers
      .find((c) => c.name === APP)
      ?.env?.find((variable) => variable.name === envVar)?.value;
  const observe = (object: V1Deployment) => {
    const name = object.metadata?.name ?? '';
    const value = valueOf(object);
    if (!last.has(name)) {
      last.set(name, value);
      return;
    }
    if (value === last.get(name)) return;
    last.set(name, value);
    rolls.set(name, (rolls.get(name) ?? 0) + 1);
  };
  let stopped = false;
  let failed: unknown;
  let controller: AbortController | undefined;
  const listAndWatch = async (): Promise<void> => {
    const listed = await apps.listNamespacedDeployment({ namespace });
    for (const item of listed.items) observe(item);
    controller = await new Watch(fixture.cluster.kc).watch(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
      { resourceVersion: listed.metadata?.resourceVersion },
      (phase: string, object: V1Deployment) => {
        if (phase === 'MODIFIED') observe(object);
      },
      () => {
        if (!stopped) listAndWatch().catch((error: unknown) => (failed = error));
      },
    );
  };
  await listAndWatch();
  return {
    rolls: (): ReadonlyMap<string, number> => {
      if (failed !== undefined) {
        throw new Error(`Deployment watch of ${namespace} failed`, { cause: failed });
      }
      return rolls;
    },
    stop: () => {
      stopped = true;
      controller?.abort();
    },
  };
}

describe('a Secret rewritten every second for five minutes', () => {
  it('kreload rolls each dependent a bounded number of times; Reloader beside it', async () => {
    const binary = reloaderBinary();
    if (binary === undefined) {
      throw new Error(
        'stakater/Reloader 1.4.21 was not found in ../shared/tools/reloader/ of this checkout or ' +
          'a parent; set KRELOAD_E2E_RELOADER to its path',
      );
    }
    const { workloads, sources, events, cluster } = fixture;
    const [kreloadNamespace = '', reloaderNamespace = ''] = fixture.namespaces;
    const auditLogPath = cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    await cluster.kc.makeApiClient(CoreV1Api).patchNamespace(
      {
        name: reloaderNamespace,
        body: { metadata: { labels: { [PEER_LABEL]: 'true' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const initial = secret('v0');
    const refs = new Map<string, WorkloadRef[]>();
    for (const namespace of [kreloadNamespace, reloaderNamespace]) {
      await sources.create(namespace, initial);
      const created: WorkloadRef[] = [];
      for (let index = 0; index < DEPLOYMENTS; index += 1) {
        created.push(
          await workloads.create('Deployment', {
            namespace,
            name: `dependent-${String(index)}`,
            annotations: { [AUTO]: 'true' },
            podSpec: podSpec({ app: { envFrom: [{ secretRef: { name: initial.name } }] } }),
          }),
        );
      }
      refs.set(namespace, created);
    }
    for (const ref of refs.get(kreloadNamespace) ?? []) {
      await waitForBaseline(workloads, ref, { [sourceKey(initial)]: sourceHash(initial) });
    }
    reloader = await spawnDetached({
      name: 'reloader',
      command: binary,
      args: [`--namespace-selector=${PEER_LABEL}=true`],
      logPath: path.join(E2E_LOGS_DIR, `flapping-reloader-${String(Date.now())}.log`),
      env: { ...process.env, KUBECONFIG: cluster.kubeconfigPath },
    });
    // Reloader is ready when it has listed; it does not roll on its first sight of a Secret.
    await sleep(5_000);
    if (reloader.exitInfo !== undefined) {
      throw new Error(`Reloader exited at start:\n${tailFile(reloader.spec.logPath, 20)}`);
    }

    const envVar = envVarName(initial);
    const kreloadRolls = await countRolls(kreloadNamespace, envVar);
    const reloaderRolls = await countRolls(reloaderNamespace, envVar);
    const offset = await audit.mark();
    const started = Date.now();
    let last = initial;
    let writes = 0;
    while (Date.now() - started < WRITER_SECONDS * 1_000) {
      writes += 1;
      last = secret(`v${String(writes)}`);
      const tick = Date.now();
      await Promise.all([
        sources.replace(kreloadNamespace, last),
        sources.replace(reloaderNamespace, last),
      ]);
      await sleep(1_000 - (Date.now() - tick));
    }
    const whileFlapping = new Map(kreloadRolls.rolls());

    // After the writer stops: one roll with the latest content once the source is quiet.
    for (const ref of refs.get(kreloadNamespace) ?? []) {
      await pollUntil(
        async () => {
          const view = await workloads.read(ref);
          const env = view.containers.find((c) => c.name === APP)?.env ?? {};
          return env[envVarName(last)] === sourceHash(last) ? view : undefined;
        },
        {
          timeoutMs: (COOL_DOWN_S + 30) * 1000,
          describe: `${ref.name} rolls with the last content`,
        },
      );
    }
    await sleep(5_000);
    const kreloadTotal = kreloadRolls.rolls();
    const reloaderTotal = reloaderRolls.rolls();
    kreloadRolls.stop();
    reloaderRolls.stop();
    const kreloadWrites = completedRequests(await audit.eventsSince(offset), KRELOAD_USER).filter(
      (r) =>
        r.resource === 'deployments' &&
        r.namespace === kreloadNamespace &&
        (r.verb === 'patch' || r.verb === 'update') &&
        r.code < 300,
    );

    for (const ref of refs.get(kreloadNamespace) ?? []) {
      expect(whileFlapping.get(ref.name) ?? 0, `${ref.name} while flapping`).toBeLessThanOrEqual(
        FLAP_MAX_CHANGES,
      );
      expect(kreloadTotal.get(ref.name), `${ref.name} in all`).toBe(
        (whileFlapping.get(ref.name) ?? 0) + 1,
      );
    }
    // Per Deployment: its rolls, one pending-roll record when the breaker opens, and a baseline.
    expect(kreloadWrites.length).toBeLessThanOrEqual(DEPLOYMENTS * (FLAP_MAX_CHANGES + 3));
    const flapping = (
      await events.about({ kind: 'Secret', namespace: kreloadNamespace, name: initial.name })
    ).filter((event) => event.reason === 'SourceFlapping');
    expect(flapping).toHaveLength(1);
    const reloaderCounts = [...reloaderTotal.values()];
    // Reloader ran and rolled: otherwise its figure beside kreload's would mean nothing.
    expect(reloaderCounts.length).toBe(DEPLOYMENTS);
    const figures = {
      writes,
      seconds: WRITER_SECONDS,
      kreloadRollsPerDeployment: [...kreloadTotal.values()],
      kreloadWritesToDeployments: kreloadWrites.length,
      reloaderRollsPerDeployment: reloaderCounts,
    };
    console.log(`flapping writer: ${JSON.stringify(figures)}`);
  }, 600_000);
});
