import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  GZIP_LAYER_MEDIA_TYPE,
  INDEX_MEDIA_TYPE,
  MANIFEST_MEDIA_TYPE,
  type Descriptor,
  type ImageIndex,
  ZSTD_LAYER_MEDIA_TYPE,
  decodedLayer,
  dockerArchiveIndex,
  encodeLayersZstd,
  imageIndex,
  pushTarget,
  reencodedManifest,
  sha256Of,
  writeDockerArchive,
  writeIndex,
} from './oci-layout.ts';

const digestOf = (text: string): string => sha256Of(Buffer.from(text));
const manifest = (text: string): Descriptor => ({
  mediaType: MANIFEST_MEDIA_TYPE,
  digest: digestOf(text),
  size: text.length,
});
const config = (architecture: string) => ({ architecture, os: 'linux', rootfs: { diff_ids: [] } });

describe('the image index', () => {
  it('lists one image per platform, in the order given', () => {
    const index = imageIndex([
      { manifest: manifest('a'), config: config('amd64') },
      { manifest: manifest('b'), config: config('arm64') },
    ]);
    expect(index).toEqual({
      schemaVersion: 2,
      mediaType: INDEX_MEDIA_TYPE,
      manifests: [
        { ...manifest('a'), platform: { architecture: 'amd64', os: 'linux' } },
        { ...manifest('b'), platform: { architecture: 'arm64', os: 'linux' } },
      ],
    });
  });

  it('refuses two images for one platform', () => {
    expect(() =>
      imageIndex([
        { manifest: manifest('a'), config: config('amd64') },
        { manifest: manifest('b'), config: config('amd64') },
      ]),
    ).toThrow('two images for linux/amd64');
  });
});

describe('the docker load archive', () => {
  it('names the config by its digest and each layer by its diff_id, the top one in repositories', () => {
    const [first, second] = [digestOf('layer 1'), digestOf('layer 2')];
    const files = dockerArchiveIndex(digestOf('config'), [first, second], 'kreload:1.2.3');
    const hex = (digest: string) => digest.slice('sha256:'.length);
    expect(files.manifest).toEqual([
      {
        Config: `${hex(digestOf('config'))}.json`,
        RepoTags: ['kreload:1.2.3'],
        Layers: [`${hex(first)}/layer.tar`, `${hex(second)}/layer.tar`],
      },
    ]);
    expect(files.repositories).toEqual({ kreload: { '1.2.3': hex(second) } });
  });

  it.each([
    ['kreload', 'expected NAME:TAG'],
    ['localhost:5000/kreload', 'expected NAME:TAG'],
    ['kreload:', 'expected NAME:TAG'],
  ])('refuses the tag %s', (repoTag, message) => {
    expect(() => dockerArchiveIndex(digestOf('config'), [digestOf('l')], repoTag)).toThrow(message);
  });

  it('refuses an image without layers', () => {
    expect(() => dockerArchiveIndex(digestOf('config'), [], 'kreload:1')).toThrow('without layers');
  });
});

describe('a manifest re-encoded', () => {
  const gz = (text: string): Descriptor => ({
    mediaType: GZIP_LAYER_MEDIA_TYPE,
    digest: digestOf(`gz ${text}`),
    size: 10,
  });
  const zst = (text: string): Descriptor => ({
    mediaType: ZSTD_LAYER_MEDIA_TYPE,
    digest: digestOf(`zst ${text}`),
    size: 7,
  });
  const image = {
    schemaVersion: 2,
    config: {
      mediaType: 'application/vnd.oci.image.config.v1+json',
      digest: digestOf('c'),
      size: 1,
    },
    layers: [gz('base'), gz('app')],
  };

  it('points each layer at its new blob, in order, and keeps the config', () => {
    const encoded = new Map([
      [gz('app').digest, zst('app')],
      [gz('base').digest, zst('base')],
    ]);
    expect(reencodedManifest(image, encoded)).toEqual({
      ...image,
      layers: [zst('base'), zst('app')],
    });
  });

  it('refuses a manifest with a layer left out', () => {
    expect(() => reencodedManifest(image, new Map([[gz('base').digest, zst('base')]]))).toThrow(
      `layer ${gz('app').digest} not re-encoded`,
    );
  });
});

describe('the push target', () => {
  it.each([
    ['localhost:5000/kreload:1.0.0', false, 'http://localhost:5000/v2/kreload', '1.0.0'],
    ['127.0.0.1:38117/kreload:1.0.0', false, 'http://127.0.0.1:38117/v2/kreload', '1.0.0'],
    ['[::1]:5000/team/kreload:v1', false, 'http://[::1]:5000/v2/team/kreload', 'v1'],
    [
      'registry.example.com/team/kreload:1.0.0',
      false,
      'https://registry.example.com/v2/team/kreload',
      '1.0.0',
    ],
    [
      'registry.internal:5000/kreload:rc.1',
      true,
      'http://registry.internal:5000/v2/kreload',
      'rc.1',
    ],
  ])('%s (plain HTTP asked: %s) -> %s, tag %s', (reference, plainHttp, baseUrl, tag) => {
    expect(pushTarget(reference, plainHttp)).toMatchObject({ baseUrl, tag });
  });

  it.each([
    ['kreload:1.0.0', 'REGISTRY/REPOSITORY:TAG'],
    ['localhost:5000/kreload', 'expected NAME:TAG'],
    ['localhost:5000/Kreload:1', 'REGISTRY/REPOSITORY:TAG'],
    ['localhost:5000/kreload@sha256:00', 'expected NAME:TAG'],
    ['local host:5000/kreload:1', 'is not a registry'],
    ['localhost:5000/kreload:-x', 'is not a valid tag'],
  ])('refuses %s', (reference, message) => {
    expect(() => pushTarget(reference, false)).toThrow(message);
  });
});

describe('a layout of two architectures', () => {
  let layout = '';

  const putBlob = async (bytes: Buffer): Promise<Descriptor> => {
    const digest = sha256Of(bytes);
    await writeFile(path.join(layout, 'blobs', 'sha256', digest.slice(7)), bytes);
    return { mediaType: '', digest, size: bytes.length };
  };
  const encoders: Record<string, (bytes: Buffer) => Buffer> = {
    [GZIP_LAYER_MEDIA_TYPE]: (bytes) => gzipSync(bytes),
    [ZSTD_LAYER_MEDIA_TYPE]: (bytes) => zstdCompressSync(bytes),
    'application/vnd.oci.image.layer.v1.tar': (bytes) => bytes,
  };
  /** An image whose layers are the given (fake) tar streams, gzip-compressed as umoci writes them. */
  const putImage = async (
    architecture: string,
    layers: string[],
    layerMediaType = GZIP_LAYER_MEDIA_TYPE,
  ): Promise<Descriptor> => {
    const configBytes = Buffer.from(
      JSON.stringify({
        architecture,
        os: 'linux',
        rootfs: { type: 'layers', diff_ids: layers.map((layer) => digestOf(layer)) },
      }),
    );
    const configDescriptor = await putBlob(configBytes);
    const layerDescriptors = await Promise.all(
      layers.map(async (layer) => ({
        ...(await putBlob((encoders[layerMediaType] ?? gzipSync)(Buffer.from(layer)))),
        mediaType: layerMediaType,
      })),
    );
    const manifestBytes = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST_MEDIA_TYPE,
        config: { ...configDescriptor, mediaType: 'application/vnd.oci.image.config.v1+json' },
        layers: layerDescriptors,
      }),
    );
    return { ...(await putBlob(manifestBytes)), mediaType: MANIFEST_MEDIA_TYPE };
  };
  const tagged = (descriptor: Descriptor, tag: string) => ({
    ...descriptor,
    annotations: { 'org.opencontainers.image.ref.name': tag },
  });

  beforeEach(async () => {
    layout = await mkdtemp(path.join(tmpdir(), 'oci-layout-test-'));
    await mkdir(path.join(layout, 'blobs', 'sha256'), { recursive: true });
    const amd64 = await putImage('amd64', ['base amd64', 'app']);
    const arm64 = await putImage('arm64', ['base arm64', 'app']);
    await writeFile(
      path.join(layout, 'index.json'),
      JSON.stringify({
        schemaVersion: 2,
        manifests: [tagged(amd64, '1.0.0-amd64'), tagged(arm64, '1.0.0-arm64')],
      }),
    );
  });

  afterEach(async () => {
    await rm(layout, { recursive: true, force: true });
  });

  const readIndex = async (): Promise<ImageIndex> =>
    JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as ImageIndex;

  it('gets an index tagged with the version, each image kept under its own tag and name', async () => {
    const digest = await writeIndex(layout, '1.0.0', 'docker.io/library/kreload:1.0.0', [
      'amd64=1.0.0-amd64',
      'arm64=1.0.0-arm64',
    ]);
    const entries = (await readIndex()).manifests;
    expect(entries.map((entry) => [entry.mediaType, entry.annotations])).toEqual([
      [
        INDEX_MEDIA_TYPE,
        {
          'io.containerd.image.name': 'docker.io/library/kreload:1.0.0',
          'org.opencontainers.image.ref.name': '1.0.0',
        },
      ],
      [
        MANIFEST_MEDIA_TYPE,
        {
          'io.containerd.image.name': 'docker.io/library/kreload:1.0.0-amd64',
          'org.opencontainers.image.ref.name': '1.0.0-amd64',
        },
      ],
      [
        MANIFEST_MEDIA_TYPE,
        {
          'io.containerd.image.name': 'docker.io/library/kreload:1.0.0-arm64',
          'org.opencontainers.image.ref.name': '1.0.0-arm64',
        },
      ],
    ]);
    expect(entries[0]?.digest).toBe(digest);
    const blob = await readFile(path.join(layout, 'blobs', 'sha256', digest.slice(7)));
    expect(sha256Of(blob)).toBe(digest);
    const index = JSON.parse(blob.toString('utf8')) as ImageIndex;
    expect(index.manifests.map((image) => [image.digest, image.platform])).toEqual([
      [entries[1]?.digest, { architecture: 'amd64', os: 'linux' }],
      [entries[2]?.digest, { architecture: 'arm64', os: 'linux' }],
    ]);
  });

  it('refuses an image listed under another architecture than its config’s', async () => {
    await expect(
      writeIndex(layout, '1.0.0', 'kreload:1.0.0', ['arm64=1.0.0-amd64']),
    ).rejects.toThrow('1.0.0-amd64 is built for amd64, not arm64');
  });

  it('writes the docker load files: the config and uncompressed layers named by their digests', async () => {
    const dir = path.join(layout, 'docker');
    await writeDockerArchive(layout, '1.0.0-arm64', 'kreload:1.0.0', dir);
    const [entry] = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
      Config: string;
      Layers: string[];
    }[];
    const configBytes = await readFile(path.join(dir, entry?.Config ?? ''));
    expect(`sha256:${entry?.Config.replace('.json', '') ?? ''}`).toBe(sha256Of(configBytes));
    const layers = await Promise.all(
      (entry?.Layers ?? []).map((layer) => readFile(path.join(dir, layer), 'utf8')),
    );
    expect(layers).toEqual(['base arm64', 'app']);
  });

  it.each([ZSTD_LAYER_MEDIA_TYPE, GZIP_LAYER_MEDIA_TYPE])(
    'unpacks %s layers into the docker load files',
    async (mediaType) => {
      const image = await putImage('amd64', ['base', 'kreload'], mediaType);
      await writeFile(
        path.join(layout, 'index.json'),
        JSON.stringify({ schemaVersion: 2, manifests: [tagged(image, 'z')] }),
      );
      const dir = path.join(layout, 'docker');
      await writeDockerArchive(layout, 'z', 'kreload:1', dir);
      const [entry] = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
        Layers: string[];
      }[];
      const layers = await Promise.all(
        (entry?.Layers ?? []).map((layer) => readFile(path.join(dir, layer), 'utf8')),
      );
      expect(layers).toEqual(['base', 'kreload']);
    },
  );

  // Four zstd -19 processes, each setting up its workers: seconds on a busy machine.
  it('re-encodes an image as zstd, the same bytes twice, still unpacking to its diff_ids', async () => {
    const first = await encodeLayersZstd(layout, '1.0.0-amd64', 19);
    const manifestOf = async (digest: string) =>
      JSON.parse(await readFile(path.join(layout, 'blobs', 'sha256', digest.slice(7)), 'utf8')) as {
        layers: Descriptor[];
      };
    expect((await manifestOf(first.digest)).layers.map((l) => l.mediaType)).toEqual([
      ZSTD_LAYER_MEDIA_TYPE,
      ZSTD_LAYER_MEDIA_TYPE,
    ]);
    const again = await putImage('amd64', ['base amd64', 'app']);
    const index = await readIndex();
    await writeFile(
      path.join(layout, 'index.json'),
      JSON.stringify({ ...index, manifests: [...index.manifests, tagged(again, 'again')] }),
    );
    expect((await encodeLayersZstd(layout, 'again', 19)).digest).toBe(first.digest);
    const dir = path.join(layout, 'docker');
    await writeDockerArchive(layout, '1.0.0-amd64', 'kreload:1', dir);
    const [entry] = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
      Layers: string[];
    }[];
    const layers = await Promise.all(
      (entry?.Layers ?? []).map((layer) => readFile(path.join(dir, layer), 'utf8')),
    );
    expect(layers).toEqual(['base amd64', 'app']);
  }, 30_000);

  it('runs the zstd CLI it is given, and says so when it cannot', async () => {
    await expect(
      encodeLayersZstd(layout, '1.0.0-amd64', 19, path.join(layout, 'no-such-zstd')),
    ).rejects.toThrow(`cannot run ${path.join(layout, 'no-such-zstd')}`);
  });

  it('refuses a layer of an encoding it cannot read', async () => {
    const image = await putImage('amd64', ['x'], 'application/vnd.oci.image.layer.v1.tar');
    await writeFile(
      path.join(layout, 'index.json'),
      JSON.stringify({ schemaVersion: 2, manifests: [tagged(image, 'plain')] }),
    );
    await expect(
      writeDockerArchive(layout, 'plain', 'kreload:1', path.join(layout, 'docker')),
    ).rejects.toThrow('not gzip or zstd');
  });

  it('refuses a layer whose bytes do not match its diff_id', async () => {
    const bad = await putImage('amd64', ['x']);
    const index = await readIndex();
    const blob = JSON.parse(
      await readFile(path.join(layout, 'blobs', 'sha256', bad.digest.slice(7)), 'utf8'),
    ) as { config: Descriptor };
    const configFile = path.join(layout, 'blobs', 'sha256', blob.config.digest.slice(7));
    const configBytes = (await readFile(configFile, 'utf8')).replace(digestOf('x'), digestOf('y'));
    // Re-point the manifest at a config whose diff_id is another layer's.
    const forged = await putBlob(Buffer.from(configBytes));
    const manifestBytes = (
      await readFile(path.join(layout, 'blobs', 'sha256', bad.digest.slice(7)), 'utf8')
    )
      .replace(blob.config.digest, forged.digest)
      .replace(`"size":${String(blob.config.size)}`, `"size":${String(forged.size)}`);
    const forgedManifest = await putBlob(Buffer.from(manifestBytes));
    await writeFile(
      path.join(layout, 'index.json'),
      JSON.stringify({
        ...index,
        manifests: [tagged({ ...forgedManifest, mediaType: MANIFEST_MEDIA_TYPE }, 'forged')],
      }),
    );
    await expect(
      writeDockerArchive(layout, 'forged', 'kreload:1', path.join(layout, 'docker')),
    ).rejects.toThrow(`unpacks to ${digestOf('x')}, not ${digestOf('y')}`);
  });
});

describe('decodedLayer', () => {
  const tar = Buffer.from('a tar stream');
  it.each([
    [GZIP_LAYER_MEDIA_TYPE, gzipSync(tar)],
    [ZSTD_LAYER_MEDIA_TYPE, zstdCompressSync(tar)],
  ])('reads a %s blob', (mediaType, blob) => {
    expect(decodedLayer({ mediaType, digest: sha256Of(blob), size: blob.length }, blob)).toEqual(
      tar,
    );
  });

  it('refuses an encoding it cannot read, naming the layer', () => {
    const layer = {
      mediaType: 'application/vnd.oci.image.layer.v1.tar+bzip2',
      digest: 'd',
      size: 1,
    };
    expect(() => decodedLayer(layer, tar)).toThrow(
      'layer d is application/vnd.oci.image.layer.v1.tar+bzip2',
    );
  });
});
