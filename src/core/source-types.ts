/**
 * The one table of source types (§0): every fact that varies by source type is a field of its row,
 * and `SourceType` and `SourceKeyPrefix` derive from it. Like `rollout/kinds.ts`, this module
 * imports nothing, so core/types.ts can take the unions from here without an import cycle.
 */

const ROWS = [
  {
    type: 'CONFIGMAP',
    keyPrefix: 'configmap',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    watchResources: ['configmaps'],
    shortNames: ['cm'],
  },
  {
    type: 'SECRET',
    keyPrefix: 'secret',
    apiVersion: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    watchResources: ['secrets'],
    shortNames: [],
  },
  {
    type: 'SECRETPROVIDERCLASS',
    keyPrefix: 'secretproviderclass',
    apiVersion: 'secrets-store.csi.x-k8s.io/v1',
    kind: 'SecretProviderClass',
    plural: 'secretproviderclasses',
    watchResources: ['secretproviderclasspodstatuses', 'secretproviderclasses'],
    shortNames: ['spc'],
  },
] as const;

/** TYPE of the contract (§0): used in env-var names, Events, alerts and JSON. */
export type SourceType = (typeof ROWS)[number]['type'];

/** Prefix of a source key: `configmap/<name>`, `secret/<name>`, `secretproviderclass/<name>`. */
export type SourceKeyPrefix = (typeof ROWS)[number]['keyPrefix'];

/** One source type: everything that varies by type, in one row. */
export interface SourceTypeRow {
  readonly type: SourceType;
  /** Lower-case name in source keys, `kreload explain` arguments and the `type` metric label. */
  readonly keyPrefix: SourceKeyPrefix;
  readonly apiVersion: string;
  /** The object's `kind`, as in Events, alerts and a ReloadPolicy's source list. */
  readonly kind: string;
  /** Resource name: URL segment and RBAC resource. */
  readonly plural: string;
  /** Further names `kreload explain` accepts, as kubectl does. */
  readonly shortNames: readonly string[];
  /**
   * The list-watches whose health decides whether the type's D is known (§5.1) and that make a
   * namespace `permitted` in `/readyz`: CSI reads pod statuses and the classes, not one resource.
   */
  readonly watchResources: readonly string[];
}

export const SOURCE_TYPE_ROWS: readonly SourceTypeRow[] = ROWS;

/** Every source type, in the table's order (env-var suffixes, tallies and reload lists use it). */
export const SOURCE_TYPES: readonly SourceType[] = ROWS.map((row) => row.type);

export function sourceTypeRow(type: SourceType): SourceTypeRow {
  const row = SOURCE_TYPE_ROWS.find((candidate) => candidate.type === type);
  if (row === undefined) throw new TypeError(`no source type row for ${type}`);
  return row;
}

/** The source type `value` names exactly, or undefined (for persisted or user-supplied text). */
export function asSourceType(value: unknown): SourceType | undefined {
  return SOURCE_TYPES.find((type) => type === value);
}

/** The source type whose key prefix is `prefix`, or undefined. */
export function sourceTypeOfPrefix(prefix: string): SourceType | undefined {
  return ROWS.find((row) => row.keyPrefix === prefix)?.type;
}
