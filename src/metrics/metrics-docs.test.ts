/**
 * docs/metrics.md against what createMetrics, the baseline store and the caches register, both
 * ways: each kreload or Reloader metric has exactly one row in the reference, and each row names
 * a registered metric.
 */
import { readFileSync } from 'node:fs';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createBaselineStoreMetrics } from './baseline-store-metrics.ts';
import { registerCacheMetrics } from './cache-metrics.ts';
import { createMetrics } from './metrics.ts';

const OWN_PREFIXES = /^(reloader_|kreload_|rest_client_)/;

function documentedNames(): string[] {
  const text = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
  return [...text.matchAll(/^\| `([a-z_]+)` \|/gm)]
    .map((match) => match[1] ?? '')
    .filter((name) => OWN_PREFIXES.test(name));
}

function registeredNames(): string[] {
  const registry = new Registry();
  createMetrics(registry, { countByNamespace: true });
  createBaselineStoreMetrics(registry, () => undefined);
  registerCacheMetrics(registry, () => ({}));
  return registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .filter((name) => OWN_PREFIXES.test(name));
}

describe('docs/metrics.md', () => {
  it('has one row for each registered metric and no row for anything else', () => {
    const documented = documentedNames();
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(registeredNames().sort());
  });
});
