/**
 * Rendering of one log record (§13.9): logfmt-style text, as logrus prints it so that parsers written
 * for Reloader keep working, or one JSON object per line. Pure.
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';
export type LogFields = Readonly<Record<string, unknown>>;

export interface LogRecord {
  readonly level: LogLevel;
  readonly message: string;
  readonly time: Date;
  readonly fields: LogFields;
}

/** logrus names the warn level `warning`. */
const LEVEL_NAMES: Readonly<Record<LogLevel, string>> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warning',
  error: 'error',
};

const RESERVED_KEYS: ReadonlySet<string> = new Set(['level', 'msg', 'time']);

/** An error and its causes, `outer: inner`; the stack is left out to keep lines single. */
function errorText(error: Error): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && parts.length < 10) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ');
}

function jsonSafe(value: unknown): unknown {
  if (value instanceof Error) return errorText(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  return value;
}

function toText(value: unknown): string {
  const safe = jsonSafe(value);
  if (typeof safe === 'string') return safe;
  if (typeof safe === 'number' || typeof safe === 'boolean') return String(safe);
  if (typeof safe === 'function' || typeof safe === 'symbol') return `[${typeof safe}]`;
  if (safe === undefined) return 'undefined';
  try {
    return JSON.stringify(safe);
  } catch {
    // A circular structure must not make logging throw; the field is still marked as present.
    return '[unserializable]';
  }
}

/** Field names that clash with the fixed keys are renamed as logrus does (`fields.msg`). */
function fieldEntries(fields: LogFields): [string, unknown][] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]): [string, unknown] => [
      RESERVED_KEYS.has(key) ? `fields.${key}` : key,
      value,
    ])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** logrus quotes a value unless every character is in `[A-Za-z0-9-._/@^+]`; empty values are quoted. */
const BARE_VALUE = /^[A-Za-z0-9\-._/@^+]+$/;

function logfmtValue(text: string): string {
  return BARE_VALUE.test(text) ? text : JSON.stringify(text);
}

export function formatText(record: LogRecord): string {
  const pairs: [string, string][] = [
    ['time', record.time.toISOString()],
    ['level', LEVEL_NAMES[record.level]],
    ['msg', record.message],
    ...fieldEntries(record.fields).map(([key, value]): [string, string] => [key, toText(value)]),
  ];
  return pairs
    .map(([key, value]) =>
      key === 'time' || key === 'msg'
        ? `${key}=${JSON.stringify(value)}`
        : `${key}=${logfmtValue(value)}`,
    )
    .join(' ');
}

export function formatJson(record: LogRecord): string {
  const line: Record<string, unknown> = {
    level: LEVEL_NAMES[record.level],
    msg: record.message,
    time: record.time.toISOString(),
  };
  for (const [key, value] of fieldEntries(record.fields)) line[key] = jsonSafe(value);
  try {
    return JSON.stringify(line);
  } catch {
    return JSON.stringify({
      ...line,
      ...Object.fromEntries(
        fieldEntries(record.fields).map(([key, value]) => [key, toText(value)]),
      ),
    });
  }
}

export const FORMATTERS: Readonly<Record<LogFormat, (record: LogRecord) => string>> = {
  text: formatText,
  json: formatJson,
};
