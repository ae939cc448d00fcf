import { copyFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { E2E_LOGS_DIR, RUNS_DIR } from '../cluster/paths.ts';
import { cleanLeftoverRuns, killOwnedRunsSync } from '../cluster/processes.ts';
import { describeExternalCluster, startCluster } from './cluster.ts';
import { PROVIDED_CLUSTER_KEY } from './shared-cluster.ts';

/** Set to an admin kubeconfig to run the specs against that cluster instead of booting one. */
export const EXTERNAL_KUBECONFIG_ENV = 'KRELOAD_E2E_KUBECONFIG';
export const EXTERNAL_AUDIT_LOG_ENV = 'KRELOAD_E2E_AUDIT_LOG';

function progress(message: string): void {
  process.stderr.write(`e2e control plane: ${message}\n`);
}

/**
 * One control plane per test run, with the audit log on (request-budget specs need it). Returns
 * the teardown; an `exit` hook SIGKILLs the processes if vitest ends without running it.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env[EXTERNAL_KUBECONFIG_ENV];
  if (external !== undefined && external !== '') {
    progress(`using ${external}`);
    project.provide(
      PROVIDED_CLUSTER_KEY,
      await describeExternalCluster(external, process.env[EXTERNAL_AUDIT_LOG_ENV]),
    );
    return () => Promise.resolve();
  }
  for (const leftover of await cleanLeftoverRuns({ runsDir: RUNS_DIR, onlyDeadOwners: true })) {
    progress(`removed leftover run ${leftover.runDir}`);
  }
  const killOnExit = (): void => {
    killOwnedRunsSync(RUNS_DIR);
  };
  process.on('exit', killOnExit);
  const began = performance.now();
  const cluster = await startCluster({ audit: true, onProgress: progress });
  progress(
    `ready in ${((performance.now() - began) / 1000).toFixed(1)} s at ${cluster.server} (run ${cluster.runDir})`,
  );
  project.provide(PROVIDED_CLUSTER_KEY, cluster.info);
  return async () => {
    await keepComponentLogs(cluster.runDir);
    await cluster.stop();
    process.off('exit', killOnExit);
  };
}

/** The run directory goes with the cluster; its component logs are what explains a failed spec. */
async function keepComponentLogs(runDir: string): Promise<void> {
  await mkdir(E2E_LOGS_DIR, { recursive: true });
  for (const name of [
    'kube-controller-manager.log',
    'kube-apiserver.log',
    'kube-scheduler.log',
    'kwok.log',
  ]) {
    await copyFile(path.join(runDir, name), path.join(E2E_LOGS_DIR, `shared-${name}`)).catch(
      (error: unknown) => {
        progress(`could not keep ${name}: ${String(error)}`);
      },
    );
  }
}
