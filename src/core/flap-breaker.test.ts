import { describe, expect, it } from 'vitest';

import type { FlapLimits, FlapState } from './flap-breaker.ts';
import { flapStateIdle, flapStatus, recordChange } from './flap-breaker.ts';

const S = 1_000;
const LIMITS: FlapLimits = { maxChanges: 3, periodMs: 60 * S, coolDownMs: 30 * S };

/** Records changes at these seconds; returns the state and the seconds whose change opened it. */
function replay(seconds: readonly number[], limits = LIMITS) {
  let state: FlapState | undefined;
  const openedAt: number[] = [];
  for (const second of seconds) {
    const next = recordChange(state, second * S, limits);
    state = next.state;
    if (next.opened) openedAt.push(second);
  }
  return { state, openedAt };
}

interface Row {
  readonly name: string;
  readonly changes: readonly number[];
  readonly limits?: FlapLimits;
  readonly openedAt: readonly number[];
  /** Second at which the status is read, and whether it is open then (closesAt in seconds). */
  readonly at: number;
  readonly closesAt: number | undefined;
}

const ROWS: readonly Row[] = [
  {
    name: 'three changes in a minute stay closed',
    changes: [0, 10, 20],
    openedAt: [],
    at: 21,
    closesAt: undefined,
  },
  {
    name: 'the fourth change in a minute opens',
    changes: [0, 10, 20, 30],
    openedAt: [30],
    at: 31,
    closesAt: 60,
  },
  {
    name: 'changes spread over more than the period never open',
    changes: [0, 30, 61, 92, 123],
    openedAt: [],
    at: 124,
    closesAt: undefined,
  },
  {
    name: 'each change while open pushes the close back; one opening per episode',
    changes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    openedAt: [3],
    at: 11,
    closesAt: 40,
  },
  {
    name: 'quiet for the cool-down closes it',
    changes: [0, 1, 2, 3, 4],
    openedAt: [3],
    at: 34,
    closesAt: undefined,
  },
  {
    name: 'the change after the cool-down starts a new count: it does not reopen',
    changes: [0, 1, 2, 3, 40],
    openedAt: [3],
    at: 41,
    closesAt: undefined,
  },
  {
    name: 'flapping again after the cool-down is a second episode',
    changes: [0, 1, 2, 3, 40, 41, 42, 43],
    openedAt: [3, 43],
    at: 44,
    closesAt: 73,
  },
  {
    name: 'maxChanges 0 turns the breaker off',
    changes: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    limits: { ...LIMITS, maxChanges: 0 },
    openedAt: [],
    at: 10,
    closesAt: undefined,
  },
];

describe('flap breaker', () => {
  it.each(ROWS)('$name', (row) => {
    const limits = row.limits ?? LIMITS;
    const { state, openedAt } = replay(row.changes, limits);
    expect(openedAt).toEqual(row.openedAt);
    const status = flapStatus(state, row.at * S, limits);
    expect(status.open ? status.closesAt / S : undefined).toBe(row.closesAt);
  });

  it('keeps at most maxChanges + 1 times whatever the rate', () => {
    const { state } = replay(Array.from({ length: 1000 }, (_, index) => index / 100));
    expect(state?.changes).toHaveLength(LIMITS.maxChanges + 1);
    expect(state?.episodeChanges).toBe(997);
  });

  it('reports the rate that opened it', () => {
    const { state } = replay([0, 10, 20, 30]);
    expect(flapStatus(state, 31 * S, LIMITS)).toEqual({
      open: true,
      openedAt: 30 * S,
      closesAt: 60 * S,
      changesInPeriod: 4,
      episodeChanges: 1,
    });
  });

  it.each([
    [[0], 30, false],
    [[0], 61, true],
    [[0, 1, 2, 3], 61, false],
    [[0, 1, 2, 3], 94, true],
  ])('changes %j: idle at %is is %s', (changes, second, idle) => {
    const { state } = replay(changes);
    if (!state) throw new Error('no state');
    expect(flapStateIdle(state, second * S, LIMITS)).toBe(idle);
  });
});
