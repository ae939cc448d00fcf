import { describe, expect, it } from 'vitest';
import type { SourceKey } from '../core/types.ts';
import type { Comparison, HistoryReport, PinnedSnapshot } from './model.ts';
import { renderHistory } from './render.ts';

const CM = 'configmap/app' as SourceKey;

function pinned(
  comparison: Comparison,
  state: PinnedSnapshot['state'] = 'present',
): PinnedSnapshot {
  return { source: CM, snapshot: 'app-aaaaaaaaaa', hash: 'a'.repeat(40), state, comparison };
}

function report(snapshots: PinnedSnapshot[], incomplete = false): HistoryReport {
  return {
    workload: { kind: 'Deployment', namespace: 'shop', name: 'web' },
    configRevisions: 'configmaps',
    revisionKind: 'ReplicaSet',
    revisions: [
      {
        revision: 1,
        object: 'web-1',
        createdAt: undefined,
        live: false,
        snapshots: [],
        unpinned: [],
      },
      {
        revision: 2,
        object: 'web-2',
        createdAt: '2026-12-02T05:00:00Z',
        live: true,
        snapshots,
        unpinned: [],
      },
    ],
    incomplete,
  };
}

const HEAD = [
  'deployment/web in shop: 2 revision(s); config revisions on (ConfigMaps)',
  '',
  'REVISION 1  -  ReplicaSet web-1',
  '  no snapshots: the template references the live sources',
  '',
  'REVISION 2  2026-12-02T05:00:00Z  ReplicaSet web-2  LIVE',
];

describe('renderHistory table', () => {
  it.each([
    {
      name: 'keys changed, added and removed',
      snapshot: pinned({ state: 'compared', added: ['n'], removed: ['o'], changed: ['a', 'b'] }),
      lines: [
        '  configmap/app -> app-aaaaaaaaaa  hash aaaaaaaaaaaa',
        '    keys changed a, b; added n; removed o',
      ],
    },
    {
      name: 'nothing changed',
      snapshot: pinned({ state: 'compared', added: [], removed: [], changed: [] }),
      lines: ['  configmap/app -> app-aaaaaaaaaa  hash aaaaaaaaaaaa', '    no key changed'],
    },
    {
      name: 'values, quoted, absent sides said',
      snapshot: pinned({
        state: 'compared',
        added: ['n'],
        removed: [],
        changed: ['a'],
        values: [
          { key: 'a', before: 'x: 1', after: 'x: 2\n' },
          { key: 'n', after: '' },
        ],
      }),
      lines: [
        '  configmap/app -> app-aaaaaaaaaa  hash aaaaaaaaaaaa',
        '    keys changed a; added n',
        '      a: "x: 1" -> "x: 2\\n"',
        '      n: (absent) -> ""',
      ],
    },
    {
      name: 'a snapshot garbage-collected',
      snapshot: pinned(
        { state: 'cannot-compare', why: 'app-aaaaaaaaaa garbage-collected' },
        'gone',
      ),
      lines: [
        '  configmap/app -> app-aaaaaaaaaa  hash aaaaaaaaaaaa (gone: garbage-collected)',
        '    keys changed: cannot tell, app-aaaaaaaaaa garbage-collected',
      ],
    },
    {
      name: 'the previous revision ran the live source',
      snapshot: pinned({ state: 'previously-live' }),
      lines: [
        '  configmap/app -> app-aaaaaaaaaa  hash aaaaaaaaaaaa',
        '    the previous revision referenced the live source: nothing to compare with',
      ],
    },
  ])('$name', ({ snapshot, lines }) => {
    expect(renderHistory(report([snapshot]), 'table', String)).toBe(
      `${[...HEAD, ...lines].join('\n')}\n`,
    );
  });

  it('says when the report is incomplete', () => {
    const text = renderHistory(
      report([pinned({ state: 'first' }, 'forbidden')], true),
      'table',
      String,
    );
    expect(text).toContain('hash aaaaaaaaaaaa (may not be read)');
    expect(
      text.endsWith('\nincomplete: some snapshots may not be read with these credentials\n'),
    ).toBe(true);
  });

  it('a workload without revisions yet', () => {
    const empty = { ...report([]), revisions: [] };
    expect(renderHistory(empty, 'table', String)).toBe(
      'deployment/web in shop: 0 revision(s); config revisions on (ConfigMaps)\nno revisions yet\n',
    );
  });
});

describe('renderHistory json and yaml', () => {
  it('json is the report', () => {
    const value = report([pinned({ state: 'first' })]);
    expect(JSON.parse(renderHistory(value, 'json', String))).toEqual(
      JSON.parse(JSON.stringify(value)),
    );
  });

  it('yaml goes through the dumper it is given', () => {
    const value = report([]);
    expect(
      renderHistory(
        value,
        'yaml',
        (v) => `dumped ${String((v as HistoryReport).revisions.length)}`,
      ),
    ).toBe('dumped 2');
  });
});
