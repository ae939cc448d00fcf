/**
 * Settings read only from the environment, with their Reloader meaning (§12.5 item 2, §13.6, §13.10),
 * and the check for unknown `KRELOAD_*` variables.
 */
import type { ConfigWarning } from './config-warning.ts';
import { checkDnsLabel } from './k8s-names.ts';
import { OPTION_SPECS } from './options.ts';
import { TEST_FAILPOINT_VARIABLE } from './test-failpoint.ts';
import { isChoice, parseUrlValue } from './value-parsers.ts';

export const ALERT_SINKS = ['slack', 'teams', 'gchat', 'webhook'] as const;
export type AlertSink = (typeof ALERT_SINKS)[number];

export interface AlertOptions {
  /** `ALERT_ON_RELOAD` is exactly `true` and `ALERT_WEBHOOK_URL` is set. */
  readonly enabled: boolean;
  /** `ALERT_SINK` lower-cased and trimmed; empty or unknown sinks send plain text (`webhook`). */
  readonly sink: AlertSink;
  /** Trimmed; undefined when alerts are disabled. A secret-bearing URL: log it only through redactUrl. */
  readonly webhookUrl: string | undefined;
  readonly proxy: string | undefined;
  /** Prefix of every message (`<info> : `); undefined when unset. */
  readonly additionalInfo: string | undefined;
  /** `--alert-structured`: the webhook sink posts one JSON object per roll instead of text. */
  readonly structured: boolean;
}

/**
 * The `--alert-*` flags (Reloader 2.0), each undefined when neither it nor its `KRELOAD_*` variable
 * was given; a given flag wins over its `ALERT_*` variable.
 */
export interface AlertFlags {
  readonly onReload: boolean | undefined;
  /** Lower-cased; `raw` is Reloader 2.0's name of the plain-text webhook sink. */
  readonly sink: string | undefined;
  /** Already validated as an http(s) URL. */
  readonly webhookUrl: string | undefined;
  readonly proxy: string | undefined;
  readonly additionalInfo: string | undefined;
  readonly structured: boolean;
}

const NO_ALERT_FLAGS: AlertFlags = {
  onReload: undefined,
  sink: undefined,
  webhookUrl: undefined,
  proxy: undefined,
  additionalInfo: undefined,
  structured: false,
};

export interface EnvSettings {
  readonly kubernetesNamespace: string | undefined;
  readonly podName: string | undefined;
  readonly podNamespace: string | undefined;
  readonly metricsCountByNamespace: boolean;
  readonly alerts: AlertOptions;
  /** `RELOADER_NAMESPACE`: where the meta-info ConfigMap goes; undefined means none is written. */
  readonly metaInfoNamespace: string | undefined;
  readonly deploymentName: string | undefined;
  readonly kubeconfigSearch: KubeconfigSearch;
}

/** What the kubeconfig lookup reads from the environment (§12.5). */
export interface KubeconfigSearch {
  /** `$KUBECONFIG`. */
  readonly kubeconfigVar: string | undefined;
  /** `$HOME`. */
  readonly home: string | undefined;
  /** `$KUBERNETES_SERVICE_HOST`: set by the kubelet in every pod. */
  readonly serviceHost: string | undefined;
}

export interface EnvReport {
  readonly settings: EnvSettings;
  readonly problems: readonly string[];
  readonly warnings: readonly ConfigWarning[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** An empty value counts as unset (§12.5). */
function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

const DISABLED_ALERTS: AlertOptions = {
  enabled: false,
  sink: 'webhook',
  webhookUrl: undefined,
  proxy: undefined,
  additionalInfo: undefined,
  structured: false,
};

interface Findings {
  readonly problems: string[];
  readonly warnings: ConfigWarning[];
}

/** Empty or unknown sinks send plain text, as Reloader does; unknown ones are worth a warning. */
function readSink(env: Env, flags: AlertFlags, findings: Findings): AlertSink {
  const sink = flags.sink ?? env.ALERT_SINK?.trim().toLowerCase() ?? '';
  if (isChoice(ALERT_SINKS, sink)) return sink;
  if (sink === 'raw') return 'webhook';
  if (sink !== '') {
    findings.warnings.push({
      level: 'warn',
      subject: 'ALERT_SINK',
      message: `unknown sink "${sink}"; alerts are sent as plain text`,
    });
  }
  return 'webhook';
}

function readAlertUrl(env: Env, name: string, findings: Findings): string | undefined {
  const url = parseUrlValue(env[name]?.trim() ?? '');
  if (url.ok) return url.value;
  findings.problems.push(`${name}: ${url.problem}`);
  return undefined;
}

/**
 * Alerts are on with `ALERT_ON_RELOAD=true` or `--alert-on-reload`, and, as in Reloader 2.0, whenever
 * `--alert-webhook-url` is given; `--alert-on-reload=false` turns them off whatever the env says.
 */
function alertsRequested(env: Env, flags: AlertFlags): boolean {
  if (flags.onReload !== undefined) return flags.onReload;
  return env.ALERT_ON_RELOAD === 'true' || flags.webhookUrl !== undefined;
}

function readAlerts(env: Env, flags: AlertFlags, findings: Findings): AlertOptions {
  if (!alertsRequested(env, flags)) return DISABLED_ALERTS;
  if (flags.webhookUrl === undefined && (env.ALERT_WEBHOOK_URL?.trim() ?? '') === '') {
    findings.warnings.push({
      level: 'warn',
      subject: flags.onReload === true ? '--alert-on-reload' : 'ALERT_ON_RELOAD',
      message: 'is true but ALERT_WEBHOOK_URL is empty; alerts are disabled',
    });
    return DISABLED_ALERTS;
  }
  return {
    enabled: true,
    sink: readSink(env, flags, findings),
    webhookUrl: flags.webhookUrl ?? readAlertUrl(env, 'ALERT_WEBHOOK_URL', findings),
    proxy: flags.proxy ?? readAlertUrl(env, 'ALERT_WEBHOOK_PROXY', findings),
    additionalInfo: flags.additionalInfo ?? read(env, 'ALERT_ADDITIONAL_INFO'),
    structured: flags.structured,
  };
}

const KNOWN_KRELOAD_VARIABLES: ReadonlySet<string> = new Set([
  ...OPTION_SPECS.map((spec) => spec.env),
  TEST_FAILPOINT_VARIABLE,
]);

export function readEnvSettings(env: Env, alertFlags: AlertFlags = NO_ALERT_FLAGS): EnvReport {
  const problems: string[] = [];
  const warnings: ConfigWarning[] = [];
  const kubernetesNamespace = read(env, 'KUBERNETES_NAMESPACE');
  const namespaceProblem =
    kubernetesNamespace === undefined ? undefined : checkDnsLabel(kubernetesNamespace);
  if (namespaceProblem !== undefined) {
    problems.push(
      `KUBERNETES_NAMESPACE: invalid namespace "${kubernetesNamespace ?? ''}": ${namespaceProblem}`,
    );
  }
  const alerts = readAlerts(env, alertFlags, { problems, warnings });
  for (const name of Object.keys(env).sort()) {
    if (name.startsWith('KRELOAD_') && !KNOWN_KRELOAD_VARIABLES.has(name)) {
      warnings.push({ level: 'warn', subject: name, message: 'unknown variable, ignored' });
    }
  }
  return {
    settings: {
      kubernetesNamespace,
      podName: read(env, 'POD_NAME'),
      podNamespace: read(env, 'POD_NAMESPACE'),
      metricsCountByNamespace: env.METRICS_COUNT_BY_NAMESPACE === 'enabled',
      alerts,
      metaInfoNamespace: read(env, 'RELOADER_NAMESPACE'),
      deploymentName: read(env, 'RELOADER_DEPLOYMENT_NAME'),
      kubeconfigSearch: {
        kubeconfigVar: read(env, 'KUBECONFIG'),
        home: read(env, 'HOME'),
        serviceHost: read(env, 'KUBERNETES_SERVICE_HOST'),
      },
    },
    problems,
    warnings,
  };
}
