/** The contract between the process edge (src/cli/run.ts) and the composition root (src/app.ts). */
import type { Options } from '../config/parse-options.ts';
import type { Logger } from '../log/logger.ts';

/** What app.ts receives besides the options. */
export interface AppDeps {
  readonly logger: Logger;
  /** kreload's release version (package.json, read once by main.ts); goes into the meta-info build info. */
  readonly version: string;
  /** Ends the process with exit 1 after a bounded stop, e.g. when leadership is lost (§13.4). */
  readonly onFatal: (error: Error) => void;
}

/** The shape app.ts must export as `createApp`. */
export interface App {
  start(): Promise<void>;
  stop(reason: string): Promise<void>;
}

export type CreateApp = (options: Options, deps: AppDeps) => App;
