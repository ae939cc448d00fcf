// The kreload container image as specs use it: built by scripts/image.sh (`npm run image`) into an
// OCI archive and layout, unpacked with umoci, and started through scripts/image-run.sh, which runs
// the image's entrypoint as its user on a read-only root the way a container runtime would (podman
// and crun cannot start containers in this sandbox; docs/adr/0025-image-build-and-values-compatibility.md).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { isRecord } from '../../helm/kreload/tests/chart-harness.ts';
import { REPO_ROOT } from '../cluster/paths.ts';

const run = promisify(execFile);

/** What scripts/image.sh wrote (its image.env). */
export interface BuiltImage {
  readonly archive: string;
  readonly layout: string;
  readonly tag: string;
  /** The name containerd (kind, k3d) gives the imported image. */
  readonly ref: string;
  /** The archive's size: layers are gzip-compressed, as a registry stores them. */
  readonly compressedBytes: number;
  readonly rootfsBytes: number;
}

/** The image config's `config` object (OCI image spec), as far as specs read it. */
export interface ImageConfig {
  readonly User?: string;
  readonly WorkingDir?: string;
  readonly Entrypoint?: readonly string[];
  readonly Cmd?: readonly string[];
  readonly Env?: readonly string[];
  readonly ExposedPorts?: Readonly<Record<string, object>>;
  readonly Labels?: Readonly<Record<string, string>>;
}

export class ImageError extends Error {
  override readonly name = 'ImageError';
}

function outputOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'stderr' in error
    ? String(error.stderr)
    : '';
}

function parseEnvFile(text: string): Map<string, string> {
  return new Map(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** Runs scripts/image.sh into `outDir` (minutes: it compiles and installs the dependencies). */
export async function buildImage(outDir: string): Promise<BuiltImage> {
  try {
    await run('bash', [path.join(REPO_ROOT, 'scripts', 'image.sh'), outDir], {
      cwd: REPO_ROOT,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    throw new ImageError(`scripts/image.sh failed:\n${outputOf(error)}`, { cause: error });
  }
  const env = parseEnvFile(await readFile(path.join(outDir, 'image.env'), 'utf8'));
  const value = (name: string): string => {
    const found = env.get(name);
    if (found === undefined) throw new ImageError(`image.env has no ${name}`);
    return found;
  };
  return {
    archive: value('IMAGE_ARCHIVE'),
    layout: value('IMAGE_LAYOUT'),
    tag: value('IMAGE_TAG'),
    ref: value('IMAGE_REF'),
    compressedBytes: Number(value('IMAGE_COMPRESSED_BYTES')),
    rootfsBytes: Number(value('IMAGE_ROOTFS_BYTES')),
  };
}

async function readBlob(layout: string, digest: string): Promise<unknown> {
  return JSON.parse(await readFile(path.join(layout, 'blobs', ...digest.split(':')), 'utf8'));
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** The image config of `tag` in the OCI layout, read from its blobs. */
export async function readImageConfig(image: BuiltImage): Promise<ImageConfig> {
  const index: unknown = JSON.parse(await readFile(path.join(image.layout, 'index.json'), 'utf8'));
  const manifests = field(index, 'manifests');
  const entry: unknown = Array.isArray(manifests)
    ? (manifests as unknown[]).find(
        (manifest) =>
          field(field(manifest, 'annotations'), 'org.opencontainers.image.ref.name') === image.tag,
      )
    : undefined;
  const manifestDigest = field(entry, 'digest');
  if (typeof manifestDigest !== 'string')
    throw new ImageError(`no tag ${image.tag} in ${image.layout}`);
  const configDigest = field(
    field(await readBlob(image.layout, manifestDigest), 'config'),
    'digest',
  );
  if (typeof configDigest !== 'string') throw new ImageError('the manifest names no config');
  return field(await readBlob(image.layout, configDigest), 'config') as ImageConfig;
}

/** `umoci unpack` of the image into `bundleDir` (which must not exist); returns its rootfs. */
export async function unpackImage(image: BuiltImage, bundleDir: string): Promise<string> {
  try {
    await run('umoci', ['unpack', '--image', `${image.layout}:${image.tag}`, bundleDir], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    throw new ImageError(`umoci unpack failed:\n${outputOf(error)}`, { cause: error });
  }
  return path.join(bundleDir, 'rootfs');
}

/**
 * The command that starts the unpacked image with a pod's ServiceAccount directory mounted and
 * `env` added to the image's environment; kreload's flags follow it (startKreload's `launcher`).
 */
export function imageLauncher(options: {
  readonly image: BuiltImage;
  readonly bundleDir: string;
  readonly serviceAccountDir: string;
  readonly env: Readonly<Record<string, string>>;
}): [string, ...string[]] {
  return [
    'bash',
    path.join(REPO_ROOT, 'scripts', 'image-run.sh'),
    '--image',
    `${options.image.layout}:${options.image.tag}`,
    '--bundle',
    options.bundleDir,
    '--secret',
    `${options.serviceAccountDir}:/var/run/secrets/kubernetes.io/serviceaccount`,
    ...Object.entries(options.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    '--',
  ];
}
