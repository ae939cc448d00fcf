/**
 * The process settings a controller run re-executes itself with (ADR 0056): V8's heap flags
 * (heap-sizing.ts) plus the settings that shrink what the process holds outside the heap. Like the
 * heap flags they are fixed when the process starts, so main.ts applies them with the same
 * `process.execve` (same PID), and an operator's own setting always wins.
 *
 * - `MALLOC_ARENA_MAX=2`: glibc gives every thread that calls malloc an arena of its own (up to
 *   8 × cores), each keeping its free pages; V8's worker threads and libuv's pool each take one.
 *   Two arenas serve kreload's few threads without contention. glibc reads the variable when the
 *   process starts, hence the environment of the re-exec rather than `mallopt` later.
 * - `--v8-pool-size=2`: Node starts 4 V8 worker threads (concurrent marking, parallel scavenge,
 *   background compilation) whatever the machine. kreload's pod asks for a fraction of a core.
 */
import { heapFlags, isControllerRun, setsFlag } from './heap-sizing.ts';
import type { HeapSizingInput } from './heap-sizing.ts';

/** Measured, not folklore: docs/performance.md "Process settings for a small footprint". */
export const PROCESS_SETTINGS = {
  flags: [{ name: '--v8-pool-size', value: '2' }],
  env: [{ name: 'MALLOC_ARENA_MAX', value: '2' }],
} as const;

export interface ProcessSettingsInput extends HeapSizingInput {
  /** The environment this process runs with. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface ProcessSettings {
  /** Node flags to add before the script. */
  readonly flags: readonly string[];
  /** Environment variables to add; every other variable is passed on as it is. */
  readonly env: Readonly<Record<string, string>>;
}

/** What the re-exec adds; both lists empty when nothing is to change (then there is no re-exec). */
export function processSettings(input: ProcessSettingsInput): ProcessSettings {
  if (!isControllerRun(input.argv)) return { flags: [], env: {} };
  const present = [...input.execArgv, ...(input.nodeOptions ?? '').split(/\s+/)];
  const flags = [
    ...heapFlags(input),
    ...PROCESS_SETTINGS.flags
      .filter(({ name }) => !setsFlag(present, name))
      .map(({ name, value }) => `${name}=${value}`),
  ];
  const env = Object.fromEntries(
    PROCESS_SETTINGS.env
      .filter(({ name }) => input.env[name] === undefined)
      .map(({ name, value }) => [name, value]),
  );
  return { flags, env };
}
