/**
 * Which namespaces an active-active replica keeps in its caches (docs/adr/0053): those of the
 * buckets assigned to it or still held by it. The list-watches stay cluster-wide and drop every
 * other object as it is decoded; a bucket that joins the scope is `filling` until a list started
 * after it joined reached the caches, and only then may its Lease be claimed, so the first
 * reconcile after acquiring reads a complete cache. A bucket that leaves is emptied by a relist.
 */

type BucketFill = 'out' | 'filling' | 'filled';

interface BucketScope {
  fill: BucketFill;
  /** The refill that joined it, so an older refill finishing cannot mark a re-joined bucket. */
  generation: number;
}

export interface ShardCacheScopeDeps {
  readonly bucketCount: number;
  readonly bucketOf: (namespace: string) => number;
  /**
   * Relists the namespaced list-watches that can hold objects of `affected` namespaces (every
   * cluster-wide one, and the per-namespace ones of those namespaces); resolves once each one's
   * list started after the call reached the caches (or it cannot list now). Never rejects.
   */
  readonly refill: (affected: (namespace: string) => boolean) => Promise<void>;
  /** Buckets became filled: their Leases may be claimed now rather than at the next round. */
  readonly onFilled?: (() => void) | undefined;
}

export class ShardCacheScope {
  readonly #deps: ShardCacheScopeDeps;
  readonly #buckets: BucketScope[];
  #generation = 0;

  constructor(deps: ShardCacheScopeDeps) {
    this.#deps = deps;
    this.#buckets = Array.from({ length: deps.bucketCount }, () => ({
      fill: 'out',
      generation: 0,
    }));
  }

  /** An object of `namespace` is kept in the caches (the list-watches' decode filter). */
  holds(namespace: string): boolean {
    return this.#buckets[this.#deps.bucketOf(namespace)]?.fill !== 'out';
  }

  /** Every object of the bucket's namespaces is in the caches: its Lease may be claimed. */
  isFilled(bucket: number): boolean {
    return this.#buckets[bucket]?.fill === 'filled';
  }

  /** The buckets whose namespaces this replica keeps now: one relist fills the new, empties the old. */
  update(wanted: ReadonlySet<number>): void {
    const generation = this.#generation + 1;
    const joined: number[] = [];
    const left: number[] = [];
    for (const [bucket, state] of this.#buckets.entries()) {
      const keep = wanted.has(bucket);
      if (keep && state.fill === 'out') {
        state.fill = 'filling';
        state.generation = generation;
        joined.push(bucket);
      } else if (!keep && state.fill !== 'out') {
        state.fill = 'out';
        left.push(bucket);
      }
    }
    if (joined.length === 0 && left.length === 0) return;
    this.#generation = generation;
    const affected = new Set([...joined, ...left]);
    void this.#deps
      .refill((namespace) => affected.has(this.#deps.bucketOf(namespace)))
      .then(() => {
        let filled = 0;
        for (const bucket of joined) {
          const state = this.#buckets[bucket];
          if (state?.fill === 'filling' && state.generation === generation) {
            state.fill = 'filled';
            filled += 1;
          }
        }
        if (filled > 0) this.#deps.onFilled?.();
      });
  }

  /** Buckets kept in the caches, filled or filling. */
  heldBuckets(): readonly number[] {
    return this.#buckets.flatMap((state, bucket) => (state.fill === 'out' ? [] : [bucket]));
  }
}
