/**
 * Summarises a V8 heap snapshot (kreload's `/debug/heapsnapshot`, `--heapsnapshot-signal`): live
 * bytes by object type and constructor, and the strings that sliced strings keep alive. Used for the
 * per-source and per-workload marginal costs in docs/performance.md: two snapshots at two sizes, the
 * difference divided by the difference in objects.
 *
 *   node scripts/heap-summary.ts <a.heapsnapshot> [--top 25] [--json]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface SnapshotMeta {
  readonly node_fields: readonly string[];
  readonly node_types: readonly [readonly string[], ...unknown[]];
  readonly edge_fields: readonly string[];
  readonly edge_types: readonly [readonly string[], ...unknown[]];
}

interface Snapshot {
  readonly snapshot: { readonly meta: SnapshotMeta };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

interface Group {
  count: number;
  bytes: number;
}

export interface HeapSummary {
  readonly totalBytes: number;
  /** Compiled code: it grows with run time (lazy compilation, optimisation), not with objects. */
  readonly codeBytes: number;
  readonly nodes: number;
  readonly groups: readonly {
    readonly key: string;
    readonly count: number;
    readonly bytes: number;
  }[];
  readonly slicedStrings: number;
  /** Distinct parent strings kept alive by sliced strings, and their bytes. */
  readonly slicedParents: number;
  readonly slicedParentBytes: number;
}

export function summarise(snapshot: Snapshot, top: number): HeapSummary {
  const meta = snapshot.snapshot.meta;
  const nodeFieldCount = meta.node_fields.length;
  const edgeFieldCount = meta.edge_fields.length;
  const typeOffset = meta.node_fields.indexOf('type');
  const nameOffset = meta.node_fields.indexOf('name');
  const sizeOffset = meta.node_fields.indexOf('self_size');
  const edgeCountOffset = meta.node_fields.indexOf('edge_count');
  const edgeTypeOffset = meta.edge_fields.indexOf('type');
  const edgeNameOffset = meta.edge_fields.indexOf('name_or_index');
  const edgeToOffset = meta.edge_fields.indexOf('to_node');
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = snapshot;

  /** The node index a sliced string's `parent` edge points at. */
  const slicedParent = (firstEdge: number, edgeCount: number): number | undefined => {
    for (
      let edge = firstEdge;
      edge < firstEdge + edgeCount * edgeFieldCount;
      edge += edgeFieldCount
    ) {
      const edgeType = edgeTypes[edges[edge + edgeTypeOffset] ?? 0];
      if (edgeType === 'internal' && strings[edges[edge + edgeNameOffset] ?? 0] === 'parent') {
        return edges[edge + edgeToOffset];
      }
    }
    return undefined;
  };
  const groups = new Map<string, Group>();
  const slicedParents = new Map<number, number>();
  let totalBytes = 0;
  let slicedStrings = 0;
  let edgeIndex = 0;
  for (let index = 0; index < nodes.length; index += nodeFieldCount) {
    const type = nodeTypes[nodes[index + typeOffset] ?? 0] ?? 'unknown';
    const size = nodes[index + sizeOffset] ?? 0;
    const edgeCount = nodes[index + edgeCountOffset] ?? 0;
    totalBytes += size;
    const name =
      type === 'object' || type === 'closure'
        ? (strings[nodes[index + nameOffset] ?? 0] ?? '')
        : '';
    const key = name === '' ? `(${type})` : `${type} ${name}`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += size;
    groups.set(key, group);
    if (type === 'sliced string') {
      slicedStrings += 1;
      const parent = slicedParent(edgeIndex, edgeCount);
      if (parent !== undefined) slicedParents.set(parent, nodes[parent + sizeOffset] ?? 0);
    }
    edgeIndex += edgeCount * edgeFieldCount;
  }
  const sorted = [...groups.entries()]
    .map(([key, group]) => ({ key, ...group }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top);
  return {
    totalBytes,
    codeBytes: groups.get('(code)')?.bytes ?? 0,
    nodes: nodes.length / nodeFieldCount,
    groups: sorted,
    slicedStrings,
    slicedParents: slicedParents.size,
    slicedParentBytes: [...slicedParents.values()].reduce((sum, bytes) => sum + bytes, 0),
  };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, json: { type: 'boolean', default: false } },
  });
  const file = positionals[0];
  if (file === undefined) {
    process.stderr.write(
      'usage: node scripts/heap-summary.ts <file.heapsnapshot> [--top N] [--json]\n',
    );
    process.exit(2);
  }
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')) as Snapshot, Number(values.top));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return;
  }
  const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
  process.stdout.write(
    `live heap ${kib(summary.totalBytes)} KiB in ${summary.nodes} objects, ` +
      `${kib(summary.totalBytes - summary.codeBytes)} KiB without compiled code\n`,
  );
  process.stdout.write(
    `sliced strings ${summary.slicedStrings}, keeping ${summary.slicedParents} parents ` +
      `(${kib(summary.slicedParentBytes)} KiB) alive\n`,
  );
  for (const group of summary.groups) {
    process.stdout.write(
      `${kib(group.bytes).padStart(10)} KiB ${String(group.count).padStart(8)}  ${group.key}\n`,
    );
  }
}

if (import.meta.main) main();
