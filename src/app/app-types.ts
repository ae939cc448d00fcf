import type { BaselineStoreRuntime } from './baseline-store.ts';
/** The contract between the process edge (src/cli/run.ts) and the composition root (src/app.ts). */
import type { Options } from '../config/parse-options.ts';
import type { TestFailpoint } from '../config/test-failpoint.ts';
import type { LeaderElector } from '../leader/leader-elector.ts';
import type { LeadershipGate } from '../leader/leadership-gate.ts';
import type { Logger } from '../log/logger.ts';
import type { PeriodicResync } from '../queue/resync.ts';
import type { WatchServer } from '../watch/watch-server.ts';
import type { HttpServers } from './http-servers.ts';
import type { LeaderTermContext } from './leader-term.ts';
import type { Pipeline } from './pipeline.ts';
import type { ShardRuntime } from './shard.ts';

/** What app.ts receives besides the options. */
export interface AppDeps {
  readonly logger: Logger;
  /** kreload's release version (package.json, read once by main.ts); goes into the meta-info build info. */
  readonly version: string;
  /** Ends the process with exit 1 after a bounded stop, e.g. when leadership is lost (§13.4). */
  readonly onFatal: (error: Error) => void;
  /** Test-only (config/test-failpoint.ts): a write held forever, for a kill -9 between writes. */
  readonly testFailpoint?: TestFailpoint | undefined;
}

/** The shape app.ts must export as `createApp`. */
export interface App {
  start(): Promise<void>;
  stop(reason: string): Promise<void>;
}

export type CreateApp = (options: Options, deps: AppDeps) => App;

/** Everything one start() constructs, in the order it is started. */
export interface Runtime {
  readonly health: HttpServers['health'];
  readonly profiling: HttpServers['profiling'];
  readonly probes: HttpServers['probes'];
  readonly watch: WatchServer;
  readonly gate: LeadershipGate;
  readonly elector: LeaderElector | undefined;
  /** `--shard-mode=active-active`: the coordinator and the write fence (docs/adr/0051). */
  readonly shard: ShardRuntime | undefined;
  readonly pipeline: Pipeline;
  readonly resync: PeriodicResync;
  /** What the notifications and the leadership term need. */
  readonly context: LeaderTermContext;
  /** Alerts and the webhook mode, stopped after the drain. */
  readonly senders: readonly { stop(): Promise<void> | void }[];
  /** `--baseline-store=namespace` (docs/adr/0046). */
  readonly baselines: BaselineStoreRuntime | undefined;
}
