/**
 * The planner's facts of one source for one workload, from the caches (§5.1, §5.4): what the
 * reconciler gathers for a pass, and what `GET /debug/explain` gathers to explain that pass.
 */
import { parseSourceKey } from '../core/keys.ts';
import type { SourceKey, WorkloadKey } from '../core/types.ts';
import type { SourceFacts } from './plan/model.ts';
import type { SourceLookup, WorkloadLookup } from './ports.ts';

export interface SourceFactsReads {
  readonly sources: SourceLookup;
  readonly workloads: Pick<WorkloadLookup, 'relevantSince'>;
}

function maxDefined(...values: (number | undefined)[]): number | undefined {
  const defined = values.filter((value) => value !== undefined);
  return defined.length > 0 ? Math.max(...defined) : undefined;
}

/** `observedAt` is the source's last change; a pass triggered by an event knows it better. */
export function cachedSourceFacts(
  reads: SourceFactsReads,
  workload: { readonly key: WorkloadKey; readonly namespace: string },
  key: SourceKey,
): SourceFacts {
  const { sources, workloads } = reads;
  const parsed = parseSourceKey(key);
  const { namespace } = workload;
  if (!parsed || !sources.isHealthy(parsed.type, namespace))
    return { status: { state: 'unknown' } };
  const source = sources.get(namespace, parsed.type, parsed.name);
  const lastChange = sources.lastChange(namespace, key);
  return {
    status: source
      ? { state: 'present', hash: source.hash, uid: source.uid, annotations: source.annotations }
      : { state: 'absent' },
    lastChange,
    trackingStart: maxDefined(
      sources.firstObserved(namespace, key),
      workloads.relevantSince(workload.key),
    ),
    observedAt: lastChange,
  };
}
