// The container image's runtime stage without a container engine: scripts/image-smoke.sh installs
// a copy of the build with production dependencies only (the Dockerfile's `deps` stage) into a
// directory of the caller's choosing, and this module runs that copy the way the image does.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../cluster/paths.ts';

const run = promisify(execFile);

/** The image runs as this UID and GID (Dockerfile `USER`, chart securityContext). */
export const IMAGE_USER = 65532;
/** The image's ENV; startKreload adds it to its own environment. */
export const IMAGE_ENV: Readonly<Record<string, string>> = {
  NODE_ENV: 'production',
  HOME: '/tmp',
  // Module resolution must not reach beyond the copy's own node_modules.
  NODE_PATH: '',
};

export interface RuntimeCopy {
  /** The image's /app: dist/, node_modules/, package.json, LICENSE. */
  readonly appDir: string;
  /** dist/main.js of the copy: the image's entrypoint script. */
  readonly entry: string;
}

export class RuntimeCopyError extends Error {
  override readonly name = 'RuntimeCopyError';
}

function outputOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'stderr' in error) {
    return String(error.stderr);
  }
  return '';
}

/**
 * Copies `dist` (a fresh `npm run build`) and installs production dependencies from the lockfile
 * into `<parentDir>/app`. parentDir must exist and, when run as root, be traversable by IMAGE_USER.
 */
export async function installRuntimeCopy(options: {
  readonly dist: string;
  readonly parentDir: string;
}): Promise<RuntimeCopy> {
  const appDir = path.join(options.parentDir, 'app');
  const script = path.join(REPO_ROOT, 'scripts', 'image-smoke.sh');
  try {
    await run('bash', [script, '--dist', options.dist, '--app-dir', appDir], {
      cwd: REPO_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    throw new RuntimeCopyError(`scripts/image-smoke.sh failed:\n${outputOf(error)}`, {
      cause: error,
    });
  }
  return { appDir, entry: path.join(appDir, 'dist', 'main.js') };
}

/**
 * Runs `node <args>` (this Node 24) in the copy with only the image's environment, as IMAGE_USER
 * when this process may switch users.
 */
export async function runInCopy(
  copy: RuntimeCopy,
  args: readonly string[],
): Promise<{ readonly stdout: string; readonly stderr: string }> {
  const asImageUser = process.getuid?.() === 0 ? { uid: IMAGE_USER, gid: IMAGE_USER } : {};
  return run(process.execPath, [...args], {
    cwd: copy.appDir,
    env: { PATH: '/usr/bin:/bin', ...IMAGE_ENV },
    timeout: 30_000,
    ...asImageUser,
  });
}
