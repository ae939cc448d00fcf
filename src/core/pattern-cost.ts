/**
 * An upper bound of what compiling one RE2 pattern costs, read from its text before anything is compiled
 * (ADR 0018). re2js only refuses programs above ~1.4 million instructions, and a 5 KiB element such as
 * `(?:[a-b][a-c]…){1000}` stays under that while taking ~70 MiB and seconds to compile. The estimate
 * follows the size rules of RE2's parser (`calcSize`): sizes add up along concatenations and
 * alternations and multiply through counted repetitions, so the cost of `(?:x{10}){10}` is a hundred
 * times the cost of `x`. Where the text is ambiguous the estimate errs high; a pattern it over-rates is
 * rejected, one it under-rated would be compiled, so only the first kind of error is allowed.
 */

/**
 * Cost units per construct. One unit is one program instruction, about 80 bytes and 5 µs to compile
 * (re2js 2.10 on Node 24, measured in ADR 0018).
 */
export const PATTERN_COSTS = {
  /** Any compiled pattern: program, one-pass and prefilter objects (~5 KiB, ~0.25 ms). */
  pattern: 50,
  /** A literal character, `.`, an anchor, an escape or a bracket class. */
  atom: 1,
  /** `\pL`, `\P{Greek}`, alone or inside brackets: building its rune table costs ~17 instructions. */
  unicodeClass: 20,
  /** A group of any kind, and the extra instructions of a counted repetition. */
  group: 2,
  /** Each `|`. */
  alternation: 1,
  /** `*`, `+` and `?`. */
  operator: 2,
} as const;

/** The most a repetition count is taken at; RE2 itself rejects counts above 1000. */
const MAX_COUNTED = 1_000_000;

interface Frame {
  /** Sum of the finished alternatives. */
  alternativesCost: number;
  alternations: number;
  /** Sum of the current alternative so far. */
  current: number;
  /** Cost of the last item of the current alternative: what a repetition operator applies to. */
  last: number;
}

interface Scanned {
  readonly cost: number;
  /** Index just after the construct. */
  readonly end: number;
}

function newFrame(): Frame {
  return { alternativesCost: 0, alternations: 0, current: 0, last: 0 };
}

function frameCost(frame: Frame): number {
  return frame.alternativesCost + frame.current + frame.alternations * PATTERN_COSTS.alternation;
}

function addItem(frame: Frame, cost: number): void {
  frame.current += cost;
  frame.last = cost;
}

function repeatLast(frame: Frame, grow: (sub: number) => number): void {
  const grown = grow(frame.last);
  frame.current += grown - frame.last;
  frame.last = grown;
}

/** An escape starting at `start` (the backslash). */
function scanEscape(pattern: string, start: number): Scanned {
  const kind = pattern.charAt(start + 1);
  if (kind === 'Q') {
    // `\Q…\E` quotes literally: one unit per quoted character.
    const quoteEnd = pattern.indexOf('\\E', start + 2);
    const quoted = (quoteEnd === -1 ? pattern.length : quoteEnd) - (start + 2);
    const end = quoteEnd === -1 ? pattern.length : quoteEnd + 2;
    return { cost: Math.max(PATTERN_COSTS.atom, quoted), end };
  }
  const braced = pattern.charAt(start + 2) === '{';
  const close = braced ? pattern.indexOf('}', start + 3) : -1;
  const bracedEnd = close === -1 ? pattern.length : close + 1;
  if (kind === 'p' || kind === 'P') {
    return { cost: PATTERN_COSTS.unicodeClass, end: braced ? bracedEnd : start + 3 };
  }
  if (kind === 'x' && braced) return { cost: PATTERN_COSTS.atom, end: bracedEnd };
  // Any other escape is one character after the backslash; digits that follow count as literals.
  return { cost: PATTERN_COSTS.atom, end: Math.min(pattern.length, start + 2) };
}

/** A bracket class `[…]` starting at `start`: one instruction, or a Unicode table if it holds `\p`. */
function scanClass(pattern: string, start: number): Scanned {
  let index = start + 1;
  if (pattern.charAt(index) === '^') index++;
  // A `]` first in the class is a literal.
  if (pattern.charAt(index) === ']') index++;
  let cost: number = PATTERN_COSTS.atom;
  while (index < pattern.length) {
    const char = pattern.charAt(index);
    if (char === ']') return { cost, end: index + 1 };
    if (char === '[' && pattern.charAt(index + 1) === ':') {
      const close = pattern.indexOf(':]', index + 2);
      index = close === -1 ? index + 1 : close + 2;
    } else if (char === '\\') {
      const escape = scanEscape(pattern, index);
      cost = Math.max(cost, escape.cost);
      index = escape.end;
    } else {
      index++;
    }
  }
  return { cost, end: pattern.length };
}

/** `{n}`, `{n,}` or `{n,m}` at `start`; undefined when the brace is a literal, as in RE2. */
function scanCount(
  pattern: string,
  start: number,
): { readonly max: number; readonly end: number } | undefined {
  const match = /^\{(\d+)(,(\d*))?\}/u.exec(pattern.slice(start, start + 32));
  if (match === null) return undefined;
  const [text, min = '', , max = ''] = match;
  const counted = Math.max(Number(min), max === '' ? 0 : Number(max));
  return { max: Math.min(counted, MAX_COUNTED), end: start + text.length };
}

/** Index after a group opener at `start`; `flagsOnly` for `(?i)`, which opens no group. */
function scanGroupOpen(
  pattern: string,
  start: number,
): { readonly end: number; readonly flagsOnly: boolean } {
  const flags = /^\(\?[imsU-]*([:)])/u.exec(pattern.slice(start, start + 16));
  if (flags === null) return { end: start + 1, flagsOnly: false };
  return { end: start + flags[0].length, flagsOnly: flags[1] === ')' };
}

function skipLazy(pattern: string, index: number): number {
  return pattern.charAt(index) === '?' ? index + 1 : index;
}

interface ScanState {
  readonly pattern: string;
  index: number;
  frame: Frame;
  /** Enclosing groups, innermost last. */
  readonly open: Frame[];
}

function closeGroup(state: ScanState): void {
  const inner = frameCost(state.frame);
  state.frame = state.open.pop() ?? newFrame();
  addItem(state.frame, inner + PATTERN_COSTS.group);
}

function addAtom(state: ScanState, scanned: Scanned): void {
  addItem(state.frame, scanned.cost);
  state.index = scanned.end;
}

function addOperator(state: ScanState): void {
  repeatLast(state.frame, (sub) => sub + PATTERN_COSTS.operator);
  state.index = skipLazy(state.pattern, state.index + 1);
}

/** What each special character does to the estimate; any other character is a literal. */
const SCAN_STEPS: ReadonlyMap<string, (state: ScanState) => void> = new Map<
  string,
  (state: ScanState) => void
>([
  [
    '\\',
    (state) => {
      addAtom(state, scanEscape(state.pattern, state.index));
    },
  ],
  [
    '[',
    (state) => {
      addAtom(state, scanClass(state.pattern, state.index));
    },
  ],
  [
    '(',
    (state) => {
      const group = scanGroupOpen(state.pattern, state.index);
      if (!group.flagsOnly) {
        state.open.push(state.frame);
        state.frame = newFrame();
      }
      state.index = group.end;
    },
  ],
  [
    ')',
    (state) => {
      if (state.open.length > 0) closeGroup(state);
      else addItem(state.frame, PATTERN_COSTS.atom);
      state.index++;
    },
  ],
  [
    '|',
    (state) => {
      const { frame } = state;
      frame.alternativesCost += frame.current;
      frame.alternations++;
      frame.current = 0;
      frame.last = 0;
      state.index++;
    },
  ],
  ['*', addOperator],
  ['+', addOperator],
  ['?', addOperator],
  [
    '{',
    (state) => {
      const count = scanCount(state.pattern, state.index);
      if (count === undefined) {
        addItem(state.frame, PATTERN_COSTS.atom);
        state.index++;
        return;
      }
      // RE2 expands `x{n,m}` to m copies of x plus the optional ones' branches.
      repeatLast(state.frame, (sub) => (count.max + 1) * (sub + PATTERN_COSTS.group));
      state.index = skipLazy(state.pattern, count.end);
    },
  ],
]);

/** Estimated cost units of compiling `pattern`; compare with a budget before compiling it. */
export function estimatePatternCost(pattern: string): number {
  const state: ScanState = { pattern, index: 0, frame: newFrame(), open: [] };
  while (state.index < pattern.length) {
    const step = SCAN_STEPS.get(pattern.charAt(state.index));
    if (step === undefined) {
      addItem(state.frame, PATTERN_COSTS.atom);
      state.index++;
    } else {
      step(state);
    }
  }
  while (state.open.length > 0) closeGroup(state);
  return PATTERN_COSTS.pattern + frameCost(state.frame);
}
