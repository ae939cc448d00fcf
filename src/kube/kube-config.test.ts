import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeConfigError, loadKubeConfig } from './kube-config.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kreload-kc-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfigYaml(name: string, server = `https://${name}.example:6443`): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `current-context: ${name}`,
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: ${server}`,
    'users:',
    `- name: ${name}`,
    '  user:',
    '    token: abc',
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    `    user: ${name}`,
    '',
  ].join('\n');
}

function writeFile(relative: string, text: string): string {
  const path = join(dir, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

function server(result: ReturnType<typeof loadKubeConfig>): string | undefined {
  return result.kc.getCurrentCluster()?.server;
}

function thrown(fn: () => unknown): KubeConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof KubeConfigError) return err;
    throw err;
  }
  throw new Error('expected a KubeConfigError');
}

describe('loadKubeConfig lookup order (§12.5)', () => {
  it('--kubeconfig wins over everything', () => {
    const flag = writeFile('flag.yaml', kubeconfigYaml('flag'));
    const env = writeFile('env.yaml', kubeconfigYaml('env'));
    writeFile('home/.kube/config', kubeconfigYaml('home'));
    const result = loadKubeConfig({
      kubeconfigFlag: flag,
      env: { KUBECONFIG: env, KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      homeDir: join(dir, 'home'),
    });
    expect(server(result)).toBe('https://flag.example:6443');
    expect(result.source).toBe(`--kubeconfig (${flag})`);
    expect(result.warnings).toEqual([]);
  });

  it('$KUBECONFIG comes next', () => {
    const env = writeFile('env.yaml', kubeconfigYaml('env'));
    writeFile('home/.kube/config', kubeconfigYaml('home'));
    const result = loadKubeConfig({ env: { KUBECONFIG: env }, homeDir: join(dir, 'home') });
    expect(server(result)).toBe('https://env.example:6443');
    expect(result.source).toBe(`$KUBECONFIG (${env})`);
  });

  it('a missing $KUBECONFIG file warns and the lookup continues', () => {
    writeFile('home/.kube/config', kubeconfigYaml('home'));
    const missing = join(dir, 'nope.yaml');
    const result = loadKubeConfig({ env: { KUBECONFIG: missing }, homeDir: join(dir, 'home') });
    expect(server(result)).toBe('https://home.example:6443');
    expect(result.source).toBe(`~/.kube/config (${join(dir, 'home', '.kube', 'config')})`);
    expect(result.warnings).toEqual([
      `KUBECONFIG names ${missing}, which does not exist; ignoring it`,
    ]);
  });

  it('a $KUBECONFIG list loads the existing files, first one winning', () => {
    const first = writeFile('a.yaml', kubeconfigYaml('a'));
    const second = writeFile('b.yaml', kubeconfigYaml('b'));
    const result = loadKubeConfig({ env: { KUBECONFIG: [first, second].join(delimiter) } });
    expect(server(result)).toBe('https://a.example:6443');
    expect(result.kc.getClusters().map((c) => c.name)).toEqual(['a', 'b']);
  });

  it('in-cluster when KUBERNETES_SERVICE_HOST is set and nothing else is found', () => {
    const saDir = join(dir, 'sa');
    writeFile('sa/token', 'token-1');
    writeFile('sa/namespace', 'kreload-system\n');
    writeFile('sa/ca.crt', 'ca');
    const result = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      homeDir: join(dir, 'empty-home'),
      serviceAccountDir: saDir,
    });
    expect(result.source).toBe('in-cluster service account');
    expect(result.kc.getCurrentCluster()).toMatchObject({
      server: 'https://[fd00::1]:443',
      caFile: join(saDir, 'ca.crt'),
      skipTLSVerify: false,
    });
    expect(result.kc.getCurrentUser()?.authProvider).toEqual({
      name: 'tokenFile',
      config: { tokenFile: join(saDir, 'token') },
    });
    expect(result.kc.getContextObject(result.kc.getCurrentContext())?.namespace).toBe(
      'kreload-system',
    );
  });

  it('~/.kube/config comes before in-cluster', () => {
    writeFile('home/.kube/config', kubeconfigYaml('home'));
    const result = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      homeDir: join(dir, 'home'),
      serviceAccountDir: join(dir, 'sa'),
    });
    expect(server(result)).toBe('https://home.example:6443');
  });
});

describe('loadKubeConfig errors', () => {
  it('nothing found', () => {
    const err = thrown(() => loadKubeConfig({ env: {}, homeDir: join(dir, 'none') }));
    expect(err.problem).toBe('not-found');
  });

  it('in-cluster without a token file', () => {
    const err = thrown(() =>
      loadKubeConfig({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
        serviceAccountDir: join(dir, 'sa'),
      }),
    );
    expect(err).toMatchObject({ problem: 'not-found', path: join(dir, 'sa', 'token') });
  });

  it('an unparsable file names the file and the parse error', () => {
    const bad = writeFile('bad.yaml', 'clusters: [\n  - {name: x\n');
    const err = thrown(() => loadKubeConfig({ kubeconfigFlag: bad, env: {} }));
    expect(err.problem).toBe('unreadable');
    expect(err.path).toBe(bad);
    expect(err.message).toContain(`cannot load kubeconfig ${bad}: `);
    expect(err.cause).toBeInstanceOf(Error);
  });

  it('a --kubeconfig that does not exist is an error, not a fallback', () => {
    writeFile('home/.kube/config', kubeconfigYaml('home'));
    const missing = join(dir, 'missing.yaml');
    const err = thrown(() =>
      loadKubeConfig({ kubeconfigFlag: missing, env: {}, homeDir: join(dir, 'home') }),
    );
    expect(err).toMatchObject({ problem: 'unreadable', path: missing });
  });

  it.each([
    [
      'no current-context',
      kubeconfigYaml('a').replace('current-context: a', 'current-context: ""'),
      'no current-context',
    ],
    [
      'unknown context',
      kubeconfigYaml('a').replace('current-context: a', 'current-context: zz'),
      'current-context "zz" is not defined',
    ],
    [
      'unknown cluster',
      kubeconfigYaml('a').replace('    cluster: a', '    cluster: zz'),
      'context "a" names unknown cluster "zz"',
    ],
    [
      'plain http without skip',
      kubeconfigYaml('a', 'http://127.0.0.1:8080'),
      'cluster "a" uses http:// without insecure-skip-tls-verify',
    ],
  ])('no usable context: %s', (_name, text, why) => {
    const file = writeFile('c.yaml', text);
    const err = thrown(() => loadKubeConfig({ kubeconfigFlag: file, env: {} }));
    expect(err.problem).toBe('no-usable-context');
    expect(err.message).toBe(`kubeconfig ${file}: ${why}`);
  });
});
