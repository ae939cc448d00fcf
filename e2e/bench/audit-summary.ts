/**
 * The controller's API requests from kube-apiserver's audit log, split at the moment it became
 * ready: counted by `verb resource`, errors by status code, and the headline figure (LIST/GET of
 * workloads after ready).
 */
import { open } from 'node:fs/promises';
import type { AuditEvent } from '../harness/audit.ts';
import { isRecord } from './list-watch.ts';
import { AUDITED_WORKLOAD_RESOURCES } from './resources.ts';

/** coordination.k8s.io Leases: leader election and shard membership, not the controller's work. */
const LEASES = 'leases';

export interface PhaseRequests {
  /** Every request but the Lease ones. */
  readonly total: number;
  /**
   * Lease requests (HA, active-active: renewals and lists every retry period), apart from `total`
   * and `writes` so that replicas compare on their work (absent from older summaries).
   */
  readonly leaseRequests?: number;
  /** `verb resource[/subresource]` → count (watches counted when opened). */
  readonly byVerb: Readonly<Record<string, number>>;
  readonly workloadListGet: number;
  /** `verb resource code` → count, for answers ≥ 400 (409s are conflicts the controller retried). */
  readonly errors: Readonly<Record<string, number>>;
  /** Writes (create, update, patch, delete) completed, and the most in one wall-clock second. */
  readonly writes?: number;
  readonly peakWritesPerSecond?: number;
}

export interface RequestSummary {
  /** From each (re)start of the controller to its first reaction. */
  readonly startup: PhaseRequests;
  /** While it reacts: from each readiness to the next restart or the end of the run. */
  readonly afterReady: PhaseRequests;
}

function isAuditEvent(value: unknown): value is AuditEvent {
  return (
    isRecord(value) &&
    typeof value.stage === 'string' &&
    typeof value.verb === 'string' &&
    isRecord(value.user) &&
    typeof value.user.username === 'string'
  );
}

function parseLine(line: string): AuditEvent | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isAuditEvent(value) ? value : undefined;
  } catch {
    // A line cut by an offset taken mid-write.
    return undefined;
  }
}

/** A moment in the log (file offset) from which the controller is starting, or ready. */
export interface PhaseMark {
  readonly offset: number;
  readonly ready: boolean;
}

/**
 * Events of the complete lines of `text` (which starts at file offset `from`), split by the phase
 * in force where each line starts: before the first mark, or in a starting phase, is "startup".
 * A restart (S6, K4) thus puts the new process's initial lists under startup again.
 */
export function splitByPhase(
  text: string,
  details: { from: number; marks: readonly PhaseMark[] },
): { startup: AuditEvent[]; ready: AuditEvent[] } {
  const marks = [...details.marks].sort((a, b) => a.offset - b.offset);
  const startup: AuditEvent[] = [];
  const ready: AuditEvent[] = [];
  let position = details.from;
  let next = 0;
  let isReady = false;
  for (const line of text.split('\n')) {
    const start = position;
    position += Buffer.byteLength(line, 'utf8') + 1;
    for (let mark = marks[next]; mark !== undefined && mark.offset <= start; mark = marks[next]) {
      isReady = mark.ready;
      next += 1;
    }
    const event = line === '' ? undefined : parseLine(line);
    if (event !== undefined) (isReady ? ready : startup).push(event);
  }
  return { startup, ready };
}

export async function readAuditRange(
  path: string,
  range: { from: number; to: number },
): Promise<string> {
  const file = await open(path, 'r');
  try {
    const length = Math.max(0, range.to - range.from);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, range.from);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    // Drop a trailing partial line: it belongs to whatever comes after `to`.
    return text.slice(0, text.lastIndexOf('\n') + 1);
  } finally {
    await file.close();
  }
}

/** `verb resource[/subresource]`, or `verb /path` for requests that name no resource (discovery). */
function requestKey(event: AuditEvent): string {
  const resource = [event.objectRef?.resource, event.objectRef?.subresource]
    .filter(Boolean)
    .join('/');
  return `${event.verb} ${resource === '' ? (event.requestURI.split('?')[0] ?? '') : resource}`;
}

/**
 * Completed requests of `username` by requestKey, and errors by requestKey and status code.
 * Watches are counted when they open (ResponseStarted), since they complete only when closed.
 */
export function summarisePhase(events: readonly AuditEvent[], username: string): PhaseRequests {
  const counts = new Map<string, number>();
  const errors: Record<string, number> = {};
  for (const event of events) {
    if (event.user.username !== username) continue;
    const completed = event.stage === 'ResponseComplete';
    const counted = event.verb === 'watch' ? event.stage === 'ResponseStarted' : completed;
    const key = requestKey(event);
    if (counted) counts.set(key, (counts.get(key) ?? 0) + 1);
    const code = event.responseStatus?.code ?? 0;
    if (completed && code >= 400) errors[`${key} ${code}`] = (errors[`${key} ${code}`] ?? 0) + 1;
  }
  let total = 0;
  let leaseRequests = 0;
  let workloadListGet = 0;
  for (const [key, count] of counts) {
    const [verb = '', resource = ''] = key.split(' ');
    if (resource === LEASES) leaseRequests += count;
    else total += count;
    if ((verb === 'list' || verb === 'get') && AUDITED_WORKLOAD_RESOURCES.has(resource)) {
      workloadListGet += count;
    }
  }
  return {
    total,
    leaseRequests,
    byVerb: Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
    workloadListGet,
    errors,
    ...writeRate(events, username),
  };
}

const WRITE_VERBS: ReadonlySet<string> = new Set([
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
]);

/**
 * The writes `username` completed but Lease renewals, and the most of them completed within one wall-clock second
 * (kube-apiserver's stageTimestamp); events without a readable timestamp count in `writes` only.
 */
export function writeRate(
  events: readonly AuditEvent[],
  username: string,
): { writes: number; peakWritesPerSecond: number } {
  const perSecond = new Map<number, number>();
  let writes = 0;
  for (const event of events) {
    if (event.user.username !== username || event.stage !== 'ResponseComplete') continue;
    if (!WRITE_VERBS.has(event.verb) || event.objectRef?.resource === LEASES) continue;
    writes += 1;
    const at = Date.parse(event.stageTimestamp ?? '');
    if (Number.isNaN(at)) continue;
    const second = Math.floor(at / 1000);
    perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  }
  return { writes, peakWritesPerSecond: Math.max(0, ...perSecond.values()) };
}
