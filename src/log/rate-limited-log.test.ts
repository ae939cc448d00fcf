import { describe, expect, it } from 'vitest';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { RateLimitedLog } from './rate-limited-log.ts';

const MINUTE = 60_000;

function setup() {
  const logger = new RecordingLogger();
  let now = 0;
  const limited = new RateLimitedLog({ logger, now: () => now });
  return {
    logger,
    limited,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('RateLimitedLog (§13.9)', () => {
  it('logs a cause once, then at most every 10 minutes with the suppressed count', () => {
    const { logger, limited, advance } = setup();
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(true);
    advance(MINUTE);
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(false);
    advance(8 * MINUTE);
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(false);
    advance(MINUTE - 1);
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(false);
    advance(1);
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(true);
    advance(10 * MINUTE);
    expect(limited.warn('403 list secrets', 'forbidden', { kind: 'Secret' })).toBe(true);
    expect(logger.written).toEqual([
      { level: 'warn', message: 'forbidden', fields: { kind: 'Secret' } },
      { level: 'warn', message: 'forbidden', fields: { kind: 'Secret', suppressed: 3 } },
      { level: 'warn', message: 'forbidden', fields: { kind: 'Secret' } },
    ]);
  });

  it('keeps distinct causes apart', () => {
    const { logger, limited } = setup();
    limited.error('a', 'first');
    limited.error('b', 'second');
    limited.error('a', 'first again');
    expect(logger.written.map((w) => w.message)).toEqual(['first', 'second']);
  });

  it('logs a forgotten cause again at once', () => {
    const { logger, limited } = setup();
    limited.log('info', 'api', 'unreachable');
    limited.forget('api');
    limited.log('info', 'api', 'unreachable');
    expect(logger.written).toHaveLength(2);
  });
});
