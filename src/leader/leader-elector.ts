import {
  DEFAULT_LEASE_TIMINGS,
  canWriteAt,
  claimRecord,
  decideLeaseAction,
  observeLease,
  releaseRecord,
} from './lease-decision.ts';
import type { LeaseAction, LeaseObservation, LeaseTimings } from './lease-decision.ts';
import { LeaseConflictError } from './ports.ts';
import type { LeaseId, LeaseStore, ObservedLease } from './ports.ts';
import type { Clock, Timers } from '../time/timers.ts';

export type LeaderState = 'leader' | 'follower' | 'lost';

export interface LeaderElectorDeps {
  readonly store: LeaseStore;
  /** `POD_NAME`. */
  readonly identity: string;
  /** `--leader-election-id`. */
  readonly name: string;
  /** `--leader-election-namespace`. */
  readonly namespace: string;
  readonly timings?: LeaseTimings;
  /**
   * `--leader-election-release-on-cancel` (default true): release() clears the holder so that a
   * successor leads at once. False leaves the Lease to expire after its duration.
   */
  readonly releaseOnCancel?: boolean;
  readonly clock: Clock;
  readonly timers: Timers;
  /** Called once, when the lease is first acquired. */
  readonly onStartedLeading: () => void;
  /** Called once, when leadership is lost; the process must exit 1 soon after (§13.4). */
  readonly onLostLeading: (reason: string) => void;
  /** A read or write of the Lease failed (conflicts excluded: they are part of the protocol). */
  readonly onError?: (error: LeaderElectionError) => void;
}

export class LeaderElectionError extends Error {
  override readonly name = 'LeaderElectionError';
}

type ClaimAction = Extract<LeaseAction, 'acquire' | 'takeover' | 'renew'>;

/**
 * Lease-based leader election (§13.4). Every retry period it reads the Lease and acquires, renews,
 * takes over or follows. Losing is final: once lost, the elector stops and never leads again in
 * this process, because the process is about to exit.
 */
export class LeaderElector {
  readonly #deps: LeaderElectorDeps;
  #state: LeaderState = 'follower';
  #running = false;
  #cancelTick: (() => void) | undefined;
  #cancelDeadline: (() => void) | undefined;
  #cycle: Promise<void> | undefined;
  #observation: LeaseObservation | undefined;
  #lastLease: ObservedLease | undefined;
  #lastRenewAtMs: number | undefined;
  #lastObservedAtMs: number | undefined;

  constructor(deps: LeaderElectorDeps) {
    this.#deps = deps;
  }

  get #timings(): LeaseTimings {
    return this.#deps.timings ?? DEFAULT_LEASE_TIMINGS;
  }

  get #id(): LeaseId {
    return { namespace: this.#deps.namespace, name: this.#deps.name };
  }

  /** Starts the election loop; the first attempt runs at once. */
  start(): void {
    if (this.#running || this.#state === 'lost') return;
    this.#running = true;
    // An attempt still in flight from before a stop() schedules the next one itself.
    if (!this.#cycle) this.#runCycle();
  }

  /** Stops the loop without touching the Lease. */
  stop(): void {
    this.#running = false;
    this.#cancelTick?.();
    this.#cancelTick = undefined;
    this.#cancelDeadline?.();
    this.#cancelDeadline = undefined;
  }

  /**
   * Stops the loop and, if the Lease last seen names this replica, clears `holderIdentity` with a
   * 1 s duration so that a successor takes over at once (§13.5 step 3); without releaseOnCancel it
   * only stops. Never rejects; failures go to `onError`.
   */
  async release(): Promise<void> {
    this.stop();
    await this.#settleCycle();
    if (this.#state === 'lost') return;
    this.#state = 'follower';
    this.#lastRenewAtMs = undefined;
    if (this.#deps.releaseOnCancel === false) return;
    try {
      await this.#writeRelease();
    } catch (error) {
      this.#report('cannot release the lease', error);
    }
  }

  state(): LeaderState {
    return this.#state;
  }

  isLeader(): boolean {
    return this.#state === 'leader';
  }

  /** True while leading and within the renew deadline of the last successful renewal. */
  canWrite(): boolean {
    return (
      this.#state === 'leader' &&
      canWriteAt({
        nowMs: this.#deps.clock.monotonicMs(),
        lastRenewAtMs: this.#lastRenewAtMs,
        timings: this.#timings,
      })
    );
  }

  /** Monotonic time of the last successful read of the Lease (for `/readyz`). */
  get lastObservedAt(): number | undefined {
    return this.#lastObservedAtMs;
  }

  #runCycle(): void {
    this.#cancelTick = undefined;
    const cycle = this.#attempt()
      .catch((error: unknown) => {
        this.#report('election cycle failed on', error);
      })
      .finally(() => {
        this.#cycle = undefined;
        if (this.#running && this.#state !== 'lost') {
          this.#cancelTick = this.#deps.timers.schedule(this.#timings.retryPeriodMs, () => {
            this.#runCycle();
          });
        }
      });
    this.#cycle = cycle;
  }

  /** Lets an in-flight attempt land, so a release uses the newest resourceVersion; bounded. */
  async #settleCycle(): Promise<void> {
    const cycle = this.#cycle;
    if (!cycle) return;
    let cancel = (): void => undefined;
    const bound = new Promise<void>((resolve) => {
      cancel = this.#deps.timers.schedule(this.#timings.retryPeriodMs, resolve);
    });
    await Promise.race([cycle, bound]);
    cancel();
  }

  async #attempt(): Promise<void> {
    const lease = await this.#read();
    if (!this.#active() || lease === 'unreadable') return;
    const nowMs = this.#deps.clock.monotonicMs();
    if (lease) this.#observation = observeLease(this.#observation, lease, nowMs);
    const action = decideLeaseAction({
      lease,
      observation: this.#observation,
      identity: this.#deps.identity,
      nowMs,
      timings: this.#timings,
    });
    switch (action) {
      case 'wait':
        return;
      case 'follow':
        // Another holder is live: a leader that sees this has lost the lease.
        this.#lose(`lease held by ${lease?.record.holderIdentity ?? 'nobody'}`);
        return;
      case 'acquire':
      case 'takeover':
      case 'renew':
        await this.#claim(action, lease);
    }
  }

  #active(): boolean {
    return this.#running && this.#state !== 'lost';
  }

  async #read(): Promise<ObservedLease | undefined | 'unreadable'> {
    try {
      const lease = await this.#deps.store.get(this.#id);
      this.#lastObservedAtMs = this.#deps.clock.monotonicMs();
      this.#lastLease = lease;
      return lease;
    } catch (error) {
      this.#report('cannot read the lease', error);
      return 'unreadable';
    }
  }

  async #claim(action: ClaimAction, lease: ObservedLease | undefined): Promise<void> {
    const record = claimRecord({
      action,
      previous: lease?.record,
      identity: this.#deps.identity,
      now: new Date(this.#deps.clock.now()),
      timings: this.#timings,
    });
    // The deadline counts from when the request left, not from when it was acknowledged.
    const sentAtMs = this.#deps.clock.monotonicMs();
    let written: ObservedLease;
    try {
      written =
        action === 'acquire' || lease === undefined
          ? await this.#deps.store.create(this.#id, record)
          : await this.#deps.store.replace(this.#id, record, lease.resourceVersion);
    } catch (error) {
      // A conflict means another replica wrote first; the next read shows who.
      if (!(error instanceof LeaseConflictError)) this.#report(`cannot ${action} the lease`, error);
      return;
    }
    this.#lastLease = written;
    if (!this.#active()) return;
    this.#observation = observeLease(this.#observation, written, this.#deps.clock.monotonicMs());
    this.#renewed(sentAtMs);
  }

  #renewed(sentAtMs: number): void {
    this.#lastRenewAtMs = sentAtMs;
    this.#armDeadline(sentAtMs);
    if (this.#state === 'leader') return;
    this.#state = 'leader';
    this.#deps.onStartedLeading();
  }

  /** Fires even while a request hangs, so a stuck renewal still loses the lease on time. */
  #armDeadline(sentAtMs: number): void {
    this.#cancelDeadline?.();
    const remainingMs = sentAtMs + this.#timings.renewDeadlineMs - this.#deps.clock.monotonicMs();
    this.#cancelDeadline = this.#deps.timers.schedule(Math.max(0, remainingMs), () => {
      this.#lose('renew deadline exceeded');
    });
  }

  #lose(reason: string): void {
    if (this.#state !== 'leader') return;
    this.#state = 'lost';
    this.#lastRenewAtMs = undefined;
    this.stop();
    this.#deps.onLostLeading(reason);
  }

  async #writeRelease(): Promise<void> {
    const lease = this.#lastLease;
    if (lease?.record.holderIdentity !== this.#deps.identity) return;
    const record = releaseRecord(lease.record, new Date(this.#deps.clock.now()));
    try {
      await this.#deps.store.replace(this.#id, record, lease.resourceVersion);
    } catch (error) {
      if (!(error instanceof LeaseConflictError)) throw error;
      // Our resourceVersion was stale: release only if the Lease is still ours.
      const current = await this.#deps.store.get(this.#id);
      if (current?.record.holderIdentity !== this.#deps.identity) return;
      await this.#deps.store.replace(
        this.#id,
        releaseRecord(current.record, new Date(this.#deps.clock.now())),
        current.resourceVersion,
      );
    }
  }

  #report(message: string, cause: unknown): void {
    this.#deps.onError?.(
      new LeaderElectionError(`${message} ${this.#deps.namespace}/${this.#deps.name}`, { cause }),
    );
  }
}
