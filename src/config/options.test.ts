import { describe, expect, it } from 'vitest';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import type { OptionSpec } from './options.ts';
import { ENV_SPECS, envNameForFlag, helmValuePaths, OPTION_SPECS } from './options.ts';

const SPECS: readonly OptionSpec[] = OPTION_SPECS;

/** §12.1 and §12.2, in the contract's order. */
const CONTRACT_FLAGS = [
  '--auto-reload-all',
  '--auto-annotation',
  '--configmap-auto-annotation',
  '--secret-auto-annotation',
  '--configmap-annotation',
  '--secret-annotation',
  '--auto-search-annotation',
  '--search-match-annotation',
  '--ignore-annotation',
  '--pause-deployment-annotation',
  '--pause-deployment-time-annotation',
  '--configmap-exclude-annotation',
  '--secret-exclude-annotation',
  '--secretproviderclass-annotation',
  '--secretproviderclass-auto-annotation',
  '--secretproviderclass-exclude-annotation',
  '--reload-strategy',
  '--reload-on-create',
  '--reload-on-delete',
  '--is-Argo-Rollouts',
  '--is-openshift',
  '--custom-workload-kinds',
  '--enable-csi-integration',
  '--enable-reload-policies',
  '--sync-after-restart',
  '--resources-to-ignore',
  '--ignored-workload-types',
  '--namespaces',
  '--namespaces-to-ignore',
  '--namespace-selector',
  '--resource-label-selector',
  '--webhook-url',
  '--alert-on-reload',
  '--alert-sink',
  '--alert-webhook-url',
  '--alert-proxy',
  '--alert-additional-info',
  '--alert-structured',
  '--enable-ha',
  '--log-format',
  '--log-level',
  '--enable-pprof',
  '--pprof-addr',
  '--sync-delay',
  '--sync-max-delay',
  '--worker-threads',
  '--resync-period',
  '--kubeconfig',
  '--metrics-port',
  '--metrics-addr',
  '--health-addr',
  '--enable-debug-explain',
  '--include-helm-secrets',
  '--enable-config-revisions',
  '--max-concurrent-rollouts',
  '--max-concurrent-rollouts-per-namespace',
  '--rollout-waves',
  '--canary',
  '--rollout-deadline',
  '--halt-on-failed-rollout',
  '--undo-failed-rollouts',
  '--dry-run',
  '--leader-election-namespace',
  '--leader-election-id',
  '--leader-election-lease-duration',
  '--leader-election-renew-deadline',
  '--leader-election-retry-period',
  '--leader-election-release-on-cancel',
  '--shard-mode',
  '--shard-buckets',
  '--baseline-store',
  '--enable-restart-windows',
  '--flap-max-changes',
  '--flap-period',
  '--flap-cool-down',
];

describe('OPTION_SPECS', () => {
  it('has exactly the flags of §12.1 and §12.2', () => {
    expect(SPECS.map((spec) => spec.flag)).toEqual(CONTRACT_FLAGS);
  });

  it.each(SPECS)('$flag: env name follows §12.5 and name is its camelCase', (spec) => {
    expect(spec.env).toBe(envNameForFlag(spec.flag));
    expect(spec.name.toLowerCase()).toBe(spec.flag.slice(2).replaceAll('-', '').toLowerCase());
    expect(spec.help).toMatch(/^[A-Z].*\.$/);
  });

  it('defaults of the annotation-key flags are the default keys', () => {
    const defaults = new Map(SPECS.map((spec) => [spec.name, spec.default]));
    expect({
      auto: defaults.get('autoAnnotation'),
      configmapAuto: defaults.get('configmapAutoAnnotation'),
      secretAuto: defaults.get('secretAutoAnnotation'),
      configmapReload: defaults.get('configmapAnnotation'),
      secretReload: defaults.get('secretAnnotation'),
      search: defaults.get('autoSearchAnnotation'),
      match: defaults.get('searchMatchAnnotation'),
      ignore: defaults.get('ignoreAnnotation'),
      pausePeriod: defaults.get('pauseDeploymentAnnotation'),
      pausedAt: defaults.get('pauseDeploymentTimeAnnotation'),
    }).toEqual({
      auto: DEFAULT_ANNOTATION_KEYS.auto,
      configmapAuto: DEFAULT_ANNOTATION_KEYS.configmapAuto,
      secretAuto: DEFAULT_ANNOTATION_KEYS.secretAuto,
      configmapReload: DEFAULT_ANNOTATION_KEYS.configmapReload,
      secretReload: DEFAULT_ANNOTATION_KEYS.secretReload,
      search: DEFAULT_ANNOTATION_KEYS.search,
      match: DEFAULT_ANNOTATION_KEYS.match,
      ignore: DEFAULT_ANNOTATION_KEYS.ignore,
      pausePeriod: DEFAULT_ANNOTATION_KEYS.pausePeriod,
      pausedAt: DEFAULT_ANNOTATION_KEYS.pausedAt,
    });
  });

  it.each<[string, string[]]>([
    ['--auto-reload-all', ['reloader.autoReloadAll']],
    ['--reload-strategy', ['reloader.reloadStrategy']],
    ['--auto-annotation', ['reloader.custom_annotations.auto']],
    ['--resources-to-ignore', ['reloader.ignoreSecrets', 'reloader.ignoreConfigMaps']],
    ['--ignored-workload-types', ['reloader.ignoreJobs', 'reloader.ignoreCronJobs']],
    ['--enable-csi-integration', ['reloader.enableCSIIntegration']],
    ['--sync-delay', ['reloader.syncDelay']],
    ['--worker-threads', ['reloader.workerThreads']],
    ['--dry-run', ['reloader.dryRun']],
    ['--kubeconfig', []],
  ])('%s is set by the chart values %j', (flag, paths) => {
    const spec = SPECS.find((row) => row.flag === flag);
    expect(spec && helmValuePaths(spec)).toEqual(paths);
  });

  it('env-only variables are not KRELOAD_ variables', () => {
    for (const spec of ENV_SPECS) expect(spec.env.startsWith('KRELOAD_')).toBe(false);
  });
});

describe('envNameForFlag', () => {
  it.each([
    ['--reload-strategy', 'KRELOAD_RELOAD_STRATEGY'],
    ['--is-Argo-Rollouts', 'KRELOAD_IS_ARGO_ROLLOUTS'],
    ['--sync-delay', 'KRELOAD_SYNC_DELAY'],
  ])('%s → %s', (flag, env) => {
    expect(envNameForFlag(flag)).toBe(env);
  });
});
