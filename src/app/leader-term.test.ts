import { describe, expect, it } from 'vitest';
import { journalNamespace } from './leader-term.ts';

describe('journalNamespace: where Job recreations are journalled', () => {
  const rows: [string, string | undefined, string | undefined, string, RegExp][] = [
    ['in a cluster: POD_NAMESPACE', 'kreload-system', 'ops', 'kreload-system', /POD_NAMESPACE/],
    ['outside: the kubeconfig context', undefined, 'ops', 'ops', /current context/],
    ['outside, a context without a namespace', undefined, undefined, 'default', /names none/],
    ['outside, an empty context namespace', undefined, '', 'default', /names none/],
  ];
  it.each(rows)('%s', (_name, podNamespace, contextNamespace, namespace, from) => {
    const placed = journalNamespace(podNamespace, contextNamespace);
    expect(placed.namespace).toBe(namespace);
    expect(placed.from).toMatch(from);
  });
});
