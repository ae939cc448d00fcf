import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { BUILD_SCRIPT, REPO_ROOT } from './paths.ts';

export const BIN_DIR_ENV = 'KRELOAD_E2E_BIN_DIR';
const BINARIES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
] as const;

export class ControlPlaneBuildError extends Error {
  override readonly name = 'ControlPlaneBuildError';
}

/**
 * The directory with the control-plane binaries: `$KRELOAD_E2E_BIN_DIR` if set, else whatever
 * e2e/cluster/build.sh prints on its last line (a no-op when the cache is complete; a cold build
 * takes minutes and reports progress on stderr, which goes straight to ours).
 */
export async function resolveBinDir(): Promise<string> {
  const fromEnv = process.env[BIN_DIR_ENV];
  const binDir =
    fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : await runBuildScript();
  await Promise.all(
    BINARIES.map(async (name) => {
      try {
        await access(path.join(binDir, name), constants.X_OK);
      } catch (error) {
        throw new ControlPlaneBuildError(
          `${path.join(binDir, name)} is missing or not executable`,
          { cause: error },
        );
      }
    }),
  );
  return binDir;
}

function runBuildScript(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.once('error', (error) => {
      reject(new ControlPlaneBuildError(`could not run bash ${BUILD_SCRIPT}`, { cause: error }));
    });
    child.once('close', (code) => {
      const lastLine = stdout.trimEnd().split('\n').at(-1) ?? '';
      if (code === 0 && lastLine !== '') resolve(lastLine);
      else
        reject(
          new ControlPlaneBuildError(`bash ${BUILD_SCRIPT} failed with exit code ${String(code)}`),
        );
    });
  });
}
