// The kreload container image as specs use it: built by scripts/image.sh (`npm run image`) into an
// OCI archive and layout, unpacked with umoci (scripts/umoci.sh's, which reads zstd layers), and started through scripts/image-run.sh, which runs
// the image's entrypoint as its user on a read-only root the way a container runtime would (podman
// and crun cannot start containers in this sandbox; docs/adr/0025-image-build-and-values-compatibility.md).
import { execFile } from 'node:child_process';
import { mkdir, open, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { isRecord } from '../../helm/kreload/tests/chart-harness.ts';
import { decodedLayer, sha256Of, type Descriptor } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';

const run = promisify(execFile);

/** The architectures scripts/image.sh builds, as OCI names them. */
export const ARCHITECTURES = ['amd64', 'arm64'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];
/** The architecture of this machine: the image specs start. */
export const NATIVE: Architecture = 'amd64';

/** One architecture's image of the index. */
export interface PlatformImage {
  /** Its tag in the layout (`<version>-<arch>`). */
  readonly tag: string;
  /** Its `docker load` archive (.docker.tar.gz). */
  readonly dockerArchive: string;
  readonly sbom: string;
  /** Its layer blobs (compressed, as a registry stores them): what a pull transfers. */
  readonly compressedBytes: number;
  readonly rootfsBytes: number;
}

/** What scripts/image.sh wrote (its image.env). */
export interface BuiltImage {
  readonly archive: string;
  readonly layout: string;
  /** The index's tag. */
  readonly tag: string;
  /** The name containerd (kind, k3d) gives the imported image. */
  readonly ref: string;
  /** The index's digest. */
  readonly digest: string;
  /** The OCI archive's size: both architectures. */
  readonly compressedBytes: number;
  readonly platforms: Readonly<Record<Architecture, PlatformImage>>;
  /** `REGISTRY/REPOSITORY:TAG@DIGEST`, when built with `push`. */
  readonly pushed?: string;
  /** The layers' encoding: `zstd <libzstd version>` or `gzip`. */
  readonly compression: string;
}

/** The layer encodings scripts/image.sh writes (`--compression`); zstd is its default. */
export type Compression = 'zstd' | 'gzip';

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

/**
 * Runs scripts/image.sh into `outDir` (minutes: it compiles the bundle and builds both
 * architectures), then pushes it to `push` (REGISTRY/REPOSITORY:TAG) if given.
 */
export async function buildImage(
  outDir: string,
  options: { readonly push?: string; readonly compression?: Compression } = {},
): Promise<BuiltImage> {
  const { push, compression } = options;
  try {
    await run(
      'bash',
      [
        path.join(REPO_ROOT, 'scripts', 'image.sh'),
        outDir,
        ...(push === undefined ? [] : ['--push', push]),
        ...(compression === undefined ? [] : ['--compression', compression]),
      ],
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    throw new ImageError(`scripts/image.sh failed:\n${outputOf(error)}`, { cause: error });
  }
  const env = parseEnvFile(await readFile(path.join(outDir, 'image.env'), 'utf8'));
  const value = (name: string): string => {
    const found = env.get(name);
    if (found === undefined) throw new ImageError(`image.env has no ${name}`);
    return found;
  };
  const platform = (arch: Architecture): PlatformImage => {
    const prefix = `IMAGE_${arch.toUpperCase()}_`;
    return {
      tag: value(`${prefix}TAG`),
      dockerArchive: value(`${prefix}DOCKER_ARCHIVE`),
      sbom: value(`${prefix}SBOM`),
      compressedBytes: Number(value(`${prefix}COMPRESSED_BYTES`)),
      rootfsBytes: Number(value(`${prefix}ROOTFS_BYTES`)),
    };
  };
  const pushed = env.get('IMAGE_PUSHED');
  return {
    archive: value('IMAGE_ARCHIVE'),
    layout: value('IMAGE_LAYOUT'),
    tag: value('IMAGE_TAG'),
    ref: value('IMAGE_REF'),
    digest: value('IMAGE_DIGEST'),
    compressedBytes: Number(value('IMAGE_COMPRESSED_BYTES')),
    platforms: { amd64: platform('amd64'), arm64: platform('arm64') },
    compression: value('IMAGE_COMPRESSION'),
    ...(pushed !== undefined && { pushed }),
  };
}

/** The ELF machine of a binary: 62 for x86-64, 183 for AArch64 (64-bit little-endian ELF only). */
export async function elfMachine(file: string): Promise<number> {
  const handle = await open(file, 'r');
  try {
    const header = Buffer.alloc(20);
    await handle.read(header, 0, 20, 0);
    if (header.readUInt32BE(0) !== 0x7f454c46) throw new ImageError(`${file} is not an ELF file`);
    if (header[4] !== 2 || header[5] !== 1) {
      throw new ImageError(`${file} is not a 64-bit little-endian ELF file`);
    }
    return header.readUInt16LE(18);
  } finally {
    await handle.close();
  }
}

export const ELF_MACHINE: Readonly<Record<Architecture, number>> = { amd64: 62, arm64: 183 };

async function readBlob(layout: string, digest: string): Promise<unknown> {
  return JSON.parse(await readFile(path.join(layout, 'blobs', ...digest.split(':')), 'utf8'));
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** The image config of one architecture's image in the OCI layout, read from its blobs. */
export async function readImageConfig(
  image: BuiltImage,
  arch: Architecture = NATIVE,
): Promise<ImageConfig> {
  const tag = image.platforms[arch].tag;
  const index: unknown = JSON.parse(await readFile(path.join(image.layout, 'index.json'), 'utf8'));
  const manifests = field(index, 'manifests');
  const entry: unknown = Array.isArray(manifests)
    ? (manifests as unknown[]).find(
        (manifest) =>
          field(field(manifest, 'annotations'), 'org.opencontainers.image.ref.name') === tag,
      )
    : undefined;
  const manifestDigest = field(entry, 'digest');
  if (typeof manifestDigest !== 'string') throw new ImageError(`no tag ${tag} in ${image.layout}`);
  const configDigest = field(
    field(await readBlob(image.layout, manifestDigest), 'config'),
    'digest',
  );
  if (typeof configDigest !== 'string') throw new ImageError('the manifest names no config');
  return field(await readBlob(image.layout, configDigest), 'config') as ImageConfig;
}

/**
 * umoci built by scripts/umoci.sh from the Go module proxy (a no-op once cached): Debian's umoci
 * 0.4.7 refuses zstd layers.
 */
async function locateUmoci(): Promise<string> {
  const { stdout } = await run('bash', [path.join(REPO_ROOT, 'scripts', 'umoci.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const binary = stdout.trim().split('\n').at(-1);
  if (!binary) throw new ImageError('scripts/umoci.sh printed no path');
  return binary;
}

/**
 * `umoci unpack` of the image tagged `tag` in the OCI layout `layout` into `bundleDir` (which must
 * not exist): every layer checked against its digest and diff_id, whiteouts applied; returns its
 * rootfs.
 */
export async function unpackLayout(
  layout: string,
  tag: string,
  bundleDir: string,
): Promise<string> {
  const umoci = await locateUmoci();
  try {
    await run(umoci, ['unpack', '--image', `${layout}:${tag}`, bundleDir], {
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    throw new ImageError(`umoci unpack failed:\n${outputOf(error)}`, { cause: error });
  }
  return path.join(bundleDir, 'rootfs');
}

/** `umoci unpack` of one architecture's image into `bundleDir` (which must not exist). */
export const unpackImage = (
  image: BuiltImage,
  bundleDir: string,
  arch: Architecture = NATIVE,
): Promise<string> => unpackLayout(image.layout, image.platforms[arch].tag, bundleDir);

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
    `${options.image.layout}:${options.image.platforms[NATIVE].tag}`,
    '--bundle',
    options.bundleDir,
    '--secret',
    `${options.serviceAccountDir}:/var/run/secrets/kubernetes.io/serviceaccount`,
    ...Object.entries(options.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    '--',
  ];
}

async function readJsonFile(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

/**
 * Unpacks a `docker load` archive (.docker.tar.gz) into `dir` and checks it against the image tagged
 * `tag` in the OCI layout: manifest.json lists one image, tagged `repoTag`, whose config is that
 * image's config named by its digest, and whose layer tars are its layers uncompressed, each named by
 * its digest, which is the config's diff_id; `repositories` names the top layer; nothing else.
 */
export async function expectDockerArchive(options: {
  readonly archive: string;
  readonly layout: string;
  readonly tag: string;
  readonly repoTag: string;
  readonly arch: Architecture;
  readonly dir: string;
}): Promise<void> {
  const { archive, layout, tag, repoTag, arch, dir } = options;
  await mkdir(dir, { recursive: true });
  await run('tar', ['-xzf', archive, '-C', dir]);
  const blob = async (digest: string): Promise<Buffer> => {
    const bytes = await readFile(path.join(layout, 'blobs', ...digest.split(':')));
    expect(sha256Of(bytes)).toBe(digest);
    return bytes;
  };
  const index = (await readJsonFile(path.join(layout, 'index.json'))) as {
    manifests: Descriptor[];
  };
  const entry = index.manifests.find(
    (manifest) => manifest.annotations?.['org.opencontainers.image.ref.name'] === tag,
  );
  const manifest = JSON.parse((await blob(entry?.digest ?? '')).toString('utf8')) as {
    config: Descriptor;
    layers: Descriptor[];
  };
  const [image, ...more] = (await readJsonFile(path.join(dir, 'manifest.json'))) as {
    Config: string;
    RepoTags: string[];
    Layers: string[];
  }[];
  expect(more).toEqual([]);
  expect(image?.RepoTags).toEqual([repoTag]);
  // The config is the image's own, named by its digest.
  const configBytes = await readFile(path.join(dir, image?.Config ?? ''));
  expect(`sha256:${path.basename(image?.Config ?? '', '.json')}`).toBe(sha256Of(configBytes));
  expect(configBytes).toEqual(await blob(manifest.config.digest));
  const config = JSON.parse(configBytes.toString('utf8')) as {
    architecture: string;
    rootfs: { diff_ids: string[] };
  };
  expect(config.architecture).toBe(arch);
  // Each layer.tar is the uncompressed layer: its digest is the config's diff_id.
  expect(image?.Layers).toHaveLength(manifest.layers.length);
  for (const [i, layer] of (image?.Layers ?? []).entries()) {
    const digest = sha256Of(await readFile(path.join(dir, layer)));
    expect(digest).toBe(config.rootfs.diff_ids[i]);
    expect(layer).toBe(`${digest.slice('sha256:'.length)}/layer.tar`);
    const compressed = manifest.layers[i];
    if (compressed === undefined) throw new ImageError(`no layer ${String(i)} in ${tag}`);
    expect(sha256Of(decodedLayer(compressed, await blob(compressed.digest)))).toBe(digest);
  }
  const [repository = '', repositoryTag = ''] = repoTag.split(':');
  expect(await readJsonFile(path.join(dir, 'repositories'))).toEqual({
    [repository]: { [repositoryTag]: path.dirname(image?.Layers.at(-1) ?? '') },
  });
  expect((await readdir(dir)).sort()).toEqual(
    [
      'manifest.json',
      'repositories',
      image?.Config ?? '',
      ...(image?.Layers ?? []).map((layer) => path.dirname(layer)),
    ].sort(),
  );
}
