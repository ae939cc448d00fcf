import { describe, expect, it } from 'vitest';
import { converged, countRollPatches, countWindow, type RollPatch } from './checks.ts';
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

describe('countRollPatches', () => {
  const KILL = 1_000_000;
  const W = 'ns-1/deployments/dep-00';
  const patch = (code: number, receivedAt: number, stage = 'ResponseComplete'): RollPatch => ({
    workload: W,
    code,
    stage,
    receivedAt,
  });
  const cases: {
    readonly name: string;
    readonly patches: readonly RollPatch[];
    readonly kills?: readonly number[];
    readonly verdict: 'once' | 'cut' | 'twice' | 'none';
  }[] = [
    { name: 'one PATCH answered 200', patches: [patch(200, KILL + 5000)], verdict: 'once' },
    {
      name: 'a 409 then a 200 (a stale read, retried)',
      patches: [patch(409, KILL - 200), patch(200, KILL + 5000)],
      verdict: 'once',
    },
    {
      name: 'two answered 200',
      patches: [patch(200, KILL - 200), patch(200, KILL + 5000)],
      verdict: 'twice',
    },
    { name: 'no PATCH', patches: [], verdict: 'none' },
    {
      name: 'a 504 before the kill: the sender died before the write returned',
      patches: [patch(504, KILL - 300)],
      verdict: 'cut',
    },
    {
      name: 'a panic before the kill (handler aborted, no response)',
      patches: [patch(500, KILL - 300, 'Panic')],
      verdict: 'cut',
    },
    {
      name: 'a 504 with no kill: a live sender would have retried',
      patches: [patch(504, KILL - 300)],
      kills: [],
      verdict: 'none',
    },
    {
      name: 'a 504 received after the kill landed: not the dead sender',
      patches: [patch(504, KILL + 300)],
      verdict: 'none',
    },
    {
      name: 'a 409 before the kill: answered, not applied',
      patches: [patch(409, KILL - 300)],
      verdict: 'none',
    },
    {
      name: 'two cut PATCHes: which one rolled cannot be told',
      patches: [patch(504, KILL - 900), patch(504, KILL - 300)],
      verdict: 'none',
    },
    {
      name: 'a cut PATCH and a 200: the 200 is the roll',
      patches: [patch(504, KILL - 300), patch(200, KILL + 5000)],
      verdict: 'once',
    },
  ];
  it.each(cases)('$name: $verdict', ({ patches, kills, verdict }) => {
    const counts = countRollPatches({ patches, expected: [W], kills: kills ?? [KILL] });
    const got =
      counts.twice.length > 0
        ? 'twice'
        : counts.none.length > 0
          ? 'none'
          : counts.cut.length > 0
            ? 'cut'
            : 'once';
    expect(got).toBe(verdict);
    expect(counts.once).toBe(verdict === 'once' || verdict === 'cut' ? 1 : 0);
  });

  it('names what the audit log shows of a workload without a roll PATCH', () => {
    const counts = countRollPatches({
      patches: [patch(409, KILL - 1500)],
      expected: [W, 'ns-1/deployments/dep-01'],
      kills: [KILL],
    });
    expect(counts.none).toEqual([
      `${W} (PATCH → 409 -1.5 s from the kill)`,
      'ns-1/deployments/dep-01 (no PATCH)',
    ]);
  });
});
