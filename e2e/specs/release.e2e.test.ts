// `npm run release` (scripts/release.sh) into a fresh folder: every file a release publishes, the
// image's `docker load` archive per architecture checked against the OCI index beside it (whose
// layers are zstd), and SHA256SUMS over all of it.
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateHelm } from '../../helm/kreload/tests/chart-harness.ts';
import { ZSTD_LAYER_MEDIA_TYPE, type Descriptor } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { ARCHITECTURES, expectDockerArchive } from '../harness/image.ts';

const run = promisify(execFile);
/** The plugin executables, the bundle, both images and the chart, on 2 shared cores. */
const RELEASE_TIMEOUT_MS = 40 * 60_000;

describe('npm run release', () => {
  let workDir = '';
  let out = '';
  let version = '';

  beforeAll(async () => {
    version = (
      JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
        version: string;
      }
    ).version;
    workDir = await mkdtemp(path.join(tmpdir(), 'kreload-release-'));
    await chmod(workDir, 0o755);
    out = path.join(workDir, 'release');
    await run('bash', [path.join(REPO_ROOT, 'scripts', 'release.sh'), out], {
      cwd: REPO_ROOT,
      env: { ...process.env, HELM: await locateHelm() },
      maxBuffer: 64 * 1024 * 1024,
    });
  }, RELEASE_TIMEOUT_MS);

  afterAll(async () => {
    if (workDir !== '') await rm(workDir, { recursive: true, force: true });
  });

  it('writes the image index, a docker archive and an SBOM per architecture, chart, plugin, sums', async () => {
    expect((await readdir(out)).sort()).toEqual(
      [
        'SHA256SUMS',
        'kreload.yaml',
        `kreload-${version}.oci.tar`,
        `kreload-${version}.tgz`,
        ...ARCHITECTURES.flatMap((arch) => [
          `kreload-${version}-linux-${arch}.docker.tar.gz`,
          `kreload-${version}-linux-${arch}.sbom.cdx.json`,
        ]),
        ...['linux', 'darwin'].flatMap((os) =>
          ARCHITECTURES.map((arch) => `kubectl-kreload-${version}-${os}-${arch}.tar.gz`),
        ),
      ].sort(),
    );
  });

  it('sums every other file in SHA256SUMS, and they check', async () => {
    const sums = await readFile(path.join(out, 'SHA256SUMS'), 'utf8');
    const listed = sums
      .trim()
      .split('\n')
      .map((line) => /^[0-9a-f]{64} {2}(.+)$/.exec(line)?.[1]);
    expect(listed.sort()).toEqual(
      (await readdir(out)).filter((file) => file !== 'SHA256SUMS').sort(),
    );
    const { stdout } = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out });
    expect(stdout.trim().split('\n')).toHaveLength(listed.length);
  });

  it.each(ARCHITECTURES)(
    'ships a docker load archive of the index’s linux/%s image, whose layers are zstd',
    async (arch) => {
      const layout = path.join(workDir, `layout-${arch}`);
      await mkdir(layout);
      await run('tar', ['-xf', path.join(out, `kreload-${version}.oci.tar`), '-C', layout]);
      await expectDockerArchive({
        archive: path.join(out, `kreload-${version}-linux-${arch}.docker.tar.gz`),
        layout,
        tag: `${version}-${arch}`,
        repoTag: `kreload:${version}`,
        arch,
        dir: path.join(workDir, `docker-${arch}`),
      });
      const blob = (digest: string) =>
        readFile(path.join(layout, 'blobs', ...digest.split(':')), 'utf8');
      const index = JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as {
        manifests: Descriptor[];
      };
      const entry = index.manifests.find(
        (manifest) =>
          manifest.annotations?.['org.opencontainers.image.ref.name'] === `${version}-${arch}`,
      );
      const { layers } = JSON.parse(await blob(entry?.digest ?? '')) as { layers: Descriptor[] };
      expect(layers.map((layer) => layer.mediaType)).toEqual(
        layers.map(() => ZSTD_LAYER_MEDIA_TYPE),
      );
    },
  );
});
