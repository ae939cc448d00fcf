/**
 * The name of the strategy a roll ran, as logs and Events give it: the reload strategy that wrote
 * the template (`env-vars`, `annotations`), or the roll that left it alone (`restart` for an Argo
 * Rollout, `evict` for a roll by eviction, docs/adr/0044).
 */
import type { ReloadStrategy } from '../../core/types.ts';
import type { ReconcilePlan } from './model.ts';

export type RolledBy = ReloadStrategy | 'restart' | 'evict';

export function rolledBy(
  plan: Pick<ReconcilePlan, 'rollAction' | 'mode' | 'jobTemplate'>,
): RolledBy {
  if (plan.rollAction === 'evict-pods') return 'evict';
  if (plan.rollAction === 'rollout-restart') return 'restart';
  if (plan.mode !== 'workload') return plan.mode;
  // A CronJob keeps its state in W; the Job it creates carries the strategy's change.
  return plan.jobTemplate?.lastReloadedFrom === undefined ? 'env-vars' : 'annotations';
}
