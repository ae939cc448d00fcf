/**
 * Repeated problems (a 403, an invalid annotation, an unreachable API server) are logged once per
 * distinct cause, then at most once per interval with the number of repeats left out (§13.9).
 */
import type { LogFields, Logger, LogLevel } from './logger.ts';

export const DEFAULT_REPEAT_INTERVAL_MS = 10 * 60 * 1000;

export interface RateLimitedLogDeps {
  readonly logger: Logger;
  /** Milliseconds, e.g. `Date.now`; injected so tests control time. */
  readonly now: () => number;
  readonly intervalMs?: number;
}

interface CauseState {
  lastLoggedAt: number;
  suppressed: number;
}

export class RateLimitedLog {
  readonly #deps: RateLimitedLogDeps;
  readonly #causes = new Map<string, CauseState>();

  constructor(deps: RateLimitedLogDeps) {
    this.#deps = deps;
  }

  /**
   * Logs unless `cause` was logged less than an interval ago. A line after suppressed repeats carries
   * `suppressed=<n>`. Returns whether a line was written.
   */
  log(level: LogLevel, cause: string, message: string, fields?: LogFields): boolean {
    const now = this.#deps.now();
    const interval = this.#deps.intervalMs ?? DEFAULT_REPEAT_INTERVAL_MS;
    const state = this.#causes.get(cause);
    if (state !== undefined && now - state.lastLoggedAt < interval) {
      state.suppressed += 1;
      return false;
    }
    const repeats =
      state === undefined || state.suppressed === 0 ? {} : { suppressed: state.suppressed };
    this.#deps.logger.log(level, message, { ...fields, ...repeats });
    this.#causes.set(cause, { lastLoggedAt: now, suppressed: 0 });
    return true;
  }

  warn(cause: string, message: string, fields?: LogFields): boolean {
    return this.log('warn', cause, message, fields);
  }

  error(cause: string, message: string, fields?: LogFields): boolean {
    return this.log('error', cause, message, fields);
  }

  /** Drops a cause once it is resolved, so a recurrence is logged at once; also bounds memory. */
  forget(cause: string): void {
    this.#causes.delete(cause);
  }
}
