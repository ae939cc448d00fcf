/**
 * The `reloader_tracked_sources` and `reloader_tracked_workloads` gauges (§13.2), kept from what
 * each reconcile found a workload to track. Workloads that disappear are forgotten.
 */
import { parseSourceKey } from '../core/keys.ts';
import type { SourceKey, SourceType, WorkloadKey, WorkloadKind } from '../core/types.ts';

export interface TrackingGauges {
  setTrackedSources(type: SourceType, count: number): void;
  setTrackedWorkloads(kind: WorkloadKind, count: number): void;
}

const SOURCE_TYPES: readonly SourceType[] = ['CONFIGMAP', 'SECRET', 'SECRETPROVIDERCLASS'];

export class TrackingTally {
  readonly #gauges: TrackingGauges;
  readonly #byWorkload = new Map<WorkloadKey, readonly SourceKey[]>();

  constructor(deps: { readonly gauges: TrackingGauges }) {
    this.#gauges = deps.gauges;
  }

  record(key: WorkloadKey, tracked: readonly SourceKey[]): void {
    if (tracked.length === 0) this.#byWorkload.delete(key);
    else this.#byWorkload.set(key, tracked);
    this.#publish();
  }

  forget(key: WorkloadKey): void {
    if (this.#byWorkload.delete(key)) this.#publish();
  }

  #publish(): void {
    const sources = new Map<SourceType, Set<string>>(SOURCE_TYPES.map((t) => [t, new Set()]));
    const workloads = new Map<WorkloadKind, number>();
    for (const [key, tracked] of this.#byWorkload) {
      const [kind, namespace] = key.split('/') as [WorkloadKind, string];
      workloads.set(kind, (workloads.get(kind) ?? 0) + 1);
      for (const source of tracked) {
        const parsed = parseSourceKey(source);
        if (parsed) sources.get(parsed.type)?.add(`${namespace}/${parsed.name}`);
      }
    }
    for (const [type, names] of sources) this.#gauges.setTrackedSources(type, names.size);
    for (const [kind, count] of workloads) this.#gauges.setTrackedWorkloads(kind, count);
  }
}
