// Launcher for a local control plane: `node e2e/cluster/cli.ts up [--audit]` boots etcd,
// kube-apiserver and kube-controller-manager and stays in the foreground until Ctrl-C;
// `node e2e/cluster/cli.ts down [--force]` stops what leftover pids.json files record (by PID).
import { parseArgs } from 'node:util';
import { resolveBinDir } from './binaries.ts';
import { bootControlPlane } from './control-plane.ts';
import { RUNS_DIR } from './paths.ts';
import { cleanLeftoverRuns, killOwnedRunsSync } from './processes.ts';

const USAGE = 'usage: node e2e/cluster/cli.ts up [--audit] | down [--force]';

function progress(message: string): void {
  process.stderr.write(`control plane: ${message}\n`);
}

async function up(options: { audit: boolean }): Promise<number> {
  // Last resort (an uncaught error, process.exit elsewhere): SIGKILL what this process started.
  process.on('exit', () => {
    killOwnedRunsSync(RUNS_DIR);
  });
  const aborter = new AbortController();
  const stopRequested = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      if (aborter.signal.aborted) {
        progress(`${signal} again: still stopping, please wait`);
        return;
      }
      progress(`${signal}: stopping`);
      aborter.abort(new Error(`stopped by ${signal}`));
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  const binDir = await resolveBinDir();
  const began = performance.now();
  let plane;
  try {
    plane = await bootControlPlane({
      binDir,
      audit: options.audit,
      signal: aborter.signal,
      onProgress: progress,
    });
  } catch (error) {
    if (!aborter.signal.aborted) throw error;
    progress('stopped before it was ready; nothing left running');
    return 130;
  }
  const { info } = plane;
  process.stdout.write(
    [
      `control plane ready in ${((performance.now() - began) / 1000).toFixed(1)} s`,
      `server:     ${info.server}`,
      `kubeconfig: ${info.kubeconfigPath}`,
      `pids:       ${info.pidsPath}`,
      ...(info.auditLogPath === undefined ? [] : [`audit log:  ${info.auditLogPath}`]),
      '',
      `  export KUBECONFIG=${info.kubeconfigPath}`,
      '  kubectl get --raw /version   # with any kubectl >= 1.36 on your PATH',
      '',
      'Ctrl-C stops the control plane and deletes its run directory.',
      '',
    ].join('\n'),
  );

  const outcome = await Promise.race([stopRequested.then(() => undefined), plane.firstExit()]);
  if (outcome !== undefined) {
    progress(
      `${outcome.name} exited unexpectedly (code ${String(outcome.exit.code)}, signal ${String(outcome.exit.signal)}); log: ${info.runDir}/${outcome.name}.log`,
    );
  }
  await plane.stop();
  progress('stopped; run directory deleted');
  return outcome === undefined ? 0 : 1;
}

/** Without --force, runs whose launcher is alive (an `up` in another terminal, a test run) stay. */
async function down(options: { force: boolean }): Promise<number> {
  const reports = await cleanLeftoverRuns({ runsDir: RUNS_DIR, onlyDeadOwners: !options.force });
  for (const report of reports) {
    const stopped = report.stopped.map((s) => `${s.name} (pid ${s.pid}): ${s.outcome}`).join(', ');
    process.stdout.write(
      `${report.runDir}: ${stopped === '' ? 'nothing recorded' : stopped}; deleted\n`,
    );
  }
  if (reports.length === 0) process.stdout.write(`no leftover runs under ${RUNS_DIR}\n`);
  return 0;
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      audit: { type: 'boolean', default: false },
      force: { type: 'boolean', default: false },
    },
  });
  const command = positionals[0];
  if (command === 'up') return up({ audit: values.audit });
  if (command === 'down') return down({ force: values.force });
  process.stderr.write(`${USAGE}\n`);
  return 2;
}

main().then(
  (code) => {
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(
      `control plane: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
