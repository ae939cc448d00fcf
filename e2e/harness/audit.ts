import { open, stat } from 'node:fs/promises';

/** The fields of an audit.k8s.io/v1 Event that request counting needs. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly user: { readonly username: string };
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  readonly requestURI: string;
  /** When the stage was reached (RFC 3339, microseconds). */
  readonly stageTimestamp?: string;
}

function isAuditEvent(value: unknown): value is AuditEvent {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as Record<string, unknown>;
  return (
    typeof event.stage === 'string' &&
    typeof event.verb === 'string' &&
    typeof event.user === 'object'
  );
}

/**
 * Reads kube-apiserver's JSON-lines audit log from an offset taken before an action, so a spec or
 * benchmark sees only the requests that action caused. Lines can land just after the client got
 * its response: poll for the expected events rather than reading once.
 */
export class AuditLog {
  readonly #path: string;

  constructor(deps: { path: string }) {
    this.#path = deps.path;
  }

  /** The current end of the log: pass it to eventsSince() after the action. */
  async mark(): Promise<number> {
    return (await stat(this.#path).catch(() => ({ size: 0 }))).size;
  }

  async eventsSince(offset: number): Promise<AuditEvent[]> {
    const file = await open(this.#path, 'r');
    try {
      const { size } = await file.stat();
      // One byte before the offset says whether the mark fell on a line's start: kube-apiserver
      // writes its log in buffered pieces, so a mark can land inside a line still being written.
      // That line belongs to a request made before the mark: it is skipped whole.
      const start = Math.max(0, offset - 1);
      const buffer = Buffer.alloc(Math.max(0, size - start));
      await file.read(buffer, 0, buffer.length, start);
      const text = buffer.toString('utf8');
      const first = offset === 0 ? 0 : text.indexOf('\n') + 1;
      if (offset > 0 && first === 0) return [];
      // A line still being written has no newline yet: leave it for the next read.
      const complete = text.slice(first, text.lastIndexOf('\n') + 1);
      return complete
        .split('\n')
        .filter((line) => line !== '')
        .map((line): unknown => JSON.parse(line))
        .filter(isAuditEvent);
    } finally {
      await file.close();
    }
  }
}

/**
 * Completed requests by `verb resource[/subresource]` (e.g. `list configmaps`, `patch deployments`).
 * Watches are counted when they open (ResponseStarted), since they complete only when closed.
 */
export function countRequests(
  events: readonly AuditEvent[],
  username: string,
): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    if (event.user.username !== username) continue;
    const counted =
      event.verb === 'watch'
        ? event.stage === 'ResponseStarted'
        : event.stage === 'ResponseComplete';
    if (!counted) continue;
    const resource = [event.objectRef?.resource, event.objectRef?.subresource]
      .filter(Boolean)
      .join('/');
    const key = `${event.verb} ${resource}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}
