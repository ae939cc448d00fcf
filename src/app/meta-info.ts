/**
 * The `reloader-meta-info` ConfigMap (§13.10, D45): build, effective options and deployment, written
 * by the leader once per leadership term when `RELOADER_NAMESPACE` is set.
 */
import type { Options } from '../config/parse-options.ts';
import type { JsonObject } from '../core/json.ts';
import { redactUrl } from '../log/redact-url.ts';

export const META_INFO_NAME = 'reloader-meta-info';

export interface BuildInfo {
  readonly nodeVersion: string;
  readonly releaseVersion: string;
  readonly commitHash: string;
  readonly commitTime: string;
}

/** Options as JSON, with secret-bearing URLs redacted and nothing of the process environment. */
export function effectiveOptions(options: Options): JsonObject {
  const { alerts, webhookUrl } = options;
  return JSON.parse(
    JSON.stringify({
      ...options,
      // The environment lookup and startup warnings describe this process, not the options.
      kubeconfigSearch: undefined,
      warnings: undefined,
      webhookUrl: webhookUrl === undefined ? undefined : redactUrl(webhookUrl),
      alerts: {
        ...alerts,
        webhookUrl: alerts.webhookUrl === undefined ? undefined : redactUrl(alerts.webhookUrl),
        proxy: alerts.proxy === undefined ? undefined : redactUrl(alerts.proxy),
      },
    }),
  ) as JsonObject;
}

export function metaInfoConfigMap(input: {
  readonly options: Options;
  readonly build: BuildInfo;
  readonly namespace: string;
}): JsonObject {
  const { options, build, namespace } = input;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: META_INFO_NAME,
      namespace,
      labels: { 'reloader.stakater.com/meta-info': 'reloader' },
    },
    data: {
      buildInfo: JSON.stringify({ ...build, edition: 'kreload' }),
      reloaderOptions: JSON.stringify(effectiveOptions(options)),
      deploymentInfo: JSON.stringify({
        name: options.metaInfo.deploymentName ?? '',
        namespace,
      }),
    },
  };
}
