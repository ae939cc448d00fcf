/**
 * The winston logger of kreload (§13.9). Components receive a `Logger` and derive `child({ component })`
 * loggers; fields travel next to the message and are rendered by log-line.ts, never merged into
 * winston's own record, so a field named `message` or `level` cannot corrupt it.
 */
import winston from 'winston';
import type { LogFields, LogFormat, LogLevel, LogRecord } from './log-line.ts';
import { FORMATTERS } from './log-line.ts';

export type { LogFields, LogFormat, LogLevel } from './log-line.ts';

export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  log(level: LogLevel, message: string, fields?: LogFields): void;
  /** Lets a costly debug line be skipped when it would be dropped. */
  isLevelEnabled(level: LogLevel): boolean;
  /** A logger that adds `fields` to every record (a record's own fields win). */
  child(fields: LogFields): Logger;
}

/** The five level methods, each a `log` at its level: what every Logger shares. */
export abstract class LevelledLogger implements Logger {
  trace(message: string, fields?: LogFields): void {
    this.log('trace', message, fields);
  }

  debug(message: string, fields?: LogFields): void {
    this.log('debug', message, fields);
  }

  info(message: string, fields?: LogFields): void {
    this.log('info', message, fields);
  }

  warn(message: string, fields?: LogFields): void {
    this.log('warn', message, fields);
  }

  error(message: string, fields?: LogFields): void {
    this.log('error', message, fields);
  }

  abstract log(level: LogLevel, message: string, fields?: LogFields): void;
  abstract isLevelEnabled(level: LogLevel): boolean;
  abstract child(fields: LogFields): Logger;
}

export interface RootLogger extends Logger {
  /** Flushes and closes the output; call once, before the process exits. */
  close(): Promise<void>;
}

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Defaults to stderr, where logrus (and so Reloader) writes. */
  readonly stream?: NodeJS.WritableStream;
  /** Defaults to the system clock. */
  readonly now?: () => Date;
}

/** Lower is more severe, as winston expects; `fatal`/`panic` were mapped to `error` by the options. */
const LEVELS: Readonly<Record<LogLevel, number>> = {
  error: 0,
  warn: 1,
  info: 2,
  debug: 3,
  trace: 4,
};

const MESSAGE = Symbol.for('message');
const FIELDS = Symbol('kreload.fields');
const TIME = Symbol('kreload.time');

function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && value in LEVELS;
}

function isFields(value: unknown): value is LogFields {
  return typeof value === 'object' && value !== null;
}

function renderFormat(format: LogFormat): winston.Logform.Format {
  const render = FORMATTERS[format];
  return winston.format((info) => {
    const level = info.level;
    const time = info[TIME];
    const fields = info[FIELDS];
    const record: LogRecord = {
      level: isLogLevel(level) ? level : 'info',
      message: typeof info.message === 'string' ? info.message : String(info.message),
      time: time instanceof Date ? time : new Date(),
      fields: isFields(fields) ? fields : {},
    };
    info[MESSAGE] = render(record);
    return info;
  })();
}

interface WinstonLoggerDeps {
  readonly winston: winston.Logger;
  /** The configured level's rank in LEVELS; it never changes after start. */
  readonly maxRank: number;
  readonly now: () => Date;
  readonly fields: LogFields;
}

class WinstonLogger extends LevelledLogger {
  readonly #deps: WinstonLoggerDeps;

  constructor(deps: WinstonLoggerDeps) {
    super();
    this.#deps = deps;
  }

  log(level: LogLevel, message: string, fields?: LogFields): void {
    if (!this.isLevelEnabled(level)) return;
    this.#deps.winston.log({
      level,
      message,
      [TIME]: this.#deps.now(),
      [FIELDS]: fields === undefined ? this.#deps.fields : { ...this.#deps.fields, ...fields },
    });
  }

  // One comparison instead of winston's walk over its transports, on every line asked for.
  isLevelEnabled(level: LogLevel): boolean {
    return LEVELS[level] <= this.#deps.maxRank;
  }

  child(fields: LogFields): Logger {
    return new WinstonLogger({ ...this.#deps, fields: { ...this.#deps.fields, ...fields } });
  }
}

class RootWinstonLogger extends WinstonLogger implements RootLogger {
  readonly #winston: winston.Logger;

  constructor(deps: Omit<WinstonLoggerDeps, 'fields'>) {
    super({ ...deps, fields: {} });
    this.#winston = deps.winston;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#winston.once('finish', () => {
        resolve();
      });
      this.#winston.end();
    });
  }
}

export function createLogger(options: LoggerOptions): RootLogger {
  const logger = winston.createLogger({
    levels: LEVELS,
    level: options.level,
    format: renderFormat(options.format),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stderr })],
    exitOnError: false,
  });
  return new RootWinstonLogger({
    winston: logger,
    maxRank: LEVELS[options.level],
    now: options.now ?? (() => new Date()),
  });
}
