import { describe, expect, it } from 'vitest';
import type { LogFields, LogRecord } from './log-line.ts';
import { formatJson, formatJsonObject, formatText, formatTextEntries } from './log-line.ts';

const TIME = new Date('2026-01-02T03:04:05.678Z');

const record = (fields: LogFields, message = 'm'): LogRecord => ({
  level: 'warn',
  message,
  time: TIME,
  fields,
});

const withProto = JSON.parse('{"__proto__":"p","b":1}') as LogFields;

/** Each row: the fields of one record; the line-by-line writer must equal the general path. */
const ROWS: [string, LogFields, string?][] = [
  ['no fields', {}],
  [
    'the roll line',
    {
      namespace: 'ns',
      kind: 'Deployment',
      workload: 'app-1',
      source: 'configmap/a,secret/b',
      strategy: 'env-vars',
    },
  ],
  ['unsorted keys', { zeta: 1, alpha: 'a', Beta: true, _u: null }],
  ['numbers', { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, neg: -0, big: 1e21, frac: 0.1 }],
  [
    'escapes and unicode',
    { quote: 'say "hi"\n', tab: '\t', emoji: 'é😀', lone: '\ud800', 'k"ey': 'v' },
    'é',
  ],
  ['undefined dropped', { gone: undefined, kept: 'x' }],
  [
    'Error, Date, bigint',
    { error: new Error('outer', { cause: new Error('inner') }), at: TIME, n: 12n },
  ],
  ['reserved keys renamed', { msg: 'x', level: 'y', time: 'z', other: 1 }],
  ['array-index keys', { '10': 'ten', '2': 'two', a: 'a', '01': 'not an index' }],
  ['__proto__ key', withProto],
  ['objects and arrays', { list: ['a', 'b'], nested: { b: 1, a: 2 } }],
  ['function and symbol', { f: () => 1, s: Symbol('s'), ok: 'x' }],
  ['toJSON', { custom: { toJSON: (key: string) => `as ${key}` } }],
];

describe('formatJson: the line-by-line writer equals JSON.stringify of the line object', () => {
  it.each(ROWS)('%s', (_name, fields, message) => {
    const each = record(fields, message);
    expect(formatJson(each)).toBe(formatJsonObject(each));
  });

  it('writes the roll line exactly', () => {
    expect(formatJson(record({ workload: 'app-1', kind: 'Deployment' }))).toBe(
      '{"level":"warning","msg":"m","time":"2026-01-02T03:04:05.678Z","kind":"Deployment","workload":"app-1"}',
    );
  });
});

describe('formatText: the line-by-line writer equals the entry pairs', () => {
  it.each(ROWS)('%s', (_name, fields, message) => {
    const each = record(fields, message);
    expect(formatText(each)).toBe(formatTextEntries(each));
  });

  it('writes the roll line exactly', () => {
    expect(formatText(record({ workload: 'app-1', kind: 'Deployment', source: 'a b' }))).toBe(
      'time="2026-01-02T03:04:05.678Z" level=warning msg="m" kind=Deployment source="a b" workload=app-1',
    );
  });
});
