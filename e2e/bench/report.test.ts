import { describe, expect, it } from 'vitest';
import {
  compareTable,
  findRegressions,
  headlineSummary,
  headlineTable,
  noiseTable,
  rolloutCompletionTable,
  rolloutsInFlightTable,
  rowsOf,
} from './report.ts';
import type { InFlightSeries } from '../harness/rollouts-in-flight.ts';
import type { RolloutCompletion } from './rollout-completion.ts';
import type { RunResult } from './runner.ts';

function run(details: {
  scenario?: string;
  controller: string;
  profile?: string;
  p99: number;
  rss?: number;
  missed?: number;
  error?: string;
  completion?: RolloutCompletion;
  inFlight?: InFlightSeries;
  command?: string;
}): RunResult {
  const latency = {
    count: 10,
    p50: details.p99 / 2,
    p95: details.p99,
    p99: details.p99,
    max: details.p99,
    mean: details.p99 / 2,
  };
  return {
    scenario: details.scenario ?? 'S1',
    title: 'burst',
    controller: details.controller,
    profile: details.profile ?? 'kreload',
    command: details.command ?? 'x',
    repeat: 0,
    runId: 'r',
    params: {},
    startedAt: '2026-01-01T00:00:00Z',
    error: details.error ?? null,
    objects: { sources: 1, workloads: 1 },
    timingMs: { setup: 1, ready: [1500], settled: null, load: 1, drain: 1 },
    drained: true,
    writes: 10,
    benchWriteErrors: 0,
    latencyMs: latency,
    completionMs: latency,
    correctness: {
      expected: 10,
      delivered: 10,
      coalesced: 0,
      missed: details.missed ?? 0,
      rolls: 10,
      extra: 0,
      unattributed: 0,
      duplicate: 0,
      rollouts: null,
    },
    requests: {
      startup: { total: 20, byVerb: {}, workloadListGet: 6, errors: {} },
      afterReady: {
        total: 10,
        byVerb: {},
        workloadListGet: 0,
        errors: { 'patch deployments 404': 2 },
        writes: 8,
        peakWritesPerSecond: 5,
      },
    },
    resources: {
      samples: 4,
      rssAvgMiB: details.rss ?? 100,
      rssMaxMiB: details.rss ?? 100,
      peakMiB: details.rss ?? 100,
      cpuSeconds: 1,
      cpuSecondsStartup: 0.5,
      cpuSecondsAfterReady: 0.5,
    },
    ...(details.completion === undefined ? {} : { rolloutCompletion: details.completion }),
    ...(details.inFlight === undefined ? {} : { rolloutsInFlight: details.inFlight }),
    logPath: '/dev/null',
  };
}

function completion(p99Ms: number, inFlightMax: number): RolloutCompletion {
  return {
    expected: 100,
    changeToCompleteMs: {
      count: 100,
      p50: p99Ms / 2,
      p95: p99Ms,
      p99: p99Ms,
      max: p99Ms + 500,
      mean: p99Ms / 2,
    },
    incomplete: 0,
    allCompleteMs: p99Ms + 1000,
    inFlight: { max: inFlightMax, p95: inFlightMax - 1 },
  };
}

describe('rolloutsInFlightTable', () => {
  it('shows the sampled rollouts in flight, all complete, peak writes and RSS', () => {
    const sampled = (max: number): InFlightSeries => ({
      intervalMs: 250,
      samples: 40,
      max,
      p95: max - 2,
      series: [],
    });
    const rows = rowsOf([
      run({
        scenario: 'R3',
        controller: 'kreload',
        p99: 10,
        rss: 120,
        completion: completion(60_000, 100),
        inFlight: sampled(100),
      }),
      run({
        scenario: 'R3',
        controller: 'kreload-budget20',
        command: 'node dist/main.js --max-concurrent-rollouts=20',
        p99: 10,
        completion: completion(90_000, 20),
        inFlight: sampled(20),
      }),
      run({
        scenario: 'R3',
        controller: 'kreload-budget5',
        command: 'node dist/main.js --max-concurrent-rollouts=5',
        p99: 10,
        completion: completion(90_000, 20),
        inFlight: sampled(6),
      }),
      run({ scenario: 'R1', controller: 'kreload', p99: 10, completion: completion(6000, 50) }),
    ]);

    expect(rolloutsInFlightTable(rows).split('\n').slice(2)).toEqual([
      '| R3 burst | kreload | 100 | 98 | – | 61.0 | 8 | 5 | 120 | 0 / 0 / 0 |',
      '| R3 burst | kreload-budget20 | 20 | 18 | 20 held | 91.0 | 8 | 5 | 100 | 0 / 0 / 0 |',
      '| R3 burst | kreload-budget5 | 6 | 4 | 5 **exceeded** | 91.0 | 8 | 5 | 100 | 0 / 0 / 0 |',
    ]);
  });

  it('is empty when nothing was sampled', () => {
    expect(rolloutsInFlightTable(rowsOf([run({ controller: 'kreload', p99: 10 })]))).toBe('');
  });
});

describe('rolloutCompletionTable', () => {
  it('shows change → complete in seconds, the ratio to the ideal and the rollouts in flight', () => {
    const rows = rowsOf([
      run({
        scenario: 'R1',
        controller: 'ideal',
        profile: 'ideal',
        p99: 10,
        completion: completion(4000, 100),
      }),
      run({ scenario: 'R1', controller: 'kreload', p99: 10, completion: completion(6000, 50) }),
      run({ scenario: 'S1', controller: 'kreload', p99: 10 }),
    ]);

    expect(rolloutCompletionTable(rows).split('\n').slice(2)).toEqual([
      '| R1 burst | ideal | 2.0 | 4.0 | 4.5 | – | 100 | 99 | 0 |',
      '| R1 burst | kreload | 3.0 | 6.0 | 6.5 | 1.50× | 50 | 49 | 0 |',
    ]);
  });

  it('is empty when no scenario ran pods', () => {
    expect(rolloutCompletionTable(rowsOf([run({ controller: 'kreload', p99: 10 })]))).toBe('');
  });
});

describe('rowsOf', () => {
  it('takes the median over repeats and the spread between them as noise', () => {
    const rows = rowsOf([
      run({ controller: 'kreload', p99: 100 }),
      run({ controller: 'kreload', p99: 120 }),
      run({ controller: 'kreload', p99: 110 }),
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.metrics.latencyP99).toBe(110);
    expect(rows[0]?.noise.latencyP99).toBe(0.182);
    expect(rows[0]?.metrics.errorsAfterReady).toBe(2);
    expect(noiseTable(rows)).toContain('| S1 | kreload | 3 | 18 % | 0 % | 0 % |');
    expect(noiseTable(rowsOf([run({ controller: 'k', p99: 1 })]))).toBe('');
  });

  it('ignores failed repeats when another succeeded, and reports the failure', () => {
    const rows = rowsOf([
      run({ controller: 'k', p99: 50, error: 'boom' }),
      run({ controller: 'k', p99: 100 }),
    ]);
    expect(rows[0]?.metrics.latencyP99).toBe(100);
    expect(rows[0]?.failed).toEqual(['boom']);
  });
});

describe('tables', () => {
  const rows = rowsOf([
    run({ controller: 'kreload', p99: 300 }),
    run({ controller: 'ideal', profile: 'ideal', p99: 100 }),
  ]);

  it('headline: p99 as a ratio to the ideal reactor of the same scenario', () => {
    const table = headlineTable(rows);
    expect(table).toContain('| S1 burst | kreload | 150 | 300 | 3.00× | 300 |');
    expect(table).toContain('| S1 burst | ideal | 50 | 100 | – |');
  });

  it('headline summary: the figures scenarios.md names, with ratios to the ideal reactor', () => {
    const summary = headlineSummary(rows);
    expect(summary).toContain('| p99 latency S1, ms (÷ ideal) | 300 (3.00×) | 100 |');
    expect(summary).toContain('| missed, all scenarios | 0 | 0 |');
    expect(summary).not.toContain('K1');
  });

  it('--compare: ratios against the first controller', () => {
    expect(compareTable(rows, 'kreload')).toContain('| S1 | ideal | 0.33× | 0.33× |');
  });
});

describe('findRegressions', () => {
  const baseline = rowsOf([
    run({ controller: 'kreload', p99: 200 }),
    run({ controller: 'ideal', profile: 'ideal', p99: 100 }),
  ]);

  it.each([
    { p99: 240, missed: 0, flagged: [] },
    { p99: 300, missed: 0, flagged: ['p99 latency (÷ ideal)'] },
    { p99: 200, missed: 1, flagged: ['missed'] },
  ])(
    'p99 $p99 (baseline 200, margin 25 %), missed $missed → $flagged',
    ({ p99, missed, flagged }) => {
      const current = rowsOf([
        run({ controller: 'kreload', p99, missed }),
        run({ controller: 'ideal', profile: 'ideal', p99: 100 }),
      ]);
      const result = findRegressions(current, baseline);
      expect(result.measuredMargin).toBe(false);
      expect(
        result.regressions.filter((r) => r.controller === 'kreload').map((r) => r.metric),
      ).toEqual(flagged);
    },
  );

  it('uses the spread between repeats as the margin when measured', () => {
    const noisy = rowsOf([
      run({ controller: 'kreload', p99: 200 }),
      run({ controller: 'kreload', p99: 300 }),
      run({ controller: 'ideal', profile: 'ideal', p99: 100 }),
    ]);
    const current = rowsOf([
      run({ controller: 'kreload', p99: 300 }),
      run({ controller: 'ideal', profile: 'ideal', p99: 100 }),
    ]);
    const result = findRegressions(current, noisy);
    expect(result.measuredMargin).toBe(true);
    expect(result.regressions).toEqual([]);
  });
});
