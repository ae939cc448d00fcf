/** What the health server needs from a lag monitor. */
export interface LagMonitor {
  start(): void;
  stop(): void;
  /** Current event-loop lag in milliseconds. */
  lagMs(): number;
}

export interface LagMonitorDeps {
  /** Monotonic milliseconds. */
  readonly nowMs: () => number;
  /** Calls `callback` every `ms` until the returned function is called. */
  readonly repeat: (callback: () => void, ms: number) => () => void;
  /** Sampling interval; default 500 ms. */
  readonly intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 500;

/**
 * Measures event-loop lag as the lateness of a periodic tick. A tick that is overdue right now
 * counts too, so a stall is visible before the delayed tick finally runs.
 */
export class EventLoopLagMonitor implements LagMonitor {
  readonly #deps: LagMonitorDeps;
  #cancel: (() => void) | undefined;
  #lastTickAt = 0;
  #lastLagMs = 0;

  constructor(deps: LagMonitorDeps) {
    this.#deps = deps;
  }

  get #intervalMs(): number {
    return this.#deps.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  start(): void {
    if (this.#cancel) return;
    this.#lastTickAt = this.#deps.nowMs();
    this.#lastLagMs = 0;
    this.#cancel = this.#deps.repeat(() => {
      const now = this.#deps.nowMs();
      this.#lastLagMs = Math.max(0, now - this.#lastTickAt - this.#intervalMs);
      this.#lastTickAt = now;
    }, this.#intervalMs);
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#lastLagMs = 0;
  }

  lagMs(): number {
    if (!this.#cancel) return 0;
    const overdue = this.#deps.nowMs() - this.#lastTickAt - this.#intervalMs;
    return Math.max(this.#lastLagMs, overdue, 0);
  }
}

/** A monitor on the process's monotonic clock and timers; its timer never keeps the process up. */
export function createSystemLagMonitor(): EventLoopLagMonitor {
  return new EventLoopLagMonitor({
    nowMs: () => performance.now(),
    repeat: (callback, ms) => {
      const timer = setInterval(callback, ms).unref();
      return () => {
        clearInterval(timer);
      };
    },
  });
}
