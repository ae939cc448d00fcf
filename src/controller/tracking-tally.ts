/**
 * The `reloader_tracked_sources` and `reloader_tracked_workloads` gauges (§13.2), kept from what
 * each reconcile found a workload to track. Workloads that disappear are forgotten. Counts are kept
 * incrementally: a first start reconciles every workload once, so recounting everything per
 * reconcile would be quadratic.
 */
import { parseSourceKey } from '../core/keys.ts';
import type { SourceKey, SourceType, WorkloadKey, WorkloadKindName } from '../core/types.ts';
import { SOURCE_TYPES } from '../core/source-types.ts';

export interface TrackingGauges {
  setTrackedSources(type: SourceType, count: number): void;
  setTrackedWorkloads(kind: WorkloadKindName, count: number): void;
}

interface Tracked {
  readonly kind: WorkloadKindName;
  /** As recorded: a reconcile that finds the same list changes nothing. */
  readonly keys: readonly SourceKey[];
  /** Distinct `TYPE|namespace/name` of the sources the workload tracks. */
  readonly sources: ReadonlySet<string>;
}

function trackedOf(key: WorkloadKey, sources: readonly SourceKey[]): Tracked {
  const [kind, namespace] = key.split('/') as [WorkloadKindName, string];
  const names = new Set<string>();
  for (const source of sources) {
    const parsed = parseSourceKey(source);
    if (parsed) names.add(`${parsed.type}|${namespace}/${parsed.name}`);
  }
  return { kind, keys: sources, sources: names };
}

function sameKeys(a: readonly SourceKey[], b: readonly SourceKey[]): boolean {
  return a.length === b.length && a.every((key, index) => key === b[index]);
}

function typeOf(reference: string): SourceType {
  return reference.slice(0, reference.indexOf('|')) as SourceType;
}

export class TrackingTally {
  readonly #gauges: TrackingGauges;
  readonly #byWorkload = new Map<WorkloadKey, Tracked>();
  /** How many tracking workloads reference each source (`TYPE|namespace/name`). */
  readonly #references = new Map<string, number>();
  readonly #sources = new Map<SourceType, number>();
  readonly #workloads = new Map<WorkloadKindName, number>();

  constructor(deps: { readonly gauges: TrackingGauges }) {
    this.#gauges = deps.gauges;
  }

  record(key: WorkloadKey, tracked: readonly SourceKey[]): void {
    const previous = this.#byWorkload.get(key);
    // Every reconcile records its workload's list, hundreds of keys long under a policy selector.
    if (previous !== undefined && sameKeys(previous.keys, tracked)) return;
    const next = tracked.length === 0 ? undefined : trackedOf(key, tracked);
    if (next === undefined) this.#byWorkload.delete(key);
    else this.#byWorkload.set(key, next);
    this.#apply(previous, next);
  }

  forget(key: WorkloadKey): void {
    const previous = this.#byWorkload.get(key);
    if (previous === undefined) return;
    this.#byWorkload.delete(key);
    this.#apply(previous, undefined);
  }

  #apply(previous: Tracked | undefined, next: Tracked | undefined): void {
    const kinds = new Set<WorkloadKindName>();
    for (const [tracked, delta] of [
      [previous, -1],
      [next, 1],
    ] as const) {
      if (tracked === undefined) continue;
      kinds.add(tracked.kind);
      this.#workloads.set(tracked.kind, (this.#workloads.get(tracked.kind) ?? 0) + delta);
      for (const reference of tracked.sources) this.#reference(reference, delta);
    }
    for (const type of SOURCE_TYPES) {
      this.#gauges.setTrackedSources(type, this.#sources.get(type) ?? 0);
    }
    for (const kind of kinds)
      this.#gauges.setTrackedWorkloads(kind, this.#workloads.get(kind) ?? 0);
  }

  /** Counts a source for its type when its first reference comes and when its last one goes. */
  #reference(reference: string, delta: 1 | -1): void {
    const before = this.#references.get(reference) ?? 0;
    const after = before + delta;
    if (after <= 0) this.#references.delete(reference);
    else this.#references.set(reference, after);
    if ((before === 0) !== after <= 0) {
      const type = typeOf(reference);
      this.#sources.set(type, (this.#sources.get(type) ?? 0) + (after > 0 ? 1 : -1));
    }
  }
}
