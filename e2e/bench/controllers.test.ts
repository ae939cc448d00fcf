import { describe, expect, it } from 'vitest';
import {
  controllerFlags,
  ControllerSpecError,
  parseControllerSpec,
  parseReplicaCount,
  replicaIdentities,
  resolvePlaceholders,
  splitCommandLine,
  uniqueLabels,
  rolloutBudgetOf,
  withReplicas,
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
    expect(parseControllerSpec(text)).toEqual({ label, profile, argv, replicas: 1 });
  });

  it('makes repeated labels unique', () => {
    const specs = ['ideal=a', 'ideal=b', 'kreload=c'].map(parseControllerSpec);
    expect(uniqueLabels(specs).map((spec) => spec.label)).toEqual(['ideal', 'ideal#2', 'kreload']);
  });
});

describe('--replicas', () => {
  it.each([
    { text: 'kreload-3x=3', count: { label: 'kreload-3x', replicas: 3 } },
    { text: ' ideal#2=1 ', count: { label: 'ideal#2', replicas: 1 } },
    { text: 'a.b_c=12', count: { label: 'a.b_c', replicas: 12 } },
  ])('$text', ({ text, count }) => {
    expect(parseReplicaCount(text)).toEqual(count);
  });

  it.each(['kreload', 'kreload=0', 'kreload=-1', 'kreload=1.5', '=3', 'kreload=x', 'a b=2'])(
    'rejects %j',
    (text) => {
      expect(() => parseReplicaCount(text)).toThrow(ControllerSpecError);
    },
  );

  const specs = ['kreload=a', 'kreload-3x=b', 'ideal=c'].map(parseControllerSpec);

  it.each([
    { counts: [], replicas: [1, 1, 1] },
    { counts: [{ label: 'kreload-3x', replicas: 3 }], replicas: [1, 3, 1] },
    {
      counts: [
        { label: 'kreload-3x', replicas: 3 },
        { label: 'kreload-3x', replicas: 5 },
        { label: 'kreload', replicas: 2 },
      ],
      replicas: [2, 5, 1],
    },
  ])('applies $counts (the last count of a label wins)', ({ counts, replicas }) => {
    expect(withReplicas(specs, counts).map((spec) => spec.replicas)).toEqual(replicas);
  });

  it('names the controllers when a count names none', () => {
    expect(() => withReplicas(specs, [{ label: 'kreload-5x', replicas: 5 }])).toThrow(
      'controllers: kreload, kreload-3x, ideal',
    );
  });

  it.each([
    { label: 'kreload-3x', replicas: 3, pods: ['kreload-3x-0', 'kreload-3x-1', 'kreload-3x-2'] },
    { label: 'Kreload.AA#2', replicas: 2, pods: ['kreload-aa-2-0', 'kreload-aa-2-1'] },
    { label: '__', replicas: 1, pods: ['replica-0'] },
  ])('POD_NAMEs of $label × $replicas: Lease-name safe', ({ label, replicas, pods }) => {
    const spec = { label, argv: ['x'], profile: 'kreload' as const, replicas };
    expect(replicaIdentities(spec)).toEqual(pods);
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
    {
      profile: 'kreload' as const,
      scenario: { ...base, namespaces: undefined },
      flags: ['--log-format=json', '--sync-delay=0'],
    },
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
