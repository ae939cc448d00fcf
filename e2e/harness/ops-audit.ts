// kreload's completed API requests from the audit log, with the time kube-apiserver received each
// one: failover and shutdown specs need "who wrote what, and when", not just how many.
import type { AuditEvent, AuditLog } from './audit.ts';
import { KRELOAD_USER } from './rbac.ts';

export interface CompletedRequest {
  readonly verb: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly code: number;
  /**
   * `ResponseComplete`, or `Panic`: the handler gave up without a response (a client gone mid
   * request), logged only when asked for (kreloadRequestsSince's `withPanics`).
   */
  readonly stage: string;
  /** requestReceivedTimestamp, ms since the epoch (the audit log has microseconds). */
  readonly receivedAt: number;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);

function receivedAtOf(event: AuditEvent): number {
  const raw: unknown = Reflect.get(event, 'requestReceivedTimestamp');
  return typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
}

function completed(event: AuditEvent): CompletedRequest {
  const ref = event.objectRef;
  return {
    verb: event.verb,
    resource: [ref?.resource, ref?.subresource].filter(Boolean).join('/'),
    namespace: ref?.namespace ?? '',
    name: ref?.name ?? '',
    code: event.responseStatus?.code ?? 0,
    stage: event.stage,
    receivedAt: receivedAtOf(event),
  };
}

/**
 * Requests of kreload's ServiceAccount that completed after `offset`, oldest first; with
 * `withPanics`, also those whose handler ended in a panic (no response written).
 */
export async function kreloadRequestsSince(
  audit: AuditLog,
  offset: number,
  options: { readonly withPanics?: boolean } = {},
): Promise<CompletedRequest[]> {
  const stages = new Set(['ResponseComplete', ...(options.withPanics === true ? ['Panic'] : [])]);
  return (await audit.eventsSince(offset))
    .filter((event) => event.user.username === KRELOAD_USER && stages.has(event.stage))
    .map(completed)
    .sort((a, b) => a.receivedAt - b.receivedAt);
}

/** Anything but get, list and watch. */
export function isWrite(request: CompletedRequest): boolean {
  return !READ_VERBS.has(request.verb);
}

/** `verb resource namespace/name → code`, for readable failure messages. */
export function describeRequest(request: CompletedRequest): string {
  return `${request.verb} ${request.resource} ${request.namespace}/${request.name} → ${request.code}`;
}
