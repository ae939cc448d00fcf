import { SOURCE_TYPE_ROWS } from '../core/source-types.ts';
import { WORKLOAD_KINDS } from '../rollout/kinds.ts';

/**
 * Status of one list-watch: `ok`, `syncing` (initial list not done), `forbidden` (403) or `absent`
 * (404, API not served). The same values as kube/'s `ListWatchStatus`, which app.ts passes in.
 */
export type WatchStatus = 'ok' | 'syncing' | 'forbidden' | 'absent';

/**
 * Status of one kind in `/readyz` (§13.1). A kind watched in several namespaces is `partial` when
 * it is `ok` in some and forbidden or absent in others (ADR 0021); `error` when discovery could not
 * tell whether its API is served (retried).
 */
export type KindStatus = WatchStatus | 'partial' | 'error';

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
    /** Scoped modes: each watched namespace with a kind that is not `ok`, and those kinds. */
    readonly namespaces: Readonly<Record<string, Readonly<Record<string, WatchStatus>>>>;
    /** Some namespace (or the cluster) has a source kind and a workload kind that are `ok`. */
    readonly permitted: boolean;
    /**
     * Source changes whose rollout is halted now (`--rollout-waves`), as `<ns>/<type>/<name>@<hash
     * prefix>`. Detail only: a halt is not unreadiness.
     */
    readonly haltedRollouts?: readonly string[] | undefined;
    /**
     * Sources whose flapping breaker is open (docs/windows-and-breaker.md): detail, never
     * unreadiness. Omitted from the body while there is none.
     */
    readonly flappingSources?: readonly FlappingSourceDetail[] | undefined;
  };
}

/** A source flapping now: `namespace/type/name`, when its breaker opened, when it closes if quiet. */
export interface FlappingSourceDetail {
  readonly source: string;
  readonly since: string;
  readonly closesAt: string;
}

/** One running list-watch. */
export interface WatchState {
  readonly resource: string;
  /** `undefined`: a cluster-wide watch. */
  readonly namespace: string | undefined;
  readonly status: WatchStatus;
}

export interface ReadinessInput {
  /** Every running list-watch, in the order their kinds should be listed. */
  readonly watches: readonly WatchState[];
  /** Optional kinds that are not watched: their API is not served, or discovery failed. */
  readonly unwatched: Readonly<Record<string, 'absent' | 'error'>>;
  readonly apiServer: ApiServerStatus;
  readonly leaderElection: LeaderElectionStatus;
  /** Milliseconds since the election loop last read the Lease; undefined if it never did. */
  readonly leaseReadAgoMs: number | undefined;
  /** Shutdown has begun (§13.5 step 1). */
  readonly shuttingDown: boolean;
  /** Halted source changes (roll admission); undefined or empty: none. */
  readonly haltedRollouts?: readonly string[] | undefined;
  readonly flappingSources?: readonly FlappingSourceDetail[] | undefined;
}

/** A follower that read the Lease within this window is "following correctly" (§13.1). */
export const FOLLOWER_FRESHNESS_MS = 15_000;

/**
 * What a resource is for in deciding `permitted`: kreload can roll something only where it can
 * read a source kind and a workload kind. Keyed by the rows' readiness keys: a kind row's `plural`,
 * a source-type row's `watchResources`. The Namespace watch of `--namespace-selector` is neither.
 */
const RESOURCE_ROLES: ReadonlyMap<string, 'source' | 'workload'> = new Map([
  ...WORKLOAD_KINDS.map((row) => [row.plural, 'workload'] as const),
  ...SOURCE_TYPE_ROWS.flatMap((row) =>
    row.watchResources.map((resource) => [resource, 'source'] as const),
  ),
]);

/** The status of a kind from those of its watches, one per namespace (or one cluster-wide). */
export function kindStatusOf(statuses: readonly WatchStatus[]): KindStatus {
  const distinct = new Set(statuses);
  const [only] = distinct;
  if (distinct.size === 1 && only !== undefined) return only;
  if (distinct.has('syncing') || only === undefined) return 'syncing';
  return distinct.has('ok') ? 'partial' : 'forbidden';
}

function summarizeKinds(input: ReadinessInput): Record<string, KindStatus> {
  const byResource = new Map<string, WatchStatus[]>();
  for (const watch of input.watches) {
    byResource.set(watch.resource, [...(byResource.get(watch.resource) ?? []), watch.status]);
  }
  const kinds: Record<string, KindStatus> = {};
  for (const [resource, statuses] of byResource) kinds[resource] = kindStatusOf(statuses);
  return { ...kinds, ...input.unwatched };
}

function troubledNamespaces(
  watches: readonly WatchState[],
): Record<string, Record<string, WatchStatus>> {
  const namespaces: Record<string, Record<string, WatchStatus>> = {};
  for (const { namespace, resource, status } of watches) {
    if (namespace === undefined || status === 'ok') continue;
    namespaces[namespace] = { ...namespaces[namespace], [resource]: status };
  }
  return namespaces;
}

function anyScopePermitted(watches: readonly WatchState[]): boolean {
  const roles = new Map<string, Set<string>>();
  for (const { namespace, resource, status } of watches) {
    const role = RESOURCE_ROLES.get(resource);
    if (status !== 'ok' || role === undefined) continue;
    const scope = namespace ?? '';
    roles.set(scope, new Set([...(roles.get(scope) ?? []), role]));
  }
  return [...roles.values()].some((set) => set.has('source') && set.has('workload'));
}

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

/**
 * Applies the readiness rules of §13.1 and ADR 0021: every watch that is neither forbidden nor
 * absent has synced, and something can be rolled somewhere. Forbidden namespaces and kinds are
 * detail only, so the permitted namespaces keep being served.
 */
export function buildReadinessReport(input: ReadinessInput): ReadinessReport {
  const cachesSynced = input.watches.every((watch) => watch.status !== 'syncing');
  const permitted = anyScopePermitted(input.watches);
  return {
    ready: cachesSynced && permitted && leaderElectionAllowsReady(input) && !input.shuttingDown,
    checks: {
      cachesSynced,
      apiServer: input.apiServer,
      leaderElection: input.leaderElection,
      kinds: summarizeKinds(input),
      namespaces: troubledNamespaces(input.watches),
      permitted,
      haltedRollouts: input.haltedRollouts,
      ...(input.flappingSources !== undefined &&
        input.flappingSources.length > 0 && { flappingSources: input.flappingSources }),
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
      // Omitted while every namespace is healthy, so the Reloader-era body stays as it was.
      ...(Object.keys(report.checks.namespaces).length > 0
        ? { namespaces: report.checks.namespaces }
        : {}),
      permitted: report.checks.permitted,
      // Only while a change is halted, so the Reloader-era body stays as it was.
      ...((report.checks.haltedRollouts?.length ?? 0) > 0
        ? { haltedRollouts: report.checks.haltedRollouts }
        : {}),
      ...(report.checks.flappingSources === undefined
        ? {}
        : { flappingSources: report.checks.flappingSources }),
    },
  });
}

/** The watch server as `/readyz` sees it. */
export interface WatchReadiness {
  watchStates(): readonly WatchState[];
  unwatchedKinds(): Readonly<Record<string, 'absent' | 'error'>>;
  apiServerStatus(): ApiServerStatus;
}

/** The leader elector as `/readyz` sees it. */
export interface ElectionReadiness {
  state(): Exclude<LeaderElectionStatus, 'disabled'>;
  /** Monotonic milliseconds of the last Lease read; undefined if there was none yet. */
  readonly lastObservedAt: number | undefined;
}

export interface ReadinessSources {
  readonly watch: WatchReadiness;
  /** Undefined without HA. */
  readonly election: ElectionReadiness | undefined;
  readonly shuttingDown: () => boolean;
  readonly monotonicMs: () => number;
  /** Halted source changes (roll admission), for detail. */
  readonly haltedRollouts?: (() => readonly string[]) | undefined;
  /** The flapping-source breakers, when they are on. */
  readonly breakers?: { flapping(): readonly FlappingSourceDetail[] } | undefined;
}

/** The `/readyz` report from the running parts: the watch server and the leadership state. */
export function aggregateReadiness(sources: ReadinessSources): ReadinessReport {
  const { election, watch } = sources;
  const lastRead = election?.lastObservedAt;
  return buildReadinessReport({
    watches: watch.watchStates(),
    unwatched: watch.unwatchedKinds(),
    apiServer: watch.apiServerStatus(),
    leaderElection: election?.state() ?? 'disabled',
    leaseReadAgoMs: lastRead === undefined ? undefined : sources.monotonicMs() - lastRead,
    shuttingDown: sources.shuttingDown(),
    haltedRollouts: sources.haltedRollouts?.(),
    flappingSources: sources.breakers?.flapping(),
  });
}
