import { describe, expect, it } from 'vitest';
import { parseBenchArgs, parseOverride } from './options.ts';
import { findScenario, SCENARIOS } from './scenarios.ts';
import { BenchOptionError, checkOverrides, resolveParams } from './suite.ts';

const now = new Date('2026-11-30T12:00:00Z');

describe('parseBenchArgs', () => {
  it('defaults: every scenario (K1 and K5 last), kreload plus the ideal reactor', () => {
    const options = parseBenchArgs([], now);
    expect(options.scenarios.map((s) => s.id).slice(-2)).toEqual(['K1', 'K5']);
    expect(options.scenarios).toHaveLength(SCENARIOS.length);
    expect(options.controllers.map((c) => [c.label, c.profile])).toEqual([
      ['kreload', 'kreload'],
      ['ideal', 'ideal'],
    ]);
    expect(options.outDir).toMatch(/\.cache\/bench-results\/20261130T120000$/);
  });

  it('takes scenarios, controllers and parameters', () => {
    const options = parseBenchArgs(
      [
        '--scenario',
        'S1,s2',
        '--scenario',
        'K4',
        '--controller',
        'reloader=/bin/reloader',
        '--no-ideal',
        '--duration',
        '5',
        '--param',
        'S1.configMaps=2',
        '--repeat',
        '2',
        '--compare',
      ],
      now,
    );
    expect(options.scenarios.map((s) => s.id)).toEqual(['S1', 'S2', 'K4']);
    expect(options.controllers.map((c) => c.label)).toEqual(['reloader']);
    expect(options).toMatchObject({ durationSec: 5, repeat: 2, compare: true });
    expect(options.overrides).toEqual([{ scenario: 'S1', name: 'configMaps', value: 2 }]);
  });

  it('runs a controller entry as several replicas', () => {
    const options = parseBenchArgs(
      [
        '--controller',
        'kreload={node} dist/main.js',
        '--controller',
        'kreload-3x={node} dist/main.js --shard-mode=active-active',
        '--replicas',
        'kreload-3x=3',
      ],
      now,
    );
    expect(options.controllers.map((c) => [c.label, c.replicas])).toEqual([
      ['kreload', 1],
      ['kreload-3x', 3],
      ['ideal', 1],
    ]);
  });

  it('does not add a second ideal reactor when one is given', () => {
    const options = parseBenchArgs(
      ['--controller', 'ideal={node} e2e/bench/ideal-reactor.ts'],
      now,
    );
    expect(options.controllers.map((c) => c.label)).toEqual(['ideal']);
  });

  it.each([
    [['--scenario', 'S99']],
    [['--duration', '0']],
    [['--param', 'S1.configMaps']],
    [['--param', 'Z9.x=1']],
    [['--bogus']],
    [['--replicas', 'nobody=3']],
    [['--replicas', 'kreload=0']],
  ])('rejects %j', (argv) => {
    expect(() => parseBenchArgs(argv, now)).toThrow(BenchOptionError);
  });
});

describe('parameters', () => {
  const s1 = findScenario('S1');
  const k2 = findScenario('K2');
  if (s1 === undefined || k2 === undefined) throw new Error('scenarios missing');

  it('applies --duration and scenario-specific or global overrides', () => {
    const overrides = [parseOverride('configMaps=3'), parseOverride('S1.intervalMs=50')];
    expect(resolveParams(s1, { overrides, durationSec: 5 })).toEqual({
      configMaps: 3,
      intervalMs: 50,
      durationSec: 5,
    });
    // K2 has no durationSec and no configMaps: left alone.
    expect(resolveParams(k2, { overrides, durationSec: 5 })).toEqual(k2.defaults);
  });

  it('rejects a parameter the scenario does not have', () => {
    expect(() => resolveParams(s1, { overrides: [parseOverride('S1.nope=1')] })).toThrow(
      /has no parameter nope/,
    );
    expect(() => {
      checkOverrides([s1], [parseOverride('nope=1')]);
    }).toThrow(/no selected scenario/);
  });

  it.each([
    { overrides: [], namespaces: 600, sources: 60_000, workloads: 6000 },
    { overrides: ['K5.namespaces=60'], namespaces: 60, sources: 6000, workloads: 600 },
  ])('K5 with $overrides: cluster-wide, $sources sources, $workloads workloads', (row) => {
    const k5 = findScenario('K5');
    if (k5 === undefined) throw new Error('K5 missing');
    const params = resolveParams(k5, { overrides: row.overrides.map(parseOverride) });
    const setup = k5.build(params, (i) => `ns-${i}`);
    expect(k5.clusterWide).toBe(true);
    expect(new Set(setup.sources.map((s) => s.namespace)).size).toBe(row.namespaces);
    expect([setup.namespaces.length, setup.sources.length, setup.workloads.length]).toEqual([
      row.namespaces,
      row.sources,
      row.workloads,
    ]);
    expect(setup.workloads.every((w) => w.replicas === 0)).toBe(true);
  });

  it('every scenario builds its objects from its defaults', () => {
    for (const scenario of SCENARIOS) {
      const setup = scenario.build(scenario.defaults, (i) => `ns-${i}`);
      expect(setup.workloads.length, scenario.id).toBeGreaterThan(0);
      expect(setup.sources.length, scenario.id).toBeGreaterThan(0);
    }
  });
});
