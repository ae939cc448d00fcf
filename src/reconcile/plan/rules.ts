/** The rules of §5.3 for one tracked source: the first row that holds gives the outcome. */
import { DELETE_MARKER } from '../../core/types.ts';

import type { KeyOutcome, RuleId } from './model.ts';

/** D, A, B and the §5.4 facts of one key, as the rules read them. */
export interface RuleInput {
  /** D(K); undefined = unknown. */
  readonly desired: string | undefined;
  /** A(K). */
  readonly applied: string | undefined;
  /** B(K). */
  readonly baseline: string | undefined;
  readonly lastChange: number | undefined;
  readonly trackingStart: number | undefined;
  /** W holds a create mark for the source's current UID and `--reload-on-create` is set. */
  readonly createRolls: boolean;
  /**
   * W `kreload.io/pending-roll` holds K: a hold (a restart window, a flapping source) kept a roll
   * owed for a change of K, which a restart must not forget (docs/adr/0043).
   */
  readonly pending?: boolean | undefined;
}

interface RuleRow {
  readonly id: RuleId;
  readonly holds: (input: RuleInput) => boolean;
  readonly outcome: KeyOutcome;
}

/** The in-memory fact of §5.4, or its durable copy a hold wrote on W. */
function changedAfterTrackingBegan(input: RuleInput): boolean {
  return (
    input.pending === true ||
    (input.lastChange !== undefined &&
      input.trackingStart !== undefined &&
      input.lastChange > input.trackingStart)
  );
}

/** Rows are tried in order; later rows may assume earlier ones did not hold. */
const RULES: readonly RuleRow[] = [
  { id: 'R1', outcome: 'nothing', holds: (i) => i.desired === undefined },
  {
    id: 'R2',
    outcome: 'nothing',
    holds: (i) => i.applied !== undefined && i.applied === i.desired,
  },
  { id: 'R3', outcome: 'roll', holds: (i) => i.applied !== undefined },
  {
    id: 'R4',
    outcome: 'nothing',
    holds: (i) => i.baseline !== undefined && i.baseline === i.desired,
  },
  { id: 'R5', outcome: 'roll', holds: (i) => i.baseline !== undefined },
  { id: 'R6', outcome: 'roll', holds: (i) => i.desired === DELETE_MARKER },
  { id: 'R7', outcome: 'roll', holds: changedAfterTrackingBegan },
  { id: 'R8', outcome: 'roll', holds: (i) => i.createRolls },
  { id: 'R9', outcome: 'baseline', holds: () => true },
];

export interface RuleVerdict {
  readonly rule: RuleId;
  readonly outcome: KeyOutcome;
}

export function applyRules(input: RuleInput): RuleVerdict {
  const row = RULES.find((candidate) => candidate.holds(input));
  // R9 always holds, so a row is always found.
  return row ? { rule: row.id, outcome: row.outcome } : { rule: 'R9', outcome: 'baseline' };
}
