/**
 * Active-active mode (docs/adr/0051-active-active-sharding.md): every replica holds a member Lease;
 * the namespaces' buckets are assigned to the live members, balanced and sticky (assignment.ts,
 * the larger shares to the most senior members), and a replica
 * writes to a namespace only while it holds the bucket's own Lease within the renew deadline of
 * its last renewal. A bucket that moves is drained and released by the old owner before the new
 * owner can acquire it; a dead member's buckets are taken over once not seen renewed for a lease
 * duration. Liveness is judged as client-go does: by when this process saw a Lease change, on its
 * monotonic clock, never by the timestamps another machine wrote. A replica that has been a member
 * for a lease duration assigns buckets only to members it has seen live that long: a newcomer,
 * which cannot yet tell a dead member from a live one, is given buckets once it can, so a
 * replacement pod that joins while a dead member's Leases run out does not hold up their takeover.
 */
import {
  canWriteAt,
  claimDurationMs,
  claimRecord,
  decideLeaseAction,
  observeLease,
  releaseRecord,
} from '../leader/lease-decision.ts';
import type { LeaseObservation, LeaseTimings } from '../leader/lease-decision.ts';
import { LeaseConflictError } from '../leader/ports.ts';
import type { LeaseId, ObservedLease } from '../leader/ports.ts';
import type { Clock, Timers } from '../time/timers.ts';
import { assignBuckets, bucketOf } from './assignment.ts';
import { bucketLeaseName, memberLeaseName, memberLeasePrefix } from './lease-names.ts';
import type { NamedLease, ShardLeaseStore } from './ports.ts';
import { nextRoundDelayMs, suspectedMembers, type ObservedClaim } from './round-timing.ts';

export interface ShardSettings {
  /** The pod name: holder identity of this replica's Leases. */
  readonly identity: string;
  /** kreload's namespace, where the Leases live. */
  readonly namespace: string;
  /** Lease name prefix (`--leader-election-id`). */
  readonly prefix: string;
  /** `--shard-buckets`. */
  readonly bucketCount: number;
  readonly timings: LeaseTimings;
}

export interface ShardCoordinatorDeps {
  readonly store: ShardLeaseStore;
  readonly settings: ShardSettings;
  readonly clock: Clock;
  readonly timers: Timers;
  /** Workload writes of `bucket` admitted and not yet answered: a release waits for 0. */
  readonly inFlight: (bucket: number) => number;
  /** The bucket's Lease was acquired: reconcile its namespaces' workloads. */
  readonly onAcquired: (bucket: number) => void;
  /**
   * The caches of this replica's share (docs/adr/0053): told each round which buckets are assigned
   * here or still held; a bucket's Lease is claimed only once its namespaces are filled in.
   * Without it every bucket counts as filled (caches of the whole cluster).
   */
  readonly cache?: ShardCache | undefined;
  /** The bucket's Lease was released to its new owner, or found taken. */
  readonly onReleased?: (bucket: number, reason: string) => void;
  /**
   * The live members, or those of them not seen renewing for the renew deadline (whose buckets'
   * namespaces this replica lists ahead of their expiry), changed.
   */
  readonly onMembersChanged?: (live: readonly string[], suspected: readonly string[]) => void;
  /** A Lease read or write failed (conflicts excluded: they are part of the protocol). */
  readonly onError?: (error: ShardLeaseError) => void;
}

/** What the coordinator needs of the shard's cache scope (src/shard/cache-scope.ts). */
export interface ShardCache {
  update(wanted: ReadonlySet<number>): void;
  isFilled(bucket: number): boolean;
}

/** When a member Lease's holder became a member: its acquire time; never known, the latest. */
function joinedAtMs(lease: ObservedLease | undefined): number {
  return lease?.record.acquireTime?.getTime() ?? Number.POSITIVE_INFINITY;
}

export class ShardLeaseError extends Error {
  override readonly name = 'ShardLeaseError';
}

/**
 * - `none`: not held; nothing is written to the bucket's namespaces.
 * - `held`: held and admitting writes (within the renew deadline).
 * - `draining`: held, assigned elsewhere: no new write is admitted; released once none is in flight.
 */
type BucketPhase = 'none' | 'held' | 'draining';

interface BucketState {
  phase: BucketPhase;
  /** The Lease as last read or written. */
  lease: ObservedLease | undefined;
  observation: LeaseObservation | undefined;
  /** Monotonic time the last successful claim or renewal was sent. */
  lastRenewAtMs: number | undefined;
}

interface MemberState {
  lease: ObservedLease | undefined;
  /** `lease` is the version this replica last wrote, answered: the next renewal needs no GET. */
  current: boolean;
  lastRenewAtMs: number | undefined;
  /** Monotonic time this replica became a member (its member Lease renewed without a lapse). */
  sinceMs: number | undefined;
}

export class ShardCoordinator {
  readonly #deps: ShardCoordinatorDeps;
  readonly #buckets: BucketState[];
  readonly #member: MemberState = {
    lease: undefined,
    current: false,
    lastRenewAtMs: undefined,
    sinceMs: undefined,
  };
  /** Other members' Leases by name, observed on the local clock. */
  #memberObservations = new Map<string, LeaseObservation>();
  /** Other live members → their member Lease as last observed. */
  #memberClaims = new Map<string, ObservedClaim>();
  /** Other live members → monotonic time since which they have been seen live without a lapse. */
  #liveSince = new Map<string, number>();
  /** Live members → when they became members (their member Lease's acquire time), in ms. */
  #memberSince = new Map<string, number>();
  #liveMembers: readonly string[] = [];
  #suspected: readonly string[] = [];
  /** The live members as last passed to onMembersChanged. */
  #reportedLive: readonly string[] = [];
  /** The members buckets are assigned to (see the module comment). */
  #assignees: readonly string[] = [];
  /** The owner of every bucket from the last round's assignment. */
  #owners: readonly (string | undefined)[] = [];
  #running = false;
  #cancelTick: (() => void) | undefined;
  #cycle: Promise<void> | undefined;
  #handovers = 0;
  #lastListedAtMs: number | undefined;
  /** Monotonic time the last round started: the next one starts a retry period later. */
  #roundStartedAtMs: number | undefined;
  /** `nudge()` during a round: the next one starts at once. */
  #nudged = false;

  constructor(deps: ShardCoordinatorDeps) {
    this.#deps = deps;
    this.#buckets = Array.from({ length: deps.settings.bucketCount }, () => ({
      phase: 'none',
      lease: undefined,
      observation: undefined,
      lastRenewAtMs: undefined,
    }));
  }

  get #settings(): ShardSettings {
    return this.#deps.settings;
  }

  get #timings(): LeaseTimings {
    return this.#settings.timings;
  }

  #id(name: string): LeaseId {
    return { namespace: this.#settings.namespace, name };
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    if (!this.#cycle) this.#runCycle();
  }

  /**
   * A round as soon as possible (the caches of newly assigned buckets are filled): now when idle,
   * right after the round under way otherwise. The retry period then counts from that round.
   */
  nudge(): void {
    if (!this.#running) return;
    if (this.#cycle) {
      this.#nudged = true;
      return;
    }
    this.#cancelTick?.();
    this.#runCycle();
  }

  stop(): void {
    this.#running = false;
    this.#cancelTick?.();
    this.#cancelTick = undefined;
  }

  /**
   * One round now (tests and the loop). At its start, together: the list of the shard's Leases,
   * the member Lease's renewal and those of the buckets held, so the other members' renewals are
   * observed a retry period apart however long the round's writes take, and this replica's own
   * renewals land together. Then, on that list, every bucket.
   */
  async tick(): Promise<void> {
    this.#roundStartedAtMs = this.#deps.clock.monotonicMs();
    const renewals = new Map<number, boolean>();
    const [listed] = await Promise.all([
      this.#list(),
      this.#renewMember(),
      ...this.#buckets.map(async (state, bucket) => {
        const renewal = this.#renewHeld(bucket, state);
        if (renewal !== undefined) renewals.set(bucket, await renewal);
      }),
    ]);
    if (listed === undefined) return;
    const { leases, atMs: nowMs } = listed;
    this.#lastListedAtMs = nowMs;
    this.#liveMembers = this.#observeMembers(leases, nowMs);
    this.#assignees = this.#assigneesAt(nowMs);
    const byName = new Map(leases.map(({ name, lease }) => [name, lease]));
    // Who holds each bucket now: the assignment keeps a bucket with a live holder that has room,
    // so a membership change moves only what balance needs (docs/adr/0051).
    const holders = Array.from(
      { length: this.#settings.bucketCount },
      (_, bucket) =>
        byName.get(bucketLeaseName(this.#settings.prefix, bucket))?.record.holderIdentity,
    );
    const owners = assignBuckets(
      this.#bySeniority(this.#assignees),
      this.#settings.bucketCount,
      holders,
    );
    this.#owners = owners;
    await Promise.all(
      owners.map((owner, bucket) =>
        this.#step(bucket, {
          lease: byName.get(bucketLeaseName(this.#settings.prefix, bucket)),
          assigned: owner === this.#settings.identity,
          nowMs,
          renewal: renewals.get(bucket),
        }),
      ),
    );
    // Assigned here, held until its writes in flight answered, or this replica's should a member
    // not seen renewing for the renew deadline be gone at expiry: kept in the caches.
    const suspected = suspectedMembers({
      nowMs,
      members: this.#memberClaims,
      timings: this.#timings,
    });
    this.#reportMembers(suspected);
    const standby = this.#standbyOwners(holders, suspected);
    this.#deps.cache?.update(
      new Set(
        owners.flatMap((owner, bucket) =>
          owner === this.#settings.identity ||
          this.#buckets[bucket]?.phase !== 'none' ||
          standby[bucket] === this.#settings.identity
            ? [bucket]
            : [],
        ),
      ),
    );
  }

  /**
   * The assignment without the members not seen renewing for the renew deadline (none: the
   * assignment itself): the buckets it would give this replica are listed into the caches while
   * those members' Leases run out (src/shard/round-timing.ts).
   */
  #standbyOwners(
    holders: readonly (string | undefined)[],
    suspected: readonly string[],
  ): readonly (string | undefined)[] {
    if (suspected.length === 0) return this.#owners;
    return assignBuckets(
      this.#bySeniority(this.#assignees.filter((member) => !suspected.includes(member))),
      this.#settings.bucketCount,
      holders,
    );
  }

  #reportMembers(suspected: readonly string[]): void {
    const same = (a: readonly string[], b: readonly string[]): boolean =>
      a.length === b.length && a.every((member, index) => member === b[index]);
    if (same(suspected, this.#suspected) && same(this.#liveMembers, this.#reportedLive)) return;
    this.#suspected = suspected;
    this.#reportedLive = this.#liveMembers;
    this.#deps.onMembersChanged?.(this.#liveMembers, suspected);
  }

  /**
   * Until the next round: the retry period, or less when a Lease of another member runs out
   * sooner (src/shard/round-timing.ts).
   */
  nextRoundDelayMs(): number {
    const identity = this.#settings.identity;
    const buckets = this.#buckets.flatMap((state): ObservedClaim[] => {
      const holder = state.lease?.record.holderIdentity;
      return state.lease !== undefined &&
        state.observation !== undefined &&
        holder !== undefined &&
        holder !== '' &&
        holder !== identity
        ? [{ lease: state.lease, observation: state.observation }]
        : [];
    });
    const nowMs = this.#deps.clock.monotonicMs();
    return nextRoundDelayMs({
      nowMs,
      startedAtMs: this.#roundStartedAtMs ?? nowMs,
      judgedAtMs: this.#lastListedAtMs ?? nowMs,
      claims: [...this.#memberClaims.values(), ...buckets],
      timings: this.#timings,
    });
  }

  /**
   * Shutdown: stops admitting writes, waits for those in flight (bounded by the renew deadline),
   * then releases every bucket held and the member Lease, so the others take over at once.
   */
  async release(): Promise<void> {
    this.stop();
    await this.#cycle;
    for (const state of this.#buckets) if (state.phase === 'held') state.phase = 'draining';
    const deadline = this.#deps.clock.monotonicMs() + this.#timings.renewDeadlineMs;
    while (this.#buckets.some((_, bucket) => this.#deps.inFlight(bucket) > 0)) {
      if (this.#deps.clock.monotonicMs() >= deadline) break;
      await new Promise<void>((resolve) => this.#deps.timers.schedule(100, resolve));
    }
    await this.#releaseLease(this.#id(this.#memberName()), this.#member.lease);
    this.#member.lastRenewAtMs = undefined;
    this.#member.sinceMs = undefined;
    await Promise.all(
      this.#buckets.map(async (state, bucket) => {
        if (state.phase === 'none') return;
        state.phase = 'none';
        state.lastRenewAtMs = undefined;
        await this.#releaseLease(this.#bucketId(bucket), state.lease);
        this.#handovers += 1;
        this.#deps.onReleased?.(bucket, 'shutdown');
      }),
    );
  }

  bucketOf(namespace: string): number {
    return bucketOf(namespace, this.#settings.bucketCount);
  }

  /** Changes in `namespace` are this replica's to reconcile: it holds the bucket, not draining. */
  owns(namespace: string): boolean {
    return this.#buckets[this.bucketOf(namespace)]?.phase === 'held';
  }

  /** A write to `namespace` may start now: owned, and the bucket's term cannot have lapsed. */
  mayWrite(namespace: string): boolean {
    const state = this.#buckets[this.bucketOf(namespace)];
    return (
      state?.phase === 'held' &&
      canWriteAt({
        nowMs: this.#deps.clock.monotonicMs(),
        lastRenewAtMs: state.lastRenewAtMs,
        timings: this.#timings,
      })
    );
  }

  /** The live member `namespace` is assigned to, as this replica last saw the members. */
  assignedOwner(namespace: string): string | undefined {
    return this.#owners[this.bucketOf(namespace)];
  }

  /** The replica that holds the Lease of the bucket of `namespace`, as last read. */
  leaseHolder(namespace: string): string | undefined {
    return this.#buckets[this.bucketOf(namespace)]?.lease?.record.holderIdentity;
  }

  ownedBuckets(): readonly number[] {
    return this.#buckets.flatMap((state, bucket) => (state.phase === 'held' ? [bucket] : []));
  }

  liveMembers(): readonly string[] {
    return this.#liveMembers;
  }

  /** Buckets released to another member or lost to one, since start. */
  get handovers(): number {
    return this.#handovers;
  }

  /** Monotonic time of the last successful list of the shard's Leases (for `/readyz`). */
  get lastObservedAt(): number | undefined {
    return this.#lastListedAtMs;
  }

  #runCycle(): void {
    this.#cancelTick = undefined;
    const cycle = this.tick()
      .catch((error: unknown) => {
        this.#report('shard cycle failed on', error);
      })
      .finally(() => {
        this.#cycle = undefined;
        if (this.#running) {
          const delayMs = this.#nudged ? 0 : this.nextRoundDelayMs();
          this.#nudged = false;
          this.#cancelTick = this.#deps.timers.schedule(delayMs, () => {
            this.#runCycle();
          });
        }
      });
    this.#cycle = cycle;
  }

  #memberName(): string {
    return memberLeaseName(this.#settings.prefix, this.#settings.identity);
  }

  #bucketId(bucket: number): LeaseId {
    return this.#id(bucketLeaseName(this.#settings.prefix, bucket));
  }

  /** This replica is a member while its own member Lease is within the renew deadline. */
  #isMember(nowMs: number): boolean {
    return canWriteAt({ nowMs, lastRenewAtMs: this.#member.lastRenewAtMs, timings: this.#timings });
  }

  /** The shard's Leases, and when the answer was read (the moment their changes are observed). */
  async #list(): Promise<
    { readonly leases: readonly NamedLease[]; readonly atMs: number } | undefined
  > {
    try {
      const leases = await this.#deps.store.list(
        this.#settings.namespace,
        `${this.#settings.prefix}-`,
      );
      return { leases, atMs: this.#deps.clock.monotonicMs() };
    } catch (error) {
      this.#report('cannot list the shard leases in', error);
      return undefined;
    }
  }

  /**
   * Renews the member Lease from the version this replica last wrote; read first only when that
   * is unknown (the first round, or after a write that failed or conflicted).
   */
  async #renewMember(): Promise<void> {
    const id = this.#id(this.#memberName());
    let lease = this.#member.lease;
    if (!this.#member.current) {
      try {
        lease = await this.#deps.store.get(id);
      } catch (error) {
        this.#report('cannot read the member lease', error);
        return;
      }
    }
    // Our own member Lease: nobody else's renewals to wait for, whatever it says.
    const sentAtMs = this.#deps.clock.monotonicMs();
    const written = await this.#claim(id, lease, lease === undefined ? 'acquire' : 'renew');
    this.#member.current = written !== undefined;
    if (written === undefined) return;
    if (!this.#isMember(sentAtMs)) this.#member.sinceMs = sentAtMs;
    this.#member.lease = written;
    this.#member.lastRenewAtMs = sentAtMs;
  }

  /**
   * At the round's start, a bucket held here and assigned here by the last round is renewed from
   * the version last written, and one draining while its writes are in flight; resolves true when
   * renewed. Undefined: not renewed now (the round decides on its list). What the list then shows
   * decides the rest (a bucket found taken is dropped: this renewal conflicted).
   */
  #renewHeld(bucket: number, state: BucketState): Promise<boolean> | undefined {
    if (state.lease?.record.holderIdentity !== this.#settings.identity) return undefined;
    if (state.phase === 'held' && this.#owners[bucket] === this.#settings.identity) {
      return this.#claimBucket(bucket, state, 'renew', { admit: true });
    }
    if (state.phase === 'draining' && this.#deps.inFlight(bucket) > 0) {
      return this.#claimBucket(bucket, state, 'renew', { admit: false });
    }
    return undefined;
  }

  /** The live members: others seen renewing within their duration, and this one while a member. */
  #observeMembers(leases: readonly NamedLease[], nowMs: number): readonly string[] {
    const prefix = memberLeasePrefix(this.#settings.prefix);
    const own = this.#memberName();
    const observations = new Map<string, LeaseObservation>();
    const claims = new Map<string, ObservedClaim>();
    const live = new Set<string>();
    const since = new Map<string, number>();
    for (const { name, lease } of leases) {
      if (!name.startsWith(prefix) || name === own) continue;
      const observation = observeLease(this.#memberObservations.get(name), lease, nowMs);
      observations.set(name, observation);
      const holder = lease.record.holderIdentity;
      const expired =
        nowMs >= observation.observedAtMs + claimDurationMs(lease.record, this.#timings);
      if (holder !== undefined && holder !== this.#settings.identity && !expired) {
        live.add(holder);
        since.set(holder, joinedAtMs(lease));
        claims.set(holder, { lease, observation });
      }
    }
    since.set(this.#settings.identity, joinedAtMs(this.#member.lease));
    this.#memberSince = since;
    this.#memberObservations = observations;
    this.#memberClaims = claims;
    this.#liveSince = new Map(
      [...live].map((member) => [member, this.#liveSince.get(member) ?? nowMs]),
    );
    if (this.#isMember(nowMs)) live.add(this.#settings.identity);
    return [...live].sort();
  }

  /**
   * The live members, or, once this replica has been a member for a lease duration, those of them
   * seen live that long (and itself): it can tell a dead member from a live one, a newcomer cannot
   * yet, and a bucket assigned to a newcomer would wait for the newcomer's own lease duration.
   */
  #assigneesAt(nowMs: number): readonly string[] {
    const duration = this.#timings.leaseDurationMs;
    const since = this.#member.sinceMs;
    if (!this.#isMember(nowMs) || since === undefined || nowMs - since < duration)
      return this.#liveMembers;
    return this.#liveMembers.filter(
      (member) =>
        member === this.#settings.identity ||
        nowMs - (this.#liveSince.get(member) ?? nowMs) >= duration,
    );
  }

  /**
   * Senior first: by when each became a member (the acquire time its member Lease names, the same
   * in every replica's list), then by name. The most senior get the larger shares of an uneven
   * split (src/shard/assignment.ts).
   */
  #bySeniority(members: readonly string[]): readonly string[] {
    const since = (member: string): number =>
      this.#memberSince.get(member) ?? Number.POSITIVE_INFINITY;
    return [...members].sort((a, b) => since(a) - since(b) || (a < b ? -1 : a > b ? 1 : 0));
  }

  async #step(
    bucket: number,
    input: {
      lease: ObservedLease | undefined;
      assigned: boolean;
      nowMs: number;
      /**
       * Renewed at this round's start (true: the version written is newer than the list's), or
       * tried then and failed (false: not tried again this round); undefined when not held.
       */
      renewal: boolean | undefined;
    },
  ): Promise<void> {
    const state = this.#buckets[bucket];
    if (!state) return;
    const { lease, assigned, nowMs, renewal } = input;
    const attempted = renewal !== undefined;
    if (renewal !== true) this.#observeBucket(state, lease, nowMs);
    const heldHere = state.lease?.record.holderIdentity === this.#settings.identity;
    if (state.phase !== 'none' && !heldHere) {
      // Taken over (our term lapsed) or deleted: nothing more is written under it.
      this.#drop(bucket, state, `lease held by ${lease?.record.holderIdentity ?? 'nobody'}`);
    }
    // Assigned here: kept, unless renewed (or tried) at the round's start as held; one draining
    // and assigned back is admitted again.
    if (assigned) {
      if (!attempted || state.phase === 'draining') await this.#keep(bucket, state, nowMs);
    } else if (heldHere) await this.#handOver(bucket, state, attempted);
  }

  /** The bucket's Lease as this round's list shows it. */
  #observeBucket(state: BucketState, lease: ObservedLease | undefined, nowMs: number): void {
    if (lease) state.observation = observeLease(state.observation, lease, nowMs);
    state.lease = lease;
  }

  /** Assigned here: acquire when free or expired, renew when held. */
  async #keep(bucket: number, state: BucketState, nowMs: number): Promise<void> {
    const action = decideLeaseAction({
      lease: state.lease,
      observation: state.observation,
      identity: this.#settings.identity,
      nowMs,
      timings: this.#timings,
    });
    // Not held yet: its namespaces must be in the caches before the first reconcile reads them.
    const { cache } = this.#deps;
    if (state.phase === 'none' && cache !== undefined && !cache.isFilled(bucket)) return;
    if (action === 'acquire' || action === 'takeover' || action === 'renew') {
      await this.#claimBucket(bucket, state, action, { admit: true });
    }
  }

  /** Held here, assigned elsewhere: admit nothing more; release once the writes in flight answered. */
  async #handOver(bucket: number, state: BucketState, attempted: boolean): Promise<void> {
    if (state.phase === 'none') state.lastRenewAtMs = undefined;
    state.phase = 'draining';
    if (this.#deps.inFlight(bucket) > 0) {
      // Renewed (or tried) at the round's start: once a round.
      if (!attempted) await this.#claimBucket(bucket, state, 'renew', { admit: false });
      return;
    }
    if (await this.#releaseLease(this.#bucketId(bucket), state.lease)) {
      this.#drop(bucket, state, 'assigned to another member');
    }
  }

  async #claimBucket(
    bucket: number,
    state: BucketState,
    action: 'acquire' | 'takeover' | 'renew',
    mode: { readonly admit: boolean },
  ): Promise<boolean> {
    const sentAtMs = this.#deps.clock.monotonicMs();
    const written = await this.#claim(this.#bucketId(bucket), state.lease, action);
    if (written === undefined) return false;
    const answeredAtMs = this.#deps.clock.monotonicMs();
    // Held, but the renew deadline passed before this answer was read: the fence refused every
    // write meanwhile, some perhaps halfway (a Job deleted, not yet created again), so the bucket
    // is reconciled as if newly acquired. Judged when the answer is read, not when the renewal was
    // sent: a starved process sends in time and reads the answer seconds later.
    const lapsed =
      state.phase === 'held' &&
      !canWriteAt({
        nowMs: answeredAtMs,
        lastRenewAtMs: state.lastRenewAtMs,
        timings: this.#timings,
      });
    state.lease = written;
    state.observation = observeLease(state.observation, written, answeredAtMs);
    state.lastRenewAtMs = sentAtMs;
    if (!mode.admit || (state.phase === 'held' && !lapsed)) return true;
    // Newly held, held again after a lapse, or assigned back while draining (changes were not
    // routed here meanwhile).
    state.phase = 'held';
    this.#deps.onAcquired(bucket);
    return true;
  }

  /** Creates or replaces the Lease naming this replica; undefined when another write won or failed. */
  async #claim(
    id: LeaseId,
    lease: ObservedLease | undefined,
    action: 'acquire' | 'takeover' | 'renew',
  ): Promise<ObservedLease | undefined> {
    const record = claimRecord({
      action,
      previous: lease?.record,
      identity: this.#settings.identity,
      now: new Date(this.#deps.clock.now()),
      timings: this.#timings,
    });
    try {
      return lease === undefined
        ? await this.#deps.store.create(id, record)
        : await this.#deps.store.replace(id, record, lease.resourceVersion);
    } catch (error) {
      // A conflict means another replica wrote first (or our answer was lost): the next list shows.
      if (!(error instanceof LeaseConflictError))
        this.#report(`cannot ${action} the lease`, error, id);
      return undefined;
    }
  }

  /** Clears the holder with a 1 s duration; true when written. */
  async #releaseLease(id: LeaseId, lease: ObservedLease | undefined): Promise<boolean> {
    if (lease?.record.holderIdentity !== this.#settings.identity) return false;
    try {
      await this.#deps.store.replace(
        id,
        releaseRecord(lease.record, new Date(this.#deps.clock.now())),
        lease.resourceVersion,
      );
      return true;
    } catch (error) {
      if (!(error instanceof LeaseConflictError))
        this.#report('cannot release the lease', error, id);
      return false;
    }
  }

  #drop(bucket: number, state: BucketState, reason: string): void {
    if (state.phase === 'none') return;
    state.phase = 'none';
    state.lastRenewAtMs = undefined;
    this.#handovers += 1;
    this.#deps.onReleased?.(bucket, reason);
  }

  #report(message: string, cause: unknown, id?: LeaseId): void {
    const where = id ? `${id.namespace}/${id.name}` : this.#settings.namespace;
    this.#deps.onError?.(new ShardLeaseError(`${message} ${where}`, { cause }));
  }
}
