// The flags Reloader gained after 1.4.21 (its master's leader-election timings) and in 2.0, read
// with Reloader's meaning: aliases where 2.0 renamed, the ALERT_* variables overridden by the
// --alert-* flags, and the Lease timings checked as Reloader checks them.
import { describe, expect, it } from 'vitest';
import { decide } from '../core/decide.ts';
import type { DecisionResult, SourceType } from '../core/types.ts';
import { aWorkload } from '../testing/builders.ts';
import { ConfigError } from './config-error.ts';
import type { Options } from './parse-options.ts';
import { parseOptions } from './parse-options.ts';

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

const ALERT_ENV: Env = { ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: 'https://env.example/hook' };

describe('Reloader 2.0 flags: accepted values', () => {
  it.each<[string, string[], Env, Partial<Record<keyof Options, unknown>>]>([
    // Listeners
    [
      '--metrics-addr sets host and port',
      ['--metrics-addr=127.0.0.1:9191'],
      {},
      { metricsPort: 9191, metricsHost: '127.0.0.1' },
    ],
    [
      "--metrics-addr=:9090, Reloader 2.0's default",
      ['--metrics-addr=:9090'],
      {},
      { metricsPort: 9090, metricsHost: undefined },
    ],
    [
      '--metrics-addr agreeing with --metrics-port',
      ['--metrics-port=9191', '--metrics-addr=:9191'],
      {},
      { metricsPort: 9191 },
    ],
    ['--health-addr', ['--health-addr=:8080'], {}, { healthAddr: { host: undefined, port: 8080 } }],
    // OpenShift
    ['--is-openshift=false', ['--is-openshift=false'], {}, { isOpenshift: 'false' }],
    ['--is-openshift=TRUE', ['--is-openshift=TRUE'], {}, { isOpenshift: 'true' }],
    ['--is-openshift= (auto)', ['--is-openshift='], {}, { isOpenshift: 'auto' }],
    ['--is-openshift=auto', ['--is-openshift', 'auto'], {}, { isOpenshift: 'auto' }],
    // Leader election
    [
      'Lease timings',
      [
        '--leader-election-lease-duration=30s',
        '--leader-election-renew-deadline=20s',
        '--leader-election-retry-period=4s',
        '--leader-election-release-on-cancel=false',
      ],
      {},
      {
        leaderElection: {
          enabled: false,
          namespace: undefined,
          id: 'kreload-leader',
          identity: undefined,
          leaseDurationMs: 30_000,
          renewDeadlineMs: 20_000,
          retryPeriodMs: 4_000,
          releaseOnCancel: false,
        },
      },
    ],
    [
      'sub-second renew deadline and retry period, as Reloader allows',
      [
        '--leader-election-lease-duration=1s',
        '--leader-election-renew-deadline=800ms',
        '--leader-election-retry-period=500ms',
      ],
      {},
      {
        leaderElection: expect.objectContaining({
          leaseDurationMs: 1_000,
          renewDeadlineMs: 800,
          retryPeriodMs: 500,
        }) as unknown,
      },
    ],
  ])('%s', async (_name, argv, env, expected) => {
    expect(await parseOptions(argv, env)).toMatchObject(expected);
  });

  it('custom exclude and SecretProviderClass annotation keys', async () => {
    const { annotationKeys } = await parseOptions(
      [
        '--configmap-exclude-annotation=example.com/cm-exclude',
        '--secret-exclude-annotation=example.com/secret-exclude',
        '--secretproviderclass-annotation=example.com/spc',
        '--secretproviderclass-auto-annotation=example.com/spc-auto',
        '--secretproviderclass-exclude-annotation=example.com/spc-exclude',
      ],
      {},
    );
    expect(annotationKeys).toMatchObject({
      configmapExclude: 'example.com/cm-exclude',
      secretExclude: 'example.com/secret-exclude',
      secretProviderClassReload: 'example.com/spc',
      secretProviderClassAuto: 'example.com/spc-auto',
      secretProviderClassExclude: 'example.com/spc-exclude',
    });
  });
});

describe('Reloader 2.0 flags: alerts', () => {
  it.each<[string, string[], Env, Options['alerts']]>([
    [
      '--alert-webhook-url alone turns alerts on, as in Reloader 2.0',
      ['--alert-webhook-url=https://flag.example/hook'],
      {},
      {
        enabled: true,
        sink: 'webhook',
        webhookUrl: 'https://flag.example/hook',
        proxy: undefined,
        additionalInfo: undefined,
        structured: false,
      },
    ],
    [
      'every flag wins over its variable',
      [
        '--alert-sink=Slack',
        '--alert-webhook-url=https://flag.example/hook',
        '--alert-proxy=http://proxy.flag:3128',
        '--alert-additional-info=prod-eu',
      ],
      {
        ...ALERT_ENV,
        ALERT_SINK: 'teams',
        ALERT_WEBHOOK_PROXY: 'http://proxy.env:3128',
        ALERT_ADDITIONAL_INFO: 'env-info',
      },
      {
        enabled: true,
        sink: 'slack',
        webhookUrl: 'https://flag.example/hook',
        proxy: 'http://proxy.flag:3128',
        additionalInfo: 'prod-eu',
        structured: false,
      },
    ],
    [
      'variables fill in what the flags leave out',
      ['--alert-on-reload', '--alert-sink=raw', '--alert-structured'],
      { ALERT_WEBHOOK_URL: 'https://env.example/hook', ALERT_ADDITIONAL_INFO: 'env-info' },
      {
        enabled: true,
        sink: 'webhook',
        webhookUrl: 'https://env.example/hook',
        proxy: undefined,
        additionalInfo: 'env-info',
        structured: true,
      },
    ],
    [
      '--alert-on-reload=false wins over ALERT_ON_RELOAD=true',
      ['--alert-on-reload=false'],
      ALERT_ENV,
      {
        enabled: false,
        sink: 'webhook',
        webhookUrl: undefined,
        proxy: undefined,
        additionalInfo: undefined,
        structured: false,
      },
    ],
    [
      'KRELOAD_ALERT_ON_RELOAD as the flag',
      [],
      { KRELOAD_ALERT_ON_RELOAD: 'true', ALERT_WEBHOOK_URL: 'https://env.example/hook' },
      {
        enabled: true,
        sink: 'webhook',
        webhookUrl: 'https://env.example/hook',
        proxy: undefined,
        additionalInfo: undefined,
        structured: false,
      },
    ],
  ])('%s', async (_name, argv, env, alerts) => {
    expect((await parseOptions(argv, env)).alerts).toEqual(alerts);
  });

  it('--alert-on-reload without any URL warns and stays off', async () => {
    const options = await parseOptions(['--alert-on-reload'], {});
    expect(options.alerts.enabled).toBe(false);
    expect(options.warnings).toEqual([
      {
        level: 'warn',
        subject: '--alert-on-reload',
        message: 'is true but ALERT_WEBHOOK_URL is empty; alerts are disabled',
      },
    ]);
  });
});

describe('Reloader 2.0 flags: rejected values', () => {
  it.each<[string, string[], Env, string[]]>([
    [
      'fractional lease duration (two leaders at once)',
      [
        '--leader-election-lease-duration=1500ms',
        '--leader-election-renew-deadline=1300ms',
        '--leader-election-retry-period=1s',
      ],
      {},
      [
        '--leader-election-lease-duration: 1500ms is not a whole number of seconds: the Lease ' +
          'records whole seconds, and a follower reading a rounded duration could lead beside this leader',
      ],
    ],
    [
      'sub-second lease duration',
      ['--leader-election-lease-duration=900ms'],
      {},
      ['--leader-election-lease-duration: 900ms is below the minimum of 1s'],
    ],
    [
      'lease duration equal to the renew deadline',
      ['--leader-election-lease-duration=10s'],
      {},
      [
        '--leader-election-lease-duration: 10s must be greater than --leader-election-renew-deadline (10s)',
      ],
    ],
    [
      'renew deadline within the jittered retry period',
      ['--leader-election-renew-deadline=2400ms'],
      {},
      [
        '--leader-election-renew-deadline: 2400ms must be greater than 1.2 × ' +
          '--leader-election-retry-period (2s), or a renewal may start after the deadline',
      ],
    ],
    [
      'zero renew deadline and retry period',
      ['--leader-election-renew-deadline=0s', '--leader-election-retry-period=0'],
      {},
      [
        '--leader-election-renew-deadline: 0s is below the minimum of 1ms',
        '--leader-election-retry-period: 0 is below the minimum of 1ms',
      ],
    ],
    [
      'lease duration past 24h (timers stop at 2^31 ms)',
      ['--leader-election-lease-duration=596524h'],
      {},
      ['--leader-election-lease-duration: 596524h is above the maximum of 24h'],
    ],
    [
      'from the environment',
      [],
      { KRELOAD_LEADER_ELECTION_LEASE_DURATION: '12.5s' },
      [
        'KRELOAD_LEADER_ELECTION_LEASE_DURATION: 12500ms is not a whole number of seconds: the Lease ' +
          'records whole seconds, and a follower reading a rounded duration could lead beside this leader',
      ],
    ],
    [
      '--metrics-addr disagreeing with --metrics-port',
      ['--metrics-port=9191', '--metrics-addr=:9292'],
      {},
      ['--metrics-addr: port 9292 differs from --metrics-port (9191); set one of them'],
    ],
    [
      '--health-addr on the metrics port',
      ['--metrics-addr=:9090', '--health-addr=127.0.0.1:9090'],
      {},
      [
        "--health-addr: port 9090 is the metrics listener's, which serves the probes already; leave it unset",
      ],
    ],
    [
      'bad addresses',
      ['--metrics-addr=9090', '--health-addr=:http'],
      {},
      [
        '--metrics-addr: invalid address "9090": expected [host]:port',
        '--health-addr: invalid address ":http": port invalid value "http": expected an integer',
      ],
    ],
    [
      'unknown --is-openshift',
      ['--is-openshift=yes'],
      {},
      ['--is-openshift: invalid value "yes": expected one of "", auto, true, false'],
    ],
    [
      'unknown --alert-sink',
      ['--alert-sink=discord'],
      {},
      [
        '--alert-sink: invalid value "discord": expected one of "", slack, teams, gchat, webhook, raw',
      ],
    ],
    [
      'bad --alert-webhook-url',
      ['--alert-webhook-url=ftp://example.com'],
      {},
      ['--alert-webhook-url: invalid URL: scheme must be http or https, not ftp'],
    ],
    [
      'bad exclude annotation key',
      ['--secret-exclude-annotation=not a key'],
      {},
      [
        '--secret-exclude-annotation: invalid annotation key "not a key": name must consist of ' +
          'alphanumeric characters, "-", "_" or ".", and start and end with an alphanumeric character',
      ],
    ],
  ])('%s', async (_name, argv, env, problems) => {
    expect(await problemsOf(argv, env)).toEqual(problems);
  });
});

describe('Reloader 2.0 annotation flags change what rolls', () => {
  const decideWith = async (
    argv: string[],
    input: { type: SourceType; annotations: Record<string, string> },
  ): Promise<DecisionResult> => {
    const { annotationKeys } = await parseOptions(argv, {});
    return decide({
      workload: aWorkload('Deployment', 'ns', 'api').withAnnotations(input.annotations).build(),
      type: input.type,
      name: 'cfg',
      sourceAnnotations: {},
      keys: annotationKeys,
      autoReloadAll: false,
    }).result;
  };

  it.each<[string, string[], SourceType, Record<string, string>, DecisionResult]>([
    [
      'default ConfigMap exclude key excludes',
      [],
      'CONFIGMAP',
      {
        'reloader.stakater.com/auto': 'true',
        'configmaps.exclude.reloader.stakater.com/reload': 'cfg',
      },
      'NO',
    ],
    [
      '--configmap-exclude-annotation moves the key: the default one no longer excludes',
      ['--configmap-exclude-annotation=example.com/cm-exclude'],
      'CONFIGMAP',
      {
        'reloader.stakater.com/auto': 'true',
        'configmaps.exclude.reloader.stakater.com/reload': 'cfg',
      },
      'AUTO',
    ],
    [
      '--configmap-exclude-annotation: the new key excludes',
      ['--configmap-exclude-annotation=example.com/cm-exclude'],
      'CONFIGMAP',
      { 'reloader.stakater.com/auto': 'true', 'example.com/cm-exclude': 'cfg' },
      'NO',
    ],
    [
      '--secret-exclude-annotation',
      ['--secret-exclude-annotation=example.com/secret-exclude'],
      'SECRET',
      { 'reloader.stakater.com/auto': 'true', 'example.com/secret-exclude': 'cfg' },
      'NO',
    ],
    [
      '--secretproviderclass-annotation',
      ['--secretproviderclass-annotation=example.com/spc'],
      'SECRETPROVIDERCLASS',
      { 'example.com/spc': 'cfg' },
      'LIST',
    ],
    [
      '--secretproviderclass-auto-annotation',
      ['--secretproviderclass-auto-annotation=example.com/spc-auto'],
      'SECRETPROVIDERCLASS',
      { 'example.com/spc-auto': 'true' },
      'AUTO',
    ],
    [
      '--secretproviderclass-exclude-annotation',
      ['--secretproviderclass-exclude-annotation=example.com/spc-exclude'],
      'SECRETPROVIDERCLASS',
      { 'reloader.stakater.com/auto': 'true', 'example.com/spc-exclude': 'cfg' },
      'NO',
    ],
  ])('%s', async (_name, argv, type, annotations, expected) => {
    expect(await decideWith(argv, { type, annotations })).toBe(expected);
  });
});
