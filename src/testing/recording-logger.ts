/** A Logger that keeps every line it is given, for tests. */
import type { LogFields, Logger, LogLevel } from '../log/logger.ts';
import { LevelledLogger } from '../log/logger.ts';

export interface Written {
  readonly level: LogLevel;
  readonly message: string;
  readonly fields: LogFields | undefined;
}

export class RecordingLogger extends LevelledLogger {
  readonly written: Written[] = [];
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
