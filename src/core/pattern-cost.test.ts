import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { estimatePatternCost, PATTERN_COSTS } from './pattern-cost.ts';

const hostileBody = Array.from({ length: 500 }, (_, index) =>
  index % 2 === 0 ? '[a-b]' : '[a-c]',
).join('');

describe('estimatePatternCost', () => {
  // The estimate must never be below what re2js really builds: a pattern it under-rates gets compiled.
  it.each([
    'app-config',
    'a|b|c',
    'my\\.cm',
    'app-.*',
    '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*',
    '[a-z]{3}',
    '[a-z]{2,5}x{0,7}',
    'x{3,}',
    '(?:ab){10}',
    '(?:(?:ab){10}c){10}',
    '(?:a|bc|def){1,50}',
    '(?i)app-(?P<n>[0-9]+)',
    '\\Qa.b*c\\E{20}',
    '\\pL{100}',
    '[^\\pL\\pN]{30}',
    '[]a]{5}',
    '[[:alpha:]]{40}',
    '\\x{41}{9}\\x41{9}',
    'a*?b+?c??d{2,3}?',
    '(a(b(c(d){4}){4}){4}){4}',
    '(?s:.){200}',
    '^a$|^b$',
    'x{1,1000}',
    `(?:${hostileBody.slice(0, 50)}){100}`,
  ])('%s is estimated at least at its instruction count', (pattern) => {
    const instructions = RE2JS.compile(pattern).programSize();
    expect(estimatePatternCost(pattern)).toBeGreaterThanOrEqual(instructions);
  });

  it.each([
    { pattern: `(?:${hostileBody}){1000}`, atLeast: 500_000 },
    { pattern: '(?:\\pL){1000}', atLeast: 1000 * PATTERN_COSTS.unicodeClass },
    { pattern: '(?:(?:a{10}){10}){10}', atLeast: 1000 },
    { pattern: '[a-z]{1000}[a-z]{1000}[a-z]{1000}', atLeast: 3000 },
    { pattern: '\\p{Greek}{500}', atLeast: 500 * PATTERN_COSTS.unicodeClass },
    { pattern: '[\\p{Greek}x]{500}', atLeast: 500 * PATTERN_COSTS.unicodeClass },
  ])('$pattern costs at least $atLeast', ({ pattern, atLeast }) => {
    expect(estimatePatternCost(pattern)).toBeGreaterThanOrEqual(atLeast);
  });

  it.each([
    // A brace that is not a count is a literal, as in RE2.
    { pattern: 'a{', expected: PATTERN_COSTS.pattern + 2 },
    { pattern: 'a{x}', expected: PATTERN_COSTS.pattern + 4 },
    // Flags open no group.
    { pattern: '(?i)a', expected: PATTERN_COSTS.pattern + 1 },
    // Unbalanced text still gets a finite estimate; RE2 reports the syntax error.
    { pattern: '((a', expected: PATTERN_COSTS.pattern + 1 + 2 * PATTERN_COSTS.group },
    { pattern: 'a)', expected: PATTERN_COSTS.pattern + 2 },
    { pattern: '\\', expected: PATTERN_COSTS.pattern + 1 },
  ])('$pattern → $expected', ({ pattern, expected }) => {
    expect(estimatePatternCost(pattern)).toBe(expected);
  });

  it('is never below the instruction count of 500 generated patterns', () => {
    // A fixed linear congruential sequence: the same patterns on every run.
    let seed = 12345;
    const next = (bound: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % bound;
    };
    const atoms = ['a', 'b', '.', '[a-z]', '[^x]', '\\d', '\\pL', '\\x{41}', '\\Qa.b\\E', '^', '$'];
    const suffixes = ['', '', '*', '+', '?', '*?', '{2}', '{1,3}', '{2,}', '{0,4}'];
    const generate = (depth: number): string => {
      const parts: string[] = [];
      const length = 1 + next(4);
      for (let index = 0; index < length; index++) {
        const inner =
          depth > 0 && next(3) === 0
            ? `(${next(2) === 0 ? '?:' : ''}${generate(depth - 1)}${next(2) === 0 ? `|${generate(depth - 1)}` : ''})`
            : (atoms[next(atoms.length)] ?? 'a');
        parts.push(inner + (suffixes[next(suffixes.length)] ?? ''));
      }
      return parts.join('');
    };
    let compared = 0;
    for (let round = 0; round < 500; round++) {
      const pattern = generate(3);
      let instructions: number;
      try {
        instructions = RE2JS.compile(pattern).programSize();
      } catch {
        continue;
      }
      compared++;
      expect(estimatePatternCost(pattern), pattern).toBeGreaterThanOrEqual(instructions);
    }
    expect(compared).toBeGreaterThan(400);
  });
});
