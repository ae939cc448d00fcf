import { describe, expect, it } from 'vitest';
import type { SourceKey } from '../core/types.ts';
import type { HistoryInput, KeyContent, RevisionInput, SnapshotRead } from './model.ts';
import { buildHistory, keyChanges } from './model.ts';

const CM = 'configmap/app' as SourceKey;
const SECRET = 'secret/db' as SourceKey;

function keys(entries: Record<string, string>, withValues = false): Map<string, KeyContent> {
  return new Map(
    Object.entries(entries).map(([key, value]) => [
      key,
      withValues ? { digest: `d(${value})`, value } : { digest: `d(${value})` },
    ]),
  );
}

function revision(n: number, snapshots: Record<string, string> = {}): RevisionInput {
  return {
    object: `web-${String(n)}`,
    revision: n,
    createdAt: `2026-12-02T05:0${String(n)}:00Z`,
    snapshots: new Map(Object.entries(snapshots) as [SourceKey, string][]),
  };
}

function present(entries: Record<string, string>, withValues = false): SnapshotRead {
  return { state: 'present', hash: undefined, keys: keys(entries, withValues) };
}

function input(
  revisions: RevisionInput[],
  reads: Record<string, SnapshotRead>,
  live = revisions.at(-1)?.object,
): HistoryInput {
  return {
    workload: { kind: 'Deployment', namespace: 'shop', name: 'web' },
    optedIn: { configMaps: true, secrets: false },
    revisionKind: 'ReplicaSet',
    revisions,
    liveObject: live,
    reads: new Map(Object.entries(reads)),
  };
}

interface KeyRow {
  readonly name: string;
  readonly before: Record<string, string>;
  readonly after: Record<string, string>;
  readonly added: string[];
  readonly removed: string[];
  readonly changed: string[];
}

describe('keyChanges', () => {
  it.each<KeyRow>([
    {
      name: 'nothing changed',
      before: { a: '1' },
      after: { a: '1' },
      added: [],
      removed: [],
      changed: [],
    },
    {
      name: 'one value changed',
      before: { a: '1', b: '2' },
      after: { a: '1', b: '3' },
      added: [],
      removed: [],
      changed: ['b'],
    },
    {
      name: 'added and removed, sorted',
      before: { z: '1', a: '1' },
      after: { y: '1', b: '1' },
      added: ['b', 'y'],
      removed: ['a', 'z'],
      changed: [],
    },
    {
      name: 'everything at once',
      before: { a: '1', b: '1' },
      after: { b: '2', c: '1' },
      added: ['c'],
      removed: ['a'],
      changed: ['b'],
    },
    {
      name: 'empty to something',
      before: {},
      after: { a: '' },
      added: ['a'],
      removed: [],
      changed: [],
    },
  ])('$name', ({ before, after, added, removed, changed }) => {
    expect(keyChanges(keys(before), keys(after), false)).toEqual({
      state: 'compared',
      added,
      removed,
      changed,
    });
  });

  it('with values: before and after of every changed key, absent sides left out', () => {
    const result = keyChanges(keys({ a: '1', b: '1' }, true), keys({ b: '2', c: '3' }, true), true);
    expect(result.values).toEqual([
      { key: 'a', before: '1' },
      { key: 'b', before: '1', after: '2' },
      { key: 'c', after: '3' },
    ]);
  });

  it('with values asked for but none held (a Secret): no value at all', () => {
    const result = keyChanges(keys({ a: '1' }), keys({ a: '2' }), true);
    expect(result.changed).toEqual(['a']);
    expect(result.values).toEqual([]);
  });
});

interface Expectation {
  readonly revision: number;
  readonly snapshots?: unknown[];
  readonly unpinned?: unknown[];
  readonly comparison?: unknown;
  readonly state?: string;
  readonly hash?: string;
}

interface HistoryRow {
  readonly name: string;
  readonly revisions: RevisionInput[];
  readonly reads: Record<string, SnapshotRead>;
  readonly expected: Expectation[];
}

describe('buildHistory', () => {
  it.each<HistoryRow>([
    {
      name: 'three snapshot revisions after a live one: first, previously live, compared',
      revisions: [
        revision(1),
        revision(2, { [CM]: 'app-aaaaaaaaaa' }),
        revision(3, { [CM]: 'app-bbbbbbbbbb' }),
      ],
      reads: {
        'configmap/app-aaaaaaaaaa': present({ a: '1' }),
        'configmap/app-bbbbbbbbbb': present({ a: '2', n: '1' }),
      },
      expected: [
        { revision: 1, snapshots: [], unpinned: [] },
        { revision: 2, comparison: { state: 'previously-live' } },
        {
          revision: 3,
          comparison: { state: 'compared', added: ['n'], removed: [], changed: ['a'] },
        },
      ],
    },
    {
      name: 'the oldest listed revision has nothing to compare with',
      revisions: [revision(4, { [CM]: 'app-aaaaaaaaaa' })],
      reads: { 'configmap/app-aaaaaaaaaa': present({ a: '1' }) },
      expected: [{ revision: 4, comparison: { state: 'first' } }],
    },
    {
      name: 'the same snapshot again (a revert, an unrelated template change)',
      revisions: [revision(1, { [CM]: 'app-aaaaaaaaaa' }), revision(2, { [CM]: 'app-aaaaaaaaaa' })],
      reads: { 'configmap/app-aaaaaaaaaa': present({ a: '1' }) },
      expected: [{ revision: 1 }, { revision: 2, comparison: { state: 'same-snapshot' } }],
    },
    {
      name: 'the previous snapshot was garbage-collected',
      revisions: [revision(1, { [CM]: 'app-aaaaaaaaaa' }), revision(2, { [CM]: 'app-bbbbbbbbbb' })],
      reads: {
        'configmap/app-aaaaaaaaaa': { state: 'gone' },
        'configmap/app-bbbbbbbbbb': present({ a: '2' }),
      },
      expected: [
        { revision: 1, state: 'gone', hash: 'aaaaaaaaaa' },
        {
          revision: 2,
          comparison: { state: 'cannot-compare', why: 'app-aaaaaaaaaa garbage-collected' },
        },
      ],
    },
    {
      name: 'a Secret snapshot that may not be read',
      revisions: [
        revision(1, { [SECRET]: 'db-aaaaaaaaaa' }),
        revision(2, { [SECRET]: 'db-bbbbbbbbbb' }),
      ],
      reads: {
        'secret/db-aaaaaaaaaa': { state: 'forbidden', message: 'no' },
        'secret/db-bbbbbbbbbb': { state: 'forbidden', message: 'no' },
      },
      expected: [
        { revision: 1, state: 'forbidden' },
        {
          revision: 2,
          comparison: { state: 'cannot-compare', why: 'db-aaaaaaaaaa may not be read' },
        },
      ],
    },
  ])('$name', ({ revisions, reads, expected }) => {
    const report = buildHistory(input(revisions, reads), false);
    expect(report.revisions.map((r) => r.revision)).toEqual(expected.map((e) => e.revision));
    expected.forEach((want, index) => {
      const got = report.revisions[index];
      if (want.snapshots) expect(got?.snapshots).toEqual(want.snapshots);
      if (want.unpinned) expect(got?.unpinned).toEqual(want.unpinned);
      if (want.comparison) expect(got?.snapshots[0]?.comparison).toEqual(want.comparison);
      if (want.state) expect(got?.snapshots[0]?.state).toBe(want.state);
      if (want.hash) expect(got?.snapshots[0]?.hash).toBe(want.hash);
    });
  });

  it('orders by revision number, marks the live one, and names sources pinned no more', () => {
    const report = buildHistory(
      input(
        [revision(3), revision(1, { [CM]: 'app-aaaaaaaaaa' })],
        { 'configmap/app-aaaaaaaaaa': present({ a: '1' }) },
        'web-1',
      ),
      false,
    );
    expect(report.revisions.map((r) => [r.revision, r.live])).toEqual([
      [1, true],
      [3, false],
    ]);
    expect(report.revisions[1]?.unpinned).toEqual([CM]);
    expect(report.incomplete).toBe(false);
  });

  it('takes the full hash from the snapshot when it was read', () => {
    const reads = {
      'configmap/app-aaaaaaaaaa': {
        state: 'present',
        hash: 'a'.repeat(40),
        keys: new Map(),
      } as const,
    };
    const report = buildHistory(input([revision(1, { [CM]: 'app-aaaaaaaaaa' })], reads), false);
    expect(report.revisions[0]?.snapshots[0]?.hash).toBe('a'.repeat(40));
  });

  it('values only for a ConfigMap, and only when asked for', () => {
    const revisions = [
      revision(1, { [CM]: 'app-aaaaaaaaaa', [SECRET]: 'db-aaaaaaaaaa' }),
      revision(2, { [CM]: 'app-bbbbbbbbbb', [SECRET]: 'db-bbbbbbbbbb' }),
    ];
    const reads = {
      'configmap/app-aaaaaaaaaa': present({ a: '1' }, true),
      'configmap/app-bbbbbbbbbb': present({ a: '2' }, true),
      'secret/db-aaaaaaaaaa': present({ p: 'x' }),
      'secret/db-bbbbbbbbbb': present({ p: 'y' }),
    };
    const shown = buildHistory(input(revisions, reads), true).revisions[1]?.snapshots;
    expect(shown?.map((s) => [s.source, s.comparison])).toEqual([
      [
        CM,
        {
          state: 'compared',
          added: [],
          removed: [],
          changed: ['a'],
          values: [{ key: 'a', before: '1', after: '2' }],
        },
      ],
      [SECRET, { state: 'compared', added: [], removed: [], changed: ['p'] }],
    ]);
    const hidden = buildHistory(input(revisions, reads), false).revisions[1]?.snapshots[0];
    expect(hidden?.comparison).toEqual({
      state: 'compared',
      added: [],
      removed: [],
      changed: ['a'],
    });
  });

  it.each([
    [{ configMaps: false, secrets: false }, 'off'],
    [{ configMaps: true, secrets: false }, 'configmaps'],
    [{ configMaps: true, secrets: true }, 'configmaps-and-secrets'],
  ] as const)('opt-in %o → %s', (optedIn, expected) => {
    expect(buildHistory({ ...input([], {}), optedIn }, false).configRevisions).toBe(expected);
  });
});
