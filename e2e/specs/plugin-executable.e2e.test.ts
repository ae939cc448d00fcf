// The released kubectl plugin (scripts/plugin.sh): single-file executables and a krew manifest.
// krew (built from the Go module proxy) installs the linux-amd64 archive from the manifest, which
// checks its sha256; kubectl then runs `kubectl kreload explain` and `kubectl kreload history`
// against the real control plane with no Node.js on PATH. The arm64 archive unpacks to an aarch64
// ELF executable. The darwin archives are built and checked, not run (no macOS here): each holds a
// Mach-O executable of its architecture with the plugin in its NODE_SEA segment and an ad-hoc
// signature whose every page hash matches (scripts/macho.ts).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, open, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadYaml } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMachO, verifyCodeSignature } from '../../scripts/macho.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { createExplainedWorkload, deleteExplainedWorkload } from '../harness/plugin-fixture.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const run = promisify(execFile);
/** Four executables of about 150 MB each, injected, compressed (and two signed) on 2 shared cores. */
const BUILD_TIMEOUT_MS = 40 * 60_000;
const cluster = sharedCluster();
const namespace = `plugin-sea-${randomBytes(3).toString('hex')}`;

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

/** `KEY=value` lines. */
function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
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

describe('the kubectl-kreload executables and krew manifest', () => {
  let dir: string;
  let env: Record<string, string>;
  let manifest: KrewManifest;
  let krewRoot: string;
  /** PATH for kubectl: kubectl itself and krew's bin, no Node.js. */
  let path_: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kreload-plugin-release-'));
    await run('bash', [path.join(REPO_ROOT, 'scripts', 'plugin.sh'), dir], {
      maxBuffer: 64 * 1024 * 1024,
    });
    env = parseEnv(await readFile(path.join(dir, 'plugin.env'), 'utf8'));
    manifest = loadYaml<KrewManifest>(await readFile(env.PLUGIN_MANIFEST ?? '', 'utf8'));

    const krew = await lastLine('bash', [path.join(REPO_ROOT, 'scripts', 'krew.sh')]);
    krewRoot = path.join(dir, 'krew-root');
    await run(
      krew,
      [
        'install',
        `--manifest=${env.PLUGIN_MANIFEST ?? ''}`,
        `--archive=${env.PLUGIN_LINUX_AMD64 ?? ''}`,
      ],
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
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await deleteExplainedWorkload(cluster.kc, namespace);
    if (dir) await rm(dir, { recursive: true, force: true });
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
    for (const [platform, archive] of [
      ['linux-amd64', env.PLUGIN_LINUX_AMD64],
      ['linux-arm64', env.PLUGIN_LINUX_ARM64],
      ['darwin-amd64', env.PLUGIN_DARWIN_AMD64],
      ['darwin-arm64', env.PLUGIN_DARWIN_ARM64],
    ] as const) {
      const sum = (await run('sha256sum', [archive ?? ''])).stdout.split(' ')[0];
      expect(byPlatform[platform]?.sha256).toBe(sum);
      expect(byPlatform[platform]?.uri.endsWith(`/${path.basename(archive ?? '')}`)).toBe(true);
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
    await run('tar', ['-xzf', env.PLUGIN_LINUX_ARM64 ?? '', '-C', unpacked]);
    expect(await elfMachine(path.join(unpacked, 'kubectl-kreload'))).toBe(0xb7);
  });

  it.each([
    ['darwin-amd64', 'x86_64'],
    ['darwin-arm64', 'arm64'],
  ] as const)(
    'the %s archive holds a signed %s Mach-O executable with the plugin injected',
    async (platform, cpu) => {
      const archive = env[`PLUGIN_${platform.toUpperCase().replace('-', '_')}`] ?? '';
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
