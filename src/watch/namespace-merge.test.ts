import { describe, expect, it } from 'vitest';
import type { ViewSink } from './ports.ts';
import { NamespaceMerge } from './namespace-merge.ts';

interface Item {
  readonly namespace: string;
  readonly name: string;
  readonly v: number;
}

const item = (namespace: string, name: string, v = 1): Item => ({ namespace, name, v });

/** Records what reaches the cache, as `replace [...]`, `seed ns [...]`, `upsert x`, `remove x`. */
function setup(options: { withSeed?: boolean; namespaces?: readonly string[] } = {}) {
  const calls: string[] = [];
  const joined: string[] = [];
  const names = (items: readonly Item[]): string =>
    items.map((i) => `${i.namespace}/${i.name}`).join(',');
  const target: ViewSink<Item> = {
    replace: (items) => calls.push(`replace [${names(items)}]`),
    upsert: (i) => calls.push(`upsert ${i.namespace}/${i.name}`),
    remove: (i) => calls.push(`remove ${i.namespace}/${i.name}`),
    ...(options.withSeed === false
      ? {}
      : {
          seedNamespace: (namespace: string, items: readonly Item[]) =>
            calls.push(`seed ${namespace} [${names(items)}]`),
        }),
  };
  const merge = new NamespaceMerge<Item>({
    namespaces: options.namespaces ?? ['ma', 'mb'],
    target,
    idOf: (i) => i.name,
    onNamespaceJoined: (namespace) => joined.push(namespace),
  });
  return { merge, calls, joined };
}

describe('NamespaceMerge', () => {
  it('seeds the target once every namespace has listed, with their union', () => {
    const { merge, calls } = setup();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    expect(calls).toEqual([]);
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    expect(calls).toEqual(['replace [ma/a,mb/b]']);
  });

  it('a relist of one namespace keeps the items of the others', () => {
    const { merge, calls } = setup();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    merge.sinkFor('mb').upsert(item('mb', 'c'));
    merge.sinkFor('ma').replace([]);
    expect(calls).toEqual(['replace [ma/a,mb/b]', 'upsert mb/c', 'replace [mb/b,mb/c]']);
  });

  it('a forbidden namespace does not hold back the others (defect 5)', () => {
    const { merge, calls } = setup();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').unavailable();
    merge.sinkFor('ma').upsert(item('ma', 'a2'));
    expect(calls).toEqual(['replace [ma/a]', 'upsert ma/a2']);
  });

  it('the forbidden namespace may be reported before the others list', () => {
    const { merge, calls } = setup({ namespaces: ['ma', 'mb', 'mc'] });
    merge.sinkFor('mb').unavailable();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    expect(calls).toEqual([]);
    merge.sinkFor('mc').replace([item('mc', 'c')]);
    expect(calls).toEqual(['replace [ma/a,mc/c]']);
  });

  it('stays unsynced while no namespace can be listed, then seeds with the first that can', () => {
    const { merge, calls, joined } = setup();
    merge.sinkFor('ma').unavailable();
    merge.sinkFor('mb').unavailable();
    expect(calls).toEqual([]);
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    expect(calls).toEqual(['replace [mb/b]']);
    expect(joined).toEqual(['mb']);
  });

  it('a namespace permitted later is seeded on its own, not diffed as creations', () => {
    const { merge, calls, joined } = setup();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').unavailable();
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    expect(calls).toEqual(['replace [ma/a]', 'seed mb [mb/b]']);
    expect(joined).toEqual(['mb']);
    // From then on it is a namespace like the others.
    merge.sinkFor('mb').upsert(item('mb', 'b', 2));
    merge.sinkFor('mb').replace([]);
    expect(calls.slice(2)).toEqual(['upsert mb/b', 'replace [ma/a]']);
    expect(joined).toEqual(['mb']);
  });

  it('a target without seedNamespace gets the union instead', () => {
    const { merge, calls, joined } = setup({ withSeed: false });
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').unavailable();
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    expect(calls).toEqual(['replace [ma/a]', 'replace [ma/a,mb/b]']);
    expect(joined).toEqual(['mb']);
  });

  it('a namespace forbidden after it listed keeps its items: they are unknown, not deleted', () => {
    const { merge, calls, joined } = setup();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    merge.sinkFor('mb').unavailable();
    merge.sinkFor('ma').replace([item('ma', 'a')]);
    merge.sinkFor('mb').replace([item('mb', 'b')]);
    expect(calls).toEqual(['replace [ma/a,mb/b]', 'replace [ma/a,mb/b]', 'replace [ma/a,mb/b]']);
    expect(joined).toEqual([]);
  });
});
