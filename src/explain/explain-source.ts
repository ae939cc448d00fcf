/**
 * `kreload explain configmap|secret|secretproviderclass/<name>`: every workload that references or
 * lists the source, split by whether a change of it rolls them, from their workload explanations.
 */
import type { SourceKey } from '../core/types.ts';
import type { SourceQueryExplanation, SourceUsage, WorkloadExplanation } from './model.ts';

export function explainSource(
  key: SourceKey,
  namespace: string,
  workloads: readonly WorkloadExplanation[],
): SourceQueryExplanation {
  const usages: SourceUsage[] = workloads.flatMap((workload) => {
    const source = workload.sources.find((candidate) => candidate.key === key);
    if (source === undefined) return [];
    const { kind, name, gate } = workload;
    return [{ kind, namespace: workload.namespace, name, source, gate }];
  });
  return {
    key,
    namespace,
    rolls: usages.filter((usage) => usage.source.predicts.change === 'roll'),
    doesNotRoll: usages.filter((usage) => usage.source.predicts.change !== 'roll'),
  };
}
