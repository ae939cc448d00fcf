// `npm run release` (scripts/release.sh) into a fresh folder, built once for the whole file: every
// file a release publishes, the image's `docker load` archive per architecture checked against the
// OCI index beside it (whose layers are zstd), SHA256SUMS over all of it, and the kubectl plugin it
// ships. krew (built from the Go module proxy) installs the linux-amd64 archive from the released
// manifest, which checks its sha256; kubectl then runs `kubectl kreload explain` and `kubectl
// kreload history` against the real control plane with no Node.js on PATH. The arm64 archive
// unpacks to an aarch64 ELF executable. The darwin archives are checked, not run (no macOS here):
// each holds a Mach-O executable of its architecture with the plugin in its NODE_SEA segment and an
// ad-hoc signature whose every page hash matches (scripts/macho.ts).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, open, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locateHelm } from '../../helm/kreload/tests/chart-harness.ts';
import { readMachO, verifyCodeSignature } from '../../scripts/macho.ts';
import { ZSTD_LAYER_MEDIA_TYPE, type Descriptor } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { ARCHITECTURES, expectDockerArchive } from '../harness/image.ts';
import { createExplainedWorkload, deleteExplainedWorkload } from '../harness/plugin-fixture.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const run = promisify(execFile);
/** The plugin executables, the bundle, both images and the chart, on 2 shared cores. */
const RELEASE_TIMEOUT_MS = 40 * 60_000;
const cluster = sharedCluster();
const namespace = `plugin-sea-${randomBytes(3).toString('hex')}`;

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

describe('npm run release', () => {
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

interface KrewManifest {
  spec: {
    version: string;
    platforms: {
      selector: { matchLabels: { os: string; arch: string } };
      uri: string;
      sha256: string;
      bin: string;
    }[];
  };
}

async function lastLine(command: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run(command, args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim().split('\n').at(-1) ?? '';
}

/** ELF e_machine: 0x3e x86-64, 0xb7 AArch64. */
async function elfMachine(file: string): Promise<number> {
  const handle = await open(file);
  try {
    const header = Buffer.alloc(20);
    await handle.read(header, 0, 20, 0);
    expect(header.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    return header.readUInt16LE(18);
  } finally {
    await handle.close();
  }
}

describe('the kubectl-kreload executables and krew manifest it ships', () => {
  let dir: string;
  let manifest: KrewManifest;
  let krewRoot: string;
  /** PATH for kubectl: kubectl itself and krew's bin, no Node.js. */
  let path_: string;

  /** The released archive of one plugin platform, e.g. `linux-amd64`. */
  const archiveOf = (platform: string): string =>
    path.join(out, `kubectl-kreload-${version}-${platform}.tar.gz`);
  const manifestPath = (): string => path.join(out, 'kreload.yaml');

  beforeAll(async () => {
    dir = await mkdtemp(path.join(workDir, 'plugin-'));
    manifest = loadYaml<KrewManifest>(await readFile(manifestPath(), 'utf8'));

    const krew = await lastLine('bash', [path.join(REPO_ROOT, 'scripts', 'krew.sh')]);
    krewRoot = path.join(dir, 'krew-root');
    await run(
      krew,
      ['install', `--manifest=${manifestPath()}`, `--archive=${archiveOf('linux-amd64')}`],
      { env: { ...process.env, KREW_ROOT: krewRoot } },
    );
    const kubectlOnly = path.join(dir, 'kubectl-only');
    await mkdir(kubectlOnly);
    await symlink(
      await lastLine('sh', ['-c', 'command -v kubectl']),
      path.join(kubectlOnly, 'kubectl'),
    );
    path_ = `${kubectlOnly}:${path.join(krewRoot, 'bin')}`;

    await createExplainedWorkload(cluster.kc, namespace);
  });

  afterAll(async () => {
    await deleteExplainedWorkload(cluster.kc, namespace);
  });

  const kubectl = (args: readonly string[]) =>
    run('kubectl', args, {
      env: {
        PATH: path_,
        HOME: dir,
        KUBECONFIG: cluster.kubeconfigPath,
      },
    });

  it('the manifest lists linux and darwin, amd64 and arm64, with the sha256 of each archive', async () => {
    expect(manifest.spec.version).toMatch(/^v\d+\.\d+\.\d+/);
    const byPlatform = Object.fromEntries(
      manifest.spec.platforms.map((p) => [
        `${p.selector.matchLabels.os}-${p.selector.matchLabels.arch}`,
        p,
      ]),
    );
    expect(Object.keys(byPlatform).sort()).toEqual([
      'darwin-amd64',
      'darwin-arm64',
      'linux-amd64',
      'linux-arm64',
    ]);
    for (const platform of ['linux-amd64', 'linux-arm64', 'darwin-amd64', 'darwin-arm64']) {
      const archive = archiveOf(platform);
      const sum = (await run('sha256sum', [archive])).stdout.split(' ')[0];
      expect(byPlatform[platform]?.sha256).toBe(sum);
      expect(byPlatform[platform]?.uri.endsWith(`/${path.basename(archive)}`)).toBe(true);
    }
  });

  it('krew installed it; kubectl runs explain and history with no Node.js on PATH', async () => {
    await expect(run('sh', ['-c', 'command -v node'], { env: { PATH: path_ } })).rejects.toThrow();
    expect(await elfMachine(path.join(krewRoot, 'bin', 'kubectl-kreload'))).toBe(0x3e);

    const explained = await kubectl([
      'kreload',
      'explain',
      'deployment',
      'web',
      '-n',
      namespace,
      '--',
      `--namespaces=${namespace}`,
    ]);
    expect(explained.stdout).toContain(`Deployment ${namespace}/web`);
    expect(explained.stdout).toMatch(/configmap\/cfg +app envFrom +AUTO auto +[0-9a-f]{12} /);

    const history = await kubectl(['kreload', 'history', 'deployment/web', '-n', namespace]);
    expect(history.stdout).toMatch(new RegExp(`^deployment/web in ${namespace}: 1 revision`));

    const version = await kubectl(['kreload', '--version']);
    const pkg = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version.stdout.trim()).toBe(`kreload ${pkg.version}`);
  });

  it('the arm64 archive holds an aarch64 executable', async () => {
    const unpacked = await mkdtemp(path.join(dir, 'arm64-'));
    await run('tar', ['-xzf', archiveOf('linux-arm64'), '-C', unpacked]);
    expect(await elfMachine(path.join(unpacked, 'kubectl-kreload'))).toBe(0xb7);
  });

  it.each([
    ['darwin-amd64', 'x86_64'],
    ['darwin-arm64', 'arm64'],
  ] as const)(
    'the %s archive holds a signed %s Mach-O executable with the plugin injected',
    async (platform, cpu) => {
      const archive = archiveOf(platform);
      const unpacked = await mkdtemp(path.join(dir, `${platform}-`));
      await run('tar', ['-xzf', archive, '-C', unpacked]);
      const bytes = await readFile(path.join(unpacked, 'kubectl-kreload'));
      const file = readMachO(bytes);
      expect(file.cpu).toBe(cpu);
      const sea = file.segments.find((segment) => segment.name === 'NODE_SEA');
      expect(sea?.fileSize).toBeGreaterThan(1_000_000);
      // The blob carries the plugin bundle as an asset.
      const blob = bytes.subarray(
        sea?.fileOffset ?? 0,
        (sea?.fileOffset ?? 0) + (sea?.fileSize ?? 0),
      );
      expect(blob.includes('kubectl-kreload.mjs')).toBe(true);
      const signature = verifyCodeSignature(bytes);
      expect(signature).toMatchObject({
        identifier: 'kubectl-kreload',
        adhoc: true,
        hashAlgorithm: 'sha256',
        problems: [],
      });
      // The signature covers the injected segment.
      expect(signature.codeLimit).toBeGreaterThan(
        (sea?.fileOffset ?? 0) + (sea?.fileSize ?? 0) - 1,
      );
    },
  );
});
