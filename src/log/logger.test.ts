import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { LogFormat, LogLevel } from './logger.ts';
import { createLogger } from './logger.ts';

const TIME = new Date('2026-01-02T03:04:05.678Z');

function capture(options: { level: LogLevel; format: LogFormat }) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      callback();
    },
  });
  const logger = createLogger({ ...options, stream, now: () => TIME });
  return { logger, lines };
}

describe('text format (§13.9)', () => {
  it.each<[string, Record<string, unknown> | undefined, string]>([
    [
      'Starting kreload',
      undefined,
      'time="2026-01-02T03:04:05.678Z" level=info msg="Starting kreload"',
    ],
    [
      'workload patched',
      { namespace: 'team-a', kind: 'Deployment', workload: 'api' },
      'time="2026-01-02T03:04:05.678Z" level=info msg="workload patched" kind=Deployment namespace=team-a workload=api',
    ],
    [
      'quoting',
      {
        empty: '',
        spaced: 'a b',
        quote: 'say "hi"',
        plain: 'a-b_c.d/e@f^g+h',
        colon: 'a:b',
        count: 3,
        flag: true,
      },
      'time="2026-01-02T03:04:05.678Z" level=info msg="quoting" colon="a:b" count=3 empty="" flag=true plain=a-b_c.d/e@f^g+h quote="say \\"hi\\"" spaced="a b"',
    ],
    [
      'error field with cause',
      { error: new Error('patch failed', { cause: new Error('409 Conflict') }) },
      'time="2026-01-02T03:04:05.678Z" level=info msg="error field with cause" error="patch failed: 409 Conflict"',
    ],
    [
      'objects as JSON, undefined dropped',
      { sources: ['a', 'b'], missing: undefined },
      'time="2026-01-02T03:04:05.678Z" level=info msg="objects as JSON, undefined dropped" sources="[\\"a\\",\\"b\\"]"',
    ],
    [
      'reserved names are renamed',
      { msg: 'x', level: 'y', time: 'z' },
      'time="2026-01-02T03:04:05.678Z" level=info msg="reserved names are renamed" fields.level=y fields.msg=x fields.time=z',
    ],
  ])('%s', (message, fields, line) => {
    const { logger, lines } = capture({ level: 'info', format: 'text' });
    logger.info(message, fields);
    expect(lines).toEqual([line]);
  });
});

describe('json format (§13.9)', () => {
  it('writes level, msg, time and the fields', () => {
    const { logger, lines } = capture({ level: 'info', format: 'json' });
    logger.warn('retrying', { hash: 'dc30e0fa', attempt: 2, error: new Error('boom') });
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        level: 'warning',
        msg: 'retrying',
        time: '2026-01-02T03:04:05.678Z',
        attempt: 2,
        error: 'boom',
        hash: 'dc30e0fa',
      },
    ]);
  });

  it('survives a circular field', () => {
    const { logger, lines } = capture({ level: 'info', format: 'json' });
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    logger.info('circular', { loop });
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ msg: 'circular', loop: '[unserializable]' });
  });
});

describe('levels', () => {
  const ALL: LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

  it.each<[LogLevel, string[]]>([
    ['trace', ['trace', 'debug', 'info', 'warning', 'error']],
    ['debug', ['debug', 'info', 'warning', 'error']],
    ['info', ['info', 'warning', 'error']],
    ['warn', ['warning', 'error']],
    ['error', ['error']],
  ])('at %s, logs %j', (level, written) => {
    const { logger, lines } = capture({ level, format: 'json' });
    for (const each of ALL) logger.log(each, each);
    logger.trace('t');
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(
      level === 'trace' ? [...written, 'trace'] : written,
    );
    expect(logger.isLevelEnabled('debug')).toBe(level === 'trace' || level === 'debug');
  });
});

describe('child loggers', () => {
  it('add their fields, nest, and let a record override them', () => {
    const { logger, lines } = capture({ level: 'debug', format: 'json' });
    const child = logger.child({ component: 'queue', namespace: 'a' }).child({ kind: 'Job' });
    child.debug('queued', { namespace: 'b' });
    logger.info('root');
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        level: 'debug',
        msg: 'queued',
        time: TIME.toISOString(),
        component: 'queue',
        kind: 'Job',
        namespace: 'b',
      },
      { level: 'info', msg: 'root', time: TIME.toISOString() },
    ]);
  });
});

describe('close', () => {
  it('resolves once the output is flushed', async () => {
    const { logger, lines } = capture({ level: 'info', format: 'text' });
    logger.error('last words');
    await logger.close();
    expect(lines).toHaveLength(1);
  });
});
