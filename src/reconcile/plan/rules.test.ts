import { describe, expect, it } from 'vitest';
import { DELETE_MARKER } from '../../core/types.ts';
import type { RuleInput } from './rules.ts';
import { applyRules } from './rules.ts';

const H1 = '1111111111111111111111111111111111111111';
const H2 = '2222222222222222222222222222222222222222';

const NONE: RuleInput = {
  desired: H1,
  applied: undefined,
  baseline: undefined,
  lastChange: undefined,
  trackingStart: undefined,
  createRolls: false,
};

describe('applyRules (§5.3)', () => {
  it.each([
    ['R1', 'D unknown', { desired: undefined }, 'nothing'],
    ['R1', 'D unknown, A and B kept', { desired: undefined, applied: H1, baseline: H2 }, 'nothing'],
    [
      'R1',
      'D unknown beats R7 and R8',
      { desired: undefined, lastChange: 5, trackingStart: 1, createRolls: true },
      'nothing',
    ],
    ['R2', 'A = D', { applied: H1 }, 'nothing'],
    ['R2', 'A = D even with a different B', { applied: H1, baseline: H2 }, 'nothing'],
    ['R2', 'A = D = MARKER', { desired: DELETE_MARKER, applied: DELETE_MARKER }, 'nothing'],
    ['R3', 'A ≠ D', { applied: H2 }, 'roll'],
    ['R3', 'A ≠ D even with B = D', { applied: H2, baseline: H1 }, 'roll'],
    ['R3', 'A ≠ D = MARKER', { desired: DELETE_MARKER, applied: H1 }, 'roll'],
    ['R3', 'A = MARKER, recreated', { applied: DELETE_MARKER }, 'roll'],
    ['R4', 'B = D', { baseline: H1 }, 'nothing'],
    ['R4', 'B = D beats R7', { baseline: H1, lastChange: 5, trackingStart: 1 }, 'nothing'],
    ['R5', 'B ≠ D', { baseline: H2 }, 'roll'],
    ['R5', 'B ≠ D = MARKER', { desired: DELETE_MARKER, baseline: H1 }, 'roll'],
    ['R6', 'no state, D = MARKER', { desired: DELETE_MARKER }, 'roll'],
    ['R7', 'changed after tracking began', { lastChange: 5, trackingStart: 4 }, 'roll'],
    [
      'R8',
      'changed at tracking start is not after it',
      { lastChange: 4, trackingStart: 4, createRolls: true },
      'roll',
    ],
    ['R8', 'live create mark with reload-on-create', { createRolls: true }, 'roll'],
    ['R9', 'changed before tracking began', { lastChange: 3, trackingStart: 4 }, 'baseline'],
    ['R9', 'no lastChange', { trackingStart: 4 }, 'baseline'],
    ['R9', 'no trackingStart', { lastChange: 4 }, 'baseline'],
    ['R9', 'otherwise', {}, 'baseline'],
  ] as const)('%s: %s', (rule, _name, overrides: Partial<RuleInput>, outcome) => {
    expect(applyRules({ ...NONE, ...overrides })).toEqual({ rule, outcome });
  });
});
