import { describe, expect, it } from 'vitest';
import type { KubeconfigLookup } from './kubeconfig.ts';
import { resolveKubeconfig, SERVICE_ACCOUNT_TOKEN_PATH } from './kubeconfig.ts';

interface Row {
  readonly name: string;
  readonly flag?: string;
  readonly kubeconfigVar?: string;
  readonly home?: string;
  readonly serviceHost?: string;
  readonly files: readonly string[];
  readonly expected: KubeconfigLookup;
}

const NOTHING_FOUND =
  '--kubeconfig: no cluster configuration found (not set; no $KUBECONFIG or $HOME/.kube/config file; not running in a pod)';

describe('resolveKubeconfig (§12.5)', () => {
  it.each<Row>([
    {
      name: 'flag wins',
      flag: '/a',
      kubeconfigVar: '/b',
      files: ['/a', '/b'],
      expected: {
        source: { kind: 'file', path: '/a', from: '--kubeconfig' },
        problems: [],
        warnings: [],
      },
    },
    {
      name: 'missing flag file is an error, with no fallback',
      flag: '/a',
      kubeconfigVar: '/b',
      files: ['/b'],
      expected: {
        source: undefined,
        problems: ['--kubeconfig: file "/a" does not exist'],
        warnings: [],
      },
    },
    {
      name: '$KUBECONFIG',
      kubeconfigVar: '/b',
      home: '/home/u',
      files: ['/b', '/home/u/.kube/config'],
      expected: {
        source: { kind: 'file', path: '/b', from: 'KUBECONFIG' },
        problems: [],
        warnings: [],
      },
    },
    {
      name: 'missing $KUBECONFIG warns and continues to HOME',
      kubeconfigVar: '/b',
      home: '/home/u/',
      files: ['/home/u/.kube/config'],
      expected: {
        source: { kind: 'file', path: '/home/u/.kube/config', from: 'HOME' },
        problems: [],
        warnings: [
          {
            level: 'warn',
            subject: 'KUBECONFIG',
            message: 'file "/b" does not exist; looking further',
          },
        ],
      },
    },
    {
      name: 'in-cluster',
      home: '/root',
      serviceHost: '10.96.0.1',
      files: [SERVICE_ACCOUNT_TOKEN_PATH],
      expected: { source: { kind: 'in-cluster' }, problems: [], warnings: [] },
    },
    {
      name: 'service host without token is not in-cluster',
      serviceHost: '10.96.0.1',
      files: [],
      expected: { source: undefined, problems: [NOTHING_FOUND], warnings: [] },
    },
    {
      name: 'nothing at all',
      files: [],
      expected: { source: undefined, problems: [NOTHING_FOUND], warnings: [] },
    },
  ])('$name', (row) => {
    const lookup = resolveKubeconfig(
      {
        kubeconfig: row.flag,
        kubeconfigSearch: {
          kubeconfigVar: row.kubeconfigVar,
          home: row.home,
          serviceHost: row.serviceHost,
        },
      },
      (path) => row.files.includes(path),
    );
    expect(lookup).toEqual(row.expected);
  });
});
