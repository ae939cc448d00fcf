import { sourceKey } from '../core/keys.ts';
import type { SourceType, WorkloadRef } from '../core/types.ts';
import { byCodeUnit } from '../core/order.ts';

/**
 * `ALERT_SINK`, lower-cased and trimmed; anything unknown (or empty) means `webhook`. `structured`
 * is the webhook sink with `--alert-structured`: one JSON object per roll (Reloader 2.0).
 */
export type AlertSinkName = 'slack' | 'teams' | 'gchat' | 'webhook' | 'structured';

export interface AlertSource {
  readonly type: SourceType;
  readonly name: string;
}

/** One successful roll, as alerts describe it. */
export interface RollAlert {
  readonly sources: readonly AlertSource[];
  readonly workload: WorkloadRef;
}

interface SinkFormat {
  /** What is queued for one roll; `body` turns it into the request body. */
  readonly message: (alert: RollAlert, additionalInfo: string | undefined, at: Date) => string;
  readonly contentType: string;
  readonly body: (message: string) => string;
  /** Whether a status that is neither a redirect, 429 nor 5xx counts as delivered. */
  readonly accepts: (status: number) => boolean;
}

const JSON_CONTENT_TYPE = 'application/json';

/** §13.6: request body and success condition per sink. */
export const ALERT_SINKS: Readonly<Record<AlertSinkName, SinkFormat>> = {
  slack: {
    message: (alert, info) => alertMessage(alert, info),
    contentType: JSON_CONTENT_TYPE,
    body: (text) =>
      JSON.stringify({ attachments: [{ color: 'good', author_name: 'Reloader', text }] }),
    accepts: (status) => status < 400,
  },
  teams: {
    message: (alert, info) => alertMessage(alert, info),
    contentType: JSON_CONTENT_TYPE,
    body: (text) => JSON.stringify({ text }),
    accepts: (status) => status === 200,
  },
  gchat: {
    message: (alert, info) => alertMessage(alert, info),
    contentType: JSON_CONTENT_TYPE,
    body: (text) => JSON.stringify({ text }),
    accepts: (status) => status === 200,
  },
  webhook: {
    message: (alert, info) => alertMessage(alert, info),
    contentType: 'text/plain',
    body: (text) => text.replaceAll('*', ''),
    accepts: (status) => status < 400,
  },
  structured: {
    message: (alert, info, at) => structuredAlertMessage(alert, info, at),
    contentType: JSON_CONTENT_TYPE,
    body: (json) => json,
    accepts: (status) => status < 400,
  },
};

/**
 * Reloader 2.0's structured payload (its `resource*` fields name the first source in key order),
 * plus `resources`, every source of the roll, since one kreload roll can follow several (D42).
 */
export function structuredAlertMessage(
  alert: RollAlert,
  additionalInfo: string | undefined,
  at: Date,
): string {
  const { workload } = alert;
  const sources = sortedSources(alert.sources);
  const first = sources[0];
  return JSON.stringify({
    event: 'reload',
    workloadKind: workload.kind,
    workloadName: workload.name,
    workloadNamespace: workload.namespace,
    resourceKind: first?.type ?? '',
    resourceName: first?.name ?? '',
    resourceNamespace: workload.namespace,
    resources: sources.map((source) => ({ kind: source.type, name: source.name })),
    timestamp: at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(additionalInfo ? { additional: additionalInfo } : {}),
  });
}

/** `--alert-structured` turns the plain-text webhook sink into the JSON one; other sinks keep theirs. */
export function sinkWithStructure(
  sink: Exclude<AlertSinkName, 'structured'>,
  structured: boolean,
): AlertSinkName {
  return structured && sink === 'webhook' ? 'structured' : sink;
}

export function resolveAlertSink(raw: string | undefined): AlertSinkName {
  const name = (raw ?? '').trim().toLowerCase();
  return name === 'slack' || name === 'teams' || name === 'gchat' ? name : 'webhook';
}

function sortedSources(sources: readonly AlertSource[]): AlertSource[] {
  return [...sources].sort((a, b) =>
    byCodeUnit(sourceKey(a.type, a.name), sourceKey(b.type, b.name)),
  );
}

/** Reloader's text (kept for compatibility), listing every source of the roll (D42). */
export function alertMessage(alert: RollAlert, additionalInfo?: string): string {
  const { sources, workload } = alert;
  const listed = sortedSources(sources)
    .map((s) => `*${s.name}* of type *${s.type}*`)
    .join(', ');
  const text =
    `Reloader detected changes in ${listed} in namespace *${workload.namespace}*. ` +
    `Hence reloaded *${workload.name}* of type *${workload.kind}* in namespace *${workload.namespace}*`;
  return additionalInfo ? `${additionalInfo} : ${text}` : text;
}
