import { sourceKey } from '../core/keys.ts';
import type { SourceType, WorkloadRef } from '../core/types.ts';

/** `ALERT_SINK`, lower-cased and trimmed; anything unknown (or empty) means `webhook`. */
export type AlertSinkName = 'slack' | 'teams' | 'gchat' | 'webhook';

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
  readonly contentType: string;
  readonly body: (message: string) => string;
  /** Whether a status that is neither a redirect, 429 nor 5xx counts as delivered. */
  readonly accepts: (status: number) => boolean;
}

const JSON_CONTENT_TYPE = 'application/json';

/** §13.6: request body and success condition per sink. */
export const ALERT_SINKS: Readonly<Record<AlertSinkName, SinkFormat>> = {
  slack: {
    contentType: JSON_CONTENT_TYPE,
    body: (text) =>
      JSON.stringify({ attachments: [{ color: 'good', author_name: 'Reloader', text }] }),
    accepts: (status) => status < 400,
  },
  teams: {
    contentType: JSON_CONTENT_TYPE,
    body: (text) => JSON.stringify({ text }),
    accepts: (status) => status === 200,
  },
  gchat: {
    contentType: JSON_CONTENT_TYPE,
    body: (text) => JSON.stringify({ text }),
    accepts: (status) => status === 200,
  },
  webhook: {
    contentType: 'text/plain',
    body: (text) => text.replaceAll('*', ''),
    accepts: (status) => status < 400,
  },
};

export function resolveAlertSink(raw: string | undefined): AlertSinkName {
  const name = (raw ?? '').trim().toLowerCase();
  return name === 'slack' || name === 'teams' || name === 'gchat' ? name : 'webhook';
}

function byCodeUnit(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

/** Reloader's text (kept for compatibility), listing every source of the roll (D42). */
export function alertMessage(alert: RollAlert, additionalInfo?: string): string {
  const { sources, workload } = alert;
  const listed = [...sources]
    .sort((a, b) => byCodeUnit(sourceKey(a.type, a.name), sourceKey(b.type, b.name)))
    .map((s) => `*${s.name}* of type *${s.type}*`)
    .join(', ');
  const text =
    `Reloader detected changes in ${listed} in namespace *${workload.namespace}*. ` +
    `Hence reloaded *${workload.name}* of type *${workload.kind}* in namespace *${workload.namespace}*`;
  return additionalInfo ? `${additionalInfo} : ${text}` : text;
}
