import { describe, expect, it } from 'vitest';
import { HEAP_SIZING } from './heap-sizing.ts';
import { PROCESS_SETTINGS, processSettings } from './process-settings.ts';
import type { ProcessSettings, ProcessSettingsInput } from './process-settings.ts';

const MIB = 1024 * 1024;
const HEAP = [
  `--max-semi-space-size=${HEAP_SIZING.maxSemiSpaceMiB}`,
  `--heap-growing-percent=${HEAP_SIZING.heapGrowingPercent}`,
];
const POOL = '--v8-pool-size=2';
const ARENAS = { MALLOC_ARENA_MAX: '2' };
const NOTHING: ProcessSettings = { flags: [], env: {} };

function input(overrides: Partial<ProcessSettingsInput>): ProcessSettingsInput {
  return {
    memoryLimitBytes: 0,
    execArgv: [],
    nodeOptions: undefined,
    argv: [],
    env: {},
    ...overrides,
  };
}

describe('processSettings', () => {
  it('adds what the table holds', () => {
    expect(PROCESS_SETTINGS.flags.map(({ name, value }) => `${name}=${value}`)).toEqual([POOL]);
    expect(
      Object.fromEntries(PROCESS_SETTINGS.env.map(({ name, value }) => [name, value])),
    ).toEqual(ARENAS);
  });

  it.each<[string, Partial<ProcessSettingsInput>, ProcessSettings]>([
    [
      'a plain controller run: heap flags, pool size, arenas',
      {},
      { flags: [...HEAP, POOL], env: ARENAS },
    ],
    [
      'with a cgroup limit the old space comes from heapFlags',
      { memoryLimitBytes: 512 * MIB },
      {
        flags: [
          ...HEAP,
          `--max-old-space-size=${512 - HEAP_SIZING.nativeReserveMiB - 3 * HEAP_SIZING.maxSemiSpaceMiB}`,
          POOL,
        ],
        env: ARENAS,
      },
    ],
    [
      'pool size on the command line wins',
      { execArgv: ['--v8-pool-size=4'] },
      { flags: HEAP, env: ARENAS },
    ],
    [
      'pool size in NODE_OPTIONS, V8 underscore spelling, wins',
      { nodeOptions: '--enable-source-maps --v8_pool_size=0' },
      { flags: HEAP, env: ARENAS },
    ],
    [
      "the operator's MALLOC_ARENA_MAX wins",
      { env: { MALLOC_ARENA_MAX: '8' } },
      { flags: [...HEAP, POOL], env: {} },
    ],
    [
      'an empty MALLOC_ARENA_MAX is a setting too',
      { env: { MALLOC_ARENA_MAX: '' } },
      { flags: [...HEAP, POOL], env: {} },
    ],
    [
      'only the arenas missing: the environment alone',
      { execArgv: [...HEAP, POOL] },
      { flags: [], env: ARENAS },
    ],
    [
      'everything set: nothing to do (also what the re-executed process sees)',
      { execArgv: [...HEAP, POOL], env: ARENAS },
      NOTHING,
    ],
    ['hash is one-shot', { argv: ['hash', '-f', 'x.yaml'] }, NOTHING],
    ['explain is one-shot', { argv: ['explain', 'deploy/a'] }, NOTHING],
    ['history is one-shot', { argv: ['history', 'deploy/a'] }, NOTHING],
    ['--version', { argv: ['--version'] }, NOTHING],
    ['--help after flags', { argv: ['--namespaces=a', '--help'] }, NOTHING],
  ])('%s', (_case, overrides, expected) => {
    expect(processSettings(input(overrides))).toEqual(expected);
  });
});
