/**
 * The process edge behind main.ts: dispatches `hash`, `explain`, `history`, `--help` and `--version`, validates the
 * configuration (exit 2 with every problem, §12.6), then runs the controller built by app.ts until a
 * signal (exit 0) or a fatal error (exit 1) (§13.5). Every process facility arrives through CliIo.
 */
import type { App, CreateApp } from '../app/app-types.ts';
import { STOP_DEADLINES } from '../app/shutdown.ts';
import { findInfoRequest, renderHelp } from '../config/command-line.ts';
import { ConfigError, formatConfigProblems } from '../config/config-error.ts';
import type { ConfigWarning, Options } from '../config/parse-options.ts';
import { parseOptions } from '../config/parse-options.ts';
import { readTestFailpoint, TEST_FAILPOINT_VARIABLE } from '../config/test-failpoint.ts';
import type { Logger, RootLogger } from '../log/logger.ts';
import { createLogger } from '../log/logger.ts';
import { redactUrl } from '../log/redact-url.ts';
import { withinDeadline } from '../time/deadline.ts';
import { checkClusterConfig } from './cluster-config.ts';

export type ShutdownSignal = 'SIGTERM' | 'SIGINT';

export interface CliIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** `-` reads standard input. */
  readonly readFile: (path: string) => Promise<string>;
  readonly fileExists: (path: string) => boolean;
  readonly version: string;
  /** Registers the handler for SIGTERM and SIGINT; it may be called more than once. */
  readonly onShutdownSignal: (handler: (signal: ShutdownSignal) => void) => void;
  /** Defaults to importing app.ts; tests pass their own. */
  readonly loadCreateApp?: () => Promise<CreateApp>;
  readonly checkKubeconfigFile?: (path: string) => string | undefined;
  readonly now?: () => Date;
  /** Upper bound of the stop after a fatal error (§13.4: exit within 5 s). */
  readonly fatalStopTimeoutMs?: number;
  /** Upper bound of the stop after SIGTERM or SIGINT (§13.5). */
  readonly signalStopTimeoutMs?: number;
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_INVALID_CONFIGURATION = 2;

const DEFAULT_FATAL_STOP_TIMEOUT_MS = 4_000;
/** The drain and the lease release have their own deadlines (app/shutdown.ts); 1 s for the rest. */
const DEFAULT_SIGNAL_STOP_TIMEOUT_MS =
  STOP_DEADLINES.drainMs + STOP_DEADLINES.leaseReleaseMs + 1_000;

async function loadAppModule(): Promise<CreateApp> {
  const { createApp } = await import('../app.ts');
  return createApp;
}

function printConfigError(error: ConfigError, io: CliIo): number {
  for (const line of formatConfigProblems(error)) io.stderr.write(`${line}\n`);
  return EXIT_INVALID_CONFIGURATION;
}

type ShutdownReason =
  | { readonly kind: 'signal'; readonly signal: ShutdownSignal }
  | { readonly kind: 'fatal'; readonly error: Error }
  | { readonly kind: 'start-failed'; readonly error: unknown };

/** The first shutdown reason wins; a second signal while stopping forces the exit. */
class ShutdownLatch {
  #first: ShutdownReason | undefined;
  #resolveFirst: (reason: ShutdownReason) => void = () => undefined;
  #resolveForced: () => void = () => undefined;
  readonly first = new Promise<ShutdownReason>((resolve) => {
    this.#resolveFirst = resolve;
  });
  readonly forced = new Promise<'forced'>((resolve) => {
    this.#resolveForced = () => {
      resolve('forced');
    };
  });

  request(reason: ShutdownReason): void {
    if (this.#first === undefined) {
      this.#first = reason;
      this.#resolveFirst(reason);
    } else if (reason.kind === 'signal') {
      this.#resolveForced();
    }
  }
}

/** True when the stop finished within `timeoutMs`; otherwise the exit goes ahead without it. */
async function stopWithin(app: App, reason: string, timeoutMs: number): Promise<boolean> {
  return (await withinDeadline(app.stop(reason), timeoutMs)).finished;
}

async function handleShutdown(
  reason: ShutdownReason,
  context: { app: App; logger: Logger; io: CliIo },
): Promise<number> {
  const { app, logger, io } = context;
  switch (reason.kind) {
    case 'signal': {
      logger.info('shutting down', { signal: reason.signal });
      const timeoutMs = io.signalStopTimeoutMs ?? DEFAULT_SIGNAL_STOP_TIMEOUT_MS;
      if (!(await stopWithin(app, reason.signal, timeoutMs))) {
        logger.error('stop did not finish in time, exiting anyway', { timeoutMs });
        return EXIT_FAILURE;
      }
      logger.info('stopped');
      return EXIT_OK;
    }
    case 'fatal':
      logger.error('fatal error, exiting', { error: reason.error });
      await stopWithin(app, 'fatal', io.fatalStopTimeoutMs ?? DEFAULT_FATAL_STOP_TIMEOUT_MS);
      return EXIT_FAILURE;
    case 'start-failed':
      await stopWithin(app, 'start failed', io.fatalStopTimeoutMs ?? DEFAULT_FATAL_STOP_TIMEOUT_MS);
      if (reason.error instanceof ConfigError) return printConfigError(reason.error, io);
      logger.error('start failed', { error: reason.error });
      return EXIT_FAILURE;
  }
}

async function runApp(
  createApp: CreateApp,
  options: Options,
  context: { logger: Logger; io: CliIo },
): Promise<number> {
  const { logger, io } = context;
  const latch = new ShutdownLatch();
  io.onShutdownSignal((signal) => {
    latch.request({ kind: 'signal', signal });
  });
  const { failpoint, unknown } = readTestFailpoint(io.env);
  if (unknown !== undefined) {
    logger.warn(`${TEST_FAILPOINT_VARIABLE}: names no failpoint, ignored`, { value: unknown });
  }
  const app = createApp(options, {
    logger,
    version: io.version,
    testFailpoint: failpoint,
    onFatal: (error) => {
      latch.request({ kind: 'fatal', error });
    },
  });
  app.start().catch((error: unknown) => {
    latch.request({ kind: 'start-failed', error });
  });
  const reason = await latch.first;
  const outcome = await Promise.race([handleShutdown(reason, { app, logger, io }), latch.forced]);
  if (outcome !== 'forced') return outcome;
  logger.warn('second signal, exiting without waiting for the stop');
  return EXIT_FAILURE;
}

function logStartup(
  logger: Logger,
  context: { options: Options; version: string; warnings: readonly ConfigWarning[] },
): void {
  const { options, version } = context;
  logger.info('starting kreload', {
    version,
    mode: options.scope.mode,
    namespaces: options.scope.namespaces.join(','),
    reloadStrategy: options.reloadStrategy,
    dryRun: options.dryRun,
    enableHa: options.leaderElection.enabled,
    webhook: options.webhookUrl === undefined ? undefined : redactUrl(options.webhookUrl),
  });
  for (const warning of [...options.warnings, ...context.warnings]) {
    logger.log(warning.level, `${warning.subject}: ${warning.message}`);
  }
}

async function runController(io: CliIo): Promise<number> {
  let options: Options;
  try {
    options = await parseOptions(io.argv, io.env);
  } catch (error) {
    if (error instanceof ConfigError) return printConfigError(error, io);
    throw error;
  }
  const cluster = checkClusterConfig(options, {
    fileExists: io.fileExists,
    ...(io.checkKubeconfigFile === undefined ? {} : { checkFile: io.checkKubeconfigFile }),
  });
  if (cluster.problems.length > 0) return printConfigError(new ConfigError(cluster.problems), io);

  const logger: RootLogger = createLogger({
    level: options.logLevel,
    format: options.logFormat,
    stream: io.stderr,
    ...(io.now === undefined ? {} : { now: io.now }),
  });
  try {
    logStartup(logger, { options, version: io.version, warnings: cluster.warnings });
    const createApp = await (io.loadCreateApp ?? loadAppModule)();
    return await runApp(createApp, options, { logger, io });
  } finally {
    await logger.close();
  }
}

/** Returns the exit code; main.ts exits with it. */
export async function runCli(io: CliIo): Promise<number> {
  // Imported on use: both parse YAML with client-node's typed loader, which loads its whole
  // generated API (ADR 0032); the controller never needs it.
  if (io.argv[0] === 'hash') {
    const { runHashCommand } = await import('./hash-command.ts');
    return runHashCommand(io.argv.slice(1), io);
  }
  if (io.argv[0] === 'explain') {
    const { runExplainCommand } = await import('./explain-command.ts');
    return runExplainCommand(io.argv.slice(1), io);
  }
  if (io.argv[0] === 'history') {
    const { runHistoryCommand } = await import('./history-command.ts');
    return runHistoryCommand(io.argv.slice(1), io);
  }
  const info = findInfoRequest(io.argv);
  if (info === 'help') {
    io.stdout.write(`${await renderHelp()}\n`);
    return EXIT_OK;
  }
  if (info === 'version') {
    io.stdout.write(`kreload ${io.version}\n`);
    return EXIT_OK;
  }
  return runController(io);
}
