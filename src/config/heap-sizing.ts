/**
 * V8 sized to the container (ADRs 0033, 0039, 0042), the counterpart of Reloader's `GOMEMLIMIT`. V8 fixes its
 * heap limits when the isolate starts, so main.ts asks this module which flags the controller should
 * run with and, when some are missing, re-executes itself with them (`process.execve`: same PID,
 * same signals, nothing left running).
 *
 * - The young generation (`--max-semi-space-size`) is capped whatever the limit: kreload allocates
 *   in bursts (list pages, watch events) that V8 would otherwise meet by growing the new space to
 *   3 × 64 MiB and keeping it committed. The cap is not the smallest that works: a roll of hundreds
 *   of policy-bound workloads keeps each in-flight plan alive across its PATCH, and a young
 *   generation smaller than those plans copies them at every scavenge (ADR 0042).
 * - The old generation grows by a fixed 20 % after each full collection (`--heap-growing-percent`),
 *   like Go's `GOGC` fixes Reloader's: V8's own factor, chosen from GC speed, lets a heap of 17 MiB
 *   of live data fill with 25 MiB of promoted garbage before it collects, and keeps the pages.
 * - The old generation (`--max-old-space-size`) gets what the container's memory limit leaves after
 *   Node's native memory, so V8 collects harder as the heap nears it instead of the kernel's OOM
 *   killer ending the process. Without a limit V8 keeps its own defaults.
 *
 * A flag the operator set already, on the command line or in `NODE_OPTIONS` (the chart's
 * `nodeOptions` and `gomemlimitOverride`), is never overridden.
 */

const MIB = 1024 * 1024;

/** Measured, not folklore: docs/performance.md "V8 flags" and "Heap growth". */
export const HEAP_SIZING = {
  /** Semi-space cap in MiB. */
  maxSemiSpaceMiB: 8,
  /** Old-generation growth after a full GC, in percent (V8's own factor is 10–300 %). */
  heapGrowingPercent: 20,
  /** Memory outside the V8 heap (Node, its libraries, TLS, buffers): 73 MiB measured, rounded up. */
  nativeReserveMiB: 80,
  /** The old space never gets less than this, in MiB, however small the limit. */
  minOldSpaceMiB: 64,
  /** At or above this many bytes, a cgroup limit means "no limit" (cgroup v1 reports ~2^63). */
  unlimitedBytes: 2 ** 60,
} as const;

export interface HeapSizingInput {
  /** `process.constrainedMemory()`: the cgroup limit in bytes; 0 or huge when there is none. */
  readonly memoryLimitBytes: number;
  /** `process.execArgv`: the Node flags this process runs with. */
  readonly execArgv: readonly string[];
  readonly nodeOptions: string | undefined;
  /** The kreload arguments: only a controller run is re-executed. */
  readonly argv: readonly string[];
}

const ONE_SHOT_COMMANDS: ReadonlySet<string> = new Set(['hash', 'explain', 'history']);
const INFO_FLAGS: ReadonlySet<string> = new Set(['--help', '-h', '--version']);

/** Only a controller run is re-executed: `hash`, `explain`, `history`, `--help`, `--version` are short-lived. */
export function isControllerRun(argv: readonly string[]): boolean {
  const command = argv[0];
  if (command !== undefined && ONE_SHOT_COMMANDS.has(command)) return false;
  return !argv.some((argument) => INFO_FLAGS.has(argument));
}

/** V8 accepts `--max_old_space_size` and `--max-old-space-size` alike. */
export function setsFlag(flags: readonly string[], name: string): boolean {
  return flags.some((flag) => flag.replaceAll('_', '-').split('=')[0] === name);
}

/** The Node flags to add before the script, or an empty list when nothing is to change. */
export function heapFlags(input: HeapSizingInput): string[] {
  if (!isControllerRun(input.argv)) return [];
  const present = [...input.execArgv, ...(input.nodeOptions ?? '').split(/\s+/)];
  const flags: string[] = [];
  if (!setsFlag(present, '--max-semi-space-size')) {
    flags.push(`--max-semi-space-size=${HEAP_SIZING.maxSemiSpaceMiB}`);
  }
  if (!setsFlag(present, '--heap-growing-percent')) {
    flags.push(`--heap-growing-percent=${HEAP_SIZING.heapGrowingPercent}`);
  }
  const limited = input.memoryLimitBytes > 0 && input.memoryLimitBytes < HEAP_SIZING.unlimitedBytes;
  if (
    limited &&
    !setsFlag(present, '--max-old-space-size') &&
    !setsFlag(present, '--max-old-space-size-percentage') &&
    !setsFlag(present, '--max-heap-size')
  ) {
    const limitMiB = Math.floor(input.memoryLimitBytes / MIB);
    const oldSpaceMiB = Math.max(
      HEAP_SIZING.minOldSpaceMiB,
      limitMiB - HEAP_SIZING.nativeReserveMiB - 3 * HEAP_SIZING.maxSemiSpaceMiB,
    );
    flags.push(`--max-old-space-size=${oldSpaceMiB}`);
  }
  return flags;
}
