// `npm run chaos -- [--fault …] [--iterations N] [--seed N] …` (see options.ts): runs the fault
// suite on a control plane of its own, prints the table, and leaves nothing running (Ctrl-C too).
import { writeFile } from 'node:fs/promises';
import { RUNS_DIR } from '../cluster/paths.ts';
import { killOwnedRunsSync } from '../cluster/processes.ts';
import { FAULTS } from './faults.ts';
import { iterationSeed, parseChaosArgs, USAGE } from './options.ts';
import { isClean, renderTable, summarize, type FaultSummary } from './report.ts';
import { runIteration, startEnvironment, type IterationResult } from './suite.ts';
import { stampedProgress } from '../harness/progress.ts';

async function main(): Promise<number> {
  const options = parseChaosArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const progress = stampedProgress(performance.now());
  // Last resort (an uncaught error, a second Ctrl-C): SIGKILL whatever this process started.
  process.on('exit', () => {
    killOwnedRunsSync(RUNS_DIR);
  });
  const aborter = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (aborter.signal.aborted) process.exit(130);
      progress(`${signal}: stopping after the current step`);
      aborter.abort(new Error(`stopped by ${signal}`));
    });
  }
  const env = await startEnvironment({
    signal: aborter.signal,
    onProgress: (message) => {
      progress(`control plane: ${message}`);
    },
  });
  const summaries: FaultSummary[] = [];
  const all: IterationResult[] = [];
  try {
    for (const fault of options.faults) {
      const results: IterationResult[] = [];
      const iterations = options.iterations ?? fault.defaultIterations;
      for (let iteration = 0; iteration < iterations; iteration += 1) {
        aborter.signal.throwIfAborted();
        const strategy = options.strategies[iteration % options.strategies.length] ?? 'env-vars';
        results.push(
          await runIteration({
            env,
            fault,
            iteration,
            seed: iterationSeed(options.seed, FAULTS.indexOf(fault), iteration),
            shape: options.shape,
            strategy,
            onProgress: progress,
          }),
        );
      }
      all.push(...results);
      const summary = summarize(fault, results);
      summaries.push(summary);
      for (const problem of summary.problems.slice(0, 20)) progress(`${fault.id}: ${problem}`);
    }
  } finally {
    await env.stop();
    if (options.out !== undefined)
      await writeFile(options.out, `${JSON.stringify(all, null, 2)}\n`);
  }
  process.stdout.write(renderTable(summaries));
  return summaries.every(isClean) ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 2;
  },
);
