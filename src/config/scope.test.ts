import { describe, expect, it } from 'vitest';
import { namespaceRefusal, type Scope } from './scope.ts';

const GLOBAL: Scope = {
  mode: 'global',
  namespaces: [],
  ignoreNamespaces: [],
  namespaceSelector: '',
};

describe('namespaceRefusal: whether kreload acts on workloads in a namespace', () => {
  const selected = (namespace: string): boolean => namespace !== 'unlabelled';
  const rows: [string, Scope, string, string | undefined][] = [
    ['global: any namespace', GLOBAL, 'team-a', undefined],
    [
      'global: an ignored namespace',
      { ...GLOBAL, ignoreNamespaces: ['kube-system'] },
      'kube-system',
      'namespace kube-system is ignored (--namespaces-to-ignore)',
    ],
    [
      'global: not selected by the selector',
      { ...GLOBAL, namespaceSelector: 'team=a' },
      'unlabelled',
      'namespace unlabelled is not selected (--namespace-selector)',
    ],
    [
      'scoped: a listed namespace',
      { ...GLOBAL, mode: 'scoped', namespaces: ['team-a', 'team-b'] },
      'team-b',
      undefined,
    ],
    [
      'scoped: any other namespace',
      { ...GLOBAL, mode: 'scoped', namespaces: ['team-a'] },
      'kube-system',
      'namespace kube-system is not one kreload watches',
    ],
    [
      'single: another namespace',
      { ...GLOBAL, mode: 'single', namespaces: ['team-a'] },
      'team-b',
      'namespace team-b is not one kreload watches',
    ],
  ];
  it.each(rows)('%s', (_name, scope, namespace, refusal) => {
    expect(namespaceRefusal(scope, namespace, selected)).toBe(refusal);
  });
});
