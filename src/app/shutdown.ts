/**
 * The bounded part of the stop sequence (§13.5 items 2 and 3, ADR 0018): drain in-flight work and
 * release the Lease, each within its own deadline, so that neither a hung workload write nor a hung
 * Lease PUT can hold SIGTERM past the pod's grace period.
 */
import type { Logger } from '../log/logger.ts';
import { withinDeadline } from '../time/deadline.ts';

/** Together with the rest of the stop they stay below the e2e harness's 15 s and Kubernetes' 30 s. */
export const STOP_DEADLINES = {
  /** In-flight writes finish within this, then their signals are aborted (§13.5 item 2). */
  drainMs: 10_000,
  /** The Lease release PUT (§13.5 item 3); beyond it the successor waits for the lease to expire. */
  leaseReleaseMs: 2_000,
} as const;

export type StopDeadlines = typeof STOP_DEADLINES;

export interface DrainableQueue {
  /** Resolves true when all in-flight work finished within the deadline, false when it was aborted. */
  drain(deadlineMs: number): Promise<boolean>;
}

export interface ReleasableLease {
  release(): Promise<void>;
  stop(): void;
}

export interface DrainOutcome {
  readonly drained: boolean;
  /** True without an elector. */
  readonly released: boolean;
}

export async function drainAndRelease(parts: {
  readonly queue: DrainableQueue;
  readonly elector: ReleasableLease | undefined;
  readonly logger: Logger;
  readonly deadlines?: StopDeadlines;
  /** Runs between the drain and the release: the process stops counting itself as leader. */
  readonly onDrained?: () => void;
}): Promise<DrainOutcome> {
  const deadlines = parts.deadlines ?? STOP_DEADLINES;
  const drained = await parts.queue.drain(deadlines.drainMs);
  if (!drained) {
    parts.logger.warn('in-flight work aborted at the drain deadline', {
      deadlineMs: deadlines.drainMs,
    });
  }
  parts.onDrained?.();
  const { elector } = parts;
  if (elector === undefined) return { drained, released: true };
  const release = await withinDeadline(elector.release(), deadlines.leaseReleaseMs);
  elector.stop();
  if (!release.finished) {
    parts.logger.warn('lease release did not finish in time; a successor waits for it to expire', {
      deadlineMs: deadlines.leaseReleaseMs,
    });
  }
  return { drained, released: release.finished };
}
