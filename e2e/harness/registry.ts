// A real OCI registry for the specs that publish: distribution/distribution's `registry` (built from
// the Go module proxy by scripts/registry.sh), serving plain HTTP on a free loopback port with its
// storage in a directory of the caller's. Charts are pushed to it with `helm push` and installed
// from it with `helm install oci://…`; images are pushed and pulled with the distribution API.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { MANIFEST_MEDIA_TYPE } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { freeLoopbackPort } from '../cluster/ports.ts';
import { spawnDetached, tailFile, type SpawnedProcess } from '../cluster/processes.ts';
import { unpackLayout } from './image.ts';

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

interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
}

const sha256Of = (bytes: Buffer): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) {
    throw new Error(`${what}: HTTP ${String(response.status)} ${await response.text()}`);
  }
  return response;
}

/**
 * The image index `repository:tag` points to, checked against the digest the registry gives for it;
 * its manifests are the images, one per platform.
 */
export async function pullIndex(
  registry: Registry,
  repository: string,
  tag: string,
): Promise<{
  digest: string;
  manifests: (Descriptor & { platform?: { architecture: string; os: string } })[];
}> {
  const response = await expectStatus(
    await fetch(`http://${registry.host}/v2/${repository}/manifests/${tag}`, {
      headers: { accept: 'application/vnd.oci.image.index.v1+json' },
    }),
    200,
    `${repository}:${tag}`,
  );
  const type = response.headers.get('content-type');
  if (type !== 'application/vnd.oci.image.index.v1+json') {
    throw new Error(`${repository}:${tag} is ${String(type)}, not an OCI image index`);
  }
  const bytes = Buffer.from(await response.arrayBuffer());
  const digest = response.headers.get('docker-content-digest') ?? '';
  if (sha256Of(bytes) !== digest) throw new Error(`${repository}:${tag} does not match ${digest}`);
  const index = JSON.parse(bytes.toString('utf8')) as {
    manifests: (Descriptor & { platform?: { architecture: string; os: string } })[];
  };
  return { digest, manifests: index.manifests };
}

/**
 * Pulls `repository@digest` (manifest, config and layers, each checked against its digest) into an
 * OCI layout in `dir` and unpacks it there with umoci, as a runtime would: each layer decoded as its
 * media type says (gzip or zstd) and checked against its diff_id. Returns the config, the layers'
 * descriptors and the rootfs.
 */
export async function pullAndUnpack(
  registry: Registry,
  repository: string,
  digest: string,
  dir: string,
): Promise<{ config: unknown; layers: readonly Descriptor[]; rootfs: string }> {
  const base = `http://${registry.host}/v2/${repository}`;
  const checked = async (url: string, expected: string, accept?: string): Promise<Buffer> => {
    const response = await expectStatus(
      await fetch(url, accept === undefined ? {} : { headers: { accept } }),
      200,
      url,
    );
    const bytes = Buffer.from(await response.arrayBuffer());
    if (sha256Of(bytes) !== expected) throw new Error(`${url} does not match ${expected}`);
    return bytes;
  };
  const manifestBytes = await checked(`${base}/manifests/${digest}`, digest, MANIFEST_MEDIA_TYPE);
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as {
    config: Descriptor;
    layers: Descriptor[];
  };
  const configBytes = await checked(
    `${base}/blobs/${manifest.config.digest}`,
    manifest.config.digest,
  );
  const config: unknown = JSON.parse(configBytes.toString('utf8'));
  const layout = path.join(dir, 'layout');
  const blobs = path.join(layout, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });
  const store = (bytes: Buffer, blobDigest: string) =>
    writeFile(path.join(blobs, blobDigest.slice('sha256:'.length)), bytes);
  await store(manifestBytes, digest);
  await store(configBytes, manifest.config.digest);
  for (const layer of manifest.layers) {
    await store(await checked(`${base}/blobs/${layer.digest}`, layer.digest), layer.digest);
  }
  await writeFile(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(
    path.join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: MANIFEST_MEDIA_TYPE,
          digest,
          size: manifestBytes.length,
          annotations: { 'org.opencontainers.image.ref.name': 'pulled' },
        },
      ],
    }),
  );
  const rootfs = await unpackLayout(layout, 'pulled', path.join(dir, 'bundle'));
  return { config, layers: manifest.layers, rootfs };
}
