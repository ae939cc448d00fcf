// The chart and src/config/options.ts describe the same options, in both directions: every option
// with a Helm value is set by that value in values.yaml, and every chart value that sets a flag sets
// an option that exists (and names that value in its `helm` column).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { OPTION_SPECS, type OptionSpec, helmValuePaths } from '../../../src/config/options.ts';
import {
  HELM_BUILD_TIMEOUT_MS,
  type Rendered,
  chartDir,
  isRecord,
  locateHelm,
  parseYaml,
  render,
} from './chart-harness.ts';

interface FlagValue {
  /** Path under `reloader.`. */
  path: string;
  /** A valid value that differs from the chart default. */
  probe: unknown;
  /** Values the flag needs to be passed at all (e.g. enableHA for the Lease flags). */
  with?: Record<string, unknown>;
}

const ANNOTATION_KEYS = [
  'auto',
  'configmap_auto',
  'secret_auto',
  'configmap',
  'secret',
  'search',
  'match',
  'ignore',
  'pausePeriod',
  'pauseTime',
  'configmap_exclude',
  'secret_exclude',
  'secretproviderclass',
  'secretproviderclass_auto',
  'secretproviderclass_exclude',
];

/** Every value under `reloader.` that becomes a controller flag. */
const FLAG_VALUES: FlagValue[] = [
  { path: 'autoReloadAll', probe: true },
  { path: 'reloadStrategy', probe: 'annotations' },
  { path: 'reloadOnCreate', probe: true },
  { path: 'reloadOnDelete', probe: true },
  { path: 'syncAfterRestart', probe: true },
  { path: 'isArgoRollouts', probe: true },
  { path: 'isOpenshift', probe: true },
  {
    path: 'customWorkloadKinds',
    probe: [
      {
        group: 'example.com',
        version: 'v1',
        kind: 'Widget',
        resource: 'widgets',
        podTemplatePath: 'spec.template',
      },
    ],
  },
  { path: 'enableCSIIntegration', probe: true },
  { path: 'enableReloadPolicies', probe: true },
  { path: 'ignoreSecrets', probe: true },
  { path: 'ignoreConfigMaps', probe: true },
  { path: 'ignoreJobs', probe: true },
  { path: 'ignoreCronJobs', probe: true },
  { path: 'includeHelmSecrets', probe: true },
  { path: 'webhookUrl', probe: 'https://example.com/hook' },
  { path: 'enableConfigRevisions', probe: true },
  { path: 'dryRun', probe: true },
  { path: 'namespaces', probe: ['probe-ns'] },
  { path: 'ignoreNamespaces', probe: 'probe-ns' },
  { path: 'namespaceSelector', probe: 'probe=true' },
  { path: 'resourceLabelSelector', probe: 'probe=true' },
  { path: 'syncDelay', probe: '7s' },
  { path: 'syncMaxDelay', probe: '77s' },
  { path: 'workerThreads', probe: 7 },
  { path: 'resyncPeriod', probe: '7m' },
  { path: 'baselineStore', probe: 'workload' },
  { path: 'enableRestartWindows', probe: true },
  { path: 'flapMaxChanges', probe: 7 },
  { path: 'flapPeriod', probe: '7m' },
  { path: 'flapCoolDown', probe: '77s' },
  { path: 'maxConcurrentRollouts', probe: 7 },
  { path: 'maxConcurrentRolloutsPerNamespace', probe: 7 },
  { path: 'rolloutWaves', probe: true },
  { path: 'canary', probe: '10%' },
  { path: 'rolloutDeadline', probe: '7m' },
  { path: 'haltOnFailedRollout', probe: false },
  { path: 'undoFailedRollouts', probe: true },
  { path: 'enableHA', probe: true },
  { path: 'leaderElection.namespace', probe: 'probe-ns', with: { enableHA: true } },
  { path: 'leaderElection.id', probe: 'probe-lease', with: { enableHA: true } },
  { path: 'leaderElection.leaseDuration', probe: '30s', with: { enableHA: true } },
  { path: 'leaderElection.renewDeadline', probe: '5s', with: { enableHA: true } },
  { path: 'leaderElection.retryPeriod', probe: '1s', with: { enableHA: true } },
  { path: 'leaderElection.releaseOnCancel', probe: false, with: { enableHA: true } },
  { path: 'shardMode', probe: 'active-active', with: { enableHA: true } },
  { path: 'shardBuckets', probe: 64, with: { enableHA: true } },
  { path: 'logFormat', probe: 'text' },
  { path: 'logLevel', probe: 'debug' },
  { path: 'metricsPort', probe: 9797 },
  { path: 'enablePProf', probe: true },
  { path: 'enableDebugExplain', probe: true },
  { path: 'pprofAddr', probe: ':7070', with: { enablePProf: true } },
  ...ANNOTATION_KEYS.map((key) => ({
    path: `custom_annotations.${key}`,
    probe: `probe.example.com/${key.replaceAll('_', '-')}`,
  })),
];

/** Values under `reloader.` that configure the chart (env, RBAC, objects) but no flag. */
const CHART_ONLY = [
  'watchGlobally', // KUBERNETES_NAMESPACE
  'enableMetricsByNamespace', // METRICS_COUNT_BY_NAMESPACE
  'matchLabels',
  'deployment',
  'service',
  'rbac',
  'serviceAccount',
  'serviceMonitor',
  'podMonitor',
  'prometheusRule',
  'podDisruptionBudget',
  'netpol',
  'grafanaDashboard',
  'verticalPodAutoscaler',
  'readOnlyRootFileSystem', // the container security context
  'enableEvictStrategy', // RBAC of the evict strategy
  'legacy', // accepted from Reloader's values, unused as there
];

/** Probes for some chart-only values, which must leave the flags untouched. */
const CHART_ONLY_PROBES: Record<string, unknown> = {
  watchGlobally: false,
  enableMetricsByNamespace: true,
  readOnlyRootFileSystem: true,
  legacy: { rbac: true },
};

/** Options the chart leaves at the controller's default on purpose. */
const ALERTS_THROUGH_ENV =
  'the chart sets ALERT_* through reloader.deployment.env (a URL in args would show in the pod spec)';
const NOT_IN_CHART = new Map([
  ['--kubeconfig', 'in the cluster kreload uses its ServiceAccount'],
  ['--metrics-addr', 'the chart sets --metrics-port from reloader.metricsPort'],
  ['--health-addr', "the chart's probes use the metrics port"],
  ['--alert-on-reload', ALERTS_THROUGH_ENV],
  ['--alert-sink', ALERTS_THROUGH_ENV],
  ['--alert-webhook-url', ALERTS_THROUGH_ENV],
  ['--alert-proxy', ALERTS_THROUGH_ENV],
  ['--alert-additional-info', ALERTS_THROUGH_ENV],
  ['--alert-structured', `${ALERTS_THROUGH_ENV}; KRELOAD_ALERT_STRUCTURED there too`],
]);

/** Chart defaults that deliberately differ from the controller's (design §6). */
const CHART_DEFAULT_OVERRIDES = new Map([
  ['--log-format', 'json'],
  // isOpenshift: false grants no DeploymentConfig RBAC, so kreload must not watch them.
  ['--is-openshift', 'false'],
]);

const normalizeFlag = (flag: string): string => `--${flag.replace(/^-+/, '')}`;
const flagOf = (arg: string): string => normalizeFlag(arg.split('=')[0] ?? arg);

function setPath(path: string, value: unknown): Record<string, unknown> {
  return path
    .split('.')
    .reduceRight<Record<string, unknown>>(
      (inner, key, index, keys) =>
        index === keys.length - 1 ? { [key]: value } : { [key]: inner },
      {},
    );
}

function valueAt(root: unknown, path: string): { found: boolean; value: unknown } {
  let node = root;
  for (const key of path.split('.')) {
    if (!isRecord(node) || !(key in node)) {
      return { found: false, value: undefined };
    }
    node = node[key];
  }
  return { found: true, value: node };
}

/** Leaf paths under reloader.*, not descending into chart-only subtrees. */
function leafPaths(node: unknown, prefix: string): string[] {
  if (!isRecord(node) || Object.keys(node).length === 0) {
    return [prefix];
  }
  return Object.entries(node).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return CHART_ONLY.includes(path) ? [path] : leafPaths(child, path);
  });
}

/** Flags whose argument differs between two renders. */
function changedFlags(base: Rendered, probed: Rendered): string[] {
  const before = new Set(base.args());
  const after = new Set(probed.args());
  const changed = [...after].filter((arg) => !before.has(arg));
  const removed = [...before].filter((arg) => !after.has(arg));
  return [...new Set([...changed, ...removed].map(flagOf))].sort();
}

async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += size) {
    results.push(...(await Promise.all(items.slice(start, start + size).map(work))));
  }
  return results;
}

const specByFlag = new Map<string, OptionSpec>(
  OPTION_SPECS.map((spec) => [normalizeFlag(spec.flag), spec]),
);

describe('chart values and OPTION_SPECS', () => {
  let values: unknown;
  let defaults: Rendered | undefined;
  /** Flags each FLAG_VALUES path changes, keyed by path. */
  const flagsByPath = new Map<string, string[]>();
  const flagsByChartOnlyPath = new Map<string, string[]>();

  const flagsOf = (path: string): string[] => {
    const flags = flagsByPath.get(path);
    if (flags === undefined) {
      throw new Error(`reloader.${path} has no probe in FLAG_VALUES`);
    }
    return flags;
  };

  beforeAll(async () => {
    values = parseYaml(await readFile(join(chartDir, 'values.yaml'), 'utf8'));
    const helm = await locateHelm();
    defaults = await render(helm);
    const probeOne = async (row: FlagValue): Promise<[string, string[]]> => {
      const base =
        row.with === undefined ? defaults! : await render(helm, { values: { reloader: row.with } });
      const probed = await render(helm, {
        values: { reloader: { ...row.with, ...setPath(row.path, row.probe) } },
      });
      return [row.path, changedFlags(base, probed)];
    };
    for (const [path, flags] of await inBatches(FLAG_VALUES, 4, probeOne)) {
      flagsByPath.set(path, flags);
    }
    const chartOnly = Object.entries(CHART_ONLY_PROBES);
    for (const [path, flags] of await inBatches(chartOnly, 4, async ([path, probe]) => {
      const probed = await render(helm, { values: { reloader: setPath(path, probe) } });
      return [path, changedFlags(defaults!, probed)] as const;
    })) {
      flagsByChartOnlyPath.set(path, flags);
    }
  }, HELM_BUILD_TIMEOUT_MS);

  it('classifies every value under reloader.* as a flag value or a chart-only value', () => {
    const reloader = valueAt(values, 'reloader').value;
    const known = new Set([...FLAG_VALUES.map((row) => row.path), ...CHART_ONLY]);
    expect(leafPaths(reloader, '').filter((path) => !known.has(path))).toEqual([]);
  });

  describe('chart → options', () => {
    it.each(FLAG_VALUES)('reloader.$path sets a flag of an existing option', ({ path }) => {
      const flags = flagsOf(path);
      expect(flags.length, `reloader.${path} changed no flag`).toBeGreaterThan(0);
      expect(flags.filter((flag) => !specByFlag.has(flag))).toEqual([]);
    });

    // Some values also switch on companion flags (enableHA passes --leader-election-id); the value
    // must be named by the option of at least one flag it sets.
    it.each(FLAG_VALUES)("reloader.$path is named in its option's helm column", ({ path }) => {
      const flags = flagsOf(path);
      const naming = flags.filter((flag) => {
        const spec = specByFlag.get(flag);
        return spec !== undefined && helmValuePaths(spec).includes(`reloader.${path}`);
      });
      expect(
        naming,
        `set helm: 'reloader.${path}' on ${flags.join(' or ')} in src/config/options.ts`,
      ).not.toEqual([]);
    });

    it.each(Object.keys(CHART_ONLY_PROBES))('reloader.%s changes no flag', (path) => {
      expect(flagsByChartOnlyPath.get(path)).toEqual([]);
    });
  });

  describe('options → chart', () => {
    const withHelm = OPTION_SPECS.filter((spec) => spec.helm !== undefined);

    it.each(withHelm)('$flag: its Helm value exists in values.yaml and sets the flag', (spec) => {
      const paths = helmValuePaths(spec);
      expect(paths.length).toBeGreaterThan(0);
      for (const fullPath of paths) {
        expect(fullPath.startsWith('reloader.'), fullPath).toBe(true);
        const path = fullPath.slice('reloader.'.length);
        expect(valueAt(values, fullPath).found, `${fullPath} in values.yaml`).toBe(true);
        expect(flagsOf(path)).toContain(normalizeFlag(spec.flag));
      }
    });

    it.each(OPTION_SPECS.filter((spec) => !NOT_IN_CHART.has(normalizeFlag(spec.flag))))(
      '$flag can be set from the chart values',
      (spec) => {
        const setters = [...flagsByPath].filter(([, flags]) =>
          flags.includes(normalizeFlag(spec.flag)),
        );
        expect(setters.length, `no reloader.* value sets ${spec.flag}`).toBeGreaterThan(0);
      },
    );

    it("keeps the controller's defaults except the chart's documented overrides", () => {
      const differing = (defaults?.args() ?? []).flatMap((arg) => {
        const flag = flagOf(arg);
        const value = arg.slice(arg.indexOf('=') + 1);
        const expected = CHART_DEFAULT_OVERRIDES.get(flag) ?? specByFlag.get(flag)?.default;
        return value === expected ? [] : [`${arg} (expected ${String(expected)})`];
      });
      expect(differing).toEqual([]);
    });
  });
});
