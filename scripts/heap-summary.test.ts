import { describe, expect, it } from 'vitest';
import { summarise } from './heap-summary.ts';

// A hand-built snapshot in V8's layout: nodes are [type, name, id, self_size, edge_count] and
// edges [type, name_or_index, to_node] (to_node is an index into `nodes`).
const NODE_TYPES = [
  'hidden',
  'array',
  'string',
  'object',
  'code',
  'closure',
  'regexp',
  'number',
  'native',
  'synthetic',
  'concatenated string',
  'sliced string',
];
const EDGE_TYPES = ['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'];
const strings = ['', 'SourceEntry', 'parent', 'view', 'a long page of JSON'];
const node = (type: string, name: number, id: number, size: number, edges: number): number[] => [
  NODE_TYPES.indexOf(type),
  name,
  id,
  size,
  edges,
];
const snapshot = {
  snapshot: {
    meta: {
      node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
      node_types: [NODE_TYPES] as [string[]],
      edge_fields: ['type', 'name_or_index', 'to_node'],
      edge_types: [EDGE_TYPES] as [string[]],
    },
  },
  nodes: [
    ...node('object', 1, 1, 40, 1), // 0: SourceEntry -> view (the sliced string)
    ...node('object', 1, 3, 40, 0), // 5: SourceEntry
    ...node('sliced string', 0, 5, 32, 1), // 10: -> parent
    ...node('sliced string', 0, 7, 32, 1), // 15: -> the same parent
    ...node('string', 4, 9, 5000, 0), // 20: the parent
  ],
  edges: [
    EDGE_TYPES.indexOf('property'),
    3,
    10,
    EDGE_TYPES.indexOf('internal'),
    2,
    20,
    EDGE_TYPES.indexOf('internal'),
    2,
    20,
  ],
  strings,
};

describe('summarise', () => {
  it('groups live bytes by type and constructor and finds what sliced strings keep alive', () => {
    expect(summarise(snapshot, 10)).toEqual({
      totalBytes: 5144,
      codeBytes: 0,
      nodes: 5,
      groups: [
        { key: '(string)', count: 1, bytes: 5000 },
        { key: 'object SourceEntry', count: 2, bytes: 80 },
        { key: '(sliced string)', count: 2, bytes: 64 },
      ],
      slicedStrings: 2,
      slicedParents: 1,
      slicedParentBytes: 5000,
    });
  });

  it('keeps the top groups only', () => {
    expect(summarise(snapshot, 1).groups).toEqual([{ key: '(string)', count: 1, bytes: 5000 }]);
  });
});
