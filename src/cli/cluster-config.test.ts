import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkClusterConfig, checkKubeconfigFile } from './cluster-config.ts';

const directory = mkdtempSync(join(tmpdir(), 'kreload-kubeconfig-'));
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

const VALID = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`;

describe('checkKubeconfigFile', () => {
  it('accepts a usable kubeconfig', () => {
    expect(checkKubeconfigFile(file('valid', VALID))).toBeUndefined();
  });

  it.each<[string, string, RegExp]>([
    ['no current context', VALID.replace('current-context: ctx\n', ''), /has no current-context$/],
    [
      'unknown cluster',
      VALID.replace('{cluster: c,', '{cluster: nope,'),
      /context "ctx" names no known cluster$/,
    ],
    [
      'unknown user',
      VALID.replace('user: u}', 'user: nope}'),
      /context "ctx" names no known user$/,
    ],
    ['not YAML', 'clusters: [', /^cannot parse /],
  ])('rejects %s', (name, text, problem) => {
    expect(checkKubeconfigFile(file(name.replaceAll(' ', '-'), text))).toMatch(problem);
  });
});

describe('checkClusterConfig', () => {
  const search = { kubeconfigVar: undefined, home: '/home/u', serviceHost: undefined };

  it('names the lookup step that found the unusable file', () => {
    const lookup = checkClusterConfig(
      { kubeconfig: undefined, kubeconfigSearch: search },
      { fileExists: () => true, checkFile: () => 'has no current-context' },
    );
    expect(lookup.problems).toEqual(['$HOME/.kube/config: has no current-context']);
  });

  it('does not read a file for in-cluster configuration', () => {
    const lookup = checkClusterConfig(
      {
        kubeconfig: undefined,
        kubeconfigSearch: { ...search, home: undefined, serviceHost: '10.0.0.1' },
      },
      {
        fileExists: () => true,
        checkFile: () => {
          throw new Error('must not be called');
        },
      },
    );
    expect(lookup).toEqual({ source: { kind: 'in-cluster' }, problems: [], warnings: [] });
  });
});
