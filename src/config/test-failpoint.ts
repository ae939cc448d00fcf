/**
 * Test-only failpoints: never set one in a deployment. `KRELOAD_TEST_FAILPOINT`, read once by the
 * process edge, names a write that kreload then holds forever instead of sending, so an e2e test
 * can kill -9 it exactly between two writes (docs/adr/0046, failure cases). The held write is
 * logged, which is how the test knows when to kill; an unknown name is a startup warning.
 */
export const TEST_FAILPOINT_VARIABLE = 'KRELOAD_TEST_FAILPOINT';

/** One row per write that can be held. */
const TEST_FAILPOINTS = {
  /** Every batch of the baseline store, from the first: held before its PATCH or POST. */
  'baseline-store-write': 'the baseline store write',
} as const;

export type TestFailpoint = keyof typeof TEST_FAILPOINTS;

function isTestFailpoint(value: string): value is TestFailpoint {
  return Object.hasOwn(TEST_FAILPOINTS, value);
}

/** The failpoint set, if any; `unknown` holds a value that names none (it is ignored). */
export function readTestFailpoint(env: Readonly<Record<string, string | undefined>>): {
  readonly failpoint?: TestFailpoint;
  readonly unknown?: string;
} {
  const value = env[TEST_FAILPOINT_VARIABLE];
  if (value === undefined || value === '') return {};
  return isTestFailpoint(value) ? { failpoint: value } : { unknown: value };
}

/** What the log says of a held write. */
export function heldWriteMessage(failpoint: TestFailpoint): string {
  return `test failpoint ${failpoint}: ${TEST_FAILPOINTS[failpoint]} is held until kreload is killed`;
}

/** A write that never completes: the process is meant to be killed while it waits. */
export function holdForever(): Promise<never> {
  return new Promise<never>(() => undefined);
}
