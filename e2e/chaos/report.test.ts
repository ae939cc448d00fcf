import { describe, expect, it } from 'vitest';
import { faultById } from './faults.ts';
import { isClean, renderTable, summarize } from './report.ts';
import type { IterationResult, WindowResult } from './suite.ts';

const CLEAN_WINDOW: WindowResult = {
  window: 'during',
  convergeMs: 1500,
  missed: 0,
  duplicated: 0,
  lostJobs: 0,
  duplicateRuns: 0,
  problems: [],
};

function iteration(partial: Partial<IterationResult>): IterationResult {
  return {
    fault: '429-storm',
    iteration: 0,
    strategy: 'env-vars',
    seed: 1,
    windows: [CLEAN_WINDOW],
    evidence: { injected: 0, note: '' },
    checks: [],
    crashes: 0,
    injectedKills: 0,
    ...partial,
  };
}

describe('the fault table', () => {
  it('a row whose counts are all 0 is not clean when one of its checks failed', () => {
    const summary = summarize(faultById('429-storm'), [
      iteration({
        checks: [
          { name: 'free namespace converged before the storm ended', passed: true, detail: '' },
        ],
      }),
      iteration({
        iteration: 1,
        strategy: 'annotations',
        checks: [
          {
            name: 'free namespace converged before the storm ended',
            passed: false,
            detail: 'not within 60.0 s',
          },
        ],
      }),
    ]);
    expect(isClean(summary)).toBe(false);
    expect(summary.problems).toEqual([
      '#1 annotations: check "free namespace converged before the storm ended" failed (not within 60.0 s)',
    ]);
    expect(renderTable([summary])).toContain('| 1/2 |');
  });

  it('sums what was injected by verb over the iterations', () => {
    const summary = summarize(faultById('lost-response-jobs'), [
      iteration({
        evidence: { injected: 2, note: '', byVerb: { 'delete jobs': 1, 'create jobs': 1 } },
      }),
      iteration({
        iteration: 1,
        evidence: { injected: 1, note: '', byVerb: { 'create jobs': 1 } },
      }),
    ]);
    expect(isClean(summary)).toBe(true);
    expect(renderTable([summary])).toContain('| 3 (create jobs 2, delete jobs 1) | — |');
  });
});
