/**
 * The suite: every selected scenario against every controller in turn, on one cluster, one JSON
 * file per run as it finishes, then summary.json and report.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClusterClient } from '../harness/cluster.ts';
import { Canary } from './canary.ts';
import type { LiveProcesses } from './controller-process.ts';
import type { ControllerSpec } from './controllers.ts';
import { KubeRaw } from './kube-raw.ts';
import { isRecord } from './list-watch.ts';
import {
  compareTable,
  findRegressions,
  headlineSummary,
  headlineTable,
  noiseTable,
  rolloutCompletionTable,
  rolloutsInFlightTable,
  regressionSection,
  replicasTable,
  rowsOf,
} from './report.ts';
import { ScenarioRun, type RunEnvironment, type RunRequest, type RunResult } from './runner.ts';
import type { Params, ScenarioDefinition } from './scenarios.ts';

export interface ParamOverride {
  /** Undefined: every scenario that has the parameter. */
  readonly scenario: string | undefined;
  readonly name: string;
  readonly value: number;
}

export interface SuiteOptions {
  readonly cluster: ClusterClient;
  readonly scenarios: readonly ScenarioDefinition[];
  readonly controllers: readonly ControllerSpec[];
  readonly overrides?: readonly ParamOverride[];
  /** Sets `durationSec` of every scenario that has one. */
  readonly durationSec?: number;
  readonly repeat?: number;
  readonly seed?: number;
  readonly outDir: string;
  readonly live: LiveProcesses;
  readonly signal?: AbortSignal;
  readonly progress?: (line: string) => void;
  /** The command line, recorded in the outputs. */
  readonly commandLine?: string;
}

export interface SuiteResult {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly commandLine: string | null;
  readonly machine: {
    readonly cpus: number;
    readonly memoryGiB: number;
    readonly node: string;
    readonly kernel: string;
  };
  readonly seed: number;
  readonly repeat: number;
  readonly controllers: readonly { label: string; profile: string; command: string }[];
  readonly runs: readonly RunResult[];
}

export class BenchOptionError extends Error {
  override readonly name = 'BenchOptionError';
}

/** The scenario's defaults with the overrides that apply to it. */
export function resolveParams(
  scenario: ScenarioDefinition,
  options: { overrides?: readonly ParamOverride[]; durationSec?: number },
): Params {
  const params: Record<string, number> = { ...scenario.defaults };
  if (options.durationSec !== undefined && 'durationSec' in params) {
    params.durationSec = options.durationSec;
  }
  for (const override of options.overrides ?? []) {
    const applies =
      override.scenario === undefined ||
      override.scenario.toLowerCase() === scenario.id.toLowerCase();
    if (!applies) continue;
    if (!(override.name in params)) {
      if (override.scenario === undefined) continue;
      throw new BenchOptionError(
        `${scenario.id} has no parameter ${override.name} (it has: ${Object.keys(scenario.defaults).join(', ')})`,
      );
    }
    params[override.name] = override.value;
  }
  return params;
}

/** Overrides without a scenario must name a parameter some selected scenario has. */
export function checkOverrides(
  scenarios: readonly ScenarioDefinition[],
  overrides: readonly ParamOverride[],
): void {
  for (const override of overrides) {
    if (override.scenario !== undefined) continue;
    if (!scenarios.some((scenario) => override.name in scenario.defaults)) {
      throw new BenchOptionError(`no selected scenario has a parameter ${override.name}`);
    }
  }
}

function seedFor(base: number, scenarioId: string, repeat: number): number {
  let hash = base >>> 0;
  for (const char of scenarioId) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return (hash + repeat * 7919) >>> 0;
}

function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]+/g, '_');
}

function runIdFor(scenario: string, controllerIndex: number, repeat: number): string {
  return `${scenario.toLowerCase()}-c${controllerIndex}r${repeat}-${randomBytes(2).toString('hex')}`;
}

export async function runSuite(options: SuiteOptions): Promise<SuiteResult> {
  const progress = options.progress ?? (() => undefined);
  const repeat = Math.max(1, options.repeat ?? 1);
  const seed = options.seed ?? 1;
  checkOverrides(options.scenarios, options.overrides ?? []);
  const plans = options.scenarios.map((scenario) => ({
    scenario,
    params: resolveParams(scenario, options),
  }));
  await mkdir(path.join(options.outDir, 'runs'), { recursive: true });
  const startedAt = new Date().toISOString();
  const raw = new KubeRaw({ kc: options.cluster.kc });
  const canary = new Canary({
    kc: options.cluster.kc,
    namespace: `bench-canary-${randomBytes(3).toString('hex')}`,
    clock: () => performance.now(),
  });
  await canary.start();
  const runs: RunResult[] = [];
  const env = {
    cluster: options.cluster,
    raw,
    canary,
    live: options.live,
    logDir: path.join(options.outDir, 'logs'),
    signal: options.signal,
    progress,
  };
  const jobs = plans.flatMap(({ scenario, params }) =>
    Array.from({ length: repeat }, (_, round) =>
      options.controllers.map((controller, index) => ({
        scenario,
        params,
        controller,
        round,
        index,
      })),
    ).flat(),
  );
  try {
    for (const { scenario, params, controller, round, index } of jobs) {
      options.signal?.throwIfAborted();
      const request = {
        scenario,
        params,
        controller,
        repeat: round,
        runId: runIdFor(scenario.id, index, round),
        seed: seedFor(seed, scenario.id, round),
      };
      const result = await runOne({ env, request });
      runs.push(result);
      const file = `${scenario.id}-${fileSafe(controller.label)}-${round + 1}.json`;
      await writeFile(
        path.join(options.outDir, 'runs', file),
        `${JSON.stringify(result, null, 2)}\n`,
      );
      // Let kube-controller-manager catch up with the rollouts before the next run measures.
      await sleep(1000, undefined, options.signal ? { signal: options.signal } : {});
    }
  } finally {
    await canary.stop();
  }
  return {
    startedAt,
    finishedAt: new Date().toISOString(),
    commandLine: options.commandLine ?? null,
    machine: {
      cpus: os.availableParallelism(),
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      kernel: os.release(),
    },
    seed,
    repeat,
    controllers: options.controllers.map((c) => ({
      label: c.label,
      profile: c.profile,
      command: c.argv.join(' '),
    })),
    runs,
  };
}

async function runOne(details: { env: RunEnvironment; request: RunRequest }): Promise<RunResult> {
  const { env, request } = details;
  const namespace = (i: number): string => `bench-${request.runId}-${i}`;
  const run = new ScenarioRun({
    env,
    request,
    setup: request.scenario.build(request.params, namespace),
  });
  const result = await run.execute();
  env.progress(`[${request.scenario.id} ${request.controller.label}] ${oneLine(result)}`);
  return result;
}

function oneLine(run: RunResult): string {
  if (run.error !== null) return `FAILED: ${run.error}`;
  const c = run.correctness;
  const requests = run.requests?.afterReady;
  const completion = run.rolloutCompletion ?? undefined;
  return (
    `p50 ${String(run.latencyMs.p50)} ms, p99 ${String(run.latencyMs.p99)} ms; ` +
    (completion === undefined
      ? ''
      : `change → complete p50 ${String(completion.changeToCompleteMs.p50)} ms, p99 ${String(completion.changeToCompleteMs.p99)} ms, ` +
        `in flight max ${completion.inFlight.max} p95 ${completion.inFlight.p95}, incomplete ${completion.incomplete}; `) +
    (run.rolloutsInFlight === undefined || run.rolloutsInFlight === null
      ? ''
      : `sampled in flight max ${run.rolloutsInFlight.max} p95 ${run.rolloutsInFlight.p95}, all complete ${completion?.allCompleteMs ?? '–'} ms, peak ${requests?.peakWritesPerSecond ?? '–'} writes/s; `) +
    `rollouts ${c.rolls}, missed ${c.missed}, extra ${c.extra}, coalesced ${c.coalesced}; ` +
    `RSS max ${String(run.resources.rssMaxMiB)} MiB, CPU ${run.resources.cpuSeconds} s` +
    (requests === undefined ? '' : `; workload LIST/GET after ready ${requests.workloadListGet}`)
  );
}

export function renderMarkdown(
  result: SuiteResult,
  options: { compare?: boolean; baseline?: SuiteResult } = {},
): string {
  const rows = rowsOf(result.runs);
  const { machine } = result;
  const sections = [
    '# kreload benchmark',
    '',
    `- date: ${result.startedAt} → ${result.finishedAt}`,
    ...(result.commandLine === null ? [] : [`- command: \`${result.commandLine}\``]),
    `- machine: ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, Linux ${machine.kernel}`,
    `- controllers: ${result.controllers.map((c) => `${c.label} (\`${c.command}\`)`).join(', ')}`,
    `- repeats: ${result.repeat}, seed ${result.seed}`,
    '',
    'Latency: bench write → the workload template carries the new hash (bench clock, its own',
    'watch). Requests: kube-apiserver audit log, the controller identity only. RSS: /proc every',
    '250 ms; peak: VmHWM. Medians over repeats.',
    '',
    '## Headline',
    '',
    headlineSummary(rows),
    '',
    '## All figures',
    '',
    headlineTable(rows),
  ];
  const completion = rolloutCompletionTable(rows);
  if (completion !== '') {
    sections.push(
      '',
      '## Change → rollout complete (pods really run)',
      '',
      'From the bench write to the first moment a ReplicaSet carrying the new hash has every',
      'replica Ready and available and the older ReplicaSets no pod; in flight: from that',
      'ReplicaSet’s creation to then, p95 weighted by time. All from ReplicaSet status.',
      '',
      completion,
    );
  }
  const storm = rolloutsInFlightTable(rows);
  if (storm !== '') {
    sections.push(
      '',
      '## Rollouts in flight, sampled from ReplicaSets',
      '',
      'Every 250 ms from the first write: a Deployment is in flight while more than one of its',
      'ReplicaSets has pods or its newest ReplicaSet has fewer available pods than desired. All',
      'complete: first write → the last rollout complete. Writes: the controller’s create, update,',
      'patch and delete requests after ready (audit log); peak: the most in one second.',
      '',
      storm,
    );
  }
  sections.push(
    '',
    '## Replicas and API server',
    '',
    'RSS per replica: /proc of each process (several: `--replicas`); ratios to the same',
    'controller as one process in this run. Watches: kube-apiserver’s',
    '`apiserver_longrunning_requests{verb="WATCH"}` before the controller started and at the end',
    'of the drain; requests/s: `apiserver_request_total` of every client, from the controller',
    'settled to the end of the drain. Controller requests: audit log, Lease requests apart.',
    '',
    replicasTable(rows),
  );
  const noise = noiseTable(rows);
  if (noise !== '') {
    sections.push('', '## Spread between repeats ((max − min) ÷ median)', '', noise);
  }
  const firstController = result.controllers[0]?.label;
  if (options.compare === true && firstController !== undefined) {
    sections.push('', `## Ratios to ${firstController}`, '', compareTable(rows, firstController));
  }
  if (options.baseline !== undefined) {
    sections.push(
      '',
      `## Against the baseline of ${options.baseline.startedAt}`,
      '',
      regressionSection(findRegressions(rows, rowsOf(options.baseline.runs))),
    );
  }
  const failures = result.runs.filter((run) => run.error !== null);
  if (failures.length > 0) {
    sections.push(
      '',
      '## Failed runs',
      '',
      ...failures.map(
        (run) => `- ${run.scenario} ${run.controller}: ${run.error ?? ''} (log: ${run.logPath})`,
      ),
    );
  }
  return `${sections.join('\n')}\n`;
}

export async function writeSuiteOutputs(
  result: SuiteResult,
  options: { outDir: string; compare?: boolean; baseline?: SuiteResult },
): Promise<{ summaryPath: string; markdownPath: string; markdown: string }> {
  const summaryPath = path.join(options.outDir, 'summary.json');
  const markdownPath = path.join(options.outDir, 'report.md');
  const markdown = renderMarkdown(result, options);
  await writeFile(summaryPath, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(markdownPath, markdown);
  return { summaryPath, markdownPath, markdown };
}

function isSuiteResult(value: unknown): value is SuiteResult {
  return isRecord(value) && Array.isArray(value.runs) && typeof value.startedAt === 'string';
}

export async function readSuiteResult(file: string): Promise<SuiteResult> {
  const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
  if (!isSuiteResult(parsed)) throw new BenchOptionError(`${file} is not a bench summary.json`);
  return parsed;
}
