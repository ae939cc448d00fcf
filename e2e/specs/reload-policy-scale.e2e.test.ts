// ReloadPolicy at scale on the real control plane with kreload's real CLI: one namespace of N
// Deployments and N ConfigMaps, ten selector policies binding every ConfigMap to every Deployment.
// Throughout, /live answers within the chart's liveness probe timeout (5 s); one change of a bound
// ConfigMap rolls all N, and the CPU seconds kreload spends on it are measured from /proc. N is
// KRELOAD_E2E_POLICY_SCALE (default 60, so the suite stays short; 600 is the documented run).
import { readFile } from 'node:fs/promises';
import { AppsV1Api, CoreV1Api, type V1Deployment } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuTicksOf, TICKS_PER_SECOND } from '../cluster/proc-stat.ts';
import { BASELINE } from '../harness/annotations.ts';
import { arrayAt, isRecord, stringAt } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { createPolicy, policyIdentity, readPolicy } from '../harness/reload-policies.ts';
import { envVarName } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';
import { KubeJson } from '../harness/crds.ts';

const SIZE = Number(process.env.KRELOAD_E2E_POLICY_SCALE ?? '60');
const POLICIES = 10;
/** The chart's livenessProbe timeoutSeconds. */
const PROBE_TIMEOUT_MS = 5_000;
const CREATE_BATCH = 20;
const WAIT_MS = Math.max(120_000, SIZE * 400);

const fixture = useKreload({
  name: 'policy-scale',
  startInBeforeAll: false,
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--enable-reload-policies=true',
    '--sync-delay=0',
  ],
  identity: policyIdentity('kreload-e2e-policy-scale'),
});

/** Polls /live every 250 ms; keeps the slowest answer (a timeout counts as the probe timeout). */
class LiveProbe {
  slowestMs = 0;
  failures = 0;
  #stopped = false;
  #loop: Promise<void> | undefined;

  start(url: string): void {
    this.#loop = (async () => {
      while (!this.#stopped) {
        const started = performance.now();
        try {
          const reply = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
          if (reply.status !== 200) this.failures += 1;
        } catch {
          this.failures += 1;
        }
        this.slowestMs = Math.max(this.slowestMs, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}

async function cpuSeconds(pid: number): Promise<number> {
  const ticks = cpuTicksOf(await readFile(`/proc/${String(pid)}/stat`, 'utf8'));
  if (ticks === undefined) throw new Error(`cannot read the CPU time of pid ${String(pid)}`);
  return ticks / TICKS_PER_SECOND;
}

const names = (prefix: string): string[] =>
  Array.from({ length: SIZE }, (_unused, index) => `${prefix}-${String(index).padStart(4, '0')}`);

async function inBatches(items: readonly string[], create: (name: string) => Promise<unknown>) {
  for (let start = 0; start < items.length; start += CREATE_BATCH) {
    await Promise.all(items.slice(start, start + CREATE_BATCH).map(create));
  }
}

/** Sources in the Deployment's baseline, wherever kreload keeps it (W, else the store's record). */
function baselineSize(deployment: V1Deployment, records: ReadonlyMap<string, string>): number {
  const uid = deployment.metadata?.uid ?? '';
  const record = [...records].find(
    ([key]) => key.startsWith('Deployment.') && key.endsWith(`.${uid}`),
  );
  const raw = deployment.metadata?.annotations?.[BASELINE] ?? record?.[1];
  return raw === undefined ? 0 : Object.keys(JSON.parse(raw) as object).length;
}

const probe = new LiveProbe();
afterAll(async () => {
  await probe.stop();
});

describe(`ReloadPolicy at scale: ${String(SIZE)} Deployments × ${String(SIZE)} ConfigMaps × ${String(POLICIES)} policies`, () => {
  it(
    'stays live throughout and rolls every target on one change',
    async () => {
      await fixture.prepare();
      const { namespace } = fixture;
      const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
      const apps = fixture.cluster.kc.makeApiClient(AppsV1Api);
      const configMaps = names('cm');
      await inBatches(configMaps, (name) =>
        core.createNamespacedConfigMap({
          namespace,
          body: { metadata: { name, labels: { app: 'web' } }, data: { version: '1' } },
        }),
      );
      await inBatches(names('web'), (name) =>
        fixture.workloads.create('Deployment', {
          namespace,
          name,
          labels: { tier: 'web' },
          podSpec: podSpec({ app: {} }),
        }),
      );

      const kreload = await fixture.start();
      probe.start(kreload.url('/live'));
      const started = performance.now();
      const client = new KubeJson({ kc: fixture.cluster.kc });
      for (let index = 0; index < POLICIES; index += 1) {
        await createPolicy(client, namespace, `policy-${String(index)}`, {
          sources: [{ kind: 'ConfigMap', selector: { matchLabels: { app: 'web' } } }],
          targets: [{ kind: 'Deployment', selector: { matchLabels: { tier: 'web' } } }],
          // Two policies disagree on syncDelay: every target is in conflict for the younger one.
          ...(index === 1 ? { syncDelay: '1s' } : index === 0 ? { syncDelay: '0s' } : {}),
        });
      }
      await pollUntil(
        async () => {
          const list = await apps.listNamespacedDeployment({ namespace });
          const records = await fixture.workloads.baselines.recordsOf(namespace);
          return (
            list.items.length === SIZE && list.items.every((d) => baselineSize(d, records) === SIZE)
          );
        },
        {
          timeoutMs: WAIT_MS,
          intervalMs: 2_000,
          describe: `a baseline of ${String(SIZE)} sources on every Deployment`,
        },
      );
      const bound = performance.now();

      const cpuBefore = await cpuSeconds(kreload.pid);
      const changed = 'cm-0007';
      await core.replaceNamespacedConfigMap({
        name: changed,
        namespace,
        body: { metadata: { name: changed, labels: { app: 'web' } }, data: { version: '2' } },
      });
      const changeAt = performance.now();
      const variable = envVarName({ type: 'CONFIGMAP', name: changed });
      await pollUntil(
        async () => {
          const list = await apps.listNamespacedDeployment({ namespace });
          return list.items.every((deployment) =>
            deployment.spec?.template.spec?.containers
              .find((container) => container.name === APP)
              ?.env?.some((entry) => entry.name === variable),
          );
        },
        {
          timeoutMs: WAIT_MS,
          intervalMs: 1_000,
          describe: `every Deployment to roll for ${changed}`,
        },
      );
      const rolledMs = performance.now() - changeAt;
      const rollCpu = (await cpuSeconds(kreload.pid)) - cpuBefore;

      const policy = await readPolicy(client, namespace, 'policy-1');
      const status = isRecord(policy.status) ? policy.status : {};
      const conflict = arrayAt(status, ['conditions']).find(
        (condition) => stringAt(condition, ['type']) === 'Conflict',
      );
      await probe.stop();
      const figures = {
        size: SIZE,
        bindSeconds: Math.round((bound - started) / 100) / 10,
        rollSeconds: Math.round(rolledMs / 100) / 10,
        rollCpuSeconds: Math.round(rollCpu * 100) / 100,
        slowestLiveMs: Math.round(probe.slowestMs),
        liveFailures: probe.failures,
        statusBytes: JSON.stringify(status).length,
        conflictMessageChars: (stringAt(conflict, ['message']) ?? '').length,
      };
      console.log(`policy scale figures: ${JSON.stringify(figures)}`);
      expect(probe.failures).toBe(0);
      expect(probe.slowestMs).toBeLessThan(PROBE_TIMEOUT_MS);
      expect(rollCpu).toBeLessThan(10);
      expect(stringAt(conflict, ['status'])).toBe('True');
      expect(figures.conflictMessageChars).toBeLessThan(32 * 1024);
      expect(figures.statusBytes).toBeLessThan(512 * 1024);
      expect(status.boundTargets).toBe(SIZE);
    },
    30 * 60_000,
  );
});
