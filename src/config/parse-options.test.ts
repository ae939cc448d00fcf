import { describe, expect, it } from 'vitest';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import { ConfigError } from './config-error.ts';
import type { Options } from './parse-options.ts';
import { parseOptions } from './parse-options.ts';
import { OPTION_SPECS } from './options.ts';
import { MAX_TIMEOUT_MS } from '../time/long-timeout.ts';

type Env = Record<string, string | undefined>;

async function problemsOf(argv: string[], env: Env = {}): Promise<readonly string[]> {
  try {
    await parseOptions(argv, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const HA_ENV: Env = { POD_NAME: 'kreload-0', POD_NAMESPACE: 'kreload' };

describe('parseOptions defaults', () => {
  it('gives the documented defaults for an empty command line and environment', async () => {
    const options = await parseOptions([], {});
    expect(options).toEqual({
      annotationKeys: DEFAULT_ANNOTATION_KEYS,
      autoReloadAll: false,
      baselineStore: 'namespace',
      reloadStrategy: 'env-vars',
      reloadOnCreate: false,
      reloadOnDelete: false,
      isArgoRollouts: false,
      isOpenshift: 'auto',
      enableCsiIntegration: false,
      enableReloadPolicies: false,
      syncAfterRestart: false,
      resourcesToIgnore: [],
      ignoredWorkloadTypes: [],
      scope: { mode: 'global', namespaces: [], ignoreNamespaces: [], namespaceSelector: '' },
      resourceLabelSelector: '',
      webhookUrl: undefined,
      leaderElection: {
        enabled: false,
        namespace: undefined,
        id: 'kreload-leader',
        identity: undefined,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        releaseOnCancel: true,
      },
      logFormat: 'text',
      logLevel: 'info',
      enablePprof: false,
      pprofAddr: { host: '127.0.0.1', port: 6060 },
      syncDelay: 2000,
      syncMaxDelay: 30000,
      resyncPeriod: 600000,
      workerThreads: 3,
      kubeconfig: undefined,
      kubeconfigSearch: { kubeconfigVar: undefined, home: undefined, serviceHost: undefined },
      metricsPort: 9090,
      metricsHost: undefined,
      healthAddr: undefined,
      enableDebugExplain: false,
      includeHelmSecrets: false,
      dryRun: false,
      enableConfigRevisions: false,
      enableRestartWindows: false,
      flapBreaker: { maxChanges: 0, periodMs: 300_000, coolDownMs: 120_000 },
      rollouts: {
        maxConcurrent: 0,
        maxPerNamespace: 0,
        waves: false,
        canary: { count: 1 },
        deadlineMs: undefined,
        haltOnFailure: true,
        undoOnFailure: false,
      },
      podName: undefined,
      podNamespace: undefined,
      metricsCountByNamespace: false,
      alerts: {
        enabled: false,
        sink: 'webhook',
        webhookUrl: undefined,
        proxy: undefined,
        additionalInfo: undefined,
        structured: false,
      },
      metaInfo: { namespace: undefined, deploymentName: undefined },
      shard: { mode: 'leader-election', bucketCount: 32 },
      customWorkloadKinds: [],
      warnings: [],
    } satisfies Options);
  });

  it('returns a deeply frozen object', async () => {
    const options = await parseOptions(['--namespaces=a,b'], {});
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.scope)).toBe(true);
    expect(Object.isFrozen(options.scope.namespaces)).toBe(true);
    expect(Object.isFrozen(options.annotationKeys)).toBe(true);
  });
});

describe('parseOptions accepts', () => {
  it.each<[string, string[], Env, Partial<Record<keyof Options, unknown>>]>([
    // bool flags (§12.3)
    ['bare bool flag', ['--auto-reload-all'], {}, { autoReloadAll: true }],
    ['bool =true', ['--auto-reload-all=true'], {}, { autoReloadAll: true }],
    ['bool =T', ['--dry-run=T'], {}, { dryRun: true }],
    ['bool =1', ['--dry-run=1'], {}, { dryRun: true }],
    ['bool =False', ['--dry-run=False'], {}, { dryRun: false }],
    ['bool =0', ['--enable-csi-integration=0'], {}, { enableCsiIntegration: false }],
    ['bool takes a following valid bool', ['--dry-run', 'false'], {}, { dryRun: false }],
    ['bool takes a following TRUE', ['--dry-run', 'TRUE'], {}, { dryRun: true }],
    [
      'bool does not take a following flag',
      ['--dry-run', '--auto-reload-all'],
      {},
      { dryRun: true, autoReloadAll: true },
    ],
    ['bool repeated keeps the last', ['--dry-run', '--dry-run=false'], {}, { dryRun: false }],
    ['bool from env', [], { KRELOAD_DRY_RUN: 't' }, { dryRun: true }],
    ['bool env 0', [], { KRELOAD_INCLUDE_HELM_SECRETS: '0' }, { includeHelmSecrets: false }],
    ['include-helm-secrets', ['--include-helm-secrets'], {}, { includeHelmSecrets: true }],
    [
      'active-active implies HA',
      ['--shard-mode=active-active', '--shard-buckets=64'],
      { POD_NAME: 'kreload-0', POD_NAMESPACE: 'kreload' },
      {
        shard: { mode: 'active-active', bucketCount: 64 },
        leaderElection: expect.objectContaining({ enabled: true, identity: 'kreload-0' }),
      },
    ],
    [
      'enable-pprof and address',
      ['--enable-pprof', '--pprof-addr', '127.0.0.1:7070'],
      {},
      { enablePprof: true, pprofAddr: { host: '127.0.0.1', port: 7070 } },
    ],
    [
      'IPv6 pprof address',
      ['--pprof-addr=[::1]:6061'],
      {},
      { pprofAddr: { host: '::1', port: 6061 } },
    ],
    // string-bool flags (D31)
    ['bare string-bool', ['--reload-on-create'], {}, { reloadOnCreate: true }],
    ['string-bool =false', ['--reload-on-delete=false'], {}, { reloadOnDelete: false }],
    [
      'string-bool takes following true',
      ['--reload-on-delete', 'true'],
      {},
      { reloadOnDelete: true },
    ],
    ['--is-Argo-Rollouts keeps its capitals', ['--is-Argo-Rollouts'], {}, { isArgoRollouts: true }],
    ['--is-Argo-Rollouts=true', ['--is-Argo-Rollouts=true'], {}, { isArgoRollouts: true }],
    ['string-bool from env', [], { KRELOAD_IS_ARGO_ROLLOUTS: 'true' }, { isArgoRollouts: true }],
    // enums
    [
      'reload strategy annotations',
      ['--reload-strategy', 'annotations'],
      {},
      { reloadStrategy: 'annotations' },
    ],
    [
      'reload strategy from env',
      [],
      { KRELOAD_RELOAD_STRATEGY: 'annotations' },
      { reloadStrategy: 'annotations' },
    ],
    ['log format json', ['--log-format=json'], {}, { logFormat: 'json' }],
    ['log format empty means text', ['--log-format='], {}, { logFormat: 'text' }],
    ['log format text', ['--log-format', 'text'], {}, { logFormat: 'text' }],
    ['log level trace', ['--log-level=trace'], {}, { logLevel: 'trace' }],
    ['log level INFO, as Reloader accepts it', ['--log-level=INFO'], {}, { logLevel: 'info' }],
    ['log level Debug from env', [], { KRELOAD_LOG_LEVEL: 'Debug' }, { logLevel: 'debug' }],
    ['log level WARNING is warn', ['--log-level=WARNING'], {}, { logLevel: 'warn' }],
    ['log level warning is warn', ['--log-level=warning'], {}, { logLevel: 'warn' }],
    ['log level warn', ['--log-level=warn'], {}, { logLevel: 'warn' }],
    ['log level fatal is error', ['--log-level=fatal'], {}, { logLevel: 'error' }],
    ['log level panic is error', ['--log-level=panic'], {}, { logLevel: 'error' }],
    ['log level debug from env', [], { KRELOAD_LOG_LEVEL: 'debug' }, { logLevel: 'debug' }],
    // lists (§12.3)
    [
      'list CSV',
      ['--namespaces=a,b'],
      {},
      {
        scope: {
          mode: 'scoped',
          namespaces: ['a', 'b'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
    ],
    [
      'list occurrences append',
      ['--namespaces', 'a', '--namespaces=b,c'],
      {},
      {
        scope: {
          mode: 'scoped',
          namespaces: ['a', 'b', 'c'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
    ],
    [
      'list quotes removed, spaces trimmed, duplicates dropped',
      ['--namespaces="a", b ,a'],
      {},
      {
        scope: {
          mode: 'scoped',
          namespaces: ['a', 'b'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
    ],
    [
      'list from env',
      [],
      { KRELOAD_NAMESPACES: 'x,y' },
      {
        scope: {
          mode: 'scoped',
          namespaces: ['x', 'y'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
    ],
    [
      'resources-to-ignore case-insensitive',
      ['--resources-to-ignore=ConfigMaps'],
      {},
      { resourcesToIgnore: ['configmaps'] },
    ],
    [
      'resources-to-ignore secrets',
      ['--resources-to-ignore', 'secrets'],
      {},
      { resourcesToIgnore: ['secrets'] },
    ],
    [
      'ignored-workload-types both',
      ['--ignored-workload-types=jobs,cronjobs'],
      {},
      { ignoredWorkloadTypes: ['jobs', 'cronjobs'] },
    ],
    [
      'ignored-workload-types repeated',
      ['--ignored-workload-types=jobs', '--ignored-workload-types=cronjobs'],
      {},
      { ignoredWorkloadTypes: ['jobs', 'cronjobs'] },
    ],
    [
      'empty list value',
      ['--namespaces='],
      {},
      { scope: { mode: 'global', namespaces: [], ignoreNamespaces: [], namespaceSelector: '' } },
    ],
    // scope (§11)
    [
      'global mode with filters',
      ['--namespaces-to-ignore=kube-system', '--namespace-selector=team=a'],
      {},
      {
        scope: {
          mode: 'global',
          namespaces: [],
          ignoreNamespaces: ['kube-system'],
          namespaceSelector: 'team=a',
        },
      },
    ],
    [
      'single-namespace mode',
      [],
      { KUBERNETES_NAMESPACE: 'team-a' },
      {
        scope: {
          mode: 'single',
          namespaces: ['team-a'],
          ignoreNamespaces: [],
          namespaceSelector: '',
        },
      },
    ],
    [
      '--namespaces wins over KUBERNETES_NAMESPACE',
      ['--namespaces=b'],
      { KUBERNETES_NAMESPACE: 'a' },
      { scope: { mode: 'scoped', namespaces: ['b'], ignoreNamespaces: [], namespaceSelector: '' } },
    ],
    // selectors (§11 item 2)
    [
      'legacy k:v selector',
      ['--namespace-selector=team:a'],
      {},
      {
        scope: {
          mode: 'global',
          namespaces: [],
          ignoreNamespaces: [],
          namespaceSelector: 'team=a',
        },
      },
    ],
    [
      'k:* selector',
      ['--resource-label-selector=reload:*'],
      {},
      { resourceLabelSelector: 'reload' },
    ],
    [
      'k=* selector',
      ['--resource-label-selector=reload=*'],
      {},
      { resourceLabelSelector: 'reload' },
    ],
    [
      'set-based selector keeps commas in parentheses',
      ['--resource-label-selector=env in (a,b),!legacy'],
      {},
      { resourceLabelSelector: 'env in (a,b),!legacy' },
    ],
    [
      'selector occurrences AND together',
      ['--resource-label-selector=a=1', '--resource-label-selector', 'b notin (x)'],
      {},
      { resourceLabelSelector: 'a=1,b notin (x)' },
    ],
    [
      'selector from env',
      [],
      { KRELOAD_RESOURCE_LABEL_SELECTOR: 'app:web,tier!=db' },
      { resourceLabelSelector: 'app=web,tier!=db' },
    ],
    // durations (§12.4)
    [
      'sync delay 0',
      ['--sync-delay=0', '--sync-max-delay=0'],
      {},
      { syncDelay: 0, syncMaxDelay: 0 },
    ],
    [
      'fractional durations',
      ['--sync-delay=1.5s', '--sync-max-delay=1m30s'],
      {},
      { syncDelay: 1500, syncMaxDelay: 90000 },
    ],
    ['sub-millisecond duration', ['--sync-delay=300us'], {}, { syncDelay: 0.3 }],
    [
      'max delay equal to delay',
      ['--sync-delay=5s', '--sync-max-delay=5s'],
      {},
      { syncDelay: 5000, syncMaxDelay: 5000 },
    ],
    ['resync disabled', ['--resync-period=0'], {}, { resyncPeriod: 0 }],
    ['resync 30s', ['--resync-period', '30s'], {}, { resyncPeriod: 30000 }],
    ['resync 1h from env', [], { KRELOAD_RESYNC_PERIOD: '1h' }, { resyncPeriod: 3600000 }],
    // ints and ports
    ['worker threads 1', ['--worker-threads=1'], {}, { workerThreads: 1 }],
    ['worker threads 64', ['--worker-threads', '64'], {}, { workerThreads: 64 }],
    ['metrics port', ['--metrics-port=8080'], {}, { metricsPort: 8080 }],
    // roll admission
    [
      'waves, canary percentage, budgets and a deadline',
      [
        '--rollout-waves',
        '--canary=10%',
        '--max-concurrent-rollouts=3',
        '--max-concurrent-rollouts-per-namespace=2',
        '--rollout-deadline=5m',
        '--halt-on-failed-rollout=false',
        '--undo-failed-rollouts',
      ],
      {},
      {
        rollouts: {
          maxConcurrent: 3,
          maxPerNamespace: 2,
          waves: true,
          canary: { percent: 10 },
          deadlineMs: 300000,
          haltOnFailure: false,
          undoOnFailure: true,
        },
      },
    ],
    [
      'canary count from env',
      [],
      { KRELOAD_CANARY: '4', KRELOAD_ROLLOUT_WAVES: 'true' },
      {
        rollouts: {
          maxConcurrent: 0,
          maxPerNamespace: 0,
          waves: true,
          canary: { count: 4 },
          deadlineMs: undefined,
          haltOnFailure: true,
          undoOnFailure: false,
        },
      },
    ],
    ['metrics port 65535', ['--metrics-port=65535'], {}, { metricsPort: 65535 }],
    // annotation keys (§12.3)
    [
      'annotation key overrides',
      ['--auto-annotation=example.com/auto', '--ignore-annotation', 'skip'],
      {},
      { annotationKeys: { ...DEFAULT_ANNOTATION_KEYS, auto: 'example.com/auto', ignore: 'skip' } },
    ],
    [
      'every key override',
      [
        '--configmap-auto-annotation=a.io/cm-auto',
        '--secret-auto-annotation=a.io/s-auto',
        '--configmap-annotation=a.io/cm',
        '--secret-annotation=a.io/s',
        '--auto-search-annotation=a.io/search',
        '--search-match-annotation=a.io/match',
        '--pause-deployment-annotation=a.io/pause',
        '--pause-deployment-time-annotation=a.io/paused-at',
      ],
      {},
      {
        annotationKeys: {
          ...DEFAULT_ANNOTATION_KEYS,
          configmapAuto: 'a.io/cm-auto',
          secretAuto: 'a.io/s-auto',
          configmapReload: 'a.io/cm',
          secretReload: 'a.io/s',
          search: 'a.io/search',
          match: 'a.io/match',
          pausePeriod: 'a.io/pause',
          pausedAt: 'a.io/paused-at',
        },
      },
    ],
    [
      'annotation key from env',
      [],
      { KRELOAD_AUTO_ANNOTATION: 'x.io/Auto_1' },
      { annotationKeys: { ...DEFAULT_ANNOTATION_KEYS, auto: 'x.io/Auto_1' } },
    ],
    // URLs, paths
    [
      'webhook url',
      ['--webhook-url', 'https://hooks.example.com/x?token=1'],
      {},
      { webhookUrl: 'https://hooks.example.com/x?token=1' },
    ],
    ['empty webhook url is unset', ['--webhook-url='], {}, { webhookUrl: undefined }],
    ['kubeconfig path', ['--kubeconfig', '/tmp/kc'], {}, { kubeconfig: '/tmp/kc' }],
    // leader election (§13.4)
    [
      'HA with pod identity',
      ['--enable-ha'],
      HA_ENV,
      {
        leaderElection: {
          enabled: true,
          namespace: 'kreload',
          id: 'kreload-leader',
          identity: 'kreload-0',
        },
      },
    ],
    [
      'HA with explicit lease namespace and id',
      ['--enable-ha', '--leader-election-namespace=infra', '--leader-election-id=my.lease'],
      { POD_NAME: 'p' },
      { leaderElection: { enabled: true, namespace: 'infra', id: 'my.lease', identity: 'p' } },
    ],
    [
      'HA off needs no identity',
      ['--enable-ha=false'],
      {},
      {
        leaderElection: {
          enabled: false,
          namespace: undefined,
          id: 'kreload-leader',
          identity: undefined,
        },
      },
    ],
    // env-only variables (§12.5 item 2)
    ['pod identity', [], HA_ENV, { podName: 'kreload-0', podNamespace: 'kreload' }],
    [
      'metrics by namespace',
      [],
      { METRICS_COUNT_BY_NAMESPACE: 'enabled' },
      { metricsCountByNamespace: true },
    ],
    [
      'metrics by namespace needs exactly enabled',
      [],
      { METRICS_COUNT_BY_NAMESPACE: 'true' },
      { metricsCountByNamespace: false },
    ],
    [
      'meta info',
      [],
      { RELOADER_NAMESPACE: 'kreload', RELOADER_DEPLOYMENT_NAME: 'kreload' },
      { metaInfo: { namespace: 'kreload', deploymentName: 'kreload' } },
    ],
    [
      'kubeconfig search',
      [],
      { KUBECONFIG: '/k', HOME: '/home/u', KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      { kubeconfigSearch: { kubeconfigVar: '/k', home: '/home/u', serviceHost: '10.0.0.1' } },
    ],
    [
      'slack alerts',
      [],
      {
        ALERT_ON_RELOAD: 'true',
        ALERT_SINK: ' Slack ',
        ALERT_WEBHOOK_URL: ' https://hooks.slack.com/services/T/B/X ',
        ALERT_ADDITIONAL_INFO: 'prod',
      },
      {
        alerts: {
          enabled: true,
          sink: 'slack',
          webhookUrl: 'https://hooks.slack.com/services/T/B/X',
          proxy: undefined,
          additionalInfo: 'prod',
        },
      },
    ],
    [
      'alerts with proxy, default sink',
      [],
      {
        ALERT_ON_RELOAD: 'true',
        ALERT_WEBHOOK_URL: 'http://a',
        ALERT_WEBHOOK_PROXY: 'http://proxy:3128',
      },
      {
        alerts: {
          enabled: true,
          sink: 'webhook',
          webhookUrl: 'http://a',
          proxy: 'http://proxy:3128',
          additionalInfo: undefined,
        },
      },
    ],
    [
      'alerts off unless exactly true',
      [],
      { ALERT_ON_RELOAD: 'True', ALERT_WEBHOOK_URL: 'http://a' },
      {
        alerts: {
          enabled: false,
          sink: 'webhook',
          webhookUrl: undefined,
          proxy: undefined,
          additionalInfo: undefined,
        },
      },
    ],
    [
      'alert vars are not validated when alerts are off',
      [],
      { ALERT_WEBHOOK_URL: 'not a url' },
      {
        alerts: {
          enabled: false,
          sink: 'webhook',
          webhookUrl: undefined,
          proxy: undefined,
          additionalInfo: undefined,
        },
      },
    ],
    // --help/--version are known to the parser (the CLI handles them first)
    ['--version is not an error', ['--version'], {}, {}],
  ])('%s', async (_name, argv, env, expected) => {
    expect(await parseOptions(argv, env)).toMatchObject(expected);
  });
});

describe('precedence (§12.5)', () => {
  it.each<[string, string[], Env, number]>([
    ['default', [], {}, 2000],
    ['env over default', [], { KRELOAD_SYNC_DELAY: '5s' }, 5000],
    ['command line over env', ['--sync-delay=7s'], { KRELOAD_SYNC_DELAY: '5s' }, 7000],
    ['empty env counts as unset', [], { KRELOAD_SYNC_DELAY: '' }, 2000],
    ['last occurrence wins', ['--sync-delay=1s', '--sync-delay', '3s'], {}, 3000],
  ])('%s', async (_name, argv, env, syncDelay) => {
    expect((await parseOptions(argv, env)).syncDelay).toBe(syncDelay);
  });

  it('a list on the command line replaces the env list instead of merging with it', async () => {
    const options = await parseOptions(['--namespaces=a'], { KRELOAD_NAMESPACES: 'b' });
    expect(options.scope.namespaces).toEqual(['a']);
  });

  it('an invalid env value is not reported when the command line overrides it', async () => {
    const options = await parseOptions(['--worker-threads=2'], { KRELOAD_WORKER_THREADS: 'many' });
    expect(options.workerThreads).toBe(2);
  });
});

describe('parseOptions rejects (§12.6)', () => {
  it.each<[string, string[], Env, string[]]>([
    ['unknown flag', ['--foo'], {}, ['--foo: unknown flag']],
    ['unknown flag with value', ['--foo=bar'], {}, ['--foo: unknown flag']],
    ['unknown short flag', ['-x'], {}, ['-x: unknown flag']],
    [
      'camelCase spelling is not a flag',
      ['--isArgoRollouts'],
      {},
      ['--isArgoRollouts: unknown flag'],
    ],
    [
      'lower-case argo flag is not a flag',
      ['--is-argo-rollouts'],
      {},
      ['--is-argo-rollouts: unknown flag'],
    ],
    ['no negation form', ['--no-dry-run'], {}, ['--no-dry-run: unknown flag']],
    ['positional argument', ['run'], {}, ['run: unexpected argument (kreload takes no arguments)']],
    [
      'bool does not take a non-bool token',
      ['--dry-run', 'yes'],
      {},
      ['yes: unexpected argument (kreload takes no arguments)'],
    ],
    [
      'arguments after --',
      ['--', '--dry-run'],
      {},
      ['--dry-run: unexpected argument (kreload takes no arguments)'],
    ],
    ['value flag at the end', ['--sync-delay'], {}, ['--sync-delay: flag needs a value']],
    ['canary 0', ['--canary=0'], {}, ['--canary: 0 is out of range 1–100000']],
    ['canary above 100%', ['--canary=250%'], {}, ['--canary: 250% is out of range 1%–100%']],
    [
      'canary not a count',
      ['--canary=half'],
      {},
      ['--canary: invalid value "half": expected a count such as 1 or a percentage such as 10%'],
    ],
    [
      'rollout deadline past the timer limit',
      ['--rollout-deadline=597h'],
      {},
      ['--rollout-deadline: 597h is above the maximum of 596h'],
    ],
    [
      'negative budget',
      ['--max-concurrent-rollouts=-1'],
      {},
      ['--max-concurrent-rollouts: -1 is out of range 0–100000'],
    ],
    [
      'invalid bool value',
      ['--dry-run=yes'],
      {},
      ['--dry-run: invalid value "yes": expected a bool (true, false, 1, 0, t, f)'],
    ],
    [
      'empty bool value',
      ['--auto-reload-all='],
      {},
      ['--auto-reload-all: invalid value "": expected a bool (true, false, 1, 0, t, f)'],
    ],
    [
      'invalid bool env',
      [],
      { KRELOAD_ENABLE_HA: 'on' },
      ['KRELOAD_ENABLE_HA: invalid value "on": expected a bool (true, false, 1, 0, t, f)'],
    ],
    [
      'string-bool True',
      ['--reload-on-create=True'],
      {},
      ['--reload-on-create: invalid value "True": expected true or false'],
    ],
    [
      'string-bool 1',
      ['--is-Argo-Rollouts', '1'],
      {},
      ['--is-Argo-Rollouts: invalid value "1": expected true or false'],
    ],
    [
      'string-bool env',
      [],
      { KRELOAD_RELOAD_ON_DELETE: 'yes' },
      ['KRELOAD_RELOAD_ON_DELETE: invalid value "yes": expected true or false'],
    ],
    [
      'strategy',
      ['--reload-strategy=default'],
      {},
      ['--reload-strategy: invalid value "default": expected one of env-vars, annotations'],
    ],
    [
      'log format',
      ['--log-format=logfmt'],
      {},
      ['--log-format: invalid value "logfmt": expected one of "", text, json'],
    ],
    [
      'log level',
      ['--log-level=VERBOSE'],
      {},
      [
        '--log-level: invalid value "VERBOSE": expected one of trace, debug, info, warning, warn, error, fatal, panic',
      ],
    ],
    [
      'both resources ignored',
      ['--resources-to-ignore=configmaps,secrets'],
      {},
      ['--resources-to-ignore: cannot ignore both configmaps and secrets'],
    ],
    [
      'both resources ignored in two occurrences',
      ['--resources-to-ignore=secrets', '--resources-to-ignore=CONFIGMAPS'],
      {},
      ['--resources-to-ignore: cannot ignore both configmaps and secrets'],
    ],
    [
      'unknown resource',
      ['--resources-to-ignore=pods'],
      {},
      ['--resources-to-ignore: invalid value "pods": expected one of configmaps, secrets'],
    ],
    [
      'workload types are exact lower case',
      ['--ignored-workload-types=Jobs,deployments'],
      {},
      [
        '--ignored-workload-types: invalid value "Jobs": expected one of jobs, cronjobs',
        '--ignored-workload-types: invalid value "deployments": expected one of jobs, cronjobs',
      ],
    ],
    [
      'unterminated quote',
      ['--namespaces="a,b'],
      {},
      ['--namespaces: unterminated quote in ""a,b"'],
    ],
    [
      'invalid namespace',
      ['--namespaces=Team_A'],
      {},
      [
        '--namespaces: invalid namespace "Team_A": must consist of lower case alphanumeric characters or "-", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid ignored namespace from env',
      [],
      { KRELOAD_NAMESPACES_TO_IGNORE: 'ok,-bad' },
      [
        'KRELOAD_NAMESPACES_TO_IGNORE: invalid namespace "-bad": must consist of lower case alphanumeric characters or "-", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid KUBERNETES_NAMESPACE',
      [],
      { KUBERNETES_NAMESPACE: 'A' },
      [
        'KUBERNETES_NAMESPACE: invalid namespace "A": must consist of lower case alphanumeric characters or "-", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid selector',
      ['--namespace-selector=env in (a'],
      {},
      [
        "--namespace-selector: invalid label selector \"env in (a\": found 'end of selector', expected ',' or ')'",
      ],
    ],
    [
      'invalid selector value',
      ['--resource-label-selector=a=b c'],
      {},
      ["--resource-label-selector: invalid label selector \"a=b c\": found 'c', expected ','"],
    ],
    [
      'invalid selector key',
      ['--resource-label-selector=-a'],
      {},
      [
        '--resource-label-selector: invalid label selector "-a": invalid key "-a": name must consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid selector from env',
      [],
      { KRELOAD_NAMESPACE_SELECTOR: 'a in ()' },
      [
        'KRELOAD_NAMESPACE_SELECTOR: invalid label selector "a in ()": values of \'in\' must not be empty',
      ],
    ],
    [
      'bad duration: no unit',
      ['--sync-delay=5'],
      {},
      ['--sync-delay: invalid duration "5": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h'],
    ],
    [
      'bad duration: days',
      ['--sync-max-delay=1d'],
      {},
      [
        '--sync-max-delay: invalid duration "1d": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
      ],
    ],
    [
      'bad duration: space',
      ['--resync-period=1 m'],
      {},
      [
        '--resync-period: invalid duration "1 m": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
      ],
    ],
    [
      'bad duration: 5M',
      ['--sync-delay=5M'],
      {},
      ['--sync-delay: invalid duration "5M": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h'],
    ],
    [
      'bad duration: empty',
      ['--sync-delay='],
      {},
      ['--sync-delay: invalid duration "": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h'],
    ],
    [
      'a unit named after an Object.prototype member',
      ['--sync-delay=1constructor'],
      {},
      [
        '--sync-delay: invalid duration "1constructor": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
      ],
    ],
    ['negative duration', ['--sync-delay', '-1m'], {}, ['--sync-delay: -1m must not be negative']],
    [
      'max delay below delay',
      ['--sync-delay=10s', '--sync-max-delay=5s'],
      {},
      ['--sync-max-delay: 5s is less than --sync-delay (10s)'],
    ],
    [
      'max delay below default delay, from env',
      [],
      { KRELOAD_SYNC_MAX_DELAY: '1s' },
      ['KRELOAD_SYNC_MAX_DELAY: 1s is less than --sync-delay (2s)'],
    ],
    [
      'max delay below delay from env',
      ['--sync-max-delay=1m'],
      { KRELOAD_SYNC_DELAY: '2m' },
      ['--sync-max-delay: 1m is less than KRELOAD_SYNC_DELAY (2m)'],
    ],
    [
      'resync below 30s',
      ['--resync-period=29s'],
      {},
      ['--resync-period: 29s is too short: use 0 (disabled) or at least 30s'],
    ],
    [
      'sync delay above 1h',
      ['--sync-delay=61m', '--sync-max-delay=2h'],
      {},
      ['--sync-delay: 61m is above the maximum of 1h'],
    ],
    [
      'sync max delay above 24h',
      ['--sync-max-delay=1000h'],
      {},
      ['--sync-max-delay: 1000h is above the maximum of 24h'],
    ],
    [
      'resync period above 24h, from env',
      [],
      { KRELOAD_RESYNC_PERIOD: '25h' },
      ['KRELOAD_RESYNC_PERIOD: 25h is above the maximum of 24h'],
    ],
    ['worker threads 0', ['--worker-threads=0'], {}, ['--worker-threads: 0 is out of range 1–64']],
    [
      'worker threads 65',
      ['--worker-threads=65'],
      {},
      ['--worker-threads: 65 is out of range 1–64'],
    ],
    [
      'worker threads not an integer',
      ['--worker-threads=2.5'],
      {},
      ['--worker-threads: invalid value "2.5": expected an integer'],
    ],
    ['metrics port 0', ['--metrics-port=0'], {}, ['--metrics-port: 0 is out of range 1–65535']],
    [
      'metrics port 65536',
      ['--metrics-port=65536'],
      {},
      ['--metrics-port: 65536 is out of range 1–65535'],
    ],
    [
      'metrics port text',
      [],
      { KRELOAD_METRICS_PORT: 'http' },
      ['KRELOAD_METRICS_PORT: invalid value "http": expected an integer'],
    ],
    [
      'pprof address without port',
      ['--pprof-addr=localhost'],
      {},
      ['--pprof-addr: invalid address "localhost": expected [host]:port'],
    ],
    [
      'pprof address with bad port',
      ['--pprof-addr=:99999'],
      {},
      ['--pprof-addr: invalid address ":99999": port 99999 is out of range 1–65535'],
    ],
    [
      'annotation key with two slashes',
      ['--auto-annotation=a/b/c'],
      {},
      ['--auto-annotation: invalid annotation key "a/b/c": must have at most one "/"'],
    ],
    [
      'annotation key with bad prefix',
      ['--auto-annotation=Example.com/auto'],
      {},
      [
        '--auto-annotation: invalid annotation key "Example.com/auto": prefix must consist of lower case alphanumeric characters, "-" or ".", and start and end with an alphanumeric character',
      ],
    ],
    [
      'annotation key ending in a dash',
      ['--secret-annotation=x.io/reload-'],
      {},
      [
        '--secret-annotation: invalid annotation key "x.io/reload-": name must consist of alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
      ],
    ],
    [
      'empty annotation key',
      ['--ignore-annotation='],
      {},
      ['--ignore-annotation: invalid annotation key "": name must not be empty'],
    ],
    [
      'annotation key name over 63',
      [`--search-match-annotation=a.io/${'n'.repeat(64)}`],
      {},
      [
        `--search-match-annotation: invalid annotation key "a.io/${'n'.repeat(64)}": name must be at most 63 characters`,
      ],
    ],
    [
      'webhook not http',
      ['--webhook-url=ftp://example.com/x'],
      {},
      ['--webhook-url: invalid URL: scheme must be http or https, not ftp'],
    ],
    [
      'webhook relative',
      ['--webhook-url=/hook'],
      {},
      ['--webhook-url: invalid URL: expected an absolute http(s) URL'],
    ],
    [
      'dry run with webhook',
      ['--dry-run', '--webhook-url=http://example.com'],
      {},
      ['--dry-run: cannot be combined with --webhook-url'],
    ],
    [
      'dry run with webhook from env',
      [],
      { KRELOAD_DRY_RUN: 'true', KRELOAD_WEBHOOK_URL: 'http://example.com' },
      ['KRELOAD_DRY_RUN: cannot be combined with KRELOAD_WEBHOOK_URL'],
    ],
    [
      'HA without POD_NAME',
      ['--enable-ha'],
      { POD_NAMESPACE: 'ns' },
      ['POD_NAME: required with --enable-ha (the leader-election identity)'],
    ],
    [
      'HA without lease namespace',
      ['--enable-ha'],
      { POD_NAME: 'p' },
      ['--leader-election-namespace: required with --enable-ha: set it or POD_NAMESPACE'],
    ],
    [
      'HA from env without identity',
      [],
      { KRELOAD_ENABLE_HA: '1' },
      [
        'POD_NAME: required with KRELOAD_ENABLE_HA (the leader-election identity)',
        '--leader-election-namespace: required with KRELOAD_ENABLE_HA: set it or POD_NAMESPACE',
      ],
    ],
    [
      'invalid lease namespace',
      ['--leader-election-namespace=Infra'],
      {},
      [
        '--leader-election-namespace: invalid namespace "Infra": must consist of lower case alphanumeric characters or "-", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid lease name',
      ['--leader-election-id=my_lease'],
      {},
      [
        '--leader-election-id: invalid name "my_lease": must consist of lower case alphanumeric characters, "-" or ".", and start and end with an alphanumeric character',
      ],
    ],
    [
      'invalid alert URL',
      [],
      { ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: 'hooks.slack.com' },
      ['ALERT_WEBHOOK_URL: invalid URL: expected an absolute http(s) URL'],
    ],
    [
      'invalid alert proxy',
      [],
      {
        ALERT_ON_RELOAD: 'true',
        ALERT_WEBHOOK_URL: 'https://a',
        ALERT_WEBHOOK_PROXY: 'socks5://p:1080',
      },
      ['ALERT_WEBHOOK_PROXY: invalid URL: scheme must be http or https, not socks5'],
    ],
  ])('%s', async (_name, argv, env, problems) => {
    expect(await problemsOf(argv, env)).toEqual(problems);
  });

  it('reports every problem at once', async () => {
    const problems = await problemsOf(
      [
        '--foo',
        '--sync-delay=5',
        '--resources-to-ignore=configmaps,secrets',
        '--enable-ha',
        '--dry-run',
        '--webhook-url=http://example.com',
        '--log-level=verbose',
        '--log-format=xml',
        '--namespace-selector=a in (',
        '--auto-annotation=/x',
        'extra',
      ],
      {
        KRELOAD_WORKER_THREADS: '0',
        KRELOAD_METRICS_PORT: '0',
        ALERT_ON_RELOAD: 'true',
        ALERT_WEBHOOK_URL: 'x',
      },
    );
    expect([...problems].sort()).toEqual(
      [
        '--foo: unknown flag',
        'extra: unexpected argument (kreload takes no arguments)',
        '--sync-delay: invalid duration "5": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
        '--resources-to-ignore: cannot ignore both configmaps and secrets',
        'POD_NAME: required with --enable-ha (the leader-election identity)',
        '--leader-election-namespace: required with --enable-ha: set it or POD_NAMESPACE',
        '--dry-run: cannot be combined with --webhook-url',
        '--log-level: invalid value "verbose": expected one of trace, debug, info, warning, warn, error, fatal, panic',
        '--log-format: invalid value "xml": expected one of "", text, json',
        "--namespace-selector: invalid label selector \"a in (\": found 'end of selector', expected a value or ')'",
        '--auto-annotation: invalid annotation key "/x": prefix before "/" must not be empty',
        'KRELOAD_WORKER_THREADS: 0 is out of range 1–64',
        'KRELOAD_METRICS_PORT: 0 is out of range 1–65535',
        'ALERT_WEBHOOK_URL: invalid URL: expected an absolute http(s) URL',
      ].sort(),
    );
  });

  it('reports an invalid value once, without a follow-on cross-check problem', async () => {
    expect(await problemsOf(['--sync-delay=bogus', '--sync-max-delay=1s'])).toEqual([
      '--sync-delay: invalid duration "bogus": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h',
    ]);
  });
});

describe('warnings (§12.6 item 3)', () => {
  it.each<[string, string[], Env, Options['warnings']]>([
    ['none by default', [], {}, []],
    [
      'namespace filters outside global mode',
      ['--namespaces=a', '--namespaces-to-ignore=b', '--namespace-selector=x=y'],
      {},
      [
        {
          level: 'warn',
          subject: '--namespaces-to-ignore',
          message: 'ignored because --namespaces selects scoped mode',
        },
        {
          level: 'warn',
          subject: '--namespace-selector',
          message: 'ignored because --namespaces selects scoped mode',
        },
      ],
    ],
    [
      'filters from env in single mode',
      [],
      { KUBERNETES_NAMESPACE: 'a', KRELOAD_NAMESPACES_TO_IGNORE: 'b' },
      [
        {
          level: 'warn',
          subject: 'KRELOAD_NAMESPACES_TO_IGNORE',
          message: 'ignored because KUBERNETES_NAMESPACE selects single-namespace mode',
        },
      ],
    ],
    [
      'scoped by env',
      [],
      { KRELOAD_NAMESPACES: 'a', KRELOAD_NAMESPACE_SELECTOR: 'x' },
      [
        {
          level: 'warn',
          subject: 'KRELOAD_NAMESPACE_SELECTOR',
          message: 'ignored because KRELOAD_NAMESPACES selects scoped mode',
        },
      ],
    ],
    [
      'sync-after-restart is info',
      ['--sync-after-restart'],
      {},
      [
        {
          level: 'info',
          subject: '--sync-after-restart',
          message: 'ignored: restart-safe reconciliation is always on',
        },
      ],
    ],
    ['sync-after-restart=false says nothing', ['--sync-after-restart=false'], {}, []],
    [
      'webhook mode',
      ['--webhook-url=http://example.com/hook'],
      {},
      [
        {
          level: 'warn',
          subject: '--webhook-url',
          message: 'webhook mode: changes are posted to the webhook and no workload is reloaded',
        },
      ],
    ],
    [
      'unknown alert sink',
      [],
      { ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: 'http://a', ALERT_SINK: 'Discord' },
      [
        {
          level: 'warn',
          subject: 'ALERT_SINK',
          message: 'unknown sink "discord"; alerts are sent as plain text',
        },
      ],
    ],
    [
      'alerts without URL',
      [],
      { ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: '  ' },
      [
        {
          level: 'warn',
          subject: 'ALERT_ON_RELOAD',
          message: 'is true but ALERT_WEBHOOK_URL is empty; alerts are disabled',
        },
      ],
    ],
    [
      'unknown KRELOAD_ variables, sorted',
      [],
      { KRELOAD_SYNCDELAY: '1s', KRELOAD_ALPHA: 'x', KRELOADED: 'no' },
      [
        { level: 'warn', subject: 'KRELOAD_ALPHA', message: 'unknown variable, ignored' },
        { level: 'warn', subject: 'KRELOAD_SYNCDELAY', message: 'unknown variable, ignored' },
      ],
    ],
  ])('%s', async (_name, argv, env, warnings) => {
    expect((await parseOptions(argv, env)).warnings).toEqual(warnings);
  });
});

describe('every duration flag past the timer limit (2^31-1 ms)', () => {
  const durations = OPTION_SPECS.filter((spec) => spec.type === 'duration');

  it('each is bounded at or under the limit, so no timer ever fires at once', () => {
    expect(durations.length).toBeGreaterThan(0);
    for (const spec of durations) {
      expect(spec.max, spec.flag).toBeLessThanOrEqual(MAX_TIMEOUT_MS);
    }
  });

  it.each(
    durations.flatMap((spec) =>
      ['597h', '2562047h', '9999999999999h'].map((value) => ({ flag: spec.flag, value })),
    ),
  )('$flag=$value is refused at start-up, naming the flag', async ({ flag, value }) => {
    const problems = await problemsOf([`${flag}=${value}`], HA_ENV);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${flag}: `, 'u'));
  });
});
