import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { usageTable, type ComponentUsage } from '../cluster/component-usage.ts';
import type { ComponentName } from '../cluster/components.ts';
import { E2E_LOGS_DIR, RUNS_DIR } from '../cluster/paths.ts';
import { cleanLeftoverRuns, killOwnedRunsSync } from '../cluster/processes.ts';
import { describeExternalCluster, startCluster } from './cluster.ts';
import { PROVIDED_CLUSTER_KEY } from './shared-cluster.ts';

/** Set to an admin kubeconfig to run the specs against that cluster instead of booting one. */
export const EXTERNAL_KUBECONFIG_ENV = 'KRELOAD_E2E_KUBECONFIG';
export const EXTERNAL_AUDIT_LOG_ENV = 'KRELOAD_E2E_AUDIT_LOG';
/**
 * Set to 1 to boot without kube-scheduler and kwok, to measure what they cost on a subset of specs
 * (the specs whose pods must run fail then). Never set in CI.
 */
export const WITHOUT_POD_LIFECYCLE_ENV = 'KRELOAD_E2E_WITHOUT_POD_LIFECYCLE';
/** Where the teardown writes what each control-plane component cost the run. */
export const USAGE_REPORT = path.join(E2E_LOGS_DIR, 'shared-control-plane-usage.json');

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
  const withoutPodLifecycle = process.env[WITHOUT_POD_LIFECYCLE_ENV] === '1';
  if (withoutPodLifecycle) progress('without kube-scheduler and kwok: no pod will run');
  const cluster = await startCluster({ audit: true, withoutPodLifecycle, onProgress: progress });
  progress(
    `ready in ${((performance.now() - began) / 1000).toFixed(1)} s at ${cluster.server} (run ${cluster.runDir})`,
  );
  project.provide(PROVIDED_CLUSTER_KEY, cluster.info);
  return async () => {
    try {
      await reportUsage(await cluster.controlPlane.usage());
      const ran = new Set(cluster.controlPlane.processes.map((started) => started.spec.name));
      await keepComponentLogs(cluster.runDir, ran);
    } finally {
      await cluster.stop();
      process.off('exit', killOnExit);
    }
  };
}

/** What each component cost the run, in the log (CI keeps it) and as JSON beside the kept logs. */
async function reportUsage(usage: readonly ComponentUsage[]): Promise<void> {
  progress(
    `what each component cost this run (CPU and RSS read from /proc before teardown):\n${usageTable(usage)}`,
  );
  await mkdir(E2E_LOGS_DIR, { recursive: true });
  await writeFile(USAGE_REPORT, `${JSON.stringify(usage, null, 2)}\n`).catch((error: unknown) => {
    progress(`could not write ${USAGE_REPORT}: ${String(error)}`);
  });
}

/** The components whose logs outlive the run (etcd's, at warn level, rarely explains a spec). */
const KEPT_LOGS: readonly ComponentName[] = [
  'kube-controller-manager',
  'kube-apiserver',
  'kube-scheduler',
  'kwok',
];

/** The run directory goes with the cluster; its component logs are what explains a failed spec. */
async function keepComponentLogs(runDir: string, ran: ReadonlySet<string>): Promise<void> {
  await mkdir(E2E_LOGS_DIR, { recursive: true });
  for (const component of KEPT_LOGS.filter((name) => ran.has(name))) {
    const name = `${component}.log`;
    await copyFile(path.join(runDir, name), path.join(E2E_LOGS_DIR, `shared-${name}`)).catch(
      (error: unknown) => {
        progress(`could not keep ${name}: ${String(error)}`);
      },
    );
  }
}
