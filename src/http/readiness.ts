/** Status of one watched kind in `/readyz` (§13.1). */
export type KindStatus = 'ok' | 'syncing' | 'forbidden' | 'absent';

export type LeaderElectionStatus = 'disabled' | 'leader' | 'follower' | 'lost';

export type ApiServerStatus = 'ok' | `unreachable: ${string}`;

/** The `/readyz` body. `kinds` is keyed by plural resource (`configmaps`, `deployments`, …). */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: {
    readonly cachesSynced: boolean;
    readonly apiServer: ApiServerStatus;
    readonly leaderElection: LeaderElectionStatus;
    readonly kinds: Readonly<Record<string, KindStatus>>;
  };
}

export interface ReadinessInput {
  /** Every enabled kind, in the order they should be listed. */
  readonly kinds: Readonly<Record<string, KindStatus>>;
  readonly apiServer: ApiServerStatus;
  readonly leaderElection: LeaderElectionStatus;
  /** Milliseconds since the election loop last read the Lease; undefined if it never did. */
  readonly leaseReadAgoMs: number | undefined;
  /** Shutdown has begun (§13.5 step 1). */
  readonly shuttingDown: boolean;
}

/** A follower that read the Lease within this window is "following correctly" (§13.1). */
export const FOLLOWER_FRESHNESS_MS = 15_000;

/** Forbidden and absent kinds are detail only: they never make the replica unready. */
const BLOCKS_SYNC: Readonly<Record<KindStatus, boolean>> = {
  ok: false,
  syncing: true,
  forbidden: false,
  absent: false,
};

function leaderElectionAllowsReady(input: ReadinessInput): boolean {
  switch (input.leaderElection) {
    case 'disabled':
    case 'leader':
      return true;
    case 'follower':
      return input.leaseReadAgoMs !== undefined && input.leaseReadAgoMs < FOLLOWER_FRESHNESS_MS;
    case 'lost':
      return false;
  }
}

/** Applies the readiness rules of §13.1. */
export function buildReadinessReport(input: ReadinessInput): ReadinessReport {
  const cachesSynced = Object.values(input.kinds).every((status) => !BLOCKS_SYNC[status]);
  return {
    ready: cachesSynced && leaderElectionAllowsReady(input) && !input.shuttingDown,
    checks: {
      cachesSynced,
      apiServer: input.apiServer,
      leaderElection: input.leaderElection,
      kinds: input.kinds,
    },
  };
}

/** Compact JSON with the field order of §13.1, whatever order the report was built in. */
export function serializeReadinessReport(report: ReadinessReport): string {
  return JSON.stringify({
    ready: report.ready,
    checks: {
      cachesSynced: report.checks.cachesSynced,
      apiServer: report.checks.apiServer,
      leaderElection: report.checks.leaderElection,
      kinds: report.checks.kinds,
    },
  });
}
