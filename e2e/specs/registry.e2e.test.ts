// The chart served as an OCI artifact from a real registry (distribution/distribution's `registry`,
// built from the Go module proxy): `helm package`, `helm push` to the registry, then
// `helm show` and `helm install oci://…/kreload --version …` against the real control plane, as a
// user installs a published chart. The image index (scripts/image.sh, both architectures) is pushed
// there too by `npm run image -- --push`; each architecture is pulled back by digest (zstd layers)
// and unpacked with umoci:
// amd64's Node.js runs its entrypoint, arm64's node is an AArch64 binary.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  chartDir,
  locateHelm,
  parseYaml,
} from '../../helm/kreload/tests/chart-harness.ts';
import { ZSTD_LAYER_MEDIA_TYPE } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { ARCHITECTURES, ELF_MACHINE, NATIVE, buildImage, elfMachine } from '../harness/image.ts';
import {
  REGISTRY_BUILD_TIMEOUT_MS,
  pullAndUnpack,
  pullIndex,
  startRegistry,
  type Registry,
} from '../harness/registry.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const run = promisify(execFile);
const RELEASE = 'kreload-oci';

describe('the chart from an OCI registry', () => {
  const cluster = sharedCluster();
  let dir = '';
  let helm = '';
  let registry: Registry | undefined;
  let namespace = '';
  let version = '';
  let pushed = '';
  let installed = false;

  const helmIn = (args: readonly string[]) =>
    run(helm, [...args], {
      // helm keeps its registry login state and cache here, not in the user's home.
      env: {
        ...process.env,
        HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
        HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
        HELM_DATA_HOME: path.join(dir, 'helm-data'),
      },
      maxBuffer: 16 * 1024 * 1024,
    });

  beforeAll(
    async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'kreload-oci-'));
      // scripts/image.sh checks the entrypoint as UID 65532, which must reach the image's files.
      await chmod(dir, 0o755);
      [helm, registry] = await Promise.all([locateHelm(), startRegistry(dir)]);
      const manifest = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
        version: string;
      };
      version = manifest.version;
      const packaged = await helmIn(['package', chartDir, '--destination', dir]);
      const archive = /saved it to: (\S+\.tgz)/.exec(packaged.stdout)?.[1] ?? '';
      const push = await helmIn(['push', archive, `oci://${registry.host}/charts`, '--plain-http']);
      pushed = push.stdout + push.stderr;
      namespace = await cluster.createNamespace('oci');
    },
    Math.max(HELM_BUILD_TIMEOUT_MS, REGISTRY_BUILD_TIMEOUT_MS),
  );

  afterAll(async () => {
    try {
      if (installed) {
        await helmIn([
          'uninstall',
          RELEASE,
          '--namespace',
          namespace,
          '--kubeconfig',
          cluster.kubeconfigPath,
        ]).catch(() => undefined);
      }
      if (namespace !== '') {
        await cluster.kc
          .makeApiClient(CoreV1Api)
          .deleteNamespace({ name: namespace })
          .catch(() => undefined);
      }
    } finally {
      await registry?.stop();
      if (dir !== '') await rm(dir, { recursive: true, force: true });
    }
  });

  it('pushes the packaged chart as an OCI artifact with a digest', async () => {
    expect(pushed).toContain(`Pushed: ${registry?.host ?? ''}/charts/kreload:${version}`);
    expect(pushed).toMatch(/Digest: sha256:[0-9a-f]{64}/);
    // The registry's own API lists the tag.
    const tags = (await (
      await fetch(`http://${registry?.host ?? ''}/v2/charts/kreload/tags/list`)
    ).json()) as { tags?: string[] };
    expect(tags.tags).toEqual([version]);
  });

  it('helm show reads the chart and its README from the registry', async () => {
    const ref = `oci://${registry?.host ?? ''}/charts/kreload`;
    const chart = parseYaml(
      (await helmIn(['show', 'chart', ref, '--version', version, '--plain-http'])).stdout,
    ) as Record<string, unknown>;
    expect(chart).toMatchObject({ name: 'kreload', version, appVersion: version });
    expect(chart.home).toMatch(/^https:\/\//);
    const readme = await helmIn(['show', 'readme', ref, '--version', version, '--plain-http']);
    expect(readme.stdout).toMatch(/^# kreload Helm chart/);
  });

  it('helm install oci://… creates the release in the cluster', async () => {
    await helmIn([
      'install',
      RELEASE,
      `oci://${registry?.host ?? ''}/charts/kreload`,
      '--version',
      version,
      '--plain-http',
      '--namespace',
      namespace,
      '--kubeconfig',
      cluster.kubeconfigPath,
      '--set-json',
      `reloader.namespaces=${JSON.stringify([namespace])}`,
    ]);
    installed = true;
    const deployment = await cluster.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: RELEASE, namespace });
    expect(deployment.metadata?.labels?.['helm.sh/chart']).toBe(`kreload-${version}`);
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe(`kreload:${version}`);
    const status = await helmIn([
      'status',
      RELEASE,
      '--namespace',
      namespace,
      '--kubeconfig',
      cluster.kubeconfigPath,
      '-o',
      'json',
    ]);
    expect((JSON.parse(status.stdout) as { info: { status: string } }).info.status).toBe(
      'deployed',
    );
  });

  it(
    'npm run image pushes the index; each architecture pulls by digest and unpacks, amd64 runs',
    async () => {
      const served = registry;
      if (served === undefined) throw new Error('no registry');
      const image = await buildImage(path.join(dir, 'image'), {
        push: `${served.host}/kreload:${version}`,
      });
      const index = await pullIndex(served, 'kreload', version);
      expect(index.digest).toBe(image.digest);
      expect(image.pushed).toBe(`${served.host}/kreload:${version}@${image.digest}`);
      expect(index.manifests.map((manifest) => manifest.platform)).toEqual(
        ARCHITECTURES.map((architecture) => ({ architecture, os: 'linux' })),
      );
      for (const [i, arch] of ARCHITECTURES.entries()) {
        const digest = index.manifests[i]?.digest ?? '';
        const { config, layers, rootfs } = await pullAndUnpack(
          served,
          'kreload',
          digest,
          path.join(dir, 'pulled', arch),
        );
        expect(config).toMatchObject({ architecture: arch, os: 'linux' });
        // zstd by default: what the registry serves and a runtime decodes.
        expect(layers.map((layer) => layer.mediaType)).toEqual(
          layers.map(() => ZSTD_LAYER_MEDIA_TYPE),
        );
        const node = path.join(rootfs, 'usr', 'local', 'bin', 'node');
        expect(await elfMachine(node), arch).toBe(ELF_MACHINE[arch]);
        if (arch !== NATIVE) continue;
        const libs = ['lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu'].map((lib) =>
          path.join(rootfs, lib),
        );
        const { stdout } = await run(path.join(rootfs, 'lib64', 'ld-linux-x86-64.so.2'), [
          '--library-path',
          libs.join(':'),
          node,
          path.join(rootfs, 'app', 'dist', 'main.js'),
          '--version',
        ]);
        expect(stdout.trim()).toBe(`kreload ${version}`);
      }
      // A second push of the same build uploads nothing new and gives the same digest.
      const again = await run(
        process.execPath,
        [
          path.join(REPO_ROOT, 'scripts', 'oci-layout.ts'),
          'push',
          image.layout,
          version,
          `${served.host}/kreload:${version}`,
        ],
        { cwd: REPO_ROOT },
      );
      expect(again.stdout.trim()).toBe(image.pushed);
    },
    30 * 60_000,
  );
});
