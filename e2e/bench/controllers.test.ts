import { describe, expect, it } from 'vitest';
import {
  controllerFlags,
  parseControllerSpec,
  resolvePlaceholders,
  splitCommandLine,
  uniqueLabels,
  rolloutBudgetOf,
} from './controllers.ts';

describe('splitCommandLine', () => {
  it.each([
    { line: 'node dist/main.js --x=1', words: ['node', 'dist/main.js', '--x=1'] },
    { line: `  a  'b c'  "d \\"e\\"" f\\ g `, words: ['a', 'b c', 'd "e"', 'f g'] },
    { line: `a '' b`, words: ['a', '', 'b'] },
  ])('$line', ({ line, words }) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it('rejects an unterminated quote', () => {
    expect(() => splitCommandLine(`a 'b`)).toThrow(/unterminated/);
  });
});

describe('parseControllerSpec', () => {
  it.each([
    {
      text: 'kreload={node} dist/main.js',
      label: 'kreload',
      profile: 'kreload',
      argv: ['{node}', 'dist/main.js'],
    },
    {
      text: 'ideal=node e2e/bench/ideal-reactor.ts',
      label: 'ideal',
      profile: 'ideal',
      argv: ['node', 'e2e/bench/ideal-reactor.ts'],
    },
    {
      text: '/usr/local/bin/reloader --foo',
      label: 'reloader',
      profile: 'reloader',
      argv: ['/usr/local/bin/reloader', '--foo'],
    },
    {
      text: 'node ../kreload-old/dist/main.js',
      label: 'main',
      profile: 'reloader',
      argv: ['node', '../kreload-old/dist/main.js'],
    },
    {
      text: 'kreload-v1=node old/main.js --sync-delay=1s',
      label: 'kreload-v1',
      profile: 'kreload',
      argv: ['node', 'old/main.js', '--sync-delay=1s'],
    },
  ])('$text → $label ($profile)', ({ text, label, profile, argv }) => {
    expect(parseControllerSpec(text)).toEqual({ label, profile, argv });
  });

  it('makes repeated labels unique', () => {
    const specs = ['ideal=a', 'ideal=b', 'kreload=c'].map(parseControllerSpec);
    expect(uniqueLabels(specs).map((spec) => spec.label)).toEqual(['ideal', 'ideal#2', 'kreload']);
  });
});

describe('controllerFlags', () => {
  const base = { namespaces: ['a', 'b'], strategy: 'env-vars' as const, kreloadDefaults: false };
  it.each([
    {
      profile: 'kreload' as const,
      scenario: base,
      flags: ['--namespaces=a,b', '--log-format=json', '--sync-delay=0'],
    },
    {
      profile: 'kreload' as const,
      scenario: { ...base, kreloadDefaults: true },
      flags: ['--namespaces=a,b', '--log-format=json'],
    },
    {
      profile: 'reloader' as const,
      scenario: { ...base, strategy: 'annotations' as const },
      flags: ['--namespaces=a,b', '--log-format=json', '--reload-strategy=annotations'],
    },
    { profile: 'ideal' as const, scenario: base, flags: ['--namespaces=a,b', '--log-format=json'] },
  ])('$profile', ({ profile, scenario, flags }) => {
    expect(controllerFlags(profile, scenario)).toEqual(flags);
  });
});

it('resolvePlaceholders fills in the Node binary and a port', () => {
  expect(
    resolvePlaceholders(['{node}', 'x', '--metrics-port={port}'], { node: '/n', port: 9 }),
  ).toEqual(['/n', 'x', '--metrics-port=9']);
});

describe('rolloutBudgetOf', () => {
  it.each([
    { argv: ['node', 'dist/main.js'], budget: undefined },
    { argv: ['node', 'dist/main.js', '--max-concurrent-rollouts=20'], budget: 20 },
    { argv: ['node', 'dist/main.js', '--max-concurrent-rollouts', '5'], budget: 5 },
    { argv: ['x', '--max-concurrent-rollouts=0'], budget: undefined },
    { argv: ['x', '--max-concurrent-rollouts=abc'], budget: undefined },
    { argv: ['x', '--max-concurrent-rollouts'], budget: undefined },
    { argv: ['x', '--max-concurrent-rollouts-per-namespace=3'], budget: undefined },
    { argv: ['x', '--max-concurrent-rollouts=4', '--max-concurrent-rollouts=8'], budget: 8 },
  ])('$argv → $budget', ({ argv, budget }) => {
    expect(rolloutBudgetOf(argv)).toBe(budget);
  });
});
