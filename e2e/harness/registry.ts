// A real OCI registry for the specs that publish: distribution/distribution's `registry` (built from
// the Go module proxy by scripts/registry.sh), serving plain HTTP on a free loopback port with its
// storage in a directory of the caller's. Charts are pushed to it with `helm push` and installed
// from it with `helm install oci://…`.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../cluster/paths.ts';
import { freeLoopbackPort } from '../cluster/ports.ts';
import { spawnDetached, tailFile, type SpawnedProcess } from '../cluster/processes.ts';

const run = promisify(execFile);
const READY_TIMEOUT_MS = 30_000;

/** The first build compiles it from the Go module proxy; later runs reuse the cache. */
export const REGISTRY_BUILD_TIMEOUT_MS = 20 * 60_000;

export interface Registry {
  /** `127.0.0.1:<port>`, as `oci://` references and image names use it. */
  readonly host: string;
  readonly logPath: string;
  stop(): Promise<void>;
}

async function locateRegistry(): Promise<string> {
  const { stdout } = await run('bash', [path.join(REPO_ROOT, 'scripts', 'registry.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const binary = stdout.trim().split('\n').at(-1);
  if (!binary) throw new Error('scripts/registry.sh printed no path');
  return binary;
}

async function answersV2(host: string): Promise<boolean> {
  try {
    const response = await fetch(`http://${host}/v2/`, { signal: AbortSignal.timeout(2000) });
    return response.status === 200;
  } catch {
    return false;
  }
}

async function stopProcess(child: SpawnedProcess): Promise<void> {
  if (child.exitInfo !== undefined) return;
  child.signal('SIGTERM');
  const exited = await Promise.race([child.exit.then(() => true), sleep(10_000, false)]);
  if (!exited) {
    child.signal('SIGKILL');
    await child.exit;
  }
}

/** Starts a registry storing into `dir`/storage; its log is `dir`/registry.log. */
export async function startRegistry(dir: string): Promise<Registry> {
  const binary = await locateRegistry();
  const port = await freeLoopbackPort();
  const host = `127.0.0.1:${String(port)}`;
  const config = path.join(dir, 'registry.yaml');
  await writeFile(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: info',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${path.join(dir, 'storage')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${host}`,
      '',
    ].join('\n'),
  );
  const logPath = path.join(dir, 'registry.log');
  const child = await spawnDetached({
    name: 'registry',
    command: binary,
    args: ['serve', config],
    logPath,
    // No tracing exporter to reach.
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none' },
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await answersV2(host))) {
    if (child.exitInfo !== undefined || Date.now() > deadline) {
      await stopProcess(child);
      throw new Error(`the registry did not serve /v2/ on ${host}:\n${tailFile(logPath, 20)}`);
    }
    await sleep(100);
  }
  return { host, logPath, stop: () => stopProcess(child) };
}
