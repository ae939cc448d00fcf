// The real kreload image: `npm run image` (scripts/image.sh) builds it here without a container
// engine, as an OCI archive; this spec checks it against the Dockerfile's runtime stage, installs the
// chart from its packaged .tgz with `helm install`, and runs the image — its own entrypoint, user and
// read-only root, with the args and environment the installed Deployment carries and a ServiceAccount
// token mounted as in a pod — until it has performed a reload on the control plane.
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  chartDir,
  isRecord,
  locateHelm,
} from '../../helm/kreload/tests/chart-harness.ts';
import { envOf, instructions, runtimeStage } from '../../helm/kreload/tests/dockerfile.ts';
import { ZSTD_LAYER_MEDIA_TYPE, sha256Of, type Descriptor } from '../../scripts/oci-layout.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { AUTO } from '../harness/annotations.ts';
import { containerCommand } from '../harness/chart.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import {
  ARCHITECTURES,
  ELF_MACHINE,
  buildImage,
  elfMachine,
  expectDockerArchive,
  imageLauncher,
  readImageConfig,
  unpackImage,
  type Architecture,
  type BuiltImage,
  type ImageConfig,
} from '../harness/image.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import {
  SourceClient,
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
} from '../harness/sources.ts';
import { APP, WorkloadClient, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const run = promisify(execFile);
/** tsc, the bundle and zstd -19 of both architectures' layers, on 2 cores shared with other runs. */
const BUILD_TIMEOUT_MS = 30 * 60_000;
const RELEASE = 'kreload-image';

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

function stringAt(value: unknown, key: string): string {
  const found = isRecord(value) ? value[key] : undefined;
  if (typeof found !== 'string') throw new Error(`expected a string at "${key}"`);
  return found;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** The PID of the one process whose argv matches, from /proc. */
async function findProcess(matches: (argv: string[]) => boolean): Promise<string> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (matches(cmdline.split('\0'))) found.push(pid);
  }
  if (found.length !== 1)
    throw new Error(`expected one matching process, found ${String(found.length)}`);
  return found[0] ?? '';
}

const config = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'image-config',
  data: { version },
});

describe('the kreload image (npm run image)', () => {
  let workDir = '';
  let image: BuiltImage;
  let imageConfig: ImageConfig;
  let bundleDir = '';
  let rootfs = '';
  let packageJson: unknown;

  beforeAll(async () => {
    packageJson = await readJson(path.join(REPO_ROOT, 'package.json'));
    workDir = await mkdtemp(path.join(tmpdir(), 'kreload-image-'));
    // The image user must reach the unpacked root, as in a runtime's storage.
    await chmod(workDir, 0o755);
    image = await buildImage(path.join(workDir, 'image'));
    imageConfig = await readImageConfig(image);
    bundleDir = path.join(workDir, 'bundle');
    rootfs = await unpackImage(image, bundleDir);
    for (const arch of ARCHITECTURES) {
      const { compressedBytes, rootfsBytes } = image.platforms[arch];
      process.stdout.write(
        `kreload image ${image.ref} linux/${arch}: ${(compressedBytes / 1e6).toFixed(1)} MB ` +
          `compressed (layer blobs), ${(rootfsBytes / 1e6).toFixed(1)} MB unpacked\n`,
      );
    }
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    if (workDir !== '') await rm(workDir, { recursive: true, force: true });
  });

  it("has the Dockerfile runtime stage's user, working directory, entrypoint, env and port", async () => {
    const runtime = await runtimeStage();
    const entrypoint = instructions(runtime, 'ENTRYPOINT').map((value): unknown =>
      JSON.parse(value),
    );
    expect(imageConfig.User).toBe(instructions(runtime, 'USER')[0]);
    expect(imageConfig.User).toBe('65532:65532');
    expect(imageConfig.WorkingDir).toBe(instructions(runtime, 'WORKDIR')[0]);
    expect([imageConfig.Entrypoint]).toEqual(entrypoint);
    expect(imageConfig.Env).toEqual(envOf(runtime));
    expect(Object.keys(imageConfig.ExposedPorts ?? {})).toEqual(
      instructions(runtime, 'EXPOSE').map((port) => `${port}/tcp`),
    );
    expect(imageConfig.Labels?.['org.opencontainers.image.version']).toBe(
      stringAt(packageJson, 'version'),
    );
  });

  it('holds Node 24, glibc, the CA bundle and /app, and no shell or package manager', async () => {
    for (const file of [
      'usr/local/bin/node',
      'lib64/ld-linux-x86-64.so.2',
      'etc/ssl/certs/ca-certificates.crt',
      'etc/passwd',
    ]) {
      expect(await exists(path.join(rootfs, file)), file).toBe(true);
    }
    for (const file of ['bin/sh', 'usr/bin/apt-get', 'usr/local/bin/npm']) {
      expect(await exists(path.join(rootfs, file)), file).toBe(false);
    }
  });

  it("ships the bundle the entrypoint loads and no node_modules (dist/ imports only Node's built-ins)", async () => {
    // package.json gives the bundle its ESM type and its version (`kreload --version`).
    expect((await readdir(path.join(rootfs, 'app'))).sort()).toEqual([
      'LICENSE',
      'dist',
      'package.json',
    ]);
    const shipped = (
      await readdir(path.join(rootfs, 'app', 'dist'), { recursive: true, encoding: 'utf8' })
    ).sort();
    const built = (
      await readdir(path.join(REPO_ROOT, 'dist'), { recursive: true, encoding: 'utf8' })
    ).sort();
    // The kubectl plugin's entry is the only file of dist/ that dist/main.js never imports.
    expect(shipped).toEqual(built.filter((file) => file !== 'kubectl-kreload.js'));
  });

  it('shows scanners its Debian packages (dpkg status.d, os-release) and ships an SBOM', async () => {
    const statusDir = path.join(rootfs, 'var', 'lib', 'dpkg', 'status.d');
    const packages = (await readdir(statusDir)).sort();
    expect(packages).toEqual(['base-files', 'ca-certificates', 'libc6', 'libgcc-s1', 'libstdc++6']);
    const libc = await readFile(path.join(statusDir, 'libc6'), 'utf8');
    expect(libc).toMatch(/^Package: libc6\nStatus: install ok installed\n/);
    expect(libc).toMatch(/^Version: 2\.36-/m);
    expect(libc).toMatch(/^Architecture: amd64$/m);
    const osRelease = await readFile(path.join(rootfs, 'usr', 'lib', 'os-release'), 'utf8');
    expect(osRelease).toMatch(/^ID=debian$/m);
    expect(osRelease).toMatch(/^VERSION_ID="12"$/m);
    expect(await exists(path.join(rootfs, 'etc', 'os-release'))).toBe(true);

    const sbom = (await readJson(image.platforms.amd64.sbom)) as {
      bomFormat: string;
      components: {
        name: string;
        version: string;
        purl: string;
        properties?: { name: string; value: string }[];
      }[];
    };
    expect(sbom.bomFormat).toBe('CycloneDX');
    const purls = sbom.components.map((component) => component.purl);
    expect(purls.some((purl) => /^pkg:deb\/debian\/libc6@2\.36-.*\?arch=amd64&/.test(purl))).toBe(
      true,
    );
    expect(purls.some((purl) => purl.startsWith('pkg:generic/node@24.'))).toBe(true);
    const dependencies = isRecord(packageJson) ? packageJson.dependencies : undefined;
    for (const [name, version] of Object.entries(isRecord(dependencies) ? dependencies : {})) {
      expect(purls, name).toContain(`pkg:npm/${name.replace('@', '%40')}@${String(version)}`);
    }
    expect(purls.some((purl) => purl.startsWith('pkg:npm/typescript@'))).toBe(false);
    // npm packages are shipped as code bundled into dist/; type declarations never are.
    const npm = sbom.components.filter((component) => component.purl.startsWith('pkg:npm/'));
    for (const component of npm) {
      expect(component.properties, component.purl).toContainEqual({
        name: 'kreload:shipped-as',
        value: 'bundled in /app/dist',
      });
    }
    expect(purls.some((purl) => purl.startsWith('pkg:npm/%40types/'))).toBe(false);
  });

  /** The layout's blobs, each checked against its digest. */
  const blob = async (digest: string): Promise<Buffer> => {
    const bytes = await readFile(path.join(image.layout, 'blobs', ...digest.split(':')));
    expect(sha256Of(bytes)).toBe(digest);
    return bytes;
  };
  const jsonBlob = async <T>(digest: string): Promise<T> =>
    JSON.parse((await blob(digest)).toString('utf8')) as T;
  const platformManifest = async (arch: Architecture) => {
    const index = (await readJson(path.join(image.layout, 'index.json'))) as {
      manifests: Descriptor[];
    };
    const entry = index.manifests.find(
      (manifest) =>
        manifest.annotations?.['org.opencontainers.image.ref.name'] === image.platforms[arch].tag,
    );
    return jsonBlob<{ config: Descriptor; layers: Descriptor[] }>(entry?.digest ?? '');
  };

  it('is one OCI index of linux/amd64 and linux/arm64, tagged with the version', async () => {
    const index = (await readJson(path.join(image.layout, 'index.json'))) as {
      manifests: Descriptor[];
    };
    const top = index.manifests.find(
      (manifest) => manifest.annotations?.['org.opencontainers.image.ref.name'] === image.tag,
    );
    expect(top).toMatchObject({
      mediaType: 'application/vnd.oci.image.index.v1+json',
      digest: image.digest,
      annotations: { 'io.containerd.image.name': image.ref },
    });
    const imageIndex = await jsonBlob<{ manifests: Descriptor[] }>(image.digest);
    expect(imageIndex.manifests.map((manifest) => manifest.platform)).toEqual([
      { architecture: 'amd64', os: 'linux' },
      { architecture: 'arm64', os: 'linux' },
    ]);
    for (const [i, arch] of ARCHITECTURES.entries()) {
      const manifest = imageIndex.manifests[i];
      const config = await jsonBlob<{ architecture: string; os: string; config: ImageConfig }>(
        (await jsonBlob<{ config: Descriptor }>(manifest?.digest ?? '')).config.digest,
      );
      expect([config.os, config.architecture]).toEqual(['linux', arch]);
      // Both run the same way.
      expect(config.config).toEqual(imageConfig);
    }
  });

  it('has an arm64 image that unpacks to an AArch64 node and the arm64 Debian libraries', async () => {
    const arm64 = await unpackImage(image, path.join(workDir, 'bundle-arm64'), 'arm64');
    expect(await elfMachine(path.join(arm64, 'usr', 'local', 'bin', 'node'))).toBe(
      ELF_MACHINE.arm64,
    );
    expect(await elfMachine(path.join(rootfs, 'usr', 'local', 'bin', 'node'))).toBe(
      ELF_MACHINE.amd64,
    );
    for (const file of [
      'lib/ld-linux-aarch64.so.1',
      'usr/lib/aarch64-linux-gnu/libstdc++.so.6',
      'etc/ssl/certs/ca-certificates.crt',
      'app/dist/main.js',
    ]) {
      expect(await exists(path.join(arm64, file)), file).toBe(true);
    }
    expect(await elfMachine(path.join(arm64, 'lib', 'ld-linux-aarch64.so.1'))).toBe(
      ELF_MACHINE.arm64,
    );
    const statusDir = path.join(arm64, 'var', 'lib', 'dpkg', 'status.d');
    expect((await readdir(statusDir)).sort()).toEqual(
      (await readdir(path.join(rootfs, 'var', 'lib', 'dpkg', 'status.d'))).sort(),
    );
    expect(await readFile(path.join(statusDir, 'libc6'), 'utf8')).toMatch(/^Architecture: arm64$/m);
    expect(await readFile(path.join(statusDir, 'ca-certificates'), 'utf8')).toMatch(
      /^Architecture: all$/m,
    );
    const sbom = (await readJson(image.platforms.arm64.sbom)) as { components: { purl: string }[] };
    const purls = sbom.components.map((component) => component.purl);
    expect(purls.some((purl) => /^pkg:deb\/debian\/libc6@2\.36-.*\?arch=arm64&/.test(purl))).toBe(
      true,
    );
    expect(purls.some((purl) => /^pkg:generic\/node@24\..*\?arch=arm64&/.test(purl))).toBe(true);
  });

  it.each(ARCHITECTURES)(
    'linux/%s is layered Debian base, Node.js, kreload, so a kreload upgrade pulls only the last',
    async (arch) => {
      const manifest = await platformManifest(arch);
      const sizes = manifest.layers.map((layer) => layer.size);
      process.stdout.write(
        `kreload image linux/${arch} layers (${image.compression}): ${sizes.map((size) => `${(size / 1e6).toFixed(2)} MB`).join(', ')}\n`,
      );
      expect(sizes).toHaveLength(3);
      const [base = 0, node = 0, app = 0] = sizes;
      // Node.js is most of the image; kreload's layer is a fraction of it.
      expect(node).toBeGreaterThan(25e6);
      expect(app).toBeLessThan(node / 2);
      // The bundle alone (about 3 MB, under 1 MB compressed): a kreload upgrade pulls about that.
      expect(app).toBeLessThan(1.5e6);
      expect(base).toBeLessThan(node / 2);
      expect(image.platforms[arch].compressedBytes).toBe(sizes.reduce((sum, size) => sum + size));
      // Node.js 24's binary alone is about 30 MB with zstd -19 (40 MB with gzip, which could not
      // meet this); Reloader's Go image is about 25 MB.
      expect(image.platforms[arch].compressedBytes).toBeLessThan(40e6);
    },
  );

  it('compresses every layer with zstd by default, with the libzstd of the base’s Debian suite', async () => {
    expect(image.compression).toMatch(/^zstd \d+\.\d+\.\d+/);
    for (const arch of ARCHITECTURES) {
      const { layers } = await platformManifest(arch);
      expect(
        layers.map((layer) => layer.mediaType),
        arch,
      ).toEqual(layers.map(() => ZSTD_LAYER_MEDIA_TYPE));
      // Each blob is a zstd frame (magic 28 b5 2f fd), not gzip relabelled.
      for (const layer of layers) {
        expect((await blob(layer.digest)).subarray(0, 4).toString('hex')).toBe('28b52ffd');
      }
    }
  });

  it('shares the kreload layer between the architectures: one blob to push and pull', async () => {
    const [amd64, arm64] = await Promise.all(ARCHITECTURES.map(platformManifest));
    expect(amd64?.layers.at(-1)?.digest).toBe(arm64?.layers.at(-1)?.digest);
    expect(amd64?.layers[1]?.digest).not.toBe(arm64?.layers[1]?.digest);
  });

  it.each(ARCHITECTURES)(
    'writes a docker load archive of linux/%s: manifest.json names the config and layers by digest',
    async (arch) => {
      await expectDockerArchive({
        archive: image.platforms[arch].dockerArchive,
        layout: image.layout,
        tag: image.platforms[arch].tag,
        repoTag: `kreload:${image.tag}`,
        arch,
        dir: path.join(workDir, `docker-${arch}`),
      });
    },
  );

  it(
    'is reproducible: a second build of the same commit has the same digest and archives',
    async () => {
      const again = await buildImage(path.join(workDir, 'image-again'));
      // The commit is an input (the revision label, the timestamps): one made during the run
      // changes the digest rightly.
      expect((await readImageConfig(again)).Labels?.['org.opencontainers.image.revision']).toBe(
        imageConfig.Labels?.['org.opencontainers.image.revision'],
      );
      expect(again.digest).toBe(image.digest);
      for (const arch of ARCHITECTURES) {
        const [first, second] = await Promise.all(
          [image, again].map(async (built) =>
            sha256Of(await readFile(built.platforms[arch].dockerArchive)),
          ),
        );
        expect(second, arch).toBe(first);
      }
      expect(sha256Of(await readFile(again.archive))).toBe(sha256Of(await readFile(image.archive)));
    },
    BUILD_TIMEOUT_MS,
  );

  describe('installed from the packaged chart, run with the installed Deployment’s args', () => {
    const cluster = sharedCluster();
    const workloads = new WorkloadClient({ kc: cluster.kc });
    const sources = new SourceClient({ kc: cluster.kc });
    let helm = '';
    let namespace = '';
    let chartPackage = '';
    let installed = false;
    let kreload: KreloadProcess | undefined;
    let app: WorkloadRef;

    beforeAll(async () => {
      helm = await locateHelm();
      namespace = await cluster.createNamespace('image');
      const packageDir = path.join(workDir, 'chart');
      await mkdir(packageDir);
      const { stdout } = await run(helm, ['package', chartDir, '--destination', packageDir]);
      chartPackage = /saved it to: (\S+\.tgz)/.exec(stdout)?.[1] ?? '';
      await run(helm, [
        'install',
        RELEASE,
        chartPackage,
        '--namespace',
        namespace,
        '--kubeconfig',
        cluster.kubeconfigPath,
        '--set',
        `image.repository=${image.ref.replace(/:[^:/]*$/, '')}`,
        '--set',
        `image.tag=${image.tag}`,
        '--set-json',
        `reloader.namespaces=${JSON.stringify([namespace])}`,
        '--set',
        'reloader.syncDelay=0',
      ]);
      installed = true;

      await sources.create(namespace, config('1'));
      app = await workloads.create('Deployment', {
        namespace,
        name: 'image-app',
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config('1').name } }] } }),
      });

      // What the kubelet would start for a pod of the installed Deployment.
      const deployment = await cluster.kc
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ name: RELEASE, namespace });
      const pod = deployment.spec?.template.spec;
      const container = pod?.containers.find((candidate) => candidate.name === 'kreload');
      if (pod?.serviceAccountName === undefined || container === undefined) {
        throw new Error('the installed Deployment has no kreload container or ServiceAccount');
      }
      expect(container.image).toBe(image.ref);
      const command = containerCommand(container, { name: `${RELEASE}-pod`, namespace });
      const serviceAccountDir = path.join(workDir, 'serviceaccount');
      await mkdir(serviceAccountDir, { mode: 0o755 });
      const token = await cluster.mintToken(pod.serviceAccountName, namespace, 3600);
      await writeFile(path.join(serviceAccountDir, 'token'), token, { mode: 0o644 });
      await writeFile(path.join(serviceAccountDir, 'ca.crt'), await readFile(cluster.caPath));
      await writeFile(path.join(serviceAccountDir, 'namespace'), namespace);
      const server = new URL(cluster.server);
      kreload = await startKreload({
        name: 'image',
        launcher: imageLauncher({
          image,
          bundleDir,
          serviceAccountDir,
          env: {
            ...command.env,
            KUBERNETES_SERVICE_HOST: server.hostname,
            KUBERNETES_SERVICE_PORT: server.port,
          },
        }),
        args: command.args,
      });
    }, HELM_BUILD_TIMEOUT_MS);

    afterAll(async () => {
      const running = kreload;
      kreload = undefined;
      try {
        if (running !== undefined) {
          const exit = await running.stop();
          expect(exit.code, `kreload's exit on SIGTERM; log ${running.logPath}`).toBe(0);
        }
      } finally {
        if (installed) {
          await run(helm, [
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
      }
    });

    it('packages the chart versioned with the app', () => {
      expect(path.basename(chartPackage)).toBe(`kreload-${stringAt(packageJson, 'version')}.tgz`);
    });

    it("runs the image's node as PID 1 of its own namespace, as 65532, on a read-only root", async () => {
      // The launcher (unshare) starts the image's node in new namespaces; find it by its flags.
      const nodePid = await findProcess(
        (argv) =>
          argv[0] === 'node' && argv.includes(`--metrics-port=${String(kreload?.metricsPort)}`),
      );
      const status = await readFile(`/proc/${nodePid}/status`, 'utf8');
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe('65532');
      expect(/^Gid:\s+(\d+)/m.exec(status)?.[1]).toBe('65532');
      expect(/^NSpid:.*\s(\d+)$/m.exec(status)?.[1]).toBe('1');
      // /proc/<pid>/mounts lists paths as the process sees them: its root is the image's rootfs.
      const mounts = (await readFile(`/proc/${nodePid}/mounts`, 'utf8')).split('\n');
      const root = mounts.filter((line) => line.split(' ')[1] === '/').at(-1) ?? '';
      expect(root.split(' ')[3]?.split(',')).toContain('ro');
    });

    it('completes a reload', async () => {
      await waitForBaseline(workloads, app, { [sourceKey(config('1'))]: sourceHash(config('1')) });
      await sources.replace(namespace, config('2'));
      const rolled = await waitForEnv(workloads, app, {
        container: APP,
        name: envVarName(config('2')),
        value: sourceHash(config('2')),
      });
      expect(rolled.containers.find((c) => c.name === APP)?.env).toEqual({
        STAKATER_IMAGE_CONFIG_CONFIGMAP: sourceHash(config('2')),
      });
    });
  });
});
