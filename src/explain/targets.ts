/**
 * The words that name what to explain, shared by `kreload explain <kind>/<name>` and
 * `GET /debug/explain?kind=…`: a workload kind of the kind table (its kind, plural or short name)
 * or a source type, case-insensitive.
 */
import type { SourceType, WorkloadKindName } from '../core/types.ts';
import { SOURCE_TYPE_ROWS } from '../core/source-types.ts';
import type { KindTable } from '../rollout/kinds.ts';

export type ExplainTarget =
  | { readonly what: 'workload'; readonly kind: WorkloadKindName }
  | { readonly what: 'source'; readonly type: SourceType };

/** What `word` names, or undefined for a word that names nothing explain knows. */
export function explainTargetOf(word: string, kinds: KindTable): ExplainTarget | undefined {
  const lower = word.toLowerCase();
  const kind = kinds.rows.find((row) => namedBy(row, lower))?.kind;
  if (kind !== undefined) return { what: 'workload', kind };
  const type = SOURCE_TYPE_ROWS.find((row) => namedBy(row, lower))?.type;
  return type === undefined ? undefined : { what: 'source', type };
}

/** A kind or source type is named by its kind, plural or a short name, in lower case. */
function namedBy(
  row: { readonly kind: string; readonly plural: string; readonly shortNames: readonly string[] },
  lower: string,
): boolean {
  return row.kind.toLowerCase() === lower || row.plural === lower || row.shortNames.includes(lower);
}
