// Hostile annotation and flag values (issue 10, ADR 0018), on the real control plane and the real CLI:
// a 20 KiB reload list whose elements would compile to a million instructions each, a 1000h
// pause-period (beyond Node's 24.8-day timer limit), and duration flags beyond their bounds.
import { describe, expect, it } from 'vitest';
import { AUTO, CONFIGMAP_RELOAD, PAUSE_PERIOD, PAUSED_AT } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv, waitForView } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { runKreloadToExit } from '../harness/kreload-runs.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { pollUntil } from '../harness/poll.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, podSpec } from '../harness/workloads.ts';

const MIB = 1024 * 1024;
/** Before ADR 0018 the hostile value alone raised kreload's RSS by ~300 MiB. */
const RSS_GROWTH_LIMIT_BYTES = 50 * MIB;
/**
 * Measured over the 10 s window: 0.07 CPU-s with chained timers, 1.8 CPU-s before (a resume timer
 * firing every 1 ms, on a machine shared with other tests).
 */
const CPU_SECONDS_LIMIT = 0.5;
const CPU_WINDOW_MS = 10_000;

const fixture = useKreload({
  name: 'hostile-input',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
});

/** Four elements of ~5 KiB, each `(?:[a-b][a-c]…){1000}`: a million-instruction program. */
function hostileElements(): string[] {
  const body = '[a-b][a-c]'.repeat(500);
  return ['', 'x', 'y', 'z'].map((suffix) => `(?:${body}${suffix}){1000}`);
}

async function residentBytes(): Promise<number> {
  return (await scrapeMetrics(fixture.kreload)).value('process_resident_memory_bytes');
}

async function cpuSeconds(): Promise<number> {
  return (await scrapeMetrics(fixture.kreload)).value('process_cpu_seconds_total');
}

describe('a hostile reload list (issue 10, defect 2)', () => {
  it('is skipped with InvalidAnnotation, costs little memory, and other workloads keep rolling', async () => {
    const { namespace, workloads, sources, events } = fixture;
    const config: ConfigMapSpec = { type: 'CONFIGMAP', name: 'hostile-cfg', data: { v: '1' } };
    await sources.create(namespace, config);
    const rssBefore = await residentBytes();
    // The hostile value also lists the ConfigMap by name: its valid element must still apply.
    const hostileValue = [...hostileElements(), config.name].join(',');
    expect(hostileValue.length).toBeGreaterThan(20_000);
    const normal = await workloads.create('Deployment', {
      namespace,
      name: 'normal',
      annotations: { [CONFIGMAP_RELOAD]: config.name },
      podSpec: podSpec({}),
    });
    const hostile = await workloads.create('Deployment', {
      namespace,
      name: 'hostile',
      annotations: { [CONFIGMAP_RELOAD]: hostileValue },
      podSpec: podSpec({}),
    });
    const baseline = { [sourceKey(config)]: sourceHash(config) };
    await waitForBaseline(workloads, normal, baseline);
    await waitForBaseline(workloads, hostile, baseline);

    const changed: ConfigMapSpec = { ...config, data: { v: '2' } };
    await sources.replace(namespace, changed);
    const rolled = { container: APP, name: envVarName(changed), value: sourceHash(changed) };
    await waitForEnv(workloads, normal, rolled);
    await waitForEnv(workloads, hostile, rolled);

    const invalid = await pollUntil(
      async () => {
        const about = await events.about(hostile);
        const found = about.filter((event) => event.reason === 'InvalidAnnotation');
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 15_000, describe: 'InvalidAnnotation about the hostile Deployment' },
    );
    expect(invalid.map((event) => event.message)).toEqual([
      `${CONFIGMAP_RELOAD}: invalid pattern ${JSON.stringify(`${hostileElements()[0]?.slice(0, 64)}…`)} ` +
        `(${String(hostileElements()[0]?.length)} characters, more than the 1024 allowed); ` +
        'ignored, other entries still apply',
    ]);
    expect(await events.reasonsAbout(normal)).not.toContain('InvalidAnnotation');
    const rssAfter = await residentBytes();
    console.info(
      `hostile-input: kreload RSS ${(rssBefore / MIB).toFixed(1)} MiB → ${(rssAfter / MIB).toFixed(1)} MiB`,
    );
    expect(rssAfter - rssBefore).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
  });
});

describe('a 1000h pause-period (issue 10, defect 4)', () => {
  it('pauses without TimeoutOverflowWarning and without a busy loop', async () => {
    const { namespace, workloads, sources, kreload } = fixture;
    const config: ConfigMapSpec = { type: 'CONFIGMAP', name: 'long-pause-cfg', data: { v: '1' } };
    await sources.create(namespace, config);
    const paused = await workloads.create('Deployment', {
      namespace,
      name: 'long-pause',
      annotations: { [AUTO]: 'true', [PAUSE_PERIOD]: '1000h' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config.name } }] } }),
    });
    await waitForBaseline(workloads, paused, { [sourceKey(config)]: sourceHash(config) });

    await sources.replace(namespace, { ...config, data: { v: '2' } });
    await waitForView(
      workloads,
      paused,
      (view) => view.paused && view.annotations[PAUSED_AT] !== undefined,
      'paused with paused-at',
    );
    // The resume timer (1000 h away) is armed now; measure what it costs while it waits.
    const cpuBefore = await cpuSeconds();
    await new Promise((resolve) => setTimeout(resolve, CPU_WINDOW_MS));
    const cpuUsed = (await cpuSeconds()) - cpuBefore;
    console.info(`hostile-input: kreload used ${cpuUsed.toFixed(2)} CPU-s in ${CPU_WINDOW_MS} ms`);
    expect(cpuUsed).toBeLessThan(CPU_SECONDS_LIMIT);

    const view = await workloads.read(paused);
    expect(view.paused, 'still paused: the resume is 1000 h away').toBe(true);
    const log = await kreload.readLog();
    expect(log).not.toContain('TimeoutOverflowWarning');
  });
});

describe('duration flags beyond their bounds (issue 10, defect 4)', () => {
  it.each([
    ['--resync-period=1000h', '--resync-period: 1000h is above the maximum of 24h'],
    ['--sync-max-delay=1000h', '--sync-max-delay: 1000h is above the maximum of 24h'],
    ['--sync-delay=2h', '--sync-delay: 2h is above the maximum of 1h'],
  ])('%s exits 2 with a clear message', async (flag, problem) => {
    const run = await runKreloadToExit({
      args: [`--kubeconfig=${fixture.identity.kubeconfigPath}`, flag],
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(`kreload: invalid configuration: ${problem}`);
  });
});
