/**
 * argv + env → one frozen Options (§12), or a ConfigError listing every problem (§12.6). Pure: the
 * process environment and arguments are parameters, and nothing here touches the cluster or files.
 */
import type { FlapLimits } from '../core/flap-breaker.ts';
import type { AnnotationKeys, ReloadStrategy } from '../core/types.ts';
import { annotationKeysFrom } from '../core/annotations.ts';
import { readFile } from 'node:fs/promises';
import { readCommandLine } from './command-line.ts';
import { CustomKindsError, isInlineKinds, parseCustomKinds } from './custom-kinds.ts';
import type { WorkloadKindRow } from '../rollout/kinds.ts';
import { ConfigError } from './config-error.ts';
import type { ConfigWarning } from './config-warning.ts';
import type { AlertFlags, AlertOptions, KubeconfigSearch } from './env-settings.ts';
import { readEnvSettings } from './env-settings.ts';
import { OptionReader } from './option-reader.ts';
import type {
  BaselineStoreMode,
  IgnorableWorkloadType,
  LogLevelName,
  ResourceType,
  ShardMode,
} from './options.ts';
import {
  ALERT_SINK_NAMES,
  BASELINE_STORES,
  IGNORABLE_WORKLOAD_TYPES,
  LOG_FORMATS,
  OPENSHIFT_MODES,
  LOG_LEVEL_NAMES,
  RELOAD_STRATEGIES,
  RESOURCE_TYPES,
  SHARD_MODES,
} from './options.ts';
import type { RolloutSettings } from '../rollout/waves.ts';
import type { Scope } from './scope.ts';
import { resolveScope } from './scope.ts';
import type { ListenAddress } from './value-parsers.ts';
import { formatDuration } from './value-parsers.ts';

export type { ConfigWarning } from './config-warning.ts';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

export interface LeaderElectionOptions {
  /** `--enable-ha`. */
  readonly enabled: boolean;
  /** `--leader-election-namespace`, else `POD_NAMESPACE`; always set when enabled. */
  readonly namespace: string | undefined;
  /** Lease name, `--leader-election-id`. */
  readonly id: string;
  /** `POD_NAME`; always set when enabled. */
  readonly identity: string | undefined;
  /** Whole seconds, above renewDeadlineMs. */
  readonly leaseDurationMs: number;
  /** Above 1.2 × retryPeriodMs. */
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** Clear the Lease's holder on shutdown (§13.5 item 3); false lets it expire instead. */
  readonly releaseOnCancel: boolean;
}

/** `--shard-mode` and `--shard-buckets` (docs/adr/0051-active-active-sharding.md). */
export interface ShardOptions {
  readonly mode: ShardMode;
  readonly bucketCount: number;
}

/** `--is-openshift`; empty is `auto`. `auto` and `true` watch DeploymentConfigs once served. */
export type OpenshiftMode = 'auto' | 'true' | 'false';

/**
 * The effective configuration. Fields named like an OPTION_SPECS row hold that option's value; grouped
 * fields (annotation keys, scope, leader election, alerts) combine several options and variables.
 * Durations are milliseconds. Plain data, deeply frozen, JSON-serialisable.
 */
export interface Options {
  readonly annotationKeys: AnnotationKeys;
  readonly autoReloadAll: boolean;
  readonly reloadStrategy: ReloadStrategy;
  readonly reloadOnCreate: boolean;
  readonly reloadOnDelete: boolean;
  readonly isArgoRollouts: boolean;
  readonly isOpenshift: OpenshiftMode;
  readonly enableCsiIntegration: boolean;
  readonly enableReloadPolicies: boolean;
  /** `--custom-workload-kinds`: the rows of the configured kinds (docs/custom-kinds.md). */
  readonly customWorkloadKinds: readonly WorkloadKindRow[];
  /** Accepted and ignored (D29); kept so the effective options show it. */
  readonly syncAfterRestart: boolean;
  readonly resourcesToIgnore: readonly ResourceType[];
  readonly ignoredWorkloadTypes: readonly IgnorableWorkloadType[];
  readonly scope: Scope;
  /** Normalised label selector of sources; `''` means none. */
  readonly resourceLabelSelector: string;
  readonly webhookUrl: string | undefined;
  readonly leaderElection: LeaderElectionOptions;
  readonly shard: ShardOptions;
  readonly logFormat: LogFormat;
  /** `warning` is `warn`; `fatal` and `panic` are `error` (§13.9). */
  readonly logLevel: LogLevel;
  readonly enablePprof: boolean;
  readonly pprofAddr: ListenAddress;
  /** Milliseconds. */
  readonly syncDelay: number;
  /** Milliseconds, ≥ syncDelay. */
  readonly syncMaxDelay: number;
  readonly workerThreads: number;
  /** Milliseconds; 0 disables the periodic resync. */
  readonly resyncPeriod: number;
  /** `--kubeconfig`; resolveKubeconfig performs the whole lookup with kubeconfigSearch. */
  readonly kubeconfig: string | undefined;
  readonly kubeconfigSearch: KubeconfigSearch;
  /** Port of the HTTP listener: `--metrics-addr`'s when given, else `--metrics-port`. */
  readonly metricsPort: number;
  /** Host of that listener, from `--metrics-addr`; undefined listens on every interface. */
  readonly metricsHost: string | undefined;
  /** `--health-addr`: a second listener for the probes; undefined when they share the first. */
  readonly healthAddr: ListenAddress | undefined;
  /** GET /debug/explain on the metrics listener (ADR 0031). */
  readonly enableDebugExplain: boolean;
  readonly includeHelmSecrets: boolean;
  readonly dryRun: boolean;
  readonly enableConfigRevisions: boolean;
  /** `--enable-restart-windows` (docs/windows-and-breaker.md). */
  readonly enableRestartWindows: boolean;
  /** `--baseline-store` (docs/adr/0046). */
  readonly baselineStore: BaselineStoreMode;
  /** `--flap-max-changes`, `--flap-period`, `--flap-cool-down`; maxChanges 0: off. */
  readonly flapBreaker: FlapLimits;
  /** The budget and waves of roll admission (docs/safe-rollouts.md). */
  readonly rollouts: RolloutSettings;
  readonly podName: string | undefined;
  readonly podNamespace: string | undefined;
  /** `METRICS_COUNT_BY_NAMESPACE=enabled`. */
  readonly metricsCountByNamespace: boolean;
  readonly alerts: AlertOptions;
  /** `RELOADER_NAMESPACE` and `RELOADER_DEPLOYMENT_NAME` (§13.10). */
  readonly metaInfo: {
    readonly namespace: string | undefined;
    readonly deploymentName: string | undefined;
  };
  readonly warnings: readonly ConfigWarning[];
}

const LOG_LEVELS: Readonly<Record<LogLevelName, LogLevel>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warning: 'warn',
  warn: 'warn',
  error: 'error',
  fatal: 'error',
  panic: 'error',
};

const MIN_RESYNC_PERIOD_MS = 30_000;

function readAnnotationKeys(reader: OptionReader): AnnotationKeys {
  return annotationKeysFrom((row) =>
    row.option === undefined ? row.key : reader.annotationKey(row.option),
  );
}

/** client-go's jitter: a renewal may start up to 1.2 retry periods after the previous one. */
const RETRY_JITTER_FACTOR = 1.2;
const MS_PER_SECOND = 1000;

/**
 * The Lease timings, checked as Reloader checks them (whole-second lease, lease > renew deadline >
 * 1.2 × retry period). The Lease stores whole seconds: a follower judging expiry from a rounded
 * duration could take over while this leader still writes, so a fraction is refused, not rounded.
 */
function readLeaseTimings(
  reader: OptionReader,
): Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'> {
  const leaseDurationMs = reader.duration('leaderElectionLeaseDuration');
  const renewDeadlineMs = reader.duration('leaderElectionRenewDeadline');
  const retryPeriodMs = reader.duration('leaderElectionRetryPeriod');
  const lease = reader.subject('leaderElectionLeaseDuration');
  const renew = reader.subject('leaderElectionRenewDeadline');
  const retry = reader.subject('leaderElectionRetryPeriod');
  const leaseValid = reader.isValid('leaderElectionLeaseDuration');
  const renewValid = reader.isValid('leaderElectionRenewDeadline');
  if (leaseValid && leaseDurationMs % MS_PER_SECOND !== 0) {
    reader.addProblem(
      lease,
      `${formatDuration(leaseDurationMs)} is not a whole number of seconds: the Lease records ` +
        'whole seconds, and a follower reading a rounded duration could lead beside this leader',
    );
  } else if (leaseValid && renewValid && leaseDurationMs <= renewDeadlineMs) {
    reader.addProblem(
      lease,
      `${formatDuration(leaseDurationMs)} must be greater than ${renew} (${formatDuration(renewDeadlineMs)})`,
    );
  }
  if (
    renewValid &&
    reader.isValid('leaderElectionRetryPeriod') &&
    renewDeadlineMs <= RETRY_JITTER_FACTOR * retryPeriodMs
  ) {
    reader.addProblem(
      renew,
      `${formatDuration(renewDeadlineMs)} must be greater than ${String(RETRY_JITTER_FACTOR)} × ${retry} ` +
        `(${formatDuration(retryPeriodMs)}), or a renewal may start after the deadline`,
    );
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/**
 * `--metrics-addr` (Reloader 2.0) names the listener `--metrics-port` (Reloader 1.x charts) only
 * numbers; given both, they must agree. `--health-addr` adds a probe listener on another port.
 */
function readListeners(
  reader: OptionReader,
): Pick<Options, 'metricsPort' | 'metricsHost' | 'healthAddr'> {
  const port = reader.port('metricsPort');
  const addr = reader.optionalAddress('metricsAddr');
  const healthAddr = reader.optionalAddress('healthAddr');
  const explicitPort = reader.origin('metricsPort') !== 'default' && reader.isValid('metricsPort');
  if (addr !== undefined && explicitPort && addr.port !== port) {
    reader.addProblem(
      reader.subject('metricsAddr'),
      `port ${String(addr.port)} differs from ${reader.subject('metricsPort')} (${String(port)}); set one of them`,
    );
  }
  const metricsPort = addr?.port ?? port;
  if (healthAddr?.port === metricsPort) {
    reader.addProblem(
      reader.subject('healthAddr'),
      `port ${String(metricsPort)} is the metrics listener's, which serves the probes already; leave it unset`,
    );
  }
  return { metricsPort, metricsHost: addr?.host, healthAddr };
}

function readOpenshiftMode(reader: OptionReader): OpenshiftMode {
  const mode = reader.choice('isOpenshift', OPENSHIFT_MODES);
  return mode === '' ? 'auto' : mode;
}

/** The `--alert-*` flags that were given; undefined fields fall back to the `ALERT_*` variables. */
function readAlertFlags(reader: OptionReader): AlertFlags {
  const given = (name: 'alertOnReload' | 'alertSink'): boolean => reader.origin(name) !== 'default';
  const sink = reader.choice('alertSink', ALERT_SINK_NAMES);
  return {
    onReload: given('alertOnReload') ? reader.bool('alertOnReload') : undefined,
    sink: given('alertSink') && sink !== '' ? sink : undefined,
    webhookUrl: reader.url('alertWebhookUrl'),
    proxy: reader.url('alertProxy'),
    additionalInfo: reader.text('alertAdditionalInfo'),
    structured: reader.bool('alertStructured'),
  };
}

function readRollouts(reader: OptionReader): RolloutSettings {
  const deadlineMs = reader.duration('rolloutDeadline');
  return {
    maxConcurrent: reader.int('maxConcurrentRollouts'),
    maxPerNamespace: reader.int('maxConcurrentRolloutsPerNamespace'),
    waves: reader.bool('rolloutWaves'),
    canary: reader.countOrPercent('canary'),
    deadlineMs: deadlineMs === 0 ? undefined : deadlineMs,
    haltOnFailure: reader.bool('haltOnFailedRollout'),
    undoOnFailure: reader.bool('undoFailedRollouts'),
  };
}

function readDebounce(
  reader: OptionReader,
): Pick<Options, 'syncDelay' | 'syncMaxDelay' | 'resyncPeriod'> {
  const syncDelay = reader.duration('syncDelay');
  const syncMaxDelay = reader.duration('syncMaxDelay');
  const resyncPeriod = reader.duration('resyncPeriod');
  if (reader.isValid('syncDelay') && reader.isValid('syncMaxDelay') && syncMaxDelay < syncDelay) {
    reader.addProblem(
      reader.subject('syncMaxDelay'),
      `${formatDuration(syncMaxDelay)} is less than ${reader.subject('syncDelay')} (${formatDuration(syncDelay)})`,
    );
  }
  if (reader.isValid('resyncPeriod') && resyncPeriod !== 0 && resyncPeriod < MIN_RESYNC_PERIOD_MS) {
    reader.addProblem(
      reader.subject('resyncPeriod'),
      `${formatDuration(resyncPeriod)} is too short: use 0 (disabled) or at least 30s`,
    );
  }
  return { syncDelay, syncMaxDelay, resyncPeriod };
}

function readResourcesToIgnore(reader: OptionReader): ResourceType[] {
  const resources = reader.choiceList('resourcesToIgnore', RESOURCE_TYPES);
  if (resources.length === RESOURCE_TYPES.length) {
    reader.addProblem(
      reader.subject('resourcesToIgnore'),
      'cannot ignore both configmaps and secrets',
    );
  }
  return resources;
}

function readLeaderElection(
  reader: OptionReader,
  pod: { podName: string | undefined; podNamespace: string | undefined },
): LeaderElectionOptions {
  // Active-active is HA: every replica needs its identity and the Leases' namespace.
  const enabled =
    reader.bool('enableHa') || reader.choice('shardMode', SHARD_MODES) === 'active-active';
  const namespace = reader.namespace('leaderElectionNamespace') ?? pod.podNamespace;
  if (enabled && pod.podName === undefined) {
    reader.addProblem(
      'POD_NAME',
      `required with ${reader.subject('enableHa')} (the leader-election identity)`,
    );
  }
  if (enabled && namespace === undefined && reader.isValid('leaderElectionNamespace')) {
    reader.addProblem(
      reader.subject('leaderElectionNamespace'),
      `required with ${reader.subject('enableHa')}: set it or POD_NAMESPACE`,
    );
  }
  return {
    enabled,
    namespace,
    id: reader.objectName('leaderElectionId'),
    identity: pod.podName,
    ...readLeaseTimings(reader),
    releaseOnCancel: reader.bool('leaderElectionReleaseOnCancel'),
  };
}

function readWebhook(reader: OptionReader, dryRun: boolean): string | undefined {
  const webhookUrl = reader.url('webhookUrl');
  if (dryRun && webhookUrl !== undefined) {
    reader.addProblem(
      reader.subject('dryRun'),
      `cannot be combined with ${reader.subject('webhookUrl')}`,
    );
  }
  return webhookUrl;
}

function optionWarnings(
  reader: OptionReader,
  options: { syncAfterRestart: boolean; webhookUrl: string | undefined },
): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  if (options.syncAfterRestart) {
    warnings.push({
      level: 'info',
      subject: reader.subject('syncAfterRestart'),
      message: 'ignored: restart-safe reconciliation is always on',
    });
  }
  if (options.webhookUrl !== undefined) {
    warnings.push({
      level: 'warn',
      subject: reader.subject('webhookUrl'),
      message: 'webhook mode: changes are posted to the webhook and no workload is reloaded',
    });
  }
  return warnings;
}

/** Inline JSON or a file of it; every problem is reported under the flag (§12.6). */
async function readCustomWorkloadKinds(reader: OptionReader): Promise<readonly WorkloadKindRow[]> {
  const value = reader.text('customWorkloadKinds');
  if (value === undefined) return [];
  const subject = reader.subject('customWorkloadKinds');
  let text = value;
  if (!isInlineKinds(value)) {
    try {
      text = await readFile(value, 'utf8');
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      reader.addProblem(subject, `cannot read "${value}": ${why}`);
      return [];
    }
  }
  try {
    return parseCustomKinds(text);
  } catch (error) {
    if (!(error instanceof CustomKindsError)) throw error;
    for (const problem of error.problems) reader.addProblem(subject, problem);
    return [];
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Precedence per option: command line, then `KRELOAD_*` env, then default (§12.5). Throws ConfigError
 * with every problem, in command-line, table, cross-check and environment order.
 */
export async function parseOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<Options> {
  const commandLine = await readCommandLine(argv);
  const reader = new OptionReader({ commandLine: commandLine.values, env });
  const envReport = readEnvSettings(env, readAlertFlags(reader));
  const { settings } = envReport;

  const namespaces = reader.namespaceList('namespaces');
  const namespacesToIgnore = reader.namespaceList('namespacesToIgnore');
  const namespaceSelector = reader.selector('namespaceSelector');
  const { scope, warnings: scopeWarnings } = resolveScope({
    namespaces,
    namespacesToIgnore,
    namespaceSelector,
    kubernetesNamespace: settings.kubernetesNamespace,
    subjects: {
      namespaces: reader.subject('namespaces'),
      namespacesToIgnore: reader.subject('namespacesToIgnore'),
      namespaceSelector: reader.subject('namespaceSelector'),
    },
  });
  const dryRun = reader.bool('dryRun');
  const syncAfterRestart = reader.bool('syncAfterRestart');
  const webhookUrl = readWebhook(reader, dryRun);

  const options: Options = {
    annotationKeys: readAnnotationKeys(reader),
    autoReloadAll: reader.bool('autoReloadAll'),
    reloadStrategy: reader.choice('reloadStrategy', RELOAD_STRATEGIES),
    reloadOnCreate: reader.stringBool('reloadOnCreate'),
    reloadOnDelete: reader.stringBool('reloadOnDelete'),
    isArgoRollouts: reader.stringBool('isArgoRollouts'),
    isOpenshift: readOpenshiftMode(reader),
    enableCsiIntegration: reader.bool('enableCsiIntegration'),
    enableReloadPolicies: reader.bool('enableReloadPolicies'),
    customWorkloadKinds: await readCustomWorkloadKinds(reader),
    syncAfterRestart,
    resourcesToIgnore: readResourcesToIgnore(reader),
    ignoredWorkloadTypes: reader.choiceList('ignoredWorkloadTypes', IGNORABLE_WORKLOAD_TYPES),
    scope,
    resourceLabelSelector: reader.selector('resourceLabelSelector'),
    webhookUrl,
    leaderElection: readLeaderElection(reader, settings),
    shard: {
      mode: reader.choice('shardMode', SHARD_MODES),
      bucketCount: reader.int('shardBuckets'),
    },
    logFormat: reader.choice('logFormat', LOG_FORMATS) === 'json' ? 'json' : 'text',
    logLevel: LOG_LEVELS[reader.choice('logLevel', LOG_LEVEL_NAMES)],
    enablePprof: reader.bool('enablePprof'),
    pprofAddr: reader.address('pprofAddr'),
    ...readDebounce(reader),
    workerThreads: reader.int('workerThreads'),
    kubeconfig: reader.path('kubeconfig'),
    kubeconfigSearch: settings.kubeconfigSearch,
    ...readListeners(reader),
    enableDebugExplain: reader.bool('enableDebugExplain'),
    includeHelmSecrets: reader.bool('includeHelmSecrets'),
    dryRun,
    enableConfigRevisions: reader.bool('enableConfigRevisions'),
    enableRestartWindows: reader.bool('enableRestartWindows'),
    baselineStore: reader.choice('baselineStore', BASELINE_STORES),
    flapBreaker: {
      maxChanges: reader.int('flapMaxChanges'),
      periodMs: reader.duration('flapPeriod'),
      coolDownMs: reader.duration('flapCoolDown'),
    },
    rollouts: readRollouts(reader),
    podName: settings.podName,
    podNamespace: settings.podNamespace,
    metricsCountByNamespace: settings.metricsCountByNamespace,
    alerts: settings.alerts,
    metaInfo: { namespace: settings.metaInfoNamespace, deploymentName: settings.deploymentName },
    warnings: [
      ...scopeWarnings,
      ...optionWarnings(reader, { syncAfterRestart, webhookUrl }),
      ...envReport.warnings,
    ],
  };

  const problems = [...commandLine.problems, ...reader.problems, ...envReport.problems];
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(options);
}
