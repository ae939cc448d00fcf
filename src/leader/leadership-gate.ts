/**
 * May this process write now? One answer for the reconciler, Events, alerts, the webhook notifier
 * and the change router (§13.4): it leads (without HA from the start, with HA once the Lease is
 * acquired), and with HA its Lease is still fresh enough to write under. Shutdown ends leading once
 * in-flight work has drained (§13.5), and nothing is acquired after it began.
 */

/** The Lease's own verdict: renewed recently enough that no successor can hold it yet. */
export interface WriteLease {
  canWrite(): boolean;
}

export interface LeadershipGateDeps {
  /** The elector's Lease with HA; undefined without HA, where the process leads from the start. */
  readonly lease: WriteLease | undefined;
  /** `reloader_is_leader`-style reporting of each change of `leading`. */
  readonly onLeadingChanged?: (leading: boolean) => void;
}

type GateState = 'initial' | 'leading' | 'stepped-down';

export class LeadershipGate {
  readonly #deps: LeadershipGateDeps;
  #state: GateState = 'initial';
  #shuttingDown = false;

  constructor(deps: LeadershipGateDeps) {
    this.#deps = deps;
  }

  /** Leads now: without HA until the drain ends; with HA from acquiring until losing the Lease. */
  get leading(): boolean {
    return this.#state === 'initial' ? this.#deps.lease === undefined : this.#state === 'leading';
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Leadership acquired, or started without HA. False (and no change) once shutdown has begun. */
  lead(): boolean {
    if (this.#shuttingDown) return false;
    this.#set('leading');
    return true;
  }

  /** The Lease was lost, or shutdown drained the in-flight work: nothing more is written. */
  stepDown(): void {
    this.#set('stepped-down');
  }

  beginShutdown(): void {
    this.#shuttingDown = true;
  }

  /** Writes are allowed: leading, and with HA the Lease still vouches for it. */
  mayWrite(): boolean {
    return this.leading && (this.#deps.lease?.canWrite() ?? true);
  }

  #set(state: GateState): void {
    const before = this.leading;
    this.#state = state;
    if (this.leading !== before) this.#deps.onLeadingChanged?.(this.leading);
  }
}
