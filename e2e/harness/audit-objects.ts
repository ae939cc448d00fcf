// Per-object request counts from the audit log (audit.ts counts per verb and resource only), and
// a wait for the log to catch up with what kreload has done.
import type { AuditEvent, AuditLog } from './audit.ts';
import { pollUntil } from './poll.ts';

export interface AuditedRequest {
  readonly verb: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly code: number;
}

/** Completed (non-watch) requests of `username`, in log order. */
export function completedRequests(
  events: readonly AuditEvent[],
  username: string,
): AuditedRequest[] {
  return events
    .filter(
      (event) =>
        event.user.username === username &&
        event.stage === 'ResponseComplete' &&
        event.verb !== 'watch',
    )
    .map((event) => ({
      verb: event.verb,
      resource: [event.objectRef?.resource, event.objectRef?.subresource].filter(Boolean).join('/'),
      namespace: event.objectRef?.namespace ?? '',
      name: event.objectRef?.name ?? '',
      code: event.responseStatus?.code ?? 0,
    }));
}

/** `verb resource name` → count, e.g. `patch deployments dep-api` → 1. */
export function countByObject(requests: readonly AuditedRequest[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of requests) {
    const key = `${request.verb} ${request.resource} ${request.name}`.trimEnd();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/**
 * The audit log trails the responses slightly: polls until `done` accepts the requests since
 * `offset`, then returns them (or the last read when the wait times out, for the assertion).
 */
export async function auditedRequestsWhen(
  audit: AuditLog,
  options: {
    readonly offset: number;
    readonly username: string;
    readonly done: (requests: readonly AuditedRequest[]) => boolean;
    readonly timeoutMs?: number;
  },
): Promise<AuditedRequest[]> {
  let last: AuditedRequest[] = [];
  try {
    return await pollUntil(
      async () => {
        last = completedRequests(await audit.eventsSince(options.offset), options.username);
        return options.done(last) ? last : undefined;
      },
      { timeoutMs: options.timeoutMs ?? 15_000, describe: 'the expected audit events' },
    );
  } catch {
    return last;
  }
}
