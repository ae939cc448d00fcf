/**
 * What scripts/image.sh does with the OCI layout umoci wrote, past what umoci does itself:
 *
 *   index LAYOUT TAG NAME ARCH=TAG...   joins the per-architecture images (tagged TAG in the layout)
 *                                       into one OCI image index tagged TAG, and names every entry of
 *                                       index.json for containerd (NAME, NAME-ARCH); prints its digest
 *   docker-archive LAYOUT TAG REPO_TAG DIR
 *                                       writes the image tagged TAG as the files of a `docker load`
 *                                       archive (manifest.json, repositories, the config, one
 *                                       uncompressed layer.tar per layer) into DIR, each checked
 *                                       against its digest; image.sh tars DIR
 *   zstd LAYOUT TAG LEVEL [ZSTD]       re-encodes the gzip layers of the image tagged TAG with the
 *                                       zstd CLI ZSTD (default: zstd on the PATH) at LEVEL, and
 *                                       re-points TAG at the new manifest; prints its digest
 *   push LAYOUT TAG REGISTRY/REPOSITORY:TAG [--plain-http]
 *                                       pushes the index tagged TAG with the distribution API: the
 *                                       blobs, each image manifest by digest, then the index by tag;
 *                                       prints REGISTRY/REPOSITORY:TAG@DIGEST
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createZstdDecompress, gunzipSync, zstdDecompressSync } from 'node:zlib';

export const INDEX_MEDIA_TYPE = 'application/vnd.oci.image.index.v1+json';
export const MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';
export const GZIP_LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+gzip';
export const ZSTD_LAYER_MEDIA_TYPE = 'application/vnd.oci.image.layer.v1.tar+zstd';
/** How to read each layer encoding this layout may hold; any other media type is refused. */
const LAYER_DECODERS: Readonly<
  Record<string, { readonly stream: () => Transform; readonly bytes: (blob: Buffer) => Buffer }>
> = {
  [GZIP_LAYER_MEDIA_TYPE]: { stream: () => createGunzip(), bytes: (blob) => gunzipSync(blob) },
  [ZSTD_LAYER_MEDIA_TYPE]: {
    stream: () => createZstdDecompress(),
    bytes: (blob) => zstdDecompressSync(blob),
  },
};

function layerDecoder(mediaType: string, digest: string) {
  const decoder = LAYER_DECODERS[mediaType];
  if (decoder === undefined) {
    throw new OciLayoutError(`layer ${digest} is ${mediaType}, not gzip or zstd`);
  }
  return decoder;
}

/** A layer blob's tar stream, decoded as its media type says. */
export const decodedLayer = (layer: Descriptor, blob: Buffer): Buffer =>
  layerDecoder(layer.mediaType, layer.digest).bytes(blob);
const REF_NAME = 'org.opencontainers.image.ref.name';
/** The name containerd (kind, k3d, `ctr import`) gives an image it imports from an archive. */
const CONTAINERD_NAME = 'io.containerd.image.name';

export interface Platform {
  readonly architecture: string;
  readonly os: string;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: Platform;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface ImageManifest {
  readonly config: Descriptor;
  readonly layers: readonly Descriptor[];
}

export interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly rootfs: { readonly diff_ids: readonly string[] };
}

export interface ImageIndex {
  readonly schemaVersion: 2;
  readonly mediaType: string;
  readonly manifests: readonly Descriptor[];
  readonly annotations?: Readonly<Record<string, string>>;
}

export class OciLayoutError extends Error {
  override readonly name = 'OciLayoutError';
}

export const sha256Of = (bytes: Buffer | string): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

const hexOf = (digest: string): string => {
  const match = /^sha256:([0-9a-f]{64})$/.exec(digest);
  if (match?.[1] === undefined) throw new OciLayoutError(`not a sha256 digest: ${digest}`);
  return match[1];
};

/** The index of one image per platform, in the order given (the first is a client's default). */
export function imageIndex(
  images: readonly { readonly manifest: Descriptor; readonly config: ImageConfig }[],
): ImageIndex {
  const seen = new Set<string>();
  const manifests = images.map(({ manifest, config }): Descriptor => {
    const platform = `${config.os}/${config.architecture}`;
    if (seen.has(platform)) throw new OciLayoutError(`two images for ${platform}`);
    seen.add(platform);
    return {
      mediaType: manifest.mediaType,
      digest: manifest.digest,
      size: manifest.size,
      platform: { architecture: config.architecture, os: config.os },
    };
  });
  return { schemaVersion: 2, mediaType: INDEX_MEDIA_TYPE, manifests };
}

/**
 * The manifest with each layer re-encoded as `encoded` says (the old digest → the new descriptor);
 * the config and its diff_ids stay, as they name the uncompressed tar streams.
 */
export function reencodedManifest<M extends ImageManifest>(
  manifest: M,
  encoded: ReadonlyMap<string, Descriptor>,
): M {
  const layers = manifest.layers.map((layer) => {
    const replacement = encoded.get(layer.digest);
    if (replacement === undefined) throw new OciLayoutError(`layer ${layer.digest} not re-encoded`);
    return { ...layer, ...replacement };
  });
  return { ...manifest, layers };
}

/** A layout's index.json entry, named for OCI tools (TAG) and containerd (NAME). */
export function namedEntry(descriptor: Descriptor, tag: string, name: string): Descriptor {
  const { mediaType, digest, size, platform } = descriptor;
  return {
    mediaType,
    digest,
    size,
    ...(platform && { platform }),
    annotations: { [CONTAINERD_NAME]: name, [REF_NAME]: tag },
  };
}

/** The files of a `docker load` archive that describe the image (Docker's `docker save` layout). */
export function dockerArchiveIndex(
  configDigest: string,
  diffIds: readonly string[],
  repoTag: string,
): {
  manifest: { Config: string; RepoTags: string[]; Layers: string[] }[];
  repositories: Record<string, Record<string, string>>;
  configFile: string;
  layerFiles: string[];
} {
  if (diffIds.length === 0) throw new OciLayoutError('an image without layers');
  const { repository, tag } = splitTag(repoTag);
  const configFile = `${hexOf(configDigest)}.json`;
  const layerFiles = diffIds.map((diffId) => `${hexOf(diffId)}/layer.tar`);
  const top = hexOf(diffIds.at(-1) ?? '');
  return {
    manifest: [{ Config: configFile, RepoTags: [repoTag], Layers: layerFiles }],
    repositories: { [repository]: { [tag]: top } },
    configFile,
    layerFiles,
  };
}

function splitTag(reference: string): { repository: string; tag: string } {
  const slash = reference.lastIndexOf('/');
  const colon = reference.lastIndexOf(':');
  if (colon <= slash || colon === reference.length - 1 || reference.includes('@')) {
    throw new OciLayoutError(`expected NAME:TAG, got "${reference}"`);
  }
  return { repository: reference.slice(0, colon), tag: reference.slice(colon + 1) };
}

export interface PushTarget {
  /** host[:port] */
  readonly registry: string;
  readonly repository: string;
  readonly tag: string;
  readonly baseUrl: string;
}

/**
 * REGISTRY/REPOSITORY:TAG, where a registry is the part before the first slash. Registries on the
 * loopback interface are spoken to over plain HTTP, as Docker does; others over HTTPS unless told.
 */
export function pushTarget(reference: string, plainHttp: boolean): PushTarget {
  const { repository: name, tag } = splitTag(reference);
  const slash = name.indexOf('/');
  const registry = name.slice(0, slash);
  const repository = name.slice(slash + 1);
  if (slash <= 0 || !/^[a-z0-9]+(?:[._/-][a-z0-9]+)*$/.test(repository)) {
    throw new OciLayoutError(
      `--push needs REGISTRY/REPOSITORY:TAG (e.g. localhost:5000/kreload:1.0.0), got "${reference}"`,
    );
  }
  if (!/^[\w.-]+(?::\d+)?$|^\[[0-9a-f:]+\](?::\d+)?$/i.test(registry)) {
    throw new OciLayoutError(`"${registry}" is not a registry host[:port]`);
  }
  if (!/^\w[\w.-]{0,127}$/.test(tag)) throw new OciLayoutError(`"${tag}" is not a valid tag`);
  const host = registry.replace(/:\d+$/, '');
  const loopback = ['localhost', '[::1]'].includes(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
  const scheme = plainHttp || loopback ? 'http' : 'https';
  return { registry, repository, tag, baseUrl: `${scheme}://${registry}/v2/${repository}` };
}

// ---- I/O: the layout ----

const blobPath = (layout: string, digest: string): string =>
  path.join(layout, 'blobs', 'sha256', hexOf(digest));

async function readBlob(layout: string, digest: string): Promise<Buffer> {
  const bytes = await readFile(blobPath(layout, digest));
  if (sha256Of(bytes) !== digest) throw new OciLayoutError(`blob ${digest} does not match it`);
  return bytes;
}

async function readJsonBlob<T>(layout: string, digest: string): Promise<T> {
  return JSON.parse((await readBlob(layout, digest)).toString('utf8')) as T;
}

async function readLayoutIndex(layout: string): Promise<ImageIndex> {
  return JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as ImageIndex;
}

function entryTagged(index: ImageIndex, tag: string, layout: string): Descriptor {
  const entry = index.manifests.find((manifest) => manifest.annotations?.[REF_NAME] === tag);
  if (entry === undefined) throw new OciLayoutError(`no tag ${tag} in ${layout}/index.json`);
  return entry;
}

export async function writeIndex(
  layout: string,
  tag: string,
  name: string,
  archTags: readonly string[],
): Promise<string> {
  const layoutIndex = await readLayoutIndex(layout);
  const images = await Promise.all(
    archTags.map(async (archTag) => {
      const [arch, imageTag] = archTag.split('=');
      if (arch === undefined || imageTag === undefined) {
        throw new OciLayoutError(`expected ARCH=TAG, got "${archTag}"`);
      }
      const manifest = entryTagged(layoutIndex, imageTag, layout);
      const { config: configDescriptor } = await readJsonBlob<ImageManifest>(
        layout,
        manifest.digest,
      );
      const config = await readJsonBlob<ImageConfig>(layout, configDescriptor.digest);
      if (config.architecture !== arch) {
        throw new OciLayoutError(`${imageTag} is built for ${config.architecture}, not ${arch}`);
      }
      return { manifest, config, imageTag };
    }),
  );
  const bytes = Buffer.from(JSON.stringify(imageIndex(images)));
  const digest = sha256Of(bytes);
  await writeFile(blobPath(layout, digest), bytes);
  const top: Descriptor = { mediaType: INDEX_MEDIA_TYPE, digest, size: bytes.length };
  const entries = [
    namedEntry(top, tag, name),
    ...images.map(({ manifest, imageTag }) =>
      namedEntry(manifest, imageTag, `${name}-${imageTag.slice(tag.length + 1)}`),
    ),
  ];
  await writeFile(
    path.join(layout, 'index.json'),
    JSON.stringify({ ...layoutIndex, manifests: entries }),
  );
  return digest;
}

/**
 * zstd's worker threads. Its multithreaded mode cuts the input into jobs of a size set by the level
 * alone, so any number of workers gives the same bytes (only --single-thread differs): four keep a
 * 100 MB layer's jobs busy on any machine.
 */
const ZSTD_WORKERS = 4;

/**
 * Re-encodes the gzip layers of the image tagged `tag` as zstd with the zstd CLI `zstdBinary` (a
 * fixed level and multithreaded mode, so one libzstd gives the same bytes on every build), and
 * re-points the tag at the new manifest. Returns the new manifest's descriptor.
 */
export async function encodeLayersZstd(
  layout: string,
  tag: string,
  level = 19,
  zstdBinary = 'zstd',
) {
  const layoutIndex = await readLayoutIndex(layout);
  const entry = entryTagged(layoutIndex, tag, layout);
  const manifest = await readJsonBlob<ImageManifest>(layout, entry.digest);
  const encoded = new Map<string, Descriptor>();
  for (const layer of manifest.layers) {
    if (layer.mediaType !== GZIP_LAYER_MEDIA_TYPE) continue;
    const tmp = path.join(layout, 'blobs', 'sha256', `${hexOf(layer.digest)}.zst.tmp`);
    const zstd = spawn(zstdBinary, [`-${String(level)}`, `-T${String(ZSTD_WORKERS)}`, '-q', '-c'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve, reject) => {
      zstd.on('error', reject).on('close', resolve);
    });
    const hash = createHash('sha256');
    let size = 0;
    const tee = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    const [input, output, exit] = await Promise.allSettled([
      pipeline(createReadStream(blobPath(layout, layer.digest)), createGunzip(), zstd.stdin),
      pipeline(zstd.stdout, tee, createWriteStream(tmp)),
      exited,
    ]);
    // The process first: a zstd that never started breaks both pipes, which says less.
    if (exit.status === 'rejected') {
      throw new OciLayoutError(`cannot run ${zstdBinary}`, { cause: exit.reason });
    }
    if (exit.value !== 0) throw new OciLayoutError(`zstd exited with ${String(exit.value)}`);
    for (const piped of [input, output]) {
      if (piped.status === 'rejected') throw piped.reason;
    }
    const digest = `sha256:${hash.digest('hex')}`;
    await rename(tmp, blobPath(layout, digest));
    encoded.set(layer.digest, { mediaType: ZSTD_LAYER_MEDIA_TYPE, digest, size });
  }
  for (const layer of manifest.layers)
    if (!encoded.has(layer.digest)) encoded.set(layer.digest, layer);
  const bytes = Buffer.from(JSON.stringify(reencodedManifest(manifest, encoded)));
  const digest = sha256Of(bytes);
  await writeFile(blobPath(layout, digest), bytes);
  const updated: Descriptor = { ...entry, digest, size: bytes.length };
  await writeFile(
    path.join(layout, 'index.json'),
    JSON.stringify({
      ...layoutIndex,
      manifests: layoutIndex.manifests.map((m) => (m === entry ? updated : m)),
    }),
  );
  return updated;
}

/** Streams a layer blob into `file` uncompressed, checking the result against `diffId`. */
async function unpackLayer(layer: Descriptor, blob: string, file: string, diffId: string) {
  const decoder = layerDecoder(layer.mediaType, layer.digest).stream;
  const hash = createHash('sha256');
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await pipeline(createReadStream(blob), decoder(), tee, createWriteStream(file));
  const digest = `sha256:${hash.digest('hex')}`;
  if (digest !== diffId) throw new OciLayoutError(`${blob} unpacks to ${digest}, not ${diffId}`);
}

export async function writeDockerArchive(
  layout: string,
  tag: string,
  repoTag: string,
  dir: string,
): Promise<void> {
  const entry = entryTagged(await readLayoutIndex(layout), tag, layout);
  if (entry.mediaType !== MANIFEST_MEDIA_TYPE) {
    throw new OciLayoutError(`${tag} is not one image (${entry.mediaType})`);
  }
  const manifest = await readJsonBlob<ImageManifest>(layout, entry.digest);
  const configBytes = await readBlob(layout, manifest.config.digest);
  const config = JSON.parse(configBytes.toString('utf8')) as ImageConfig;
  const diffIds = config.rootfs.diff_ids;
  if (diffIds.length !== manifest.layers.length) {
    throw new OciLayoutError(
      `${tag}: ${String(manifest.layers.length)} layers, ${String(diffIds.length)} diff_ids`,
    );
  }
  const files = dockerArchiveIndex(manifest.config.digest, diffIds, repoTag);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, files.configFile), configBytes);
  for (const [i, layer] of manifest.layers.entries()) {
    const file = path.join(dir, files.layerFiles[i] ?? '');
    await mkdir(path.dirname(file), { recursive: true });
    await unpackLayer(layer, blobPath(layout, layer.digest), file, diffIds[i] ?? '');
  }
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(files.manifest));
  await writeFile(path.join(dir, 'repositories'), JSON.stringify(files.repositories));
}

// ---- I/O: the registry ----

async function expectStatus(response: Response, statuses: number[], what: string): Promise<void> {
  if (statuses.includes(response.status)) return;
  const body = (await response.text()).slice(0, 500);
  const hint =
    response.status === 401
      ? ' (the registry wants credentials, which this push does not send: push the .oci.tar with skopeo or crane instead)'
      : '';
  throw new OciLayoutError(`${what}: HTTP ${String(response.status)}${hint} ${body}`);
}

async function pushBlob(layout: string, target: PushTarget, digest: string): Promise<void> {
  const head = await fetch(`${target.baseUrl}/blobs/${digest}`, { method: 'HEAD' });
  if (head.status === 200) return;
  const start = await fetch(`${target.baseUrl}/blobs/uploads/`, { method: 'POST' });
  await expectStatus(start, [202], `starting the upload of ${digest}`);
  const location = new URL(start.headers.get('location') ?? '', `${target.baseUrl}/`);
  location.searchParams.set('digest', digest);
  const put = await fetch(location, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: await readBlob(layout, digest),
  });
  await expectStatus(put, [201], `uploading ${digest}`);
}

async function putManifest(
  layout: string,
  target: PushTarget,
  descriptor: Descriptor,
  reference: string,
): Promise<void> {
  const put = await fetch(`${target.baseUrl}/manifests/${reference}`, {
    method: 'PUT',
    headers: { 'content-type': descriptor.mediaType },
    body: await readBlob(layout, descriptor.digest),
  });
  await expectStatus(put, [201], `putting the manifest ${descriptor.digest}`);
  const stored = put.headers.get('docker-content-digest');
  if (stored !== null && stored !== descriptor.digest) {
    throw new OciLayoutError(`the registry stored ${descriptor.digest} as ${stored}`);
  }
}

async function push(layout: string, tag: string, target: PushTarget): Promise<string> {
  const top = entryTagged(await readLayoutIndex(layout), tag, layout);
  if (top.mediaType !== INDEX_MEDIA_TYPE) throw new OciLayoutError(`${tag} is not an image index`);
  const index = await readJsonBlob<ImageIndex>(layout, top.digest);
  for (const image of index.manifests) {
    const manifest = await readJsonBlob<ImageManifest>(layout, image.digest);
    for (const blob of [manifest.config, ...manifest.layers]) {
      await pushBlob(layout, target, blob.digest);
    }
    await putManifest(layout, target, image, image.digest);
  }
  await putManifest(layout, target, top, target.tag);
  return top.digest;
}

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...args] = argv;
  const usage =
    'usage: oci-layout.ts index LAYOUT TAG NAME ARCH=TAG... | docker-archive LAYOUT TAG REPO_TAG DIR | zstd LAYOUT TAG LEVEL [ZSTD] | push LAYOUT TAG REGISTRY/REPOSITORY:TAG [--plain-http]';
  const [layout, tag, third, ...rest] = args;
  if (layout === undefined || tag === undefined || third === undefined) throw new Error(usage);
  switch (command) {
    case 'index':
      if (rest.length === 0) throw new Error(usage);
      console.log(await writeIndex(layout, tag, third, rest));
      return;
    case 'docker-archive':
      if (rest[0] === undefined) throw new Error(usage);
      await writeDockerArchive(layout, tag, third, rest[0]);
      return;
    case 'zstd':
      console.log((await encodeLayersZstd(layout, tag, Number(third), rest[0])).digest);
      return;
    case 'push': {
      const target = pushTarget(third, rest.includes('--plain-http'));
      const digest = await push(layout, tag, target);
      console.log(`${target.registry}/${target.repository}:${target.tag}@${digest}`);
      return;
    }
    case undefined:
    default:
      throw new Error(usage);
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`oci-layout: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
