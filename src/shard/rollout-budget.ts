/**
 * `--max-concurrent-rollouts` in active-active mode (docs/adr/0051-active-active-sharding.md): the
 * cluster-wide budget is split between the live members, so their shares add up to it. Members
 * are ranked by name; the first `budget mod n` get one more. A share is at least 1 (0 would mean
 * "no limit"): with fewer slots than members the cluster-wide count can reach the member count.
 */
import type { RolloutSettings } from '../rollout/waves.ts';

export function budgetShare(input: {
  readonly budget: number;
  readonly members: readonly string[];
  readonly identity: string;
}): number {
  const { budget, identity } = input;
  if (budget === 0) return 0;
  const members = [...new Set([...input.members, identity])].sort();
  const rank = members.indexOf(identity);
  const share = Math.floor(budget / members.length) + (rank < budget % members.length ? 1 : 0);
  return Math.max(1, share);
}

/** The settings with `maxConcurrent` read as this member's share at each decision. */
export function sharedRolloutSettings(
  settings: RolloutSettings,
  share: (budget: number) => number,
): RolloutSettings {
  return {
    ...settings,
    get maxConcurrent(): number {
      return share(settings.maxConcurrent);
    },
  };
}
