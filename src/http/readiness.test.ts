import { describe, expect, it } from 'vitest';
import { buildReadinessReport, serializeReadinessReport } from './readiness.ts';
import type { ReadinessInput } from './readiness.ts';

const base: ReadinessInput = {
  kinds: { configmaps: 'ok', secrets: 'ok', deployments: 'ok' },
  apiServer: 'ok',
  leaderElection: 'disabled',
  leaseReadAgoMs: undefined,
  shuttingDown: false,
};

describe('buildReadinessReport', () => {
  it.each<[string, Partial<ReadinessInput>, boolean, boolean]>([
    ['all kinds synced, HA off', {}, true, true],
    ['a kind still syncing', { kinds: { configmaps: 'ok', deployments: 'syncing' } }, false, false],
    [
      'forbidden and absent kinds are detail only',
      { kinds: { configmaps: 'ok', rollouts: 'forbidden', deploymentconfigs: 'absent' } },
      true,
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
});

describe('serializeReadinessReport', () => {
  it('writes the §13.1 body with its field order', () => {
    const body = serializeReadinessReport(
      buildReadinessReport({
        kinds: {
          configmaps: 'ok',
          secrets: 'ok',
          deployments: 'ok',
          rollouts: 'forbidden',
          deploymentconfigs: 'absent',
        },
        apiServer: 'ok',
        leaderElection: 'leader',
        leaseReadAgoMs: 1_000,
        shuttingDown: false,
      }),
    );
    expect(body).toBe(
      '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"leader",' +
        '"kinds":{"configmaps":"ok","secrets":"ok","deployments":"ok","rollouts":"forbidden","deploymentconfigs":"absent"}}}',
    );
  });

  it('keeps the field order of a report built in another order', () => {
    const body = serializeReadinessReport({
      checks: {
        kinds: {},
        leaderElection: 'lost',
        apiServer: 'unreachable: timeout',
        cachesSynced: false,
      },
      ready: false,
    });
    expect(body).toBe(
      '{"ready":false,"checks":{"cachesSynced":false,"apiServer":"unreachable: timeout","leaderElection":"lost","kinds":{}}}',
    );
  });
});
