// A tiny run of the benchmark suite (S1, 2 ConfigMaps, 5 s) on the shared cluster, so that the
// bench cannot rot: the ideal reactor always, kreload once dist/main.js is a working controller.
// And a tiny secret storm (R3, 4 Deployments whose pods run) with the ideal reactor: the rollouts
// in flight sampled from ReplicaSets, the time until all complete and the peak write rate.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CACHE_DIR } from '../cluster/paths.ts';
import { LiveProcesses } from '../bench/controller-process.ts';
import {
  IDEAL_REACTOR_COMMAND,
  KRELOAD_DEFAULT_COMMAND,
  parseControllerSpec,
} from '../bench/controllers.ts';
import { findScenario } from '../bench/scenarios.ts';
import { runSuite, writeSuiteOutputs } from '../bench/suite.ts';
import { KRELOAD_ENTRY } from '../harness/kreload-process.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const cluster = sharedCluster();
const live = new LiveProcesses();
const outDir = path.join(CACHE_DIR, 'bench-smoke', randomBytes(3).toString('hex'));

/** dist/main.js is kreload proper (not a placeholder build) when its --help lists controller flags. */
function kreloadIsBuilt(): boolean {
  if (!existsSync(KRELOAD_ENTRY)) return false;
  const help = spawnSync(process.execPath, [KRELOAD_ENTRY, '--help'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  return help.stdout.includes('--sync-delay');
}

afterAll(async () => {
  live.killAllSync();
  await rm(outDir, { recursive: true, force: true });
});

it('runs S1 (2 ConfigMaps, 5 s) with no missed or extra rollouts and writes the reports', async () => {
  const scenario = findScenario('S1');
  if (scenario === undefined) throw new Error('S1 is not defined');
  const controllers = [
    parseControllerSpec(IDEAL_REACTOR_COMMAND),
    ...(kreloadIsBuilt() ? [parseControllerSpec(KRELOAD_DEFAULT_COMMAND)] : []),
  ];

  const result = await runSuite({
    cluster,
    scenarios: [scenario],
    controllers,
    overrides: [{ scenario: 'S1', name: 'configMaps', value: 2 }],
    durationSec: 5,
    outDir,
    live,
  });
  const written = await writeSuiteOutputs(result, { outDir, compare: true });

  expect(result.runs.map((run) => run.controller)).toEqual(controllers.map((c) => c.label));
  for (const run of result.runs) {
    expect(run.error, `${run.controller}: ${run.logPath}`).toBeNull();
    expect(run.correctness, run.controller).toMatchObject({ missed: 0, extra: 0 });
    // 100 ms apart for 5 s: about 50 writes, each delivered to its one Deployment.
    expect(run.writes).toBeGreaterThanOrEqual(45);
    expect(run.latencyMs.count).toBe(run.correctness.delivered);
    expect(run.correctness.delivered + run.correctness.coalesced).toBe(run.writes);
    expect(run.timingMs.ready[0]).toBeGreaterThan(0);
    expect(run.resources.rssMaxMiB).toBeGreaterThan(0);
    expect(run.resources.cpuSeconds).toBeGreaterThan(0);
    // The audit log saw the controller's patches (the shared cluster logs its identity).
    expect(run.requests?.afterReady.byVerb['patch deployments']).toBeGreaterThanOrEqual(
      run.correctness.rolls,
    );
    expect(existsSync(path.join(outDir, 'runs', `S1-${run.controller}-1.json`))).toBe(true);
  }
  expect(existsSync(written.summaryPath)).toBe(true);
  expect(written.markdown).toContain('| S1 burst | ideal |');
  expect(live.size).toBe(0);
}, 180_000);

it('runs R3 (4 Deployments × 2 Secrets, pods on kwok) and measures the storm from ReplicaSets', async () => {
  const scenario = findScenario('R3');
  if (scenario === undefined) throw new Error('R3 is not defined');
  const deployments = 4;

  const result = await runSuite({
    cluster,
    scenarios: [scenario],
    controllers: [parseControllerSpec(IDEAL_REACTOR_COMMAND)],
    overrides: [
      { scenario: 'R3', name: 'namespaces', value: 1 },
      { scenario: 'R3', name: 'deploymentsPerNamespace', value: deployments },
      { scenario: 'R3', name: 'completeTimeoutSec', value: 60 },
    ],
    outDir: path.join(outDir, 'r3'),
    live,
  });

  const [run] = result.runs;
  expect(run?.error, run?.logPath).toBeNull();
  expect(run?.writes).toBe(2 * deployments);
  expect(run?.correctness).toMatchObject({ missed: 0 });
  expect(run?.rolloutCompletion).toMatchObject({ incomplete: 0 });
  expect(run?.rolloutCompletion?.allCompleteMs).toBeGreaterThan(0);
  const inFlight = run?.rolloutsInFlight;
  expect(inFlight?.samples).toBeGreaterThan(0);
  expect(inFlight?.max).toBeGreaterThanOrEqual(1);
  expect(inFlight?.max).toBeLessThanOrEqual(deployments);
  // The wait ends once every rollout is complete: the last sample counts none in flight.
  expect(inFlight?.series.at(-1)?.inFlight).toBe(0);
  expect(run?.requests?.afterReady.peakWritesPerSecond).toBeGreaterThanOrEqual(1);
  expect(live.size).toBe(0);
}, 180_000);
