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
    .sort(([a], [b]) => byCodeUnits(a, b));
}

/** logrus quotes a value unless every character is in `[A-Za-z0-9-._/@^+]`; empty values are quoted. */
const BARE_VALUE = /^[A-Za-z0-9\-._/@^+]+$/;

function logfmtValue(text: string): string {
  return BARE_VALUE.test(text) ? text : JSON.stringify(text);
}

/**
 * The keys of a record's fields, sorted, when every one can be written as it is and in this order:
 * none is a fixed key (renamed), `__proto__` (not an own property of the JSON line) or an array
 * index (which a JS object puts before the fixed keys); undefined values are left out. Undefined
 * otherwise, and the general path below writes the line. Runs on every log line, so it allocates
 * one array and no entry pairs.
 */
function plainKeys(fields: LogFields): string[] | undefined {
  const keys: string[] = [];
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    if (fields[key] === undefined) continue;
    if (RESERVED_KEYS.has(key) || key === '__proto__' || ARRAY_INDEX.test(key)) return undefined;
    keys.push(key);
  }
  return keys.length < 2 ? keys : keys.sort(byCodeUnits);
}

/** What a JS object orders first: canonical integers below 2^32 − 1. */
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A field value as `JSON.stringify` writes it inside the line, when it is a scalar. */
function scalarJson(value: unknown): string | undefined {
  const safe = jsonSafe(value);
  if (typeof safe === 'string' || typeof safe === 'number' || typeof safe === 'boolean') {
    return JSON.stringify(safe);
  }
  return safe === null ? 'null' : undefined;
}

export function formatText(record: LogRecord): string {
  const keys = plainKeys(record.fields);
  if (keys === undefined) return formatTextEntries(record);
  let line = `time=${JSON.stringify(record.time.toISOString())} level=${logfmtValue(LEVEL_NAMES[record.level])} msg=${JSON.stringify(record.message)}`;
  for (const key of keys) line += ` ${key}=${logfmtValue(toText(record.fields[key]))}`;
  return line;
}

/** The general path of formatText: through sorted entry pairs. */
export function formatTextEntries(record: LogRecord): string {
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

/**
 * The line `JSON.stringify` makes of `{ level, msg, time, ...sorted fields }`, written piece by
 * piece when every field is a scalar (the fields of nearly every line); otherwise through the object.
 */
export function formatJson(record: LogRecord): string {
  const keys = plainKeys(record.fields);
  if (keys === undefined) return formatJsonObject(record);
  let line = `{"level":${JSON.stringify(LEVEL_NAMES[record.level])},"msg":${JSON.stringify(record.message)},"time":${JSON.stringify(record.time.toISOString())}`;
  for (const key of keys) {
    const value = scalarJson(record.fields[key]);
    if (value === undefined) return formatJsonObject(record);
    line += `,${JSON.stringify(key)}:${value}`;
  }
  return `${line}}`;
}

/** The general path of formatJson: through one object and `JSON.stringify`. */
export function formatJsonObject(record: LogRecord): string {
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
