// `npm run bench -- [--scenario S1,S2|all] [--controller "<cmd>"]… [--duration N] [--compare]
// [--baseline summary.json] …`: boots a control plane with the audit log on, runs the scenarios
// against each controller in turn plus the ideal reactor, writes one JSON per run, summary.json
// and report.md, prints the table, and leaves nothing running (Ctrl-C included).
import path from 'node:path';
import { RUNS_DIR } from '../cluster/paths.ts';
import { killOwnedRunsSync } from '../cluster/processes.ts';
import { startCluster } from '../harness/cluster.ts';
import { LiveProcesses } from './controller-process.ts';
import { parseBenchArgs, scenarioList, USAGE } from './options.ts';
import { BenchOptionError, readSuiteResult, runSuite, writeSuiteOutputs } from './suite.ts';
import { stampedProgress } from '../harness/progress.ts';

async function main(): Promise<number> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (options.list) {
    process.stdout.write(`${scenarioList()}\n`);
    return 0;
  }
  const baseline =
    options.baseline === undefined ? undefined : await readSuiteResult(options.baseline);
  const progress = stampedProgress(performance.now());
  const live = new LiveProcesses();
  // Last resort (an uncaught error, a second Ctrl-C): SIGKILL whatever this process started.
  process.on('exit', () => {
    live.killAllSync();
    killOwnedRunsSync(RUNS_DIR);
  });
  const aborter = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (aborter.signal.aborted) {
        progress(`${signal} again: killing everything now`);
        process.exit(130);
      }
      progress(`${signal}: stopping the controller and the control plane`);
      aborter.abort(new Error(`stopped by ${signal}`));
    });
  }
  progress(
    `scenarios ${options.scenarios.map((s) => s.id).join(',')} × controllers ${options.controllers.map((c) => c.label).join(', ')}; results in ${options.outDir}`,
  );
  const cluster = await startCluster({
    audit: true,
    signal: aborter.signal,
    onProgress: (message) => {
      progress(`control plane: ${message}`);
    },
  });
  try {
    const result = await runSuite({
      cluster,
      scenarios: options.scenarios,
      controllers: options.controllers,
      overrides: options.overrides,
      ...(options.durationSec === undefined ? {} : { durationSec: options.durationSec }),
      repeat: options.repeat,
      seed: options.seed,
      outDir: options.outDir,
      live,
      signal: aborter.signal,
      progress,
      commandLine: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    });
    const written = await writeSuiteOutputs(result, {
      outDir: options.outDir,
      compare: options.compare,
      ...(baseline === undefined ? {} : { baseline }),
    });
    process.stdout.write(`\n${written.markdown}\n`);
    progress(
      `wrote ${path.relative(process.cwd(), written.summaryPath)} and ${path.relative(process.cwd(), written.markdownPath)}`,
    );
    return result.runs.some((run) => run.error !== null) ? 1 : 0;
  } catch (error) {
    if (!aborter.signal.aborted) throw error;
    progress(`stopped; the runs that finished are in ${path.join(options.outDir, 'runs')}`);
    return 130;
  } finally {
    live.killAllSync();
    await cluster.stop();
    progress('control plane stopped');
  }
}

main().then(
  (code) => {
    process.exit(code);
  },
  (error: unknown) => {
    if (error instanceof BenchOptionError)
      process.stderr.write(`bench: ${error.message}\n\n${USAGE}`);
    else
      process.stderr.write(
        `bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    process.exit(error instanceof BenchOptionError ? 2 : 1);
  },
);
