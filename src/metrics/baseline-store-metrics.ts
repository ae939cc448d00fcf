/**
 * The baseline store's metrics (docs/adr/0046, docs/metrics.md): sizes read at scrape time from
 * the store itself, and a counter of failed batches. No workload or namespace label: a store's
 * size says how many records it holds, never whose.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

/** What the gauges read at scrape time. */
export interface BaselineStoreSizes {
  /** Records held (observed, and set here but not yet observed). */
  readonly recordCount: number;
  /** Store ConfigMaps observed. */
  readonly objectCount: number;
  inUse(): boolean;
}

export interface BaselineStoreMetrics {
  /** A batch (one object's patch) that failed; `retryable` false: given up. */
  writeFailed(retryable: boolean): void;
}

export function createBaselineStoreMetrics(
  registry: Registry,
  sizes: () => BaselineStoreSizes | undefined,
): BaselineStoreMetrics {
  new Gauge({
    name: 'kreload_baseline_store_records',
    help: 'Baseline records of never-rolled workloads held in the baseline store.',
    registers: [registry],
    collect() {
      this.set(sizes()?.recordCount ?? 0);
    },
  });
  new Gauge({
    name: 'kreload_baseline_store_objects',
    help: "ConfigMaps of the baseline store in kreload's namespace.",
    registers: [registry],
    collect() {
      this.set(sizes()?.objectCount ?? 0);
    },
  });
  new Gauge({
    name: 'kreload_baseline_store_in_use',
    help: '1 while first-sight baselines go to the baseline store; 0 with --baseline-store=workload or after a fall-back on a 403.',
    registers: [registry],
    collect() {
      this.set(sizes()?.inUse() === true ? 1 : 0);
    },
  });
  const writeErrors = new Counter({
    name: 'kreload_baseline_store_write_errors_total',
    help: 'Batches of the baseline store that failed to be written, by whether they are retried.',
    labelNames: ['retryable'],
    registers: [registry],
  });
  for (const retryable of ['true', 'false']) writeErrors.labels({ retryable }).inc(0);
  return {
    writeFailed: (retryable) => {
      writeErrors.labels({ retryable: String(retryable) }).inc();
    },
  };
}
