// Spec §14 rows about the environment rather than annotations (those are rows of the rule table):
// RBAC gaps on a kind's list/watch and on a write, an API that is not served, an API server that
// is unreachable at start, invalid flags and env values, and a malformed kubeconfig.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { VersionApi } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../cluster/ports.ts';
import { probe } from '../cluster/probes.ts';
import { writeKubeconfig } from '../cluster/kubeconfig.ts';
import { AUTO, BASELINE } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { waitForBaseline, waitForEnv, eventReasonsEventually } from '../harness/expectations.ts';
import { clusterRulesWith, installCustomIdentity } from '../harness/identity.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { runKreloadToExit, spawnKreload } from '../harness/kreload-runs.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { PollGiveUpError, pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_USER } from '../harness/rbac.ts';
import {
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
  type SecretSpec,
} from '../harness/sources.ts';
import { APP, podSpec, viewOfSpec } from '../harness/workloads.ts';

/** Spec §13.11 minus list/watch of Secrets and minus patch of DaemonSets. */
const RESTRICTED_RULES = clusterRulesWith((rule) => {
  const resources = (rule.resources ?? []).filter((r) => r !== 'secrets' && r !== 'daemonsets');
  return { apiGroups: rule.apiGroups ?? [], resources, verbs: rule.verbs };
}).concat([{ apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get', 'list', 'watch'] }]);

const fixture = useKreload({
  name: 'bad-input',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    // No Argo CRD is installed: the kind must show as absent, nothing else may suffer.
    '--is-Argo-Rollouts=true',
  ],
  identity: (cluster) =>
    installCustomIdentity(cluster, { name: 'kreload-e2e-restricted', rules: RESTRICTED_RULES }),
});

interface ReadyzBody {
  readonly ready?: boolean;
  readonly checks?: {
    readonly apiServer?: string;
    readonly kinds?: Readonly<Record<string, string>>;
  };
}

function parseReadyz(body: string): ReadyzBody {
  const parsed: unknown = JSON.parse(body);
  if (typeof parsed !== 'object' || parsed === null) throw new Error(`/readyz body: ${body}`);
  return parsed;
}

describe('RBAC gaps and a missing API (§14)', () => {
  it('/readyz stays 200 and shows secrets forbidden and rollouts absent', async () => {
    const response = await probe({ url: fixture.kreload.url('/readyz') });
    expect(response.status).toBe(200);
    const body = parseReadyz(response.body);
    expect(body.ready).toBe(true);
    expect(body.checks?.kinds).toMatchObject({
      configmaps: 'ok',
      secrets: 'forbidden',
      deployments: 'ok',
      statefulsets: 'ok',
      daemonsets: 'ok',
      rollouts: 'absent',
    });
  });

  it('other kinds keep working; a forbidden source kind is unknown, a forbidden write is a ReloadFail', async () => {
    const { namespace, kreload, workloads, sources, events } = fixture;
    const config: ConfigMapSpec = { type: 'CONFIGMAP', name: 'rbac-cfg', data: { v: '1' } };
    const credentials: SecretSpec = { type: 'SECRET', name: 'rbac-sec', data: { p: '1' } };
    await sources.create(namespace, config);
    await sources.create(namespace, credentials);
    const onConfig = podSpec({ app: { envFrom: [{ configMapRef: { name: config.name } }] } });
    const onSecret = podSpec({ app: { envFrom: [{ secretRef: { name: credentials.name } }] } });
    const working = await workloads.create('Deployment', {
      namespace,
      name: 'dep-cfg',
      annotations: { [AUTO]: 'true' },
      podSpec: onConfig,
    });
    const secretSpec = {
      namespace,
      name: 'dep-sec',
      annotations: { [AUTO]: 'true' },
      podSpec: onSecret,
    };
    const secretUser = await workloads.create('Deployment', secretSpec);
    const daemonSpec = {
      namespace,
      name: 'ds-cfg',
      annotations: { [AUTO]: 'true' },
      podSpec: onConfig,
    };
    const forbidden = await workloads.create('DaemonSet', daemonSpec);
    await waitForBaseline(workloads, working, { [sourceKey(config)]: sourceHash(config) });

    const before = await scrapeMetrics(kreload);
    const changedConfig = { ...config, data: { v: '2' } };
    await sources.replace(namespace, { ...credentials, data: { p: '2' } });
    await sources.replace(namespace, changedConfig);
    await waitForEnv(workloads, working, {
      container: APP,
      name: envVarName(changedConfig),
      value: sourceHash(changedConfig),
    });
    await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
    });

    const secretView = await workloads.read(secretUser);
    expect(secretView.annotations, 'no baseline for an unknown Secret').toEqual({
      [AUTO]: 'true',
    });
    expect(await workloads.baselines.recordOf(secretUser, secretView.uid)).toBeUndefined();
    expect(secretView.containers).toEqual(viewOfSpec(secretSpec).containers);

    expect(await eventReasonsEventually(events, { ...forbidden }, ['ReloadFail'])).toContain(
      'ReloadFail',
    );
    const daemonView = await workloads.read(forbidden);
    expect(daemonView.containers).toEqual(viewOfSpec(daemonSpec).containers);
    expect(daemonView.generation).toBe(1);
    expect(daemonView.annotations[BASELINE]).toBeUndefined();
    expect(await workloads.baselines.recordOf(forbidden, daemonView.uid)).toBeUndefined();
  });
});

describe('configuration errors (§12.6, §14)', () => {
  it('invalid flags and env values: exit 2, every problem listed, nothing contacted', async () => {
    const auditLogPath = fixture.cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    const identity = await installKreloadIdentity(fixture.cluster);
    const offset = await audit.mark();

    const run = await runKreloadToExit({
      args: [
        `--kubeconfig=${identity.kubeconfigPath}`,
        '--sync-delay=5',
        '--reload-strategy=sideways',
        '--reload-on-create=True',
        '--resources-to-ignore=configmaps,secrets',
        '--namespace-selector=team in (a',
      ],
      env: { KRELOAD_WORKER_THREADS: '0' },
    });

    expect(run.code, run.stderr).toBe(2);
    const problems = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('kreload: invalid configuration: '));
    for (const culprit of [
      '--sync-delay',
      '--reload-strategy',
      '--reload-on-create',
      '--resources-to-ignore',
      '--namespace-selector',
      'KRELOAD_WORKER_THREADS',
    ]) {
      expect(
        problems.some((line) => line.includes(culprit)),
        `a line about ${culprit} in:\n${run.stderr}`,
      ).toBe(true);
    }
    // Our own request as the same user, afterwards: once it is in the log, so is anything
    // kreload had sent before it.
    await identity.kc.makeApiClient(VersionApi).getCode();
    const events = await pollUntil(
      async () => {
        const since = await audit.eventsSince(offset);
        return since.some((e) => e.requestURI === '/version' && e.stage === 'ResponseComplete')
          ? since
          : undefined;
      },
      { timeoutMs: 15_000, describe: 'our /version request in the audit log' },
    );
    const fromKreload = events.filter(
      (e) => e.user.username === KRELOAD_USER && e.requestURI !== '/version',
    );
    expect(fromKreload.map((e) => `${e.verb} ${e.requestURI}`)).toEqual([]);
  });

  it('a malformed kubeconfig: exit 2 naming the file', async () => {
    const file = path.join(fixture.cluster.info.scratchDir, 'malformed.kubeconfig');
    await writeFile(file, 'apiVersion: v1\nclusters: [ {name: x, cluster: {server: \n', {
      mode: 0o600,
    });
    const run = await runKreloadToExit({ args: [`--kubeconfig=${file}`] });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(file);
  });
});

describe('API server unreachable at start (§13.5, §14)', () => {
  it('keeps running: /healthz 200, /readyz 503 with apiServer unreachable, exit 0 on SIGTERM', async () => {
    const port = await freeLoopbackPort();
    const kubeconfig = await writeKubeconfig(
      path.join(fixture.cluster.info.scratchDir, `unreachable-${port}.kubeconfig`),
      {
        server: `https://127.0.0.1:${port}`,
        caPath: fixture.cluster.caPath,
        userName: 'nobody',
        token: 'not-a-token',
      },
    );
    const kreload = await spawnKreload({
      name: 'bad-input-unreachable',
      kubeconfig,
      args: ['--namespaces=default'],
    });
    let exited: unknown;
    void kreload.exit.then((info) => (exited = info));
    try {
      const readyz = await pollUntil(
        async () => {
          if (exited !== undefined) {
            throw new PollGiveUpError(`kreload exited: ${JSON.stringify(exited)}`);
          }
          const response = await probe({ url: kreload.url('/readyz') });
          const body = parseReadyz(response.body);
          return response.status === 503 && body.checks?.apiServer?.startsWith('unreachable')
            ? body
            : undefined;
        },
        { timeoutMs: 30_000, describe: '/readyz 503 with apiServer unreachable' },
      );
      expect(readyz.ready).toBe(false);
      expect((await probe({ url: kreload.url('/healthz') })).status).toBe(200);
      expect(exited).toBeUndefined();
    } finally {
      const exit = await kreload.stop();
      expect(exit.code).toBe(0);
    }
  });
});
