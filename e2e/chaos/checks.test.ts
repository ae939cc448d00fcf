import { describe, expect, it } from 'vitest';
import { converged, countWindow } from './checks.ts';
import type { FleetSnapshot, WorkloadState } from './fleet.ts';

const OLD = 'a'.repeat(40);
const NEW = 'b'.repeat(40);

function state(
  partial: Partial<WorkloadState> & Pick<WorkloadState, 'kind' | 'name'>,
): WorkloadState {
  return {
    applied: undefined,
    revisions: 0,
    settled: true,
    present: partial.kind === 'Job' || partial.kind === 'CronJob',
    uid: '',
    runs: [],
    ...partial,
  };
}

function snapshot(...states: WorkloadState[]): FleetSnapshot {
  return new Map(states.map((s) => [`${s.kind}/${s.name}`, s]));
}

const start = snapshot(
  state({ kind: 'Deployment', name: 'dep-00', applied: OLD, revisions: 2 }),
  state({ kind: 'Job', name: 'job-00', applied: OLD, uid: 'u1' }),
  state({ kind: 'CronJob', name: 'cj-00', runs: [OLD] }),
);

const rolledOnce = snapshot(
  state({ kind: 'Deployment', name: 'dep-00', applied: NEW, revisions: 3 }),
  state({ kind: 'Job', name: 'job-00', applied: NEW, uid: 'u2' }),
  state({ kind: 'CronJob', name: 'cj-00', runs: [OLD, NEW] }),
);

const oneCreate = new Map([['job-00', 1]]);

describe('countWindow', () => {
  it('counts nothing when every workload rolled exactly once', () => {
    const counts = countWindow({ start, end: rolledOnce, hash: NEW, jobCreates: oneCreate });
    expect(counts).toEqual({
      missed: 0,
      duplicated: 0,
      lostJobs: 0,
      duplicateRuns: 0,
      problems: [],
    });
    expect(converged(start, rolledOnce, NEW)).toBe(true);
  });

  it('counts a workload that never rolled as missed, and the window as not converged', () => {
    const end = snapshot(
      state({ kind: 'Deployment', name: 'dep-00', applied: OLD, revisions: 2 }),
      state({ kind: 'Job', name: 'job-00', applied: OLD, uid: 'u1' }),
      state({ kind: 'CronJob', name: 'cj-00', runs: [OLD] }),
    );
    const counts = countWindow({ start, end, hash: NEW, jobCreates: new Map() });
    expect(counts.missed).toBe(3);
    expect(counts.problems).toContain('Deployment/dep-00: missed');
    expect(converged(start, end, NEW)).toBe(false);
  });

  it('counts revisions and recreations beyond one as duplicated, extra CronJob Jobs as runs', () => {
    const end = snapshot(
      state({ kind: 'Deployment', name: 'dep-00', applied: NEW, revisions: 5 }),
      state({ kind: 'Job', name: 'job-00', applied: NEW, uid: 'u3' }),
      state({ kind: 'CronJob', name: 'cj-00', runs: [OLD, NEW, NEW] }),
    );
    const counts = countWindow({ start, end, hash: NEW, jobCreates: new Map([['job-00', 2]]) });
    expect(counts).toMatchObject({ missed: 0, duplicated: 3, lostJobs: 0, duplicateRuns: 1 });
  });

  it('counts a Job deleted and never created again as lost', () => {
    const end = snapshot(
      state({ kind: 'Deployment', name: 'dep-00', applied: NEW, revisions: 3 }),
      state({ kind: 'Job', name: 'job-00', present: false }),
      state({ kind: 'CronJob', name: 'cj-00', runs: [OLD, NEW] }),
    );
    const counts = countWindow({ start, end, hash: NEW, jobCreates: new Map() });
    expect(counts).toMatchObject({ missed: 0, lostJobs: 1, problems: ['Job/job-00: Job lost'] });
    expect(converged(start, end, NEW)).toBe(false);
  });

  it('counts a lost Job once: a later window has nothing left to roll', () => {
    const lost = snapshot(state({ kind: 'Job', name: 'job-00', present: false }));
    const counts = countWindow({ start: lost, end: lost, hash: NEW, jobCreates: new Map() });
    expect(counts).toMatchObject({ missed: 0, lostJobs: 0 });
    expect(converged(lost, lost, NEW)).toBe(true);
  });

  it('does not call a template change the controller has not observed yet converged', () => {
    const end = new Map(rolledOnce);
    end.set(
      'Deployment/dep-00',
      state({ kind: 'Deployment', name: 'dep-00', applied: NEW, revisions: 3, settled: false }),
    );
    expect(converged(start, end, NEW)).toBe(false);
  });
});
