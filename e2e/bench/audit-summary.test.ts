import { describe, expect, it } from 'vitest';
import type { AuditEvent } from '../harness/audit.ts';
import { splitByPhase, summarisePhase, writeRate } from './audit-summary.ts';

const USER = 'system:serviceaccount:kreload-system:kreload';

function line(
  verb: string,
  resource: string,
  details: { stage?: string; code?: number; user?: string } = {},
): string {
  return JSON.stringify({
    stage: details.stage ?? 'ResponseComplete',
    verb,
    user: { username: details.user ?? USER },
    objectRef: { resource },
    responseStatus: { code: details.code ?? 200 },
    requestURI: `/x/${resource}`,
  });
}

describe('splitByPhase', () => {
  it('puts each complete line in the phase where it starts, dropping cut lines', () => {
    const lines = [
      line('list', 'deployments'),
      line('get', 'deployments'),
      line('list', 'secrets'),
      line('patch', 'deployments'),
    ];
    const text = `{"cut":\n${lines.join('\n')}\n`;
    const from = 1000;
    const offsetOf = (index: number): number =>
      from +
      Buffer.byteLength(
        `{"cut":\n${lines
          .slice(0, index)
          .map((l) => `${l}\n`)
          .join('')}`,
      );
    const marks = [
      { offset: offsetOf(3), ready: true }, // the restarted process is ready again
      { offset: from, ready: false }, // first start
      { offset: offsetOf(1), ready: true }, // ready
      { offset: offsetOf(2), ready: false }, // restart
    ];
    const { startup, ready } = splitByPhase(text, { from, marks });
    expect(startup.map((e) => `${e.verb} ${e.objectRef?.resource ?? ''}`)).toEqual([
      'list deployments',
      'list secrets',
    ]);
    expect(ready.map((e) => `${e.verb} ${e.objectRef?.resource ?? ''}`)).toEqual([
      'get deployments',
      'patch deployments',
    ]);
  });
});

describe('summarisePhase', () => {
  it('counts by verb and resource, watches when opened, workload LIST/GET, and errors', () => {
    const text = [
      line('list', 'deployments'),
      line('get', 'statefulsets'),
      line('list', 'configmaps'),
      line('watch', 'deployments', { stage: 'ResponseStarted' }),
      line('watch', 'deployments', { stage: 'ResponseComplete' }),
      line('patch', 'deployments', { code: 409 }),
      line('patch', 'deployments'),
      line('list', 'deployments', { user: 'someone-else' }),
      // Lease renewals and lists (HA, active-active): apart from total and writes.
      line('update', 'leases'),
      line('update', 'leases', { code: 409 }),
      line('list', 'leases'),
      JSON.stringify({
        stage: 'ResponseComplete',
        verb: 'get',
        user: { username: USER },
        requestURI: '/version?timeout=32s',
        responseStatus: { code: 200 },
      }),
    ].join('\n');
    const { startup } = splitByPhase(`${text}\n`, { from: 0, marks: [] });
    expect(summarisePhase(startup, USER)).toEqual({
      total: 7,
      leaseRequests: 3,
      byVerb: {
        'get /version': 1,
        'get statefulsets': 1,
        'list configmaps': 1,
        'list deployments': 1,
        'list leases': 1,
        'patch deployments': 2,
        'update leases': 2,
        'watch deployments': 1,
      },
      workloadListGet: 2,
      errors: { 'patch deployments 409': 1, 'update leases 409': 1 },
      // Both patches (the 409 too); these lines carry no timestamp.
      writes: 2,
      peakWritesPerSecond: 0,
    });
  });
});

describe('writeRate', () => {
  const event = (
    verb: string,
    stageTimestamp: string | undefined,
    details: { stage?: string; user?: string } = {},
  ): AuditEvent => ({
    stage: details.stage ?? 'ResponseComplete',
    verb,
    user: { username: details.user ?? USER },
    requestURI: '/x',
    ...(stageTimestamp === undefined ? {} : { stageTimestamp }),
  });

  it.each([
    { name: 'no events', events: [], writes: 0, peak: 0 },
    {
      name: 'writes of every verb, bucketed by wall-clock second',
      events: [
        event('patch', '2026-12-06T10:00:00.100000Z'),
        event('create', '2026-12-06T10:00:00.999999Z'),
        event('delete', '2026-12-06T10:00:01.000001Z'),
        event('update', '2026-12-06T10:00:01.500000Z'),
        event('deletecollection', '2026-12-06T10:00:01.900000Z'),
      ],
      writes: 5,
      peak: 3,
    },
    {
      name: 'reads, watches, other users and other stages are not writes',
      events: [
        event('get', '2026-12-06T10:00:00.100000Z'),
        event('list', '2026-12-06T10:00:00.100000Z'),
        event('watch', '2026-12-06T10:00:00.100000Z', { stage: 'ResponseStarted' }),
        event('patch', '2026-12-06T10:00:00.100000Z', { user: 'system:kube-controller-manager' }),
        event('patch', '2026-12-06T10:00:00.100000Z', { stage: 'ResponseStarted' }),
        event('patch', '2026-12-06T10:00:00.200000Z'),
      ],
      writes: 1,
      peak: 1,
    },
    {
      name: 'a write without a readable timestamp counts, but in no second',
      events: [event('patch', undefined), event('patch', 'yesterday')],
      writes: 2,
      peak: 0,
    },
  ])('$name', ({ events, writes, peak }) => {
    expect(writeRate(events, USER)).toEqual({ writes, peakWritesPerSecond: peak });
  });
});
