/** A Logger that keeps every line it is given, for tests. */
import type { LogFields, Logger, LogLevel } from '../log/logger.ts';

export interface Written {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields | undefined;
}

export class RecordingLogger implements Logger {
  readonly written: Written[] = [];
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
  log(level: LogLevel, message: string, fields?: LogFields): void {
    this.written.push({ level, message, fields });
  }
  isLevelEnabled(): boolean {
    return true;
  }
  child(): Logger {
    return this;
  }
}
