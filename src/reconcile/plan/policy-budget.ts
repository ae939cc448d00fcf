/**
 * A ReloadPolicy selector can bind a workload to thousands of sources, and kreload keeps one entry
 * per tracked source in the workload's `kreload.io/baseline` and `kreload.io/source-hashes`
 * annotations, which share the API server's 256 KiB limit with every other annotation. The sources a
 * policy adds are tracked up to a byte budget, in key order; the rest are left untracked and the
 * workload is told so (docs/reload-policy.md#limits), instead of a write the API server refuses.
 */
import { BASELINE } from '../../core/types.ts';
import type { AnnotationProblem, SourceKey } from '../../core/types.ts';
import { compareKeys } from './tracking.ts';

/** Bytes of policy-bound entries one state annotation may hold (about 900 typical names). */
export const POLICY_STATE_BUDGET_BYTES = 64 * 1024;

/** `"configmap/name":"<40 hex>",` in the compact JSON of a hash map. */
function entryBytes(key: SourceKey): number {
  return Buffer.byteLength(key) + 46;
}

export interface BoundedPolicySources {
  readonly sources: ReadonlySet<SourceKey> | undefined;
  readonly problem: AnnotationProblem | undefined;
}

export function boundPolicySources(
  sources: ReadonlySet<SourceKey> | undefined,
): BoundedPolicySources {
  if (sources === undefined) return { sources, problem: undefined };
  let total = 0;
  for (const key of sources) total += entryBytes(key);
  if (total <= POLICY_STATE_BUDGET_BYTES) return { sources, problem: undefined };
  const kept = new Set<SourceKey>();
  let used = 0;
  for (const key of [...sources].sort(compareKeys)) {
    used += entryBytes(key);
    if (used > POLICY_STATE_BUDGET_BYTES) break;
    kept.add(key);
  }
  const left = sources.size - kept.size;
  return {
    sources: kept,
    problem: {
      on: 'workload',
      key: BASELINE,
      value: `${String(sources.size)} policy-bound sources`,
      problem: `ReloadPolicies bind ${String(sources.size)} sources, more than the workload's annotations can track (${String(POLICY_STATE_BUDGET_BYTES / 1024)} KiB)`,
      consequence: `the first ${String(kept.size)} by kind and name are tracked; changes to the other ${String(left)} do not roll this workload`,
      reason: 'TooManySources',
    },
  };
}
