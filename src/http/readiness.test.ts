import { describe, expect, it } from 'vitest';
import {
  FOLLOWER_FRESHNESS_MS,
  aggregateReadiness,
  buildReadinessReport,
  kindStatusOf,
  serializeReadinessReport,
} from './readiness.ts';
import type { ReadinessInput, WatchState, WatchStatus } from './readiness.ts';

function clusterWide(kinds: Readonly<Record<string, WatchStatus>>): WatchState[] {
  return Object.entries(kinds).map(([resource, status]) => ({
    resource,
    namespace: undefined,
    status,
  }));
}

function inNamespace(namespace: string, kinds: Readonly<Record<string, WatchStatus>>) {
  return clusterWide(kinds).map((watch) => ({ ...watch, namespace }));
}

const base: ReadinessInput = {
  watches: clusterWide({ configmaps: 'ok', secrets: 'ok', deployments: 'ok' }),
  unwatched: {},
  apiServer: 'ok',
  leaderElection: 'disabled',
  leaseReadAgoMs: undefined,
  shuttingDown: false,
};

describe('buildReadinessReport', () => {
  it.each<[string, Partial<ReadinessInput>, boolean, boolean]>([
    ['all kinds synced, HA off', {}, true, true],
    [
      'a kind still syncing',
      { watches: clusterWide({ configmaps: 'ok', deployments: 'syncing' }) },
      false,
      false,
    ],
    [
      'forbidden and absent kinds are detail only',
      {
        watches: clusterWide({ configmaps: 'ok', deployments: 'ok', rollouts: 'forbidden' }),
        unwatched: { deploymentconfigs: 'absent' },
      },
      true,
      true,
    ],
    [
      'a kind whose discovery failed is detail only',
      { unwatched: { rollouts: 'error' } },
      true,
      true,
    ],
    [
      'a forbidden namespace is detail only',
      {
        watches: [
          ...inNamespace('ma', { configmaps: 'ok', deployments: 'ok' }),
          ...inNamespace('mb', { configmaps: 'forbidden', deployments: 'forbidden' }),
        ],
      },
      true,
      true,
    ],
    [
      'a permitted namespace still syncing',
      {
        watches: [
          ...inNamespace('ma', { configmaps: 'ok', deployments: 'syncing' }),
          ...inNamespace('mb', { configmaps: 'forbidden', deployments: 'forbidden' }),
        ],
      },
      false,
      false,
    ],
    [
      'nothing can be listed anywhere',
      { watches: clusterWide({ configmaps: 'forbidden', deployments: 'forbidden' }) },
      false,
      true,
    ],
    [
      'sources in one namespace, workloads only in another: nothing can roll',
      {
        watches: [
          ...inNamespace('ma', { configmaps: 'ok', deployments: 'forbidden' }),
          ...inNamespace('mb', { configmaps: 'forbidden', deployments: 'ok' }),
        ],
      },
      false,
      true,
    ],
    [
      'only the Namespace watch of --namespace-selector can be listed',
      {
        watches: clusterWide({
          configmaps: 'forbidden',
          namespaces: 'ok',
          deployments: 'forbidden',
        }),
      },
      false,
      true,
    ],
    ['leading', { leaderElection: 'leader' }, true, true],
    [
      'following, lease read 14.9 s ago',
      { leaderElection: 'follower', leaseReadAgoMs: 14_999 },
      true,
      true,
    ],
    [
      'following, lease read 15 s ago',
      { leaderElection: 'follower', leaseReadAgoMs: 15_000 },
      false,
      true,
    ],
    [
      'following, lease never read',
      { leaderElection: 'follower', leaseReadAgoMs: undefined },
      false,
      true,
    ],
    ['lost the lease', { leaderElection: 'lost', leaseReadAgoMs: 0 }, false, true],
    ['shutting down', { shuttingDown: true }, false, true],
    [
      'API server unreachable while caches are synced',
      { apiServer: 'unreachable: connect ECONNREFUSED' },
      true,
      true,
    ],
  ])('%s → ready %s, cachesSynced %s', (_case, override, ready, cachesSynced) => {
    const report = buildReadinessReport({ ...base, ...override });
    expect(report.ready).toBe(ready);
    expect(report.checks.cachesSynced).toBe(cachesSynced);
  });

  it('names each namespace with a kind that is not ok, and only those', () => {
    const report = buildReadinessReport({
      ...base,
      watches: [
        ...inNamespace('ma', { configmaps: 'ok', secrets: 'ok', deployments: 'ok' }),
        ...inNamespace('mb', { configmaps: 'forbidden', secrets: 'ok', deployments: 'forbidden' }),
        ...inNamespace('mc', { configmaps: 'syncing', secrets: 'ok', deployments: 'ok' }),
      ],
    });
    expect(report.checks.namespaces).toEqual({
      mb: { configmaps: 'forbidden', deployments: 'forbidden' },
      mc: { configmaps: 'syncing' },
    });
    expect(report.checks.kinds).toEqual({
      configmaps: 'syncing',
      secrets: 'ok',
      deployments: 'partial',
    });
  });

  it('lists no namespaces for cluster-wide watches', () => {
    const report = buildReadinessReport({
      ...base,
      watches: clusterWide({ configmaps: 'ok', secrets: 'forbidden', deployments: 'ok' }),
    });
    expect(report.checks.namespaces).toEqual({});
    expect(report.checks.kinds).toEqual({
      configmaps: 'ok',
      secrets: 'forbidden',
      deployments: 'ok',
    });
  });
});

describe('kindStatusOf', () => {
  it.each<[readonly WatchStatus[], string]>([
    [['ok'], 'ok'],
    [['ok', 'ok'], 'ok'],
    [['forbidden', 'forbidden'], 'forbidden'],
    [['absent'], 'absent'],
    [['ok', 'forbidden'], 'partial'],
    [['absent', 'ok'], 'partial'],
    [['ok', 'syncing', 'forbidden'], 'syncing'],
    [['forbidden', 'absent'], 'forbidden'],
    [[], 'syncing'],
  ])('%j → %s', (statuses, expected) => {
    expect(kindStatusOf(statuses)).toBe(expected);
  });
});

describe('serializeReadinessReport', () => {
  it('writes the §13.1 body with its field order', () => {
    const body = serializeReadinessReport(
      buildReadinessReport({
        watches: clusterWide({
          configmaps: 'ok',
          secrets: 'ok',
          deployments: 'ok',
          rollouts: 'forbidden',
        }),
        unwatched: { deploymentconfigs: 'absent' },
        apiServer: 'ok',
        leaderElection: 'leader',
        leaseReadAgoMs: 1_000,
        shuttingDown: false,
      }),
    );
    expect(body).toBe(
      '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"leader",' +
        '"kinds":{"configmaps":"ok","secrets":"ok","deployments":"ok","rollouts":"forbidden","deploymentconfigs":"absent"},' +
        '"permitted":true}}',
    );
  });

  it.each([
    ['no flapping source: the body is as before', [], ''],
    [
      'a flapping source is detail after permitted; still ready',
      [
        {
          source: 'ns/secret/tls',
          since: '2026-06-01T00:00:00.000Z',
          closesAt: '2026-06-01T00:02:00.000Z',
        },
      ],
      ',"flappingSources":[{"source":"ns/secret/tls","since":"2026-06-01T00:00:00.000Z","closesAt":"2026-06-01T00:02:00.000Z"}]',
    ],
  ])('%s', (_name, flappingSources, detail) => {
    const body = serializeReadinessReport(buildReadinessReport({ ...base, flappingSources }));
    expect(body).toBe(
      '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"disabled",' +
        `"kinds":{"configmaps":"ok","secrets":"ok","deployments":"ok"},"permitted":true${detail}}}`,
    );
  });

  it('adds the namespaces that are not ok after the kinds', () => {
    const body = serializeReadinessReport(
      buildReadinessReport({
        ...base,
        watches: [
          ...inNamespace('ma', { configmaps: 'ok', deployments: 'ok' }),
          ...inNamespace('mb', { configmaps: 'forbidden', deployments: 'forbidden' }),
        ],
      }),
    );
    expect(body).toBe(
      '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"disabled",' +
        '"kinds":{"configmaps":"partial","deployments":"partial"},' +
        '"namespaces":{"mb":{"configmaps":"forbidden","deployments":"forbidden"}},"permitted":true}}',
    );
  });

  it('lists halted rollouts last, as detail: the report stays ready', () => {
    const body = serializeReadinessReport(
      buildReadinessReport({
        ...base,
        watches: clusterWide({ configmaps: 'ok', deployments: 'ok' }),
        haltedRollouts: ['team-a/secret/db@222222222222'],
      }),
    );
    expect(body).toBe(
      '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"disabled",' +
        '"kinds":{"configmaps":"ok","deployments":"ok"},"permitted":true,' +
        '"haltedRollouts":["team-a/secret/db@222222222222"]}}',
    );
  });

  it('keeps the field order of a report built in another order', () => {
    const body = serializeReadinessReport({
      checks: {
        permitted: false,
        namespaces: {},
        kinds: {},
        leaderElection: 'lost',
        apiServer: 'unreachable: timeout',
        cachesSynced: false,
      },
      ready: false,
    });
    expect(body).toBe(
      '{"ready":false,"checks":{"cachesSynced":false,"apiServer":"unreachable: timeout","leaderElection":"lost","kinds":{},"permitted":false}}',
    );
  });
});

describe('aggregateReadiness', () => {
  const watch = {
    watchStates: (): readonly WatchState[] => [
      { resource: 'configmaps', namespace: undefined, status: 'ok' },
      { resource: 'deployments', namespace: undefined, status: 'ok' },
    ],
    unwatchedKinds: () => ({ rollouts: 'absent' as const }),
    apiServerStatus: () => 'ok' as const,
  };

  it('reports a follower that read the Lease recently as ready, with how long ago', () => {
    const report = aggregateReadiness({
      watch,
      election: { state: () => 'follower', lastObservedAt: 1_000 },
      shuttingDown: () => false,
      monotonicMs: () => 4_000,
    });
    expect(report.ready).toBe(true);
    expect(report.checks.leaderElection).toBe('follower');
    expect(report.checks.kinds).toMatchObject({ configmaps: 'ok', rollouts: 'absent' });
  });

  it('without HA says disabled; shutting down is not ready', () => {
    const report = aggregateReadiness({
      watch,
      election: undefined,
      shuttingDown: () => true,
      monotonicMs: () => 0,
    });
    expect(report.checks.leaderElection).toBe('disabled');
    expect(report.ready).toBe(false);
  });

  it('a follower whose last Lease read is stale is not ready', () => {
    const report = aggregateReadiness({
      watch,
      election: { state: () => 'follower', lastObservedAt: 0 },
      shuttingDown: () => false,
      monotonicMs: () => FOLLOWER_FRESHNESS_MS + 1,
    });
    expect(report.ready).toBe(false);
  });
});
