// The kubectl plugin as kubectl runs it (kubectl-kreload on PATH, `kubectl kreload …`) against the
// real control plane: `--context` picks a context of a kubeconfig whose current context points
// nowhere, kubectl's `<kind> <name>` form, `-o wide`; and on an unsupported Node.js, one line.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../cluster/paths.ts';
import { createExplainedWorkload, deleteExplainedWorkload } from '../harness/plugin-fixture.ts';
import { sharedCluster } from '../harness/shared-cluster.ts';

const run = promisify(execFile);
const PLUGIN_ENTRY = path.join(REPO_ROOT, 'dist', 'kubectl-kreload.js');
const cluster = sharedCluster();
const namespace = `plugin-${randomBytes(3).toString('hex')}`;

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function exitOf(promise: Promise<{ stdout: string; stderr: string }>): Promise<Ran> {
  try {
    const { stdout, stderr } = await promise;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The cluster's kubeconfig as context `e2e` (namespace set), beside a current context `nowhere`. */
function twoContextKubeconfig(): string {
  const real = new KubeConfig();
  real.loadFromFile(cluster.kubeconfigPath);
  const context = real.getContextObject(real.getCurrentContext());
  if (context === null) throw new Error('the cluster kubeconfig has no current context');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      ...real.getClusters(),
      { name: 'nowhere', server: 'https://127.0.0.1:9', skipTLSVerify: true },
    ],
    users: real.getUsers(),
    contexts: [
      { name: 'e2e', cluster: context.cluster, user: context.user, namespace },
      { name: 'nowhere', cluster: 'nowhere', user: context.user },
    ],
    currentContext: 'nowhere',
  });
  return kc.exportConfig();
}

describe('kubectl kreload (the plugin)', () => {
  let bin: string;
  let kubeconfig: string;

  const kubectlKreload = (args: readonly string[]): Promise<Ran> =>
    exitOf(
      run('kubectl', ['kreload', ...args], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfig },
      }),
    );

  beforeAll(async () => {
    bin = await mkdtemp(path.join(tmpdir(), 'kubectl-plugin-'));
    // kubectl runs plugins by name from PATH; this one runs the built entry under this Node.
    await writeFile(
      path.join(bin, 'kubectl-kreload'),
      `#!/bin/sh\nexec "${process.execPath}" "${PLUGIN_ENTRY}" "$@"\n`,
    );
    await chmod(path.join(bin, 'kubectl-kreload'), 0o755);
    kubeconfig = path.join(bin, 'kubeconfig');
    await writeFile(kubeconfig, twoContextKubeconfig());

    await createExplainedWorkload(cluster.kc, namespace);
  });

  afterAll(async () => {
    await deleteExplainedWorkload(cluster.kc, namespace);
  });

  it('--context reads that context (and its namespace); the current one points nowhere', async () => {
    const controllerFlags = ['--', `--namespaces=${namespace}`];
    const explained = await kubectlKreload([
      'explain',
      'deployment',
      'web',
      '--context',
      'e2e',
      ...controllerFlags,
    ]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout).toContain(`Deployment ${namespace}/web`);
    expect(explained.stdout).toMatch(/configmap\/cfg +app envFrom +AUTO auto +[0-9a-f]{12} /);

    const current = await kubectlKreload(['explain', 'deployment/web', ...controllerFlags]);
    expect(current.code).toBe(1);
    expect(current.stdout).toBe('');

    const history = await kubectlKreload(['history', 'deployment', 'web', '--context=e2e']);
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(new RegExp(`^deployment/web in ${namespace}: \\d revision`));

    const unknown = await kubectlKreload(['history', 'deployment/web', '--context', 'prod']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('context "prod" is not in');
  });

  it('-o wide prints the whole hash of the ConfigMap', async () => {
    const wide = await kubectlKreload([
      'explain',
      'deployment/web',
      '--context=e2e',
      '-o',
      'wide',
      '--',
      `--namespaces=${namespace}`,
    ]);
    expect(wide.code, wide.stderr).toBe(0);
    expect(wide.stdout).toMatch(/configmap\/cfg +app envFrom +AUTO auto +[0-9a-f]{40} /);
  });

  it('on an unsupported Node.js prints one line naming the Node.js it needs, exit 1', async () => {
    // Every node on PATH outside the project's own node_modules; CI machines have Node 20 there.
    const { stdout } = await exitOf(run('which', ['-a', 'node']));
    const candidates = stdout.split('\n').filter((line) => line && !line.includes('node_modules'));
    const old: string[] = [];
    for (const node of candidates) {
      const version = await exitOf(run(node, ['--version']));
      if (/^v(\d+)\./.exec(version.stdout)?.[1] !== '24') old.push(node);
    }
    // A Node.js that cannot link the bundle is the point: without one, fake the version check.
    const [node] = old;
    const result =
      node === undefined
        ? await exitOf(
            run(process.execPath, [
              '--import',
              `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'20.0.0'})`,
              PLUGIN_ENTRY,
              'explain',
              'deployment/web',
            ]),
          )
        : await exitOf(run(node, [PLUGIN_ENTRY, 'explain', 'deployment/web']));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^kubectl-kreload needs Node\.js >=24\.11\.0 <25, this is Node\.js \d+\.\d+\.\d+: [^\n]+\n$/,
    );
  });
});
