// The smoke subset of the fault suite (`npm run chaos`, e2e/chaos/): one iteration each of a
// connection reset mid-watch, a committed write whose response is lost, and kreload kill -9 in the
// middle of a fan-out, on a small fleet of every kind. Faults go through a real toxiproxy between
// kreload and kube-apiserver. The suite restarts nothing of the control plane here, but it injects
// faults into kreload's only connection, so it boots a cluster of its own instead of sharing one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULTS, faultById } from '../chaos/faults.ts';
import { SMALL_FLEET } from '../chaos/fleet.ts';
import { iterationSeed } from '../chaos/options.ts';
import {
  describeWindow,
  runIteration,
  startEnvironment,
  type ChaosEnvironment,
} from '../chaos/suite.ts';

const SMOKE = ['reset-watch', 'lost-response', 'kreload-kill'] as const;
const SEED = 1;

describe('fault suite, smoke subset (issue 10)', () => {
  let env: ChaosEnvironment;

  beforeAll(async () => {
    env = await startEnvironment({});
  }, 240_000);

  afterAll(async () => {
    await env.stop();
  });

  it.each(SMOKE)(
    '%s: every workload rolls exactly once per change, no Job lost, no kreload crash',
    async (id) => {
      const fault = faultById(id);
      const result = await runIteration({
        env,
        fault,
        iteration: 0,
        // As `npm run chaos -- --fault <id> --iterations 1 --seed 1 --fleet small --strategy env-vars`.
        seed: iterationSeed(SEED, FAULTS.indexOf(fault), 0),
        shape: SMALL_FLEET,
        strategy: 'env-vars',
      });
      // The fault really hit kreload (writes without response, watches cut, a kill).
      expect(result.evidence.injected, result.evidence.note).toBeGreaterThan(0);
      for (const window of result.windows) {
        expect(
          {
            converged: window.convergeMs !== undefined,
            missed: window.missed,
            duplicated: window.duplicated,
            lostJobs: window.lostJobs,
            duplicateRuns: window.duplicateRuns,
          },
          `${window.window}: ${describeWindow(window)}`,
        ).toEqual({ converged: true, missed: 0, duplicated: 0, lostJobs: 0, duplicateRuns: 0 });
      }
      expect(
        result.checks.filter((check) => !check.passed),
        "the row's own checks",
      ).toEqual([]);
      expect(result.crashes, 'kreload exits the suite did not cause').toBe(0);
    },
    240_000,
  );
});
