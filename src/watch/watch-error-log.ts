/**
 * List-watch failures at a bounded rate (§13.9, §14): a forbidden namespace is re-probed every
 * 60 s per kind, and an unreachable API server fails every watch at once, so each distinct cause
 * is logged once and then at most once per interval (RateLimitedLog).
 */
import type { ApiError } from '../core/api-error.ts';
import type { RateLimitedLog } from '../log/rate-limited-log.ts';
import type { LogLevel } from '../log/logger.ts';

/** How a failure is keyed and worded; the first matching row wins. */
interface FailureRow {
  readonly matches: (status: number | undefined) => boolean;
  readonly level: LogLevel;
  readonly message: string;
  /** RBAC and missing APIs are per namespace; a server or network fault is the same for all. */
  readonly perNamespace: boolean;
}

const FAILURES: readonly FailureRow[] = [
  {
    matches: (status) => status === 403,
    level: 'error',
    message: 'list-watch forbidden; re-probing every 60 s',
    perNamespace: true,
  },
  {
    matches: (status) => status === 404,
    level: 'warn',
    message: 'API not served; re-probing every 60 s',
    perNamespace: true,
  },
  {
    matches: (status) => status === undefined,
    level: 'warn',
    message: 'API server unreachable; list-watches retrying',
    perNamespace: false,
  },
];

const OTHER_FAILURE: FailureRow = {
  matches: () => true,
  level: 'warn',
  message: 'list-watch failed; retrying',
  perNamespace: false,
};

/** The key of a failure: a server or network fault is one cause whichever watch hit it. */
function causeOf(
  row: FailureRow,
  resource: string,
  namespace: string | undefined,
  status?: number,
): string {
  if (status === undefined) return 'watch/network';
  return row.perNamespace
    ? `watch/${watchId(resource, namespace)}/${String(status)}`
    : `watch/${resource}/${String(status)}`;
}

export interface WatchErrorLogDeps {
  readonly log: RateLimitedLog;
}

export class WatchErrorLog {
  readonly #deps: WatchErrorLogDeps;
  /** Causes logged per watch, forgotten when that watch is healthy again. */
  readonly #causesOf = new Map<string, Set<string>>();

  constructor(deps: WatchErrorLogDeps) {
    this.#deps = deps;
  }

  /** One failure of the list-watch of `resource` in `namespace` (`undefined`: cluster-wide). */
  report(resource: string, namespace: string | undefined, error: ApiError): void {
    const row = FAILURES.find((candidate) => candidate.matches(error.status)) ?? OTHER_FAILURE;
    const cause = causeOf(row, resource, namespace, error.status);
    if (row.perNamespace) {
      const watch = watchId(resource, namespace);
      this.#causesOf.set(watch, (this.#causesOf.get(watch) ?? new Set()).add(cause));
    }
    this.#deps.log.log(row.level, cause, row.message, {
      resource,
      ...(namespace === undefined ? {} : { namespace }),
      ...(error.status === undefined ? {} : { status: error.status }),
      error: error.message,
    });
  }

  /**
   * The watch listed or watched successfully: its RBAC or missing-API causes are resolved, so a
   * recurrence is logged at once. Shared causes (network, 5xx) stay limited: one watch recovering
   * does not mean the others have.
   */
  recovered(resource: string, namespace: string | undefined): void {
    const watch = watchId(resource, namespace);
    for (const cause of this.#causesOf.get(watch) ?? []) this.#deps.log.forget(cause);
    this.#causesOf.delete(watch);
  }
}

function watchId(resource: string, namespace: string | undefined): string {
  return `${namespace ?? '*'}/${resource}`;
}
