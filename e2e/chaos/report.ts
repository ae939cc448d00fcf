// The table `npm run chaos` prints and docs/reliability.md keeps: one row per fault, summed over
// its iterations and the three windows of each. Pure.
import type { FaultRow } from './fault-types.ts';
import { describeByVerb } from './faults.ts';
import type { IterationResult } from './suite.ts';

export interface FaultSummary {
  readonly fault: FaultRow;
  readonly iterations: number;
  readonly strategies: readonly string[];
  readonly injected: number;
  /** `injected` by `verb resource`, summed over the iterations that give it. */
  readonly injectedByVerb: Readonly<Record<string, number>> | undefined;
  /** The row's per-iteration checks: how many ran, how many failed. */
  readonly checks: number;
  readonly failedChecks: number;
  readonly missed: number;
  readonly duplicated: number;
  readonly lostJobs: number;
  readonly duplicateRuns: number;
  /** kreload exits the suite did not cause. */
  readonly restarts: number;
  readonly injectedKills: number;
  /** Longest convergence of any window, in ms; undefined when some window never converged. */
  readonly worstConvergeMs: number | undefined;
  readonly problems: readonly string[];
}

export function summarize(fault: FaultRow, results: readonly IterationResult[]): FaultSummary {
  const windows = results.flatMap((r) => r.windows);
  const sum = (pick: (w: (typeof windows)[number]) => number): number =>
    windows.reduce((total, w) => total + pick(w), 0);
  const allConverged = windows.every((w) => w.convergeMs !== undefined);
  const checks = results.flatMap((r) =>
    r.checks.map((check) => ({ ...check, where: `#${String(r.iteration)} ${r.strategy}` })),
  );
  let injectedByVerb: Record<string, number> | undefined;
  for (const result of results) {
    for (const [key, count] of Object.entries(result.evidence.byVerb ?? {})) {
      injectedByVerb ??= {};
      injectedByVerb[key] = (injectedByVerb[key] ?? 0) + count;
    }
  }
  return {
    fault,
    iterations: results.length,
    strategies: [...new Set(results.map((r) => r.strategy))],
    injected: results.reduce((total, r) => total + r.evidence.injected, 0),
    injectedByVerb,
    checks: checks.length,
    failedChecks: checks.filter((check) => !check.passed).length,
    missed: sum((w) => w.missed),
    duplicated: sum((w) => w.duplicated),
    lostJobs: sum((w) => w.lostJobs),
    duplicateRuns: sum((w) => w.duplicateRuns),
    restarts: results.reduce((total, r) => total + r.crashes, 0),
    injectedKills: results.reduce((total, r) => total + r.injectedKills, 0),
    worstConvergeMs: allConverged
      ? Math.max(0, ...windows.map((w) => w.convergeMs ?? 0))
      : undefined,
    problems: [
      ...checks
        .filter((check) => !check.passed)
        .map((check) => `${check.where}: check "${check.name}" failed (${check.detail})`),
      ...results.flatMap((r) =>
        r.windows.flatMap((w) =>
          w.problems.map((p) => `#${String(r.iteration)} ${r.strategy} ${w.window}: ${p}`),
        ),
      ),
    ],
  };
}

/** All four counts zero, every window converged and every check of the row passed. */
export function isClean(summary: FaultSummary): boolean {
  return (
    summary.failedChecks === 0 &&
    summary.missed === 0 &&
    summary.duplicated === 0 &&
    summary.lostJobs === 0 &&
    summary.duplicateRuns === 0 &&
    summary.worstConvergeMs !== undefined
  );
}

const HEADER = [
  'fault',
  'iterations',
  'injected',
  'checks passed',
  'missed',
  'duplicated',
  'lost Jobs',
  'duplicate runs',
  'kreload restarts',
  'converge (worst, s)',
];

function row(summary: FaultSummary): string[] {
  const restarts =
    summary.injectedKills > 0
      ? `${String(summary.restarts)} (+${String(summary.injectedKills)} injected)`
      : String(summary.restarts);
  return [
    `${summary.fault.title} (\`${summary.fault.id}\`)`,
    `${String(summary.iterations)} (${summary.strategies.join(', ')})`,
    summary.injectedByVerb === undefined
      ? String(summary.injected)
      : `${String(summary.injected)} (${describeByVerb(summary.injectedByVerb)})`,
    summary.checks === 0
      ? '—'
      : `${String(summary.checks - summary.failedChecks)}/${String(summary.checks)}`,
    String(summary.missed),
    String(summary.duplicated),
    String(summary.lostJobs),
    String(summary.duplicateRuns),
    restarts,
    summary.worstConvergeMs === undefined
      ? 'not converged'
      : (summary.worstConvergeMs / 1000).toFixed(1),
  ];
}

/** A Markdown table (it reads as plain text on a terminal too). */
export function renderTable(summaries: readonly FaultSummary[]): string {
  const lines = [HEADER, HEADER.map(() => '---'), ...summaries.map(row)];
  return `${lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n')}\n`;
}
