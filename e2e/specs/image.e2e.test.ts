// The container image, reproduced without a container engine: the runtime stage's install from a
// clean copy (package.json, package-lock.json and dist/ only; `npm ci --omit=dev --ignore-scripts`,
// as the Dockerfile's `deps` stage does), then the result is started: --version, and kreload
// completing a real reload against the control plane. Needs a fresh `npm run build`.
import { chmod, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRecord } from '../../helm/kreload/tests/chart-harness.ts';
import { REPO_ROOT } from '../cluster/paths.ts';
import { AUTO } from '../harness/annotations.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { startKreload, type KreloadProcess } from '../harness/kreload-process.ts';
import { installKreloadIdentity } from '../harness/rbac.ts';
import {
  IMAGE_ENV,
  installRuntimeCopy,
  runInCopy,
  type RuntimeCopy,
} from '../harness/runtime-copy.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';
import {
  SourceClient,
  envVarName,
  sourceHash,
  sourceKey,
  type ConfigMapSpec,
} from '../harness/sources.ts';
import { APP, WorkloadClient, podSpec, type WorkloadRef } from '../harness/workloads.ts';

/** npm ci on 2 cores, with the package cache warm or not. */
const INSTALL_TIMEOUT_MS = 5 * 60_000;

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8'));
}

/** `value[key]` as an object, or a failure naming what was missing. */
function objectAt(value: unknown, key: string): Record<string, unknown> {
  const field = isRecord(value) ? value[key] : undefined;
  if (!isRecord(field)) throw new Error(`expected an object at "${key}"`);
  return field;
}

function stringAt(value: unknown, key: string): string {
  const field = isRecord(value) ? value[key] : undefined;
  if (typeof field !== 'string') throw new Error(`expected a string at "${key}"`);
  return field;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

const config = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'image-config',
  data: { version },
});

describe('container image runtime stage', () => {
  let parentDir = '';
  let copy: RuntimeCopy;
  let packageJson: unknown;
  let lockedPackages: Record<string, unknown> = {};

  beforeAll(async () => {
    packageJson = await readJson(path.join(REPO_ROOT, 'package.json'));
    lockedPackages = objectAt(
      await readJson(path.join(REPO_ROOT, 'package-lock.json')),
      'packages',
    );
    parentDir = await mkdtemp(path.join(tmpdir(), 'kreload-image-'));
    // The copy runs as the image's UID, which must be able to reach it.
    await chmod(parentDir, 0o755);
    copy = await installRuntimeCopy({ dist: path.join(REPO_ROOT, 'dist'), parentDir });
  }, INSTALL_TIMEOUT_MS);

  afterAll(async () => {
    if (parentDir !== '') await rm(parentDir, { recursive: true, force: true });
  });

  it('holds what the image holds in /app', async () => {
    expect((await readdir(copy.appDir)).sort()).toEqual([
      'LICENSE',
      'dist',
      'node_modules',
      'package.json',
    ]);
  });

  it('installs every production dependency at its pinned version', async () => {
    const installed: Record<string, string> = {};
    const dependencies = objectAt(packageJson, 'dependencies');
    for (const name of Object.keys(dependencies)) {
      const manifest = path.join(copy.appDir, 'node_modules', name, 'package.json');
      installed[name] = stringAt(await readJson(manifest), 'version');
    }
    expect(installed).toEqual(dependencies);
  });

  it('installs no package the lockfile marks dev-only', async () => {
    const devOnly = Object.keys(objectAt(packageJson, 'devDependencies')).filter((name) => {
      const locked = lockedPackages[`node_modules/${name}`];
      return isRecord(locked) && locked.dev === true;
    });
    expect(devOnly).toEqual(expect.arrayContaining(['vitest', 'typescript', 'node']));
    const leaked: string[] = [];
    for (const name of devOnly) {
      if (await exists(path.join(copy.appDir, 'node_modules', name))) leaked.push(name);
    }
    expect(leaked).toEqual([]);
  });

  it('prints the package version with --version, as the image user', async () => {
    const { stdout } = await runInCopy(copy, ['dist/main.js', '--version']);
    expect(stdout.trim()).toBe(`kreload ${stringAt(packageJson, 'version')}`);
  });

  describe('started against the control plane', () => {
    const cluster = sharedCluster();
    const workloads = new WorkloadClient({ kc: cluster.kc });
    const sources = new SourceClient({ kc: cluster.kc });
    let namespace = '';
    let kreload: KreloadProcess | undefined;
    let app: WorkloadRef;

    beforeAll(async () => {
      const identity = await installKreloadIdentity(cluster);
      namespace = await cluster.createNamespace('image');
      await sources.create(namespace, config('1'));
      app = await workloads.create('Deployment', {
        namespace,
        name: 'image-app',
        annotations: { [AUTO]: 'true' },
        podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: config('1').name } }] } }),
      });
      kreload = await startKreload({
        name: 'image',
        entry: copy.entry,
        kubeconfig: identity.kubeconfigPath,
        args: [`--namespaces=${namespace}`, '--sync-delay=0'],
        env: IMAGE_ENV,
      });
    });

    afterAll(async () => {
      const running = kreload;
      kreload = undefined;
      try {
        if (running !== undefined) {
          const exit = await running.stop();
          expect(exit.code, `kreload's exit on SIGTERM; log ${running.logPath}`).toBe(0);
        }
      } finally {
        if (namespace !== '') {
          await cluster.kc
            .makeApiClient(CoreV1Api)
            .deleteNamespace({ name: namespace })
            .catch(() => undefined);
        }
      }
    });

    it('runs the copy, not the repository build', async () => {
      const cmdline = await readFile(`/proc/${String(kreload!.pid)}/cmdline`, 'utf8');
      expect(cmdline.split('\0')).toContain(copy.entry);
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
