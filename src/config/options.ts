/**
 * Every option of kreload, one row each (§12). The rows drive the command-line parser, the env binding,
 * the help text, docs/configuration.md and the Helm chart check; nothing else lists flags.
 */
import type { IgnorablePlural } from '../rollout/kinds.ts';

/**
 * How a raw string is parsed and validated:
 * - `bool`: Go `ParseBool` set; a bare flag means true (§12.3).
 * - `string-bool`: exactly `true` or `false`; a bare flag means true (D31).
 * - `list`: CSV per occurrence, occurrences append; items checked against `choices` or `items`.
 * - `selector`: a list whose elements are normalised and joined into one label selector (§11 item 2).
 * - `duration`: Go duration (§12.4), never negative; `min` and `max` in milliseconds.
 * - `int`: decimal integer within `min`…`max`.
 * - `enum`: one of `choices`.
 * - `annotation-key`: qualified annotation key (§12.3).
 * - `url`: absolute `http(s)` URL; empty means unset.
 * - `path`: a file path; empty means unset.
 * - `address`: `[host]:port`.
 * - `optional-address`: `[host]:port`; empty means unset.
 * - `text`: any string; empty means unset.
 * - `port`: 1–65535.
 * - `namespace`: a DNS-1123 label; empty means unset.
 * - `name`: a DNS-1123 subdomain (an object name).
 * - `count-or-percent`: a whole number (`3`) or a percentage (`10%`), each within `min`…`max`.
 */
export type OptionType =
  | 'bool'
  | 'string-bool'
  | 'list'
  | 'selector'
  | 'duration'
  | 'int'
  | 'enum'
  | 'annotation-key'
  | 'url'
  | 'path'
  | 'address'
  | 'optional-address'
  | 'text'
  | 'port'
  | 'namespace'
  | 'name'
  | 'count-or-percent';

export type EnvName = `KRELOAD_${string}`;

export interface OptionSpec {
  /** camelCase of the flag. Also the key of the value in `Options` when it is stored as-is. */
  readonly name: string;
  /** Exact spelling, including the capitals of `--is-Argo-Rollouts`. */
  readonly flag: `--${string}`;
  /** `KRELOAD_` + the flag without dashes, upper-cased, `-` turned into `_` (§12.5). */
  readonly env: EnvName;
  readonly type: OptionType;
  /** As written on a command line; parsed by the same rules as a user's value. */
  readonly default: string;
  /** Shown instead of `default` where the default comes from elsewhere. */
  readonly defaultText?: string;
  readonly help: string;
  /**
   * The Stakater chart value that sets the flag; two values that feed one list flag are written
   * `a / b` (see `helmValuePaths`). Undefined when the chart has no such value.
   */
  readonly helm: string | undefined;
  /** Allowed values of an `enum`, or of each item of a `list`. */
  readonly choices?: readonly string[];
  /** Compare `choices` ignoring case; the value is stored lower-cased. */
  readonly caseInsensitive?: boolean;
  /** Format of each item of a `list`. */
  readonly items?: 'namespace';
  /** Lower bound: an `int`, or a `duration` in milliseconds. */
  readonly min?: number;
  /** Upper bound: an `int`, or a `duration` in milliseconds. */
  readonly max?: number;
}

const HOUR_MS = 3_600_000;
/** The whole hours below 2^31-1 ms, where Node's timers overflow (596h, about 24.8 days). */
const MAX_TIMER_MS = 596 * HOUR_MS;
const DAY_MS = 24 * HOUR_MS;

export const RESOURCE_TYPES = ['configmaps', 'secrets'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** In the documented order; the type keeps it to the kind table's `ignorable` rows. */
export const IGNORABLE_WORKLOAD_TYPES = ['jobs', 'cronjobs'] as const satisfies IgnorablePlural[];
export type IgnorableWorkloadType = (typeof IGNORABLE_WORKLOAD_TYPES)[number];

export const RELOAD_STRATEGIES = ['env-vars', 'annotations'] as const;

/** `--shard-mode`: one leader, or every replica writing its share of namespaces (docs/adr/0051). */
export const SHARD_MODES = ['leader-election', 'active-active'] as const;
export type ShardMode = (typeof SHARD_MODES)[number];

/** `--baseline-store`: where first-sight baselines live (docs/adr/0046). */
export const BASELINE_STORES = ['workload', 'namespace'] as const;
export type BaselineStoreMode = (typeof BASELINE_STORES)[number];

export const LOG_FORMATS = ['', 'text', 'json'] as const;

/** `--is-openshift`: Reloader 2.0's tri-state; empty means auto. */
export const OPENSHIFT_MODES = ['', 'auto', 'true', 'false'] as const;

/** `--alert-sink`: empty keeps `ALERT_SINK`; `raw` is Reloader 2.0's name for `webhook`. */
export const ALERT_SINK_NAMES = ['', 'slack', 'teams', 'gchat', 'webhook', 'raw'] as const;

export const LOG_LEVEL_NAMES = [
  'trace',
  'debug',
  'info',
  'warning',
  'warn',
  'error',
  'fatal',
  'panic',
] as const;
export type LogLevelName = (typeof LOG_LEVEL_NAMES)[number];

export const OPTION_SPECS = [
  // §12.1: flags that Reloader also has.
  {
    name: 'autoReloadAll',
    flag: '--auto-reload-all',
    env: 'KRELOAD_AUTO_RELOAD_ALL',
    type: 'bool',
    default: 'false',
    help: 'Reload every workload that references a changed source, unless it opts out (auto: "false").',
    helm: 'reloader.autoReloadAll',
  },
  {
    name: 'autoAnnotation',
    flag: '--auto-annotation',
    env: 'KRELOAD_AUTO_ANNOTATION',
    type: 'annotation-key',
    default: 'reloader.stakater.com/auto',
    help: 'Annotation that turns on automatic reload for all source types.',
    helm: 'reloader.custom_annotations.auto',
  },
  {
    name: 'configmapAutoAnnotation',
    flag: '--configmap-auto-annotation',
    env: 'KRELOAD_CONFIGMAP_AUTO_ANNOTATION',
    type: 'annotation-key',
    default: 'configmap.reloader.stakater.com/auto',
    help: 'Annotation that turns on automatic reload for ConfigMaps only.',
    helm: 'reloader.custom_annotations.configmap_auto',
  },
  {
    name: 'secretAutoAnnotation',
    flag: '--secret-auto-annotation',
    env: 'KRELOAD_SECRET_AUTO_ANNOTATION',
    type: 'annotation-key',
    default: 'secret.reloader.stakater.com/auto',
    help: 'Annotation that turns on automatic reload for Secrets only.',
    helm: 'reloader.custom_annotations.secret_auto',
  },
  {
    name: 'configmapAnnotation',
    flag: '--configmap-annotation',
    env: 'KRELOAD_CONFIGMAP_ANNOTATION',
    type: 'annotation-key',
    default: 'configmap.reloader.stakater.com/reload',
    help: 'Annotation that lists the ConfigMaps a workload reloads on.',
    helm: 'reloader.custom_annotations.configmap',
  },
  {
    name: 'secretAnnotation',
    flag: '--secret-annotation',
    env: 'KRELOAD_SECRET_ANNOTATION',
    type: 'annotation-key',
    default: 'secret.reloader.stakater.com/reload',
    help: 'Annotation that lists the Secrets a workload reloads on.',
    helm: 'reloader.custom_annotations.secret',
  },
  {
    name: 'autoSearchAnnotation',
    flag: '--auto-search-annotation',
    env: 'KRELOAD_AUTO_SEARCH_ANNOTATION',
    type: 'annotation-key',
    default: 'reloader.stakater.com/search',
    help: 'Workload annotation that reloads on referenced sources carrying the match annotation.',
    helm: 'reloader.custom_annotations.search',
  },
  {
    name: 'searchMatchAnnotation',
    flag: '--search-match-annotation',
    env: 'KRELOAD_SEARCH_MATCH_ANNOTATION',
    type: 'annotation-key',
    default: 'reloader.stakater.com/match',
    help: 'Source annotation that makes a source count for workloads with the search annotation.',
    helm: 'reloader.custom_annotations.match',
  },
  {
    name: 'ignoreAnnotation',
    flag: '--ignore-annotation',
    env: 'KRELOAD_IGNORE_ANNOTATION',
    type: 'annotation-key',
    default: 'reloader.stakater.com/ignore',
    help: 'Source annotation that makes kreload ignore changes to that source.',
    helm: 'reloader.custom_annotations.ignore',
  },
  {
    name: 'pauseDeploymentAnnotation',
    flag: '--pause-deployment-annotation',
    env: 'KRELOAD_PAUSE_DEPLOYMENT_ANNOTATION',
    type: 'annotation-key',
    default: 'deployment.reloader.stakater.com/pause-period',
    help: 'Deployment annotation holding the pause period after a roll.',
    helm: 'reloader.custom_annotations.pausePeriod',
  },
  {
    name: 'pauseDeploymentTimeAnnotation',
    flag: '--pause-deployment-time-annotation',
    env: 'KRELOAD_PAUSE_DEPLOYMENT_TIME_ANNOTATION',
    type: 'annotation-key',
    default: 'deployment.reloader.stakater.com/paused-at',
    help: 'Deployment annotation where kreload records when it paused the Deployment.',
    helm: 'reloader.custom_annotations.pauseTime',
  },
  {
    name: 'configmapExcludeAnnotation',
    flag: '--configmap-exclude-annotation',
    env: 'KRELOAD_CONFIGMAP_EXCLUDE_ANNOTATION',
    type: 'annotation-key',
    default: 'configmaps.exclude.reloader.stakater.com/reload',
    help: 'Workload annotation naming ConfigMaps that never roll it, even under auto.',
    helm: 'reloader.custom_annotations.configmap_exclude',
  },
  {
    name: 'secretExcludeAnnotation',
    flag: '--secret-exclude-annotation',
    env: 'KRELOAD_SECRET_EXCLUDE_ANNOTATION',
    type: 'annotation-key',
    default: 'secrets.exclude.reloader.stakater.com/reload',
    help: 'Workload annotation naming Secrets that never roll it, even under auto.',
    helm: 'reloader.custom_annotations.secret_exclude',
  },
  {
    name: 'secretproviderclassAnnotation',
    flag: '--secretproviderclass-annotation',
    env: 'KRELOAD_SECRETPROVIDERCLASS_ANNOTATION',
    type: 'annotation-key',
    default: 'secretproviderclass.reloader.stakater.com/reload',
    help: 'Annotation that lists the SecretProviderClasses a workload reloads on (with --enable-csi-integration).',
    helm: 'reloader.custom_annotations.secretproviderclass',
  },
  {
    name: 'secretproviderclassAutoAnnotation',
    flag: '--secretproviderclass-auto-annotation',
    env: 'KRELOAD_SECRETPROVIDERCLASS_AUTO_ANNOTATION',
    type: 'annotation-key',
    default: 'secretproviderclass.reloader.stakater.com/auto',
    help: 'Annotation that turns on automatic reload for SecretProviderClasses only.',
    helm: 'reloader.custom_annotations.secretproviderclass_auto',
  },
  {
    name: 'secretproviderclassExcludeAnnotation',
    flag: '--secretproviderclass-exclude-annotation',
    env: 'KRELOAD_SECRETPROVIDERCLASS_EXCLUDE_ANNOTATION',
    type: 'annotation-key',
    default: 'secretproviderclasses.exclude.reloader.stakater.com/reload',
    help: 'Workload annotation naming SecretProviderClasses that never roll it, even under auto.',
    helm: 'reloader.custom_annotations.secretproviderclass_exclude',
  },
  {
    name: 'reloadStrategy',
    flag: '--reload-strategy',
    env: 'KRELOAD_RELOAD_STRATEGY',
    type: 'enum',
    default: 'env-vars',
    help: 'How a roll is written into the pod template: a STAKATER_* env var, or an annotation.',
    helm: 'reloader.reloadStrategy',
    choices: RELOAD_STRATEGIES,
  },
  {
    name: 'reloadOnCreate',
    flag: '--reload-on-create',
    env: 'KRELOAD_RELOAD_ON_CREATE',
    type: 'string-bool',
    default: 'false',
    help: 'Also roll workloads when a source they use is created.',
    helm: 'reloader.reloadOnCreate',
  },
  {
    name: 'reloadOnDelete',
    flag: '--reload-on-delete',
    env: 'KRELOAD_RELOAD_ON_DELETE',
    type: 'string-bool',
    default: 'false',
    help: 'Also roll workloads when a source they use is deleted.',
    helm: 'reloader.reloadOnDelete',
  },
  {
    name: 'isArgoRollouts',
    flag: '--is-Argo-Rollouts',
    env: 'KRELOAD_IS_ARGO_ROLLOUTS',
    type: 'string-bool',
    default: 'false',
    help: 'Watch and reload Argo Rollouts (when their API is served).',
    helm: 'reloader.isArgoRollouts',
  },
  {
    name: 'isOpenshift',
    flag: '--is-openshift',
    env: 'KRELOAD_IS_OPENSHIFT',
    type: 'enum',
    default: 'auto',
    help: 'DeploymentConfigs: auto (or empty) and true watch them when their API is served, false never does.',
    helm: 'reloader.isOpenshift',
    choices: OPENSHIFT_MODES,
    caseInsensitive: true,
  },
  {
    name: 'customWorkloadKinds',
    flag: '--custom-workload-kinds',
    env: 'KRELOAD_CUSTOM_WORKLOAD_KINDS',
    type: 'text',
    default: '',
    help: 'Workload kinds of custom resources to roll like the built-in ones: a JSON list (docs/custom-kinds.md), or the path of a file holding it.',
    helm: 'reloader.customWorkloadKinds',
  },
  {
    name: 'enableCsiIntegration',
    flag: '--enable-csi-integration',
    env: 'KRELOAD_ENABLE_CSI_INTEGRATION',
    type: 'bool',
    default: 'false',
    help: 'Watch Secrets Store CSI driver objects and reload on secret rotation.',
    helm: 'reloader.enableCSIIntegration',
  },
  {
    name: 'enableReloadPolicies',
    flag: '--enable-reload-policies',
    env: 'KRELOAD_ENABLE_RELOAD_POLICIES',
    type: 'bool',
    default: 'false',
    help: 'Watch ReloadPolicy objects (kreload.io/v1alpha1) and roll the workloads they bind; keeps source and workload labels for their selectors.',
    helm: 'reloader.enableReloadPolicies',
  },
  {
    name: 'syncAfterRestart',
    flag: '--sync-after-restart',
    env: 'KRELOAD_SYNC_AFTER_RESTART',
    type: 'bool',
    default: 'false',
    help: 'Accepted for compatibility and ignored: restart-safe reconciliation is always on.',
    helm: 'reloader.syncAfterRestart',
  },
  {
    name: 'resourcesToIgnore',
    flag: '--resources-to-ignore',
    env: 'KRELOAD_RESOURCES_TO_IGNORE',
    type: 'list',
    default: '',
    help: 'Source type not to watch: configmaps or secrets (not both).',
    helm: 'reloader.ignoreSecrets / reloader.ignoreConfigMaps',
    choices: RESOURCE_TYPES,
    caseInsensitive: true,
  },
  {
    name: 'ignoredWorkloadTypes',
    flag: '--ignored-workload-types',
    env: 'KRELOAD_IGNORED_WORKLOAD_TYPES',
    type: 'list',
    default: '',
    help: 'Workload kinds not to watch: jobs, cronjobs or both.',
    helm: 'reloader.ignoreJobs / reloader.ignoreCronJobs',
    choices: IGNORABLE_WORKLOAD_TYPES,
  },
  {
    name: 'namespaces',
    flag: '--namespaces',
    env: 'KRELOAD_NAMESPACES',
    type: 'list',
    default: '',
    help: 'Watch only these namespaces (scoped mode).',
    helm: 'reloader.namespaces',
    items: 'namespace',
  },
  {
    name: 'namespacesToIgnore',
    flag: '--namespaces-to-ignore',
    env: 'KRELOAD_NAMESPACES_TO_IGNORE',
    type: 'list',
    default: '',
    help: 'Namespaces to leave alone (global mode only).',
    helm: 'reloader.ignoreNamespaces',
    items: 'namespace',
  },
  {
    name: 'namespaceSelector',
    flag: '--namespace-selector',
    env: 'KRELOAD_NAMESPACE_SELECTOR',
    type: 'selector',
    default: '',
    help: 'Label selector of the namespaces to act in (global mode only); k:v and k:* are accepted.',
    helm: 'reloader.namespaceSelector',
  },
  {
    name: 'resourceLabelSelector',
    flag: '--resource-label-selector',
    env: 'KRELOAD_RESOURCE_LABEL_SELECTOR',
    type: 'selector',
    default: '',
    help: 'Label selector of the ConfigMaps, Secrets and SecretProviderClasses to watch.',
    helm: 'reloader.resourceLabelSelector',
  },
  {
    name: 'webhookUrl',
    flag: '--webhook-url',
    env: 'KRELOAD_WEBHOOK_URL',
    type: 'url',
    default: '',
    help: 'POST source changes to this URL instead of reloading workloads.',
    helm: 'reloader.webhookUrl',
  },
  {
    name: 'alertOnReload',
    flag: '--alert-on-reload',
    env: 'KRELOAD_ALERT_ON_RELOAD',
    type: 'bool',
    default: 'false',
    defaultText: '$ALERT_ON_RELOAD',
    help: 'Send an alert per roll to --alert-webhook-url; overrides ALERT_ON_RELOAD.',
    helm: undefined,
  },
  {
    name: 'alertSink',
    flag: '--alert-sink',
    env: 'KRELOAD_ALERT_SINK',
    type: 'enum',
    default: '',
    defaultText: '$ALERT_SINK',
    help: 'Alert format: slack, teams, gchat, or webhook (plain text; raw is the same); overrides ALERT_SINK.',
    helm: undefined,
    choices: ALERT_SINK_NAMES,
    caseInsensitive: true,
  },
  {
    name: 'alertWebhookUrl',
    flag: '--alert-webhook-url',
    env: 'KRELOAD_ALERT_WEBHOOK_URL',
    type: 'url',
    default: '',
    defaultText: '$ALERT_WEBHOOK_URL',
    help:
      'Where alerts are sent; setting it turns alerts on, as in Reloader 2.0. Overrides ALERT_WEBHOOK_URL, ' +
      'which is safer for a secret URL: a flag shows in the pod spec and the process list.',
    helm: undefined,
  },
  {
    name: 'alertProxy',
    flag: '--alert-proxy',
    env: 'KRELOAD_ALERT_PROXY',
    type: 'url',
    default: '',
    defaultText: '$ALERT_WEBHOOK_PROXY',
    help: 'HTTP(S) proxy for alerts; overrides ALERT_WEBHOOK_PROXY.',
    helm: undefined,
  },
  {
    name: 'alertAdditionalInfo',
    flag: '--alert-additional-info',
    env: 'KRELOAD_ALERT_ADDITIONAL_INFO',
    type: 'text',
    default: '',
    defaultText: '$ALERT_ADDITIONAL_INFO',
    help: 'Text prefixed to every alert (e.g. the cluster name); overrides ALERT_ADDITIONAL_INFO.',
    helm: undefined,
  },
  {
    name: 'alertStructured',
    flag: '--alert-structured',
    env: 'KRELOAD_ALERT_STRUCTURED',
    type: 'bool',
    default: 'false',
    help: 'With the webhook (raw) sink, send one JSON object per roll instead of plain text.',
    helm: undefined,
  },
  {
    name: 'enableHa',
    flag: '--enable-ha',
    env: 'KRELOAD_ENABLE_HA',
    type: 'bool',
    default: 'false',
    help: 'Run several replicas with Lease leader election; needs POD_NAME and POD_NAMESPACE.',
    helm: 'reloader.enableHA',
  },
  {
    name: 'logFormat',
    flag: '--log-format',
    env: 'KRELOAD_LOG_FORMAT',
    type: 'enum',
    default: '',
    defaultText: 'text',
    help: 'Log format: text (logfmt) or json; empty means text.',
    helm: 'reloader.logFormat',
    choices: LOG_FORMATS,
  },
  {
    name: 'logLevel',
    flag: '--log-level',
    env: 'KRELOAD_LOG_LEVEL',
    type: 'enum',
    default: 'info',
    help: 'Lowest level logged, in any case (INFO, Debug); fatal and panic mean error.',
    helm: 'reloader.logLevel',
    choices: LOG_LEVEL_NAMES,
    // Reloader's logrus parses the level case-insensitively, so values files say INFO or Debug.
    caseInsensitive: true,
  },
  {
    name: 'enablePprof',
    flag: '--enable-pprof',
    env: 'KRELOAD_ENABLE_PPROF',
    type: 'bool',
    default: 'false',
    help: 'Serve Node CPU profiles and heap snapshots on --pprof-addr.',
    helm: 'reloader.enablePProf',
  },
  {
    name: 'pprofAddr',
    flag: '--pprof-addr',
    env: 'KRELOAD_PPROF_ADDR',
    type: 'address',
    default: '127.0.0.1:6060',
    help:
      'Address of the profiling listener, [host]:port; loopback unless set (Reloader: :6060). It has no ' +
      'authentication and a heap snapshot holds the ServiceAccount token: do not expose it (docs/security.md).',
    helm: 'reloader.pprofAddr',
  },
  // §12.2: flags only kreload has.
  {
    name: 'syncDelay',
    flag: '--sync-delay',
    env: 'KRELOAD_SYNC_DELAY',
    type: 'duration',
    default: '2s',
    help: 'Quiet time after the last change before a workload is rolled (per-workload debounce); at most 1h.',
    helm: 'reloader.syncDelay',
    min: 0,
    max: HOUR_MS,
  },
  {
    name: 'syncMaxDelay',
    flag: '--sync-max-delay',
    env: 'KRELOAD_SYNC_MAX_DELAY',
    type: 'duration',
    default: '30s',
    help: 'Longest time continuing changes can postpone a roll; at least --sync-delay, at most 24h.',
    helm: 'reloader.syncMaxDelay',
    min: 0,
    max: DAY_MS,
  },
  {
    name: 'workerThreads',
    flag: '--worker-threads',
    env: 'KRELOAD_WORKER_THREADS',
    type: 'int',
    default: '3',
    help: 'Number of workloads reconciled and written concurrently.',
    helm: 'reloader.workerThreads',
    min: 1,
    max: 64,
  },
  {
    name: 'resyncPeriod',
    flag: '--resync-period',
    env: 'KRELOAD_RESYNC_PERIOD',
    type: 'duration',
    default: '10m',
    help: 'Period of the full reconcile and API re-discovery; 0 disables it, otherwise 30s to 24h.',
    helm: 'reloader.resyncPeriod',
    min: 0,
    max: DAY_MS,
  },
  {
    name: 'kubeconfig',
    flag: '--kubeconfig',
    env: 'KRELOAD_KUBECONFIG',
    type: 'path',
    default: '',
    help: 'Kubeconfig file to use; otherwise $KUBECONFIG, ~/.kube/config, then in-cluster.',
    helm: undefined,
  },
  {
    name: 'metricsPort',
    flag: '--metrics-port',
    env: 'KRELOAD_METRICS_PORT',
    type: 'port',
    default: '9090',
    help: 'Port of the HTTP listener for /metrics, /live, /healthz and /readyz (all interfaces).',
    helm: 'reloader.metricsPort',
  },
  {
    name: 'metricsAddr',
    flag: '--metrics-addr',
    env: 'KRELOAD_METRICS_ADDR',
    type: 'optional-address',
    default: '',
    defaultText: ':<--metrics-port>',
    help: 'Address of that listener, [host]:port (Reloader 2.0); replaces --metrics-port, which must then be unset or equal.',
    helm: undefined,
  },
  {
    name: 'healthAddr',
    flag: '--health-addr',
    env: 'KRELOAD_HEALTH_ADDR',
    type: 'optional-address',
    default: '',
    defaultText: 'the metrics listener',
    help: 'Also serve /live, /healthz and /readyz on this [host]:port (Reloader 2.0 probes :8080).',
    helm: undefined,
  },
  {
    name: 'enableDebugExplain',
    flag: '--enable-debug-explain',
    env: 'KRELOAD_ENABLE_DEBUG_EXPLAIN',
    type: 'bool',
    default: 'false',
    help:
      'Serve GET /debug/explain on the metrics port: kreload explain from the caches, with source ' +
      'names and hashes. The port has no authentication: enable it only where the port is ' +
      'restricted (docs/security.md).',
    helm: 'reloader.enableDebugExplain',
  },
  {
    name: 'includeHelmSecrets',
    flag: '--include-helm-secrets',
    env: 'KRELOAD_INCLUDE_HELM_SECRETS',
    type: 'bool',
    default: 'false',
    help: 'Also watch Helm release and service-account-token Secrets.',
    helm: 'reloader.includeHelmSecrets',
  },
  {
    name: 'enableConfigRevisions',
    flag: '--enable-config-revisions',
    env: 'KRELOAD_ENABLE_CONFIG_REVISIONS',
    type: 'bool',
    default: 'false',
    help:
      'Honour kreload.io/config-revisions: snapshot the sources of opted-in Deployments, ' +
      'StatefulSets and DaemonSets at each roll so rollout undo restores their configuration.',
    helm: 'reloader.enableConfigRevisions',
  },
  {
    name: 'maxConcurrentRollouts',
    flag: '--max-concurrent-rollouts',
    env: 'KRELOAD_MAX_CONCURRENT_ROLLOUTS',
    type: 'int',
    default: '0',
    help: 'Most rollouts kreload keeps in flight cluster-wide, from its PATCH until complete or failed; 0 means no limit.',
    helm: 'reloader.maxConcurrentRollouts',
    min: 0,
    max: 100_000,
  },
  {
    name: 'maxConcurrentRolloutsPerNamespace',
    flag: '--max-concurrent-rollouts-per-namespace',
    env: 'KRELOAD_MAX_CONCURRENT_ROLLOUTS_PER_NAMESPACE',
    type: 'int',
    default: '0',
    help: 'Most rollouts kreload keeps in flight in one namespace; 0 means no limit.',
    helm: 'reloader.maxConcurrentRolloutsPerNamespace',
    min: 0,
    max: 100_000,
  },
  {
    name: 'rolloutWaves',
    flag: '--rollout-waves',
    env: 'KRELOAD_ROLLOUT_WAVES',
    type: 'bool',
    default: 'false',
    help:
      'Roll a change that fans out to several workloads in waves: a canary wave, then waves of ' +
      '--max-concurrent-rollouts, each started only when the previous one is complete (docs/safe-rollouts.md).',
    helm: 'reloader.rolloutWaves',
  },
  {
    name: 'canary',
    flag: '--canary',
    env: 'KRELOAD_CANARY',
    type: 'count-or-percent',
    default: '1',
    help: 'Size of the first wave with --rollout-waves: a count (1) or a percentage of the workloads (10%), at least 1.',
    helm: 'reloader.canary',
    min: 1,
    max: 100_000,
  },
  {
    name: 'rolloutDeadline',
    flag: '--rollout-deadline',
    env: 'KRELOAD_ROLLOUT_DEADLINE',
    type: 'duration',
    default: '0s',
    defaultText: "the workload's progressDeadlineSeconds (600s when unset) + 30s",
    help: 'How long a wave member may take to complete after its roll before it fails the wave; 0 uses the default, at most 596h (the timer limit of 2^31-1 ms).',
    helm: 'reloader.rolloutDeadline',
    min: 0,
    max: MAX_TIMER_MS,
  },
  {
    name: 'haltOnFailedRollout',
    flag: '--halt-on-failed-rollout',
    env: 'KRELOAD_HALT_ON_FAILED_ROLLOUT',
    type: 'bool',
    default: 'true',
    help: 'With --rollout-waves, a failed wave member halts the rest of its change until the source changes again or the halt annotation is removed.',
    helm: 'reloader.haltOnFailedRollout',
  },
  {
    name: 'undoFailedRollouts',
    flag: '--undo-failed-rollouts',
    env: 'KRELOAD_UNDO_FAILED_ROLLOUTS',
    type: 'bool',
    default: 'false',
    help: 'With --rollout-waves and --enable-config-revisions, a failed wave member opted in to config revisions is rolled back to the revision before the failed roll, and stays there until the source changes again.',
    helm: 'reloader.undoFailedRollouts',
  },
  {
    name: 'dryRun',
    flag: '--dry-run',
    env: 'KRELOAD_DRY_RUN',
    type: 'bool',
    default: 'false',
    help: 'Log and emit Events for every roll, but never write workloads.',
    helm: 'reloader.dryRun',
  },
  {
    name: 'leaderElectionNamespace',
    flag: '--leader-election-namespace',
    env: 'KRELOAD_LEADER_ELECTION_NAMESPACE',
    type: 'namespace',
    default: '',
    defaultText: '$POD_NAMESPACE',
    help: 'Namespace of the leader-election Lease.',
    helm: 'reloader.leaderElection.namespace',
  },
  {
    name: 'leaderElectionId',
    flag: '--leader-election-id',
    env: 'KRELOAD_LEADER_ELECTION_ID',
    type: 'name',
    default: 'kreload-leader',
    help: 'Name of the leader-election Lease.',
    helm: 'reloader.leaderElection.id',
  },
  {
    name: 'leaderElectionLeaseDuration',
    flag: '--leader-election-lease-duration',
    env: 'KRELOAD_LEADER_ELECTION_LEASE_DURATION',
    type: 'duration',
    default: '15s',
    help: "How long a leader's claim lasts without renewal; whole seconds, above the renew deadline, at most 24h.",
    helm: 'reloader.leaderElection.leaseDuration',
    min: 1000,
    max: DAY_MS,
  },
  {
    name: 'leaderElectionRenewDeadline',
    flag: '--leader-election-renew-deadline',
    env: 'KRELOAD_LEADER_ELECTION_RENEW_DEADLINE',
    type: 'duration',
    default: '10s',
    help: 'How long the leader keeps writing after its last renewal; above 1.2 × the retry period.',
    helm: 'reloader.leaderElection.renewDeadline',
    min: 1,
    max: DAY_MS,
  },
  {
    name: 'leaderElectionRetryPeriod',
    flag: '--leader-election-retry-period',
    env: 'KRELOAD_LEADER_ELECTION_RETRY_PERIOD',
    type: 'duration',
    default: '2s',
    help: 'Pause between two attempts to acquire or renew the Lease.',
    helm: 'reloader.leaderElection.retryPeriod',
    min: 1,
    max: DAY_MS,
  },
  {
    name: 'leaderElectionReleaseOnCancel',
    flag: '--leader-election-release-on-cancel',
    env: 'KRELOAD_LEADER_ELECTION_RELEASE_ON_CANCEL',
    type: 'bool',
    default: 'true',
    help: 'Release the Lease on shutdown so a successor leads at once; false leaves it to expire.',
    helm: 'reloader.leaderElection.releaseOnCancel',
  },
  {
    name: 'shardMode',
    flag: '--shard-mode',
    env: 'KRELOAD_SHARD_MODE',
    type: 'enum',
    default: 'leader-election',
    help:
      'How replicas share the work: leader-election, with --enable-ha one replica writes, the others wait; active-active: every ' +
      "replica writes to its share of the namespaces, fenced by Leases in kreload's namespace " +
      '(implies --enable-ha; docs/ha.md).',
    helm: 'reloader.shardMode',
    choices: SHARD_MODES,
  },
  {
    name: 'shardBuckets',
    flag: '--shard-buckets',
    env: 'KRELOAD_SHARD_BUCKETS',
    type: 'int',
    default: '32',
    help: 'With --shard-mode=active-active, the number of namespace buckets, one Lease each; all replicas must agree.',
    helm: 'reloader.shardBuckets',
    min: 1,
    max: 1024,
  },
  {
    name: 'baselineStore',
    flag: '--baseline-store',
    env: 'KRELOAD_BASELINE_STORE',
    type: 'enum',
    default: 'namespace',
    help:
      "Where the first-sight baseline of a never-rolled workload is kept: namespace (ConfigMaps in kreload's " +
      'own namespace, written in batches: installing kreload writes to no workload; if they are forbidden, ' +
      'kreload logs it and falls back to workload) or workload (a kreload.io/baseline annotation on it); ' +
      'docs/adr/0046-baseline-store.md.',
    helm: 'reloader.baselineStore',
    choices: BASELINE_STORES,
  },
  {
    name: 'enableRestartWindows',
    flag: '--enable-restart-windows',
    env: 'KRELOAD_ENABLE_RESTART_WINDOWS',
    type: 'bool',
    default: 'false',
    help:
      'Honour reloader.stakater.com/restart-window: roll a workload only inside its allowed windows, ' +
      'holding its changes meanwhile; without it a workload with the annotation is held (docs/windows-and-breaker.md).',
    helm: 'reloader.enableRestartWindows',
  },
  {
    name: 'flapMaxChanges',
    flag: '--flap-max-changes',
    env: 'KRELOAD_FLAP_MAX_CHANGES',
    type: 'int',
    default: '0',
    help: 'A source whose content changes more often than this within --flap-period is flapping: its dependents are held until it is quiet for --flap-cool-down; 0 (the default, as Reloader) turns the breaker off; 10 is a good start.',
    helm: 'reloader.flapMaxChanges',
    min: 0,
    max: 10_000,
  },
  {
    name: 'flapPeriod',
    flag: '--flap-period',
    env: 'KRELOAD_FLAP_PERIOD',
    type: 'duration',
    default: '5m',
    help: 'The period in which --flap-max-changes is counted; 1s to 24h.',
    helm: 'reloader.flapPeriod',
    min: 1000,
    max: DAY_MS,
  },
  {
    name: 'flapCoolDown',
    flag: '--flap-cool-down',
    env: 'KRELOAD_FLAP_COOL_DOWN',
    type: 'duration',
    default: '2m',
    help: 'Quiet time after the last change of a flapping source before its dependents roll once with its latest content; 1s to 24h.',
    helm: 'reloader.flapCoolDown',
    min: 1000,
    max: DAY_MS,
  },
] as const satisfies readonly OptionSpec[];

export type OptionSpecRow = (typeof OPTION_SPECS)[number];
export type OptionName = OptionSpecRow['name'];
/** Names of the rows of one type, so a typed reader can only be asked for rows it can parse. */
export type OptionNameOfType<T extends OptionType> = Extract<
  OptionSpecRow,
  { readonly type: T }
>['name'];

/** Flags that print something and exit 0 (§12.2); they have no env binding. */
export const INFO_FLAGS = [
  { name: 'help', flag: '--help', alias: '-h', help: 'Print this help and exit.' },
  { name: 'version', flag: '--version', alias: undefined, help: 'Print the version and exit.' },
] as const;

export interface EnvSpec {
  readonly env: string;
  readonly help: string;
  /** How the chart sets it (a value, or the downward API); undefined when it does not. */
  readonly chart: string | undefined;
}

/** Variables that keep their Reloader meaning (§12.5 item 2); read only from the environment. */
export const ENV_SPECS = [
  {
    env: 'KUBERNETES_NAMESPACE',
    help: 'Watch only this namespace when --namespaces is empty (single-namespace mode).',
    chart: 'reloader.watchGlobally=false (the release namespace)',
  },
  {
    env: 'POD_NAME',
    help: 'Leader-election identity; required with --enable-ha.',
    chart: 'downward API (metadata.name)',
  },
  {
    env: 'POD_NAMESPACE',
    help: 'Default Lease namespace; required with --enable-ha unless --leader-election-namespace is set. Also where Job rolls journal the Job before deleting it (ConfigMap kreload-job-recreations, signed with the key in Secret kreload-job-recreations-key); unset (outside a cluster), the namespace of the kubeconfig context, or default.',
    chart: 'downward API (metadata.namespace)',
  },
  {
    env: 'METRICS_COUNT_BY_NAMESPACE',
    help: '"enabled" exposes reloader_reload_executed_total_by_namespace.',
    chart: 'reloader.enableMetricsByNamespace',
  },
  {
    env: 'ALERT_ON_RELOAD',
    help: '"true" sends an alert per roll (needs ALERT_WEBHOOK_URL).',
    chart: undefined,
  },
  {
    env: 'ALERT_SINK',
    help: 'slack, teams, gchat or webhook (plain text); case-insensitive.',
    chart: undefined,
  },
  { env: 'ALERT_WEBHOOK_URL', help: 'Where alerts are sent.', chart: undefined },
  { env: 'ALERT_WEBHOOK_PROXY', help: 'HTTP(S) proxy for alerts.', chart: undefined },
  { env: 'ALERT_ADDITIONAL_INFO', help: 'Text prefixed to every alert message.', chart: undefined },
  {
    env: 'RELOADER_NAMESPACE',
    help: 'Namespace of the reloader-meta-info ConfigMap; unset means none is written.',
    chart: 'downward API (metadata.namespace)',
  },
  {
    env: 'RELOADER_DEPLOYMENT_NAME',
    help: 'Deployment name recorded in the reloader-meta-info ConfigMap.',
    chart: 'the release name',
  },
  {
    env: 'KUBECONFIG',
    help: 'Kubeconfig file used when --kubeconfig is not set.',
    chart: undefined,
  },
  { env: 'HOME', help: '$HOME/.kube/config is tried after $KUBECONFIG.', chart: undefined },
] as const satisfies readonly EnvSpec[];

/** The chart values of a row; a list flag can be fed by two values (`a / b`). */
export function helmValuePaths(spec: OptionSpec): readonly string[] {
  return spec.helm === undefined ? [] : spec.helm.split(' / ');
}

/** §12.5: `--is-Argo-Rollouts` → `KRELOAD_IS_ARGO_ROLLOUTS`. */
export function envNameForFlag(flag: string): EnvName {
  return `KRELOAD_${flag.replace(/^-+/, '').toUpperCase().replaceAll('-', '_')}`;
}
