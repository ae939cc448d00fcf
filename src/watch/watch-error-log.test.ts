import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { RateLimitedLog } from '../log/rate-limited-log.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { WatchErrorLog } from './watch-error-log.ts';

const MINUTE = 60_000;

function forbidden(namespace: string, resource: string): ApiError {
  return new ApiError(
    `${resource} is forbidden: User "system:serviceaccount:kreload-system:kreload" cannot list resource "${resource}" in the namespace "${namespace}"`,
    { status: 403, reason: 'Forbidden', retryable: false },
  );
}

function setup() {
  let now = 0;
  const logger = new RecordingLogger();
  const log = new WatchErrorLog({ log: new RateLimitedLog({ logger, now: () => now }) });
  return {
    log,
    logger,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('WatchErrorLog', () => {
  it('a 403 re-probed every 60 s per namespace and kind logs once per cause per 10 minutes', () => {
    const { log, logger, advance } = setup();
    const namespaces = Array.from({ length: 100 }, (_, i) => `team-${String(i)}`);
    const kinds = [
      'configmaps',
      'secrets',
      'deployments',
      'daemonsets',
      'statefulsets',
      'cronjobs',
      'jobs',
    ];
    // One hour of re-probes: 60 failures of each of the 700 watches.
    for (let minute = 0; minute < 60; minute += 1) {
      for (const namespace of namespaces) {
        for (const kind of kinds) log.report(kind, namespace, forbidden(namespace, kind));
      }
      advance(MINUTE);
    }
    // Unlimited, that would be 42 000 lines; each cause is logged at minutes 0, 10, … 50.
    expect(logger.written).toHaveLength(700 * 6);
    const first = logger.written[0];
    expect(first?.level).toBe('error');
    expect(first?.fields).toMatchObject({
      resource: 'configmaps',
      namespace: 'team-0',
      status: 403,
    });
    expect(String(first?.fields?.error)).toContain('cannot list resource "configmaps"');
    expect(logger.written[700]?.fields).toMatchObject({ suppressed: 9 });
  });

  it('a watch that recovers logs its next 403 at once', () => {
    const { log, logger, advance } = setup();
    log.report('configmaps', 'mb', forbidden('mb', 'configmaps'));
    advance(MINUTE);
    log.report('configmaps', 'mb', forbidden('mb', 'configmaps'));
    expect(logger.written).toHaveLength(1);
    log.recovered('configmaps', 'mb');
    advance(MINUTE);
    log.report('configmaps', 'mb', forbidden('mb', 'configmaps'));
    expect(logger.written).toHaveLength(2);
  });

  it('an unreachable API server is one cause for every watch', () => {
    const { log, logger } = setup();
    const refused = new ApiError('connect ECONNREFUSED 127.0.0.1:6443', {
      status: undefined,
      reason: 'ECONNREFUSED',
      retryable: true,
    });
    for (const namespace of ['ma', 'mb', 'mc']) {
      log.report('configmaps', namespace, refused);
      log.report('deployments', namespace, refused);
    }
    log.recovered('configmaps', 'ma');
    log.report('configmaps', 'mb', refused);
    expect(logger.written).toHaveLength(1);
    expect(logger.written[0]).toMatchObject({
      level: 'warn',
      message: 'API server unreachable; list-watches retrying',
    });
  });

  it('a server error is limited per resource and status, not per namespace', () => {
    const { log, logger } = setup();
    const unavailable = new ApiError('the server is currently unable to handle the request', {
      status: 503,
      reason: 'ServiceUnavailable',
      retryable: true,
    });
    log.report('configmaps', 'ma', unavailable);
    log.report('configmaps', 'mb', unavailable);
    log.report('secrets', 'ma', unavailable);
    expect(logger.written.map((line) => line.fields?.resource)).toEqual(['configmaps', 'secrets']);
  });
});
