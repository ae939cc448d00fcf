import { describe, expect, it } from 'vitest';
import { HEAP_SIZING, heapFlags } from './heap-sizing.ts';
import type { HeapSizingInput } from './heap-sizing.ts';

const MIB = 1024 * 1024;
const SEMI = `--max-semi-space-size=${HEAP_SIZING.maxSemiSpaceMiB}`;
const GROW = `--heap-growing-percent=${HEAP_SIZING.heapGrowingPercent}`;
const RESERVED_MIB = HEAP_SIZING.nativeReserveMiB + 3 * HEAP_SIZING.maxSemiSpaceMiB;

function input(overrides: Partial<HeapSizingInput>): HeapSizingInput {
  return { memoryLimitBytes: 0, execArgv: [], nodeOptions: undefined, argv: [], ...overrides };
}

describe('heapFlags', () => {
  it.each<[string, Partial<HeapSizingInput>, string[]]>([
    ['no cgroup limit (0): only the young generation', {}, [SEMI, GROW]],
    [
      'cgroup v1 without a limit (2^63 - 4096)',
      { memoryLimitBytes: 9_223_372_036_854_771_712 },
      [SEMI, GROW],
    ],
    ["cgroup v2 'max' (libuv: 2^64)", { memoryLimitBytes: 2 ** 64 }, [SEMI, GROW]],
    [
      '512 MiB limit',
      { memoryLimitBytes: 512 * MIB },
      [SEMI, GROW, `--max-old-space-size=${512 - RESERVED_MIB}`],
    ],
    [
      '2 GiB limit',
      { memoryLimitBytes: 2048 * MIB },
      [SEMI, GROW, `--max-old-space-size=${2048 - RESERVED_MIB}`],
    ],
    [
      'a limit below the reserve keeps the minimum',
      { memoryLimitBytes: 48 * MIB },
      [SEMI, GROW, `--max-old-space-size=${HEAP_SIZING.minOldSpaceMiB}`],
    ],
    [
      'a limit that is not a whole MiB rounds down',
      { memoryLimitBytes: 512 * MIB + 1000 },
      [SEMI, GROW, `--max-old-space-size=${512 - RESERVED_MIB}`],
    ],
    [
      'old space set on the command line',
      { memoryLimitBytes: 512 * MIB, execArgv: ['--max-old-space-size=300'] },
      [SEMI, GROW],
    ],
    [
      'old space set in NODE_OPTIONS (the chart, gomemlimitOverride)',
      { memoryLimitBytes: 512 * MIB, nodeOptions: '--enable-source-maps --max-old-space-size=400' },
      [SEMI, GROW],
    ],
    [
      'old space in V8 underscore spelling',
      { memoryLimitBytes: 512 * MIB, nodeOptions: '--max_old_space_size=400' },
      [SEMI, GROW],
    ],
    [
      'old space as a percentage',
      { memoryLimitBytes: 512 * MIB, execArgv: ['--max-old-space-size-percentage=50'] },
      [SEMI, GROW],
    ],
    [
      'whole heap size set',
      { memoryLimitBytes: 512 * MIB, execArgv: ['--max-heap-size=256'] },
      [SEMI, GROW],
    ],
    [
      'semi-space set by the operator',
      { memoryLimitBytes: 512 * MIB, nodeOptions: '--max-semi-space-size=2' },
      [GROW, `--max-old-space-size=${512 - RESERVED_MIB}`],
    ],
    [
      'heap growth set by the operator, V8 underscore spelling',
      { nodeOptions: '--heap_growing_percent=50' },
      [SEMI],
    ],
    [
      'all set: nothing to do (also what the re-executed process sees)',
      { memoryLimitBytes: 512 * MIB, execArgv: [SEMI, GROW, '--max-old-space-size=400'] },
      [],
    ],
    [
      'a controller run with flags',
      { memoryLimitBytes: 512 * MIB, argv: ['--namespaces=a', '--log-format=json'] },
      [SEMI, GROW, `--max-old-space-size=${512 - RESERVED_MIB}`],
    ],
    ['hash is one-shot', { memoryLimitBytes: 512 * MIB, argv: ['hash', '-f', 'x.yaml'] }, []],
    ['explain is one-shot', { memoryLimitBytes: 512 * MIB, argv: ['explain', 'deploy/a'] }, []],
    // A re-exec of the single-file plugin would hand the V8 flags to it as arguments.
    ['history is one-shot', { memoryLimitBytes: 512 * MIB, argv: ['history', 'deploy/a'] }, []],
    ['--version', { memoryLimitBytes: 512 * MIB, argv: ['--version'] }, []],
    ['--help after flags', { memoryLimitBytes: 512 * MIB, argv: ['--namespaces=a', '--help'] }, []],
    ['-h', { argv: ['-h'] }, []],
  ])('%s', (_case, overrides, expected) => {
    expect(heapFlags(input(overrides))).toEqual(expected);
  });
});
