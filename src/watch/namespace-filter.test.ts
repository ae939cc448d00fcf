import { describe, expect, it } from 'vitest';
import {
  diffNamespaces,
  isNamespaceIgnored,
  NamespaceFilter,
  namespaceSink,
  type NamespaceEvent,
  type NamespaceScope,
} from './namespace-filter.ts';

const global = (selectorEnabled: boolean, ignored: string[] = []): NamespaceScope => ({
  mode: 'global',
  ignored,
  selectorEnabled,
});

function setup(scope: NamespaceScope) {
  const events: NamespaceEvent[] = [];
  const filter = new NamespaceFilter({ scope, notify: (event) => events.push(event) });
  return { filter, events, summary: () => events.map((e) => `${e.kind} ${e.namespace}`) };
}

describe('isNamespaceIgnored', () => {
  it.each([
    [global(false, ['kube-system']), 'kube-system', true],
    [global(false, ['kube-system']), 'kube', false],
    [
      { mode: 'scoped', ignored: ['kube-system'], selectorEnabled: false } as const,
      'kube-system',
      false,
    ],
  ])('%o, %s → %s', (scope, namespace, expected) => {
    expect(isNamespaceIgnored(scope, namespace)).toBe(expected);
  });
});

describe('diffNamespaces', () => {
  it('lists entered and left names', () => {
    expect(diffNamespaces(new Set(['a', 'b']), new Set(['b', 'c']))).toEqual({
      entered: ['c'],
      left: ['a'],
    });
  });
});

describe('NamespaceFilter', () => {
  it('without a selector accepts every namespace that is not ignored, and is synced', () => {
    const { filter } = setup(global(false, ['skip']));
    expect(filter.isSynced).toBe(true);
    expect(filter.accepts('any')).toBe(true);
    expect(filter.accepts('skip')).toBe(false);
  });

  it('in scoped mode ignores both filters', () => {
    const { filter } = setup({ mode: 'scoped', ignored: ['a'], selectorEnabled: true });
    expect(filter.isSynced).toBe(true);
    expect(filter.accepts('a')).toBe(true);
  });

  it('with a selector waits for the list, which seeds silently', () => {
    const { filter, events } = setup(global(true, ['b']));
    expect(filter.isSynced).toBe(false);
    expect(filter.accepts('a')).toBe(false);
    filter.replace(['a', 'b']);
    expect(events).toEqual([]);
    expect(filter.isSynced).toBe(true);
    expect(filter.accepts('a')).toBe(true);
    expect(filter.accepts('b')).toBe(false); // ignored AND selected: both apply
    expect(filter.accepts('c')).toBe(false);
    expect(filter.selected()).toEqual(['a', 'b']);
  });

  it('reports namespaces entering and leaving the set after the list', () => {
    const { filter, summary } = setup(global(true));
    filter.replace(['a', 'b']);
    filter.upsert('c');
    filter.upsert('c'); // a label change that keeps it selected
    filter.remove('a');
    filter.remove('zzz');
    filter.replace(['b', 'd']);
    expect(summary()).toEqual(['entered c', 'left a', 'left c', 'entered d']);
    expect(filter.selected()).toEqual(['b', 'd']);
  });

  it('namespaceSink forwards list-watch operations', () => {
    const { filter, summary } = setup(global(true));
    const sink = namespaceSink(filter);
    sink.replace(['a']);
    sink.upsert('b');
    sink.remove('a');
    expect(summary()).toEqual(['entered b', 'left a']);
  });
});
