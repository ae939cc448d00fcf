/**
 * From runs to the tables: one row per scenario × controller (median over repeats, with the spread
 * between repeats as the noise margin), ratios to the ideal reactor, `--compare` ratios to the
 * first controller, and `--baseline` regression flags. Pure.
 */
import { rolloutBudgetOf } from './controllers.ts';
import type { RunResult } from './runner.ts';
import { median, ratio, relativeSpread } from './stats.ts';

export interface Row {
  readonly scenario: string;
  readonly title: string;
  readonly controller: string;
  readonly profile: string;
  readonly repeats: number;
  readonly failed: readonly string[];
  readonly metrics: Readonly<Record<MetricName, number | null>>;
  /** Relative spread between repeats, per metric (null with one repeat). */
  readonly noise: Readonly<Partial<Record<MetricName, number | null>>>;
  /** Each replica's RSS max and CPU seconds (median over repeats), in POD_NAME order. */
  readonly perReplica: readonly {
    readonly rssMaxMiB: number | null;
    readonly cpuSeconds: number | null;
  }[];
}

export const METRICS = [
  'latencyP50',
  'latencyP95',
  'latencyP99',
  'latencyMax',
  'completionP99',
  'completeP50',
  'completeP99',
  'completeMax',
  'inFlightMax',
  'inFlightP95',
  'sampledInFlightMax',
  'sampledInFlightP95',
  'rolloutBudget',
  'allCompleteMs',
  'rolloutsIncomplete',
  'readyMs',
  'settledMs',
  'workloadListGetAfterReady',
  'requestsStartup',
  'requestsAfterReady',
  'errorsAfterReady',
  'writesAfterReady',
  'peakWritesPerSecond',
  'rssAvgMiB',
  'rssMaxMiB',
  'peakMiB',
  'cpuSeconds',
  'writes',
  'rolls',
  'missed',
  'extra',
  'coalesced',
  'replicas',
  'leaseRequestsAfterReady',
  'apiServerWatchesBefore',
  'apiServerWatches',
  'apiServerRequestsPerSecond',
] as const;

export type MetricName = (typeof METRICS)[number];

const sum = (record: Readonly<Record<string, number>> | undefined): number =>
  Object.values(record ?? {}).reduce((total, value) => total + value, 0);

/** The figures of one run, flat. */
export function runMetrics(run: RunResult): Record<MetricName, number | null> {
  const after = run.requests?.afterReady;
  const completion = run.rolloutCompletion ?? undefined;
  return {
    latencyP50: run.latencyMs.p50,
    latencyP95: run.latencyMs.p95,
    latencyP99: run.latencyMs.p99,
    latencyMax: run.latencyMs.max,
    completionP99: run.completionMs.p99,
    completeP50: completion?.changeToCompleteMs.p50 ?? null,
    completeP99: completion?.changeToCompleteMs.p99 ?? null,
    completeMax: completion?.changeToCompleteMs.max ?? null,
    inFlightMax: completion?.inFlight.max ?? null,
    inFlightP95: completion?.inFlight.p95 ?? null,
    sampledInFlightMax: run.rolloutsInFlight?.max ?? null,
    sampledInFlightP95: run.rolloutsInFlight?.p95 ?? null,
    rolloutBudget: rolloutBudgetOf(run.command.split(' ')) ?? null,
    allCompleteMs: completion?.allCompleteMs ?? null,
    rolloutsIncomplete: completion?.incomplete ?? null,
    readyMs: run.timingMs.ready[0] ?? null,
    settledMs: run.timingMs.settled,
    workloadListGetAfterReady: after?.workloadListGet ?? null,
    requestsStartup: run.requests?.startup.total ?? null,
    requestsAfterReady: after?.total ?? null,
    errorsAfterReady: after === undefined ? null : sum(after.errors),
    writesAfterReady: after?.writes ?? null,
    peakWritesPerSecond: after?.peakWritesPerSecond ?? null,
    rssAvgMiB: run.resources.rssAvgMiB,
    rssMaxMiB: run.resources.rssMaxMiB,
    peakMiB: run.resources.peakMiB,
    cpuSeconds: run.resources.cpuSeconds,
    writes: run.writes,
    rolls: run.correctness.rolls,
    missed: run.correctness.missed,
    extra: run.correctness.extra,
    coalesced: run.correctness.coalesced,
    replicas: run.replicas ?? 1,
    leaseRequestsAfterReady: after?.leaseRequests ?? null,
    apiServerWatchesBefore: run.apiServer?.watchesBefore ?? null,
    apiServerWatches: run.apiServer?.watches ?? null,
    apiServerRequestsPerSecond: run.apiServer?.requestsPerSecond ?? null,
  };
}

/** Per replica index, the median over the runs of its RSS max and CPU seconds. */
function perReplicaOf(runs: readonly RunResult[]): Row['perReplica'] {
  const count = Math.max(0, ...runs.map((run) => run.resources.replicas?.length ?? 0));
  const medianOf = (values: readonly (number | null | undefined)[]): number | null =>
    median(values.filter((value): value is number => value !== null && value !== undefined));
  return Array.from({ length: count }, (_, index) => ({
    rssMaxMiB: medianOf(runs.map((run) => run.resources.replicas?.[index]?.rssMaxMiB)),
    cpuSeconds: medianOf(runs.map((run) => run.resources.replicas?.[index]?.cpuSeconds)),
  }));
}

export function rowsOf(runs: readonly RunResult[]): Row[] {
  const groups = new Map<string, RunResult[]>();
  for (const run of runs) {
    const key = `${run.scenario}\u0000${run.controller}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0];
    if (first === undefined) throw new Error('empty group');
    const ok = group.filter((run) => run.error === null);
    const counted = ok.length > 0 ? ok : group;
    const measured = counted.map(runMetrics);
    const metrics = {} as Record<MetricName, number | null>;
    const noise: Partial<Record<MetricName, number | null>> = {};
    for (const name of METRICS) {
      const values = measured.map((m) => m[name]).filter((v): v is number => v !== null);
      metrics[name] = median(values);
      noise[name] = relativeSpread(values);
    }
    return {
      scenario: first.scenario,
      title: first.title,
      controller: first.controller,
      profile: first.profile,
      repeats: group.length,
      failed: group.filter((run) => run.error !== null).map((run) => run.error ?? ''),
      metrics,
      noise,
      perReplica: perReplicaOf(counted),
    };
  });
}

function referenceRow(
  rows: readonly Row[],
  scenario: string,
  pick: (row: Row) => boolean,
): Row | undefined {
  return rows.find((row) => row.scenario === scenario && pick(row));
}

const fmt = (value: number | null | undefined, digits = 0): string =>
  value === null || value === undefined ? '–' : value.toFixed(digits);

const fmtRatio = (value: number | null): string => (value === null ? '–' : `${value.toFixed(2)}×`);

function headlineRow(row: Row, ideal: Row | undefined): string {
  const m = row.metrics;
  const p99Ratio =
    ideal === undefined || ideal === row ? null : ratio(m.latencyP99, ideal.metrics.latencyP99);
  const cells = [
    `${row.scenario} ${row.title}`,
    row.controller + (row.failed.length > 0 ? ` (**${row.failed.length} failed**)` : ''),
    fmt(m.latencyP50),
    fmt(m.latencyP99),
    fmtRatio(p99Ratio),
    fmt(m.latencyMax),
    fmt(m.completionP99),
    m.readyMs === null ? '–' : (m.readyMs / 1000).toFixed(1),
    fmt(m.workloadListGetAfterReady),
    `${fmt(m.requestsStartup)} / ${fmt(m.requestsAfterReady)}`,
    fmt(m.errorsAfterReady),
    `${fmt(m.rssAvgMiB)} / ${fmt(m.rssMaxMiB)}`,
    fmt(m.peakMiB),
    fmt(m.cpuSeconds, 1),
    `${fmt(m.rolls)} / ${fmt(m.writes)}`,
    fmt(m.missed),
    fmt(m.extra),
    fmt(m.coalesced),
  ];
  return `| ${cells.join(' | ')} |`;
}

export function headlineTable(rows: readonly Row[]): string {
  const header = [
    'scenario',
    'controller',
    'p50 ms',
    'p99 ms',
    'p99 ÷ ideal',
    'max ms',
    'fan-out p99 ms',
    'ready s',
    'workload LIST/GET after ready',
    'API requests startup / after ready',
    'errors after ready',
    'RSS avg / max MiB',
    'peak MiB',
    'CPU s',
    'rollouts / writes',
    'missed',
    'extra',
    'coalesced',
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const ideal = referenceRow(rows, row.scenario, (candidate) => candidate.profile === 'ideal');
    lines.push(headlineRow(row, ideal));
  }
  return lines.join('\n');
}

/**
 * Scenarios whose pods run: from the change to every new pod Ready (ReplicaSet state), and how many
 * rollouts were in flight at once. Empty when no such scenario ran.
 */
export function rolloutCompletionTable(rows: readonly Row[]): string {
  const measured = rows.filter((row) => row.metrics.rolloutsIncomplete !== null);
  if (measured.length === 0) return '';
  const lines = [
    '| scenario | controller | change → complete p50 s | p99 s | max s | p99 ÷ ideal | in flight max | in flight p95 | incomplete |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const seconds = (ms: number | null): string => (ms === null ? '–' : (ms / 1000).toFixed(1));
  for (const row of measured) {
    const m = row.metrics;
    const ideal = referenceRow(rows, row.scenario, (candidate) => candidate.profile === 'ideal');
    const p99Ratio =
      ideal === undefined || ideal === row ? null : ratio(m.completeP99, ideal.metrics.completeP99);
    const cells = [
      `${row.scenario} ${row.title}`,
      row.controller + (row.failed.length > 0 ? ` (**${row.failed.length} failed**)` : ''),
      seconds(m.completeP50),
      seconds(m.completeP99),
      seconds(m.completeMax),
      fmtRatio(p99Ratio),
      fmt(m.inFlightMax),
      fmt(m.inFlightP95),
      fmt(m.rolloutsIncomplete),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The controller's `--max-concurrent-rollouts`, and whether the rollouts in flight kept to it. */
function budgetCell(max: number | null, budget: number | null): string {
  if (budget === null) return '–';
  return max !== null && max > budget ? `${budget} **exceeded**` : `${budget} held`;
}

/**
 * Scenarios whose pods run, the storm's figures: Deployments in flight sampled from ReplicaSet
 * state, time until every rollout is complete, the controller's peak writes per second (audit
 * log) and its memory. Empty when no such scenario ran.
 */
export function rolloutsInFlightTable(rows: readonly Row[]): string {
  const measured = rows.filter((row) => row.metrics.sampledInFlightMax !== null);
  if (measured.length === 0) return '';
  const lines = [
    '| scenario | controller | in flight max | in flight p95 | budget | all complete s | writes after ready | peak writes/s | RSS max MiB | incomplete / missed / extra |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of measured) {
    const m = row.metrics;
    const cells = [
      `${row.scenario} ${row.title}`,
      row.controller + (row.failed.length > 0 ? ` (**${row.failed.length} failed**)` : ''),
      fmt(m.sampledInFlightMax),
      fmt(m.sampledInFlightP95),
      budgetCell(m.sampledInFlightMax, m.rolloutBudget),
      m.allCompleteMs === null ? '–' : (m.allCompleteMs / 1000).toFixed(1),
      fmt(m.writesAfterReady),
      fmt(m.peakWritesPerSecond),
      fmt(m.rssMaxMiB),
      `${fmt(m.rolloutsIncomplete)} / ${fmt(m.missed)} / ${fmt(m.extra)}`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/**
 * The single-process row a replicated one compares with: same scenario and profile, one replica
 * (the first such row, as in the order of `--controller`).
 */
export function singleReplicaRow(rows: readonly Row[], row: Row): Row | undefined {
  if ((row.metrics.replicas ?? 1) <= 1) return undefined;
  return referenceRow(
    rows,
    row.scenario,
    (candidate) => candidate.profile === row.profile && (candidate.metrics.replicas ?? 1) === 1,
  );
}

/**
 * Every row: each replica's RSS max and CPU, the largest replica's RSS and the p99 as ratios to
 * the same controller run as one process, and what kube-apiserver served (watches open before the
 * controller started → while it ran; requests per second of every client once it had settled).
 */
export function replicasTable(rows: readonly Row[]): string {
  const lines = [
    '| scenario | controller | replicas | RSS max per replica MiB | largest ÷ one process | CPU s per replica (sum) | p99 ms | p99 ÷ one process | missed | API server watches before → running | API server requests/s | controller requests after ready (+ Lease) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const m = row.metrics;
    const single = singleReplicaRow(rows, row);
    const replicated = row.perReplica.length > 1;
    const cells = [
      `${row.scenario} ${row.title}`,
      row.controller + (row.failed.length > 0 ? ` (**${row.failed.length} failed**)` : ''),
      fmt(m.replicas),
      replicated ? row.perReplica.map((r) => fmt(r.rssMaxMiB, 1)).join(' / ') : fmt(m.rssMaxMiB, 1),
      single === undefined ? '–' : fmtRatio(ratio(m.rssMaxMiB, single.metrics.rssMaxMiB)),
      replicated
        ? `${row.perReplica.map((r) => fmt(r.cpuSeconds, 1)).join(' / ')} (${fmt(m.cpuSeconds, 1)})`
        : fmt(m.cpuSeconds, 1),
      fmt(m.latencyP99),
      single === undefined ? '–' : fmtRatio(ratio(m.latencyP99, single.metrics.latencyP99)),
      fmt(m.missed),
      `${fmt(m.apiServerWatchesBefore)} → ${fmt(m.apiServerWatches)}`,
      fmt(m.apiServerRequestsPerSecond, 1),
      `${fmt(m.requestsAfterReady)} (+ ${fmt(m.leaseRequestsAfterReady)})`,
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

const HEADLINE_LATENCY = ['S1', 'S2', 'S3', 'S7'];

function totalOf(rows: readonly Row[], controller: string, name: MetricName): number | null {
  const values = rows
    .filter((row) => row.controller === controller)
    .map((row) => row.metrics[name])
    .filter((value): value is number => value !== null);
  return values.length === 0 ? null : values.reduce((total, value) => total + value, 0);
}

/**
 * The figures scenarios.md calls the headline, one column per controller: p99 latency of S1, S2,
 * S3 and S7 and RSS max of K1 (each with its ratio to the ideal reactor), then workload LIST/GET
 * after ready and missed/extra summed over every scenario that ran.
 */
export function headlineSummary(rows: readonly Row[]): string {
  const controllers = [...new Set(rows.map((row) => row.controller))];
  const cell = (scenario: string, controller: string, name: MetricName, digits = 0): string => {
    const row = referenceRow(rows, scenario, (candidate) => candidate.controller === controller);
    if (row === undefined) return '–';
    const ideal = referenceRow(rows, scenario, (candidate) => candidate.profile === 'ideal');
    const value = fmt(row.metrics[name], digits);
    if (ideal === undefined || ideal === row) return value;
    return `${value} (${fmtRatio(ratio(row.metrics[name], ideal.metrics[name]))})`;
  };
  const lines = [
    `| figure | ${controllers.join(' | ')} |`,
    `|---|${controllers.map(() => '---').join('|')}|`,
  ];
  for (const scenario of HEADLINE_LATENCY) {
    if (!rows.some((row) => row.scenario === scenario)) continue;
    lines.push(
      `| p99 latency ${scenario}, ms (÷ ideal) | ${controllers.map((c) => cell(scenario, c, 'latencyP99')).join(' | ')} |`,
    );
  }
  const scale: [string, MetricName][] = [
    ['RSS max K1, MiB', 'rssMaxMiB'],
    ['time to ready K1, ms', 'readyMs'],
    ['time to settle K1, ms', 'settledMs'],
  ];
  for (const [label, name] of rows.some((row) => row.scenario === 'K1') ? scale : []) {
    lines.push(
      `| ${label} (÷ ideal) | ${controllers.map((c) => cell('K1', c, name)).join(' | ')} |`,
    );
  }
  const totals: [string, MetricName][] = [
    ['workload LIST/GET after ready, all scenarios', 'workloadListGetAfterReady'],
    ['missed, all scenarios', 'missed'],
    ['extra, all scenarios', 'extra'],
  ];
  for (const [label, name] of totals) {
    lines.push(`| ${label} | ${controllers.map((c) => fmt(totalOf(rows, c, name))).join(' | ')} |`);
  }
  return lines.join('\n');
}

const COMPARED: readonly MetricName[] = [
  'latencyP50',
  'latencyP99',
  'completionP99',
  'readyMs',
  'requestsAfterReady',
  'rssMaxMiB',
  'cpuSeconds',
];

/** `--compare`: every controller's figures as ratios to the first controller's. */
export function compareTable(rows: readonly Row[], firstController: string): string {
  const header = [
    'scenario',
    'controller',
    ...COMPARED.map((name) => `${name} ÷ ${firstController}`),
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) {
    if (row.controller === firstController) continue;
    const base = referenceRow(
      rows,
      row.scenario,
      (candidate) => candidate.controller === firstController,
    );
    if (base === undefined) continue;
    const cells = COMPARED.map((name) => fmtRatio(ratio(row.metrics[name], base.metrics[name])));
    lines.push(`| ${[row.scenario, row.controller, ...cells].join(' | ')} |`);
  }
  return lines.join('\n');
}

const pct = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : `${(value * 100).toFixed(0)} %`;

/** With --repeat: how far repeats of one controller spread, i.e. the noise a ratio must beat. */
export function noiseTable(rows: readonly Row[]): string {
  const repeated = rows.filter((row) => row.repeats > 1);
  if (repeated.length === 0) return '';
  const lines = [
    '| scenario | controller | repeats | p99 latency | RSS max | CPU |',
    '|---|---|---|---|---|---|',
    ...repeated.map(
      (row) =>
        `| ${row.scenario} | ${row.controller} | ${row.repeats} | ${pct(row.noise.latencyP99)} | ${pct(row.noise.rssMaxMiB)} | ${pct(row.noise.cpuSeconds)} |`,
    ),
  ];
  return lines.join('\n');
}

export interface Regression {
  readonly scenario: string;
  readonly controller: string;
  readonly metric: string;
  readonly baseline: number;
  readonly current: number;
  readonly margin: number;
}

/** Used when neither run repeated a controller, so no noise could be measured. */
export const DEFAULT_NOISE_MARGIN = 0.25;
const MINIMUM_NOISE_MARGIN = 0.1;

/** The figures checked for regressions: ratios to the ideal reactor where one ran, else absolute. */
function checkedValues(rows: readonly Row[], row: Row): Record<string, number | null> {
  const ideal = referenceRow(rows, row.scenario, (candidate) => candidate.profile === 'ideal');
  const relative = (name: MetricName): number | null =>
    ideal === undefined || ideal === row
      ? row.metrics[name]
      : ratio(row.metrics[name], ideal.metrics[name]);
  return {
    'p99 latency (÷ ideal)': relative('latencyP99'),
    'RSS max (÷ ideal)': relative('rssMaxMiB'),
    'CPU (÷ ideal)': relative('cpuSeconds'),
    'workload LIST/GET after ready': row.metrics.workloadListGetAfterReady,
    missed: row.metrics.missed,
    extra: row.metrics.extra,
  };
}

function marginFor(
  rows: readonly (readonly Row[])[],
  scenario: string,
  controller: string,
): number | null {
  const spreads = rows
    .flat()
    .filter((row) => row.scenario === scenario && row.controller === controller)
    .flatMap((row) => [row.noise.latencyP99, row.noise.rssMaxMiB, row.noise.cpuSeconds])
    .filter((value): value is number => value !== null && value !== undefined);
  return spreads.length === 0 ? null : Math.max(MINIMUM_NOISE_MARGIN, ...spreads);
}

/** `--baseline`: figures that got worse by more than the measured noise margin. */
export function findRegressions(
  current: readonly Row[],
  baseline: readonly Row[],
): { regressions: Regression[]; measuredMargin: boolean } {
  const regressions: Regression[] = [];
  let measuredMargin = false;
  for (const row of current) {
    const before = referenceRow(
      baseline,
      row.scenario,
      (candidate) => candidate.controller === row.controller,
    );
    if (before === undefined) continue;
    const measured = marginFor([current, baseline], row.scenario, row.controller);
    measuredMargin ||= measured !== null;
    const margin = measured ?? DEFAULT_NOISE_MARGIN;
    const now = checkedValues(current, row);
    const then = checkedValues(baseline, before);
    for (const [metric, value] of Object.entries(now)) {
      const previous = then[metric];
      if (value === null || previous === null || previous === undefined) continue;
      const isCount = metric === 'missed' || metric === 'extra';
      const worse = isCount
        ? value > previous
        : value > previous * (1 + margin) && value - previous >= 1e-9;
      if (worse) {
        regressions.push({
          scenario: row.scenario,
          controller: row.controller,
          metric,
          baseline: previous,
          current: value,
          margin,
        });
      }
    }
  }
  return { regressions, measuredMargin };
}

export function regressionSection(result: {
  regressions: readonly Regression[];
  measuredMargin: boolean;
}): string {
  const note = result.measuredMargin
    ? 'Noise margin: the larger relative spread between repeats of the same controller (at least 10 %).'
    : `No repeats measured (use --repeat 2): default noise margin ${DEFAULT_NOISE_MARGIN * 100} %.`;
  if (result.regressions.length === 0) return `No regressions against the baseline. ${note}`;
  const lines = [
    note,
    '',
    '| scenario | controller | metric | baseline | now | margin |',
    '|---|---|---|---|---|---|',
    ...result.regressions.map(
      (r) =>
        `| ${r.scenario} | ${r.controller} | ${r.metric} | ${r.baseline} | ${r.current} | ${(r.margin * 100).toFixed(0)} % |`,
    ),
  ];
  return lines.join('\n');
}
