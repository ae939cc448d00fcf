/**
 * The sizes of the watch caches (docs/metrics.md), read at scrape time: how many objects this
 * replica keeps per kind. Under active-active each replica keeps only its share of the namespaces
 * (docs/adr/0053), which this gauge shows. No namespace or name label.
 */
import { Gauge, type Registry } from 'prom-client';

/** Object counts by kind label (`ConfigMap`, `Secret`, `SecretProviderClass`, `workload`). */
export type CachedObjectCounts = () => Readonly<Record<string, number>>;

export function registerCacheMetrics(registry: Registry, counts: CachedObjectCounts): void {
  new Gauge({
    name: 'kreload_cached_objects',
    help: 'Objects held in the watch caches, by kind (workload: every workload kind together).',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, count] of Object.entries(counts())) this.labels({ kind }).set(count);
    },
  });
}
