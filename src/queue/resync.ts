import type { RandomSource } from './backoff.ts';
import type { Timers } from '../time/timers.ts';

/** ±10 %: replicas started together do not resync together. */
export const RESYNC_JITTER = 0.1;

export interface PeriodicResyncDeps {
  /** `--resync-period` in ms; 0 or less turns the resync off. */
  readonly periodMs: number;
  readonly timers: Timers;
  readonly random: RandomSource;
  /** Re-evaluates every workload (§5.2); runs once per period. */
  readonly onResync: () => void;
}

/** The periodic resync: each period jittered, the next one armed after the current one ran. */
export class PeriodicResync {
  readonly #deps: PeriodicResyncDeps;
  #cancel: (() => void) | undefined;
  #running = false;

  constructor(deps: PeriodicResyncDeps) {
    this.#deps = deps;
  }

  start(): void {
    if (this.#running || this.#deps.periodMs <= 0) return;
    this.#running = true;
    this.#arm();
  }

  stop(): void {
    this.#running = false;
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #arm(): void {
    const { periodMs, random, timers } = this.#deps;
    const delay = periodMs * (1 - RESYNC_JITTER + random() * 2 * RESYNC_JITTER);
    this.#cancel = timers.schedule(delay, () => {
      if (!this.#running) return;
      this.#deps.onResync();
      this.#arm();
    });
  }
}
