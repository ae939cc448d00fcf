/**
 * `--custom-workload-kinds` (docs/custom-kinds.md): workload kinds supplied at run time, a JSON list
 * of rows, given inline or as the path of a file holding it. Validated strictly: a bad row is a
 * configuration error naming the row and the field, so kreload never starts with half a kind.
 */
import type { ConfiguredKindSpec, ConfiguredStrategy, WorkloadKindRow } from '../rollout/kinds.ts';
import { configuredKindRow, WORKLOAD_KINDS } from '../rollout/kinds.ts';
import type { ReplicaStatusPaths } from '../rollout/kinds.ts';

/** Thrown with every problem of the value; the option reader reports each under the flag. */
export class CustomKindsError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[], options?: ErrorOptions) {
    super(problems.join('; '), options);
    this.name = 'CustomKindsError';
    this.problems = problems;
  }
}

const ROW_FIELDS = [
  'group',
  'version',
  'kind',
  'resource',
  'namespaced',
  'shortNames',
  'podTemplatePath',
  'podSelectorPath',
  'podOwnership',
  'replicasPath',
  'maxUnavailablePath',
  'status',
  'strategies',
] as const;
const STATUS_FIELDS = [
  'observedGeneration',
  'replicas',
  'updatedReplicas',
  'availableReplicas',
] as const;
const STRATEGIES: readonly ConfiguredStrategy[] = ['rollout', 'evict'];
const OWNERSHIPS = ['direct', 'selector'] as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;
const PATH_SEGMENT = /^[A-Za-z0-9_-]{1,253}$/;

type Json = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Collects the problems of one row, each prefixed with the row's name. */
class RowReader {
  readonly #row: Json;
  readonly #where: string;
  readonly problems: string[];

  constructor(row: Json, where: string, problems: string[]) {
    this.#row = row;
    this.#where = where;
    this.problems = problems;
  }

  problem(field: string, text: string): void {
    this.problems.push(`${this.#where}: ${field}: ${text}`);
  }

  string(field: string, pattern: RegExp, shape: string): string {
    const value = this.#row[field];
    if (typeof value !== 'string' || !pattern.test(value)) {
      this.problem(field, `must be ${shape}, got ${describe(value)}`);
      return '';
    }
    return value;
  }

  path(field: string): readonly string[] | undefined {
    const value = this.#row[field];
    if (value === undefined) return undefined;
    return this.pathOf(field, value);
  }

  pathOf(field: string, value: unknown): readonly string[] | undefined {
    const segments = typeof value === 'string' ? value.split('.') : [''];
    if (!segments.every((segment) => PATH_SEGMENT.test(segment))) {
      this.problem(
        field,
        `must be a dotted field path like "spec.template", got ${describe(value)}`,
      );
      return undefined;
    }
    return segments;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function unknownFields(reader: RowReader, row: Json, known: readonly string[], prefix = ''): void {
  for (const field of Object.keys(row)) {
    if (!known.includes(field)) {
      reader.problem(`${prefix}${field}`, `unknown field; expected one of ${known.join(', ')}`);
    }
  }
}

function readStatus(reader: RowReader, value: unknown): ReplicaStatusPaths | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    reader.problem('status', `must be an object of field paths, got ${describe(value)}`);
    return undefined;
  }
  unknownFields(reader, value, STATUS_FIELDS, 'status.');
  const optional = (field: string) =>
    value[field] === undefined ? undefined : reader.pathOf(`status.${field}`, value[field]);
  const required = (field: string) => {
    if (value[field] === undefined) reader.problem(`status.${field}`, 'is required');
    return optional(field) ?? [];
  };
  return {
    observedGeneration: optional('observedGeneration'),
    desired: [],
    replicas: optional('replicas'),
    updated: required('updatedReplicas'),
    available: required('availableReplicas'),
  };
}

function readStrategies(
  reader: RowReader,
  value: unknown,
  facts: { readonly template: boolean; readonly selector: boolean },
): readonly ConfiguredStrategy[] {
  const derived: ConfiguredStrategy[] = [
    ...(facts.template ? (['rollout'] as const) : []),
    ...(facts.selector ? (['evict'] as const) : []),
  ];
  if (value === undefined) {
    if (derived.length === 0) {
      reader.problem(
        'podTemplatePath',
        'a kind needs a podTemplatePath, a podSelectorPath or both',
      );
    }
    return derived;
  }
  const valid =
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((item) => STRATEGIES.includes(item as ConfiguredStrategy));
  if (!valid) {
    reader.problem(
      'strategies',
      `must be a non-empty list of ${STRATEGIES.join(', ')}, got ${describe(value)}`,
    );
    return derived;
  }
  const strategies = [...new Set(value as ConfiguredStrategy[])];
  if (strategies.includes('rollout') && !facts.template) {
    reader.problem('strategies', '"rollout" patches the pod template: it needs podTemplatePath');
  }
  if (strategies.includes('evict') && !facts.selector) {
    reader.problem(
      'strategies',
      '"evict" finds the pods by their selector: it needs podSelectorPath',
    );
  }
  return strategies;
}

/** The API coordinates and the words that name the kind. */
function readNames(
  reader: RowReader,
  row: Json,
): Pick<ConfiguredKindSpec, 'group' | 'version' | 'kind' | 'plural' | 'shortNames'> {
  const group = reader.string('group', DNS_SUBDOMAIN, 'an API group like "example.com"');
  const version = reader.string('version', VERSION, 'an API version like "v1" or "v1beta1"');
  const kind = reader.string('kind', KIND, 'a kind like "Widget"');
  const plural = reader.string('resource', DNS_LABEL, 'the plural resource name like "widgets"');
  if (row.namespaced !== undefined && row.namespaced !== true) {
    reader.problem('namespaced', 'only namespaced kinds are supported: omit it or set true');
  }
  const shortNames = row.shortNames ?? [];
  const valid =
    Array.isArray(shortNames) &&
    shortNames.every((name) => typeof name === 'string' && DNS_LABEL.test(name));
  if (!valid) {
    reader.problem('shortNames', `must be a list of lower-case names, got ${describe(shortNames)}`);
  }
  return { group, version, kind, plural, shortNames: valid ? (shortNames as string[]) : [] };
}

function readRow(row: unknown, index: number, problems: string[]): ConfiguredKindSpec | undefined {
  const named = isObject(row) && typeof row.kind === 'string' ? ` (${row.kind})` : '';
  const where = `row ${String(index + 1)}${named}`;
  if (!isObject(row)) {
    problems.push(`${where}: must be an object, got ${describe(row)}`);
    return undefined;
  }
  const reader = new RowReader(row, where, problems);
  const before = problems.length;
  unknownFields(reader, row, ROW_FIELDS);
  const names = readNames(reader, row);
  const templatePath = reader.path('podTemplatePath');
  const selectorPath = reader.path('podSelectorPath');
  const ownership = row.podOwnership ?? 'direct';
  if (!OWNERSHIPS.includes(ownership as 'direct')) {
    reader.problem(
      'podOwnership',
      `must be one of ${OWNERSHIPS.join(', ')}, got ${describe(ownership)}`,
    );
  }
  const desiredPath = reader.path('replicasPath') ?? ['spec', 'replicas'];
  const maxUnavailablePath = reader.path('maxUnavailablePath') ?? [];
  const status = readStatus(reader, row.status);
  const strategies = readStrategies(reader, row.strategies, {
    template: row.podTemplatePath !== undefined,
    selector: row.podSelectorPath !== undefined,
  });
  if (problems.length > before) return undefined;
  return {
    ...names,
    templatePath,
    strategies,
    pods: selectorPath && {
      selectorPath,
      owners: ownership as 'direct' | 'selector',
      desiredPath,
      maxUnavailablePath,
    },
    status: status && { ...status, desired: desiredPath },
  };
}

/**
 * The words that name a kind (its kind in lower case, plural and short names: what `explain`
 * accepts) are unique across the table, built-in rows included.
 */
function clashes(specs: readonly ConfiguredKindSpec[]): string[] {
  const problems: string[] = [];
  const holders = new Map<string, string>();
  const rows = [
    ...WORKLOAD_KINDS.map((row) => ({ ...row, owner: `the built-in kind ${row.kind}` })),
    ...specs.map((spec) => ({ ...spec, owner: `the configured kind ${spec.kind}` })),
  ];
  for (const row of rows) {
    const names = new Set([row.kind.toLowerCase(), row.plural, ...row.shortNames]);
    for (const name of names) {
      const holder = holders.get(name);
      if (holder === undefined) holders.set(name, row.owner);
      else problems.push(`${row.owner}: the name "${name}" is already taken by ${holder}`);
    }
  }
  return problems;
}

/** The rows of a `--custom-workload-kinds` JSON text; throws CustomKindsError with every problem. */
export function parseCustomKinds(text: string): readonly WorkloadKindRow[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CustomKindsError([`not valid JSON: ${why}`], { cause: error });
  }
  if (!Array.isArray(value)) {
    throw new CustomKindsError([`must be a JSON list of kinds, got ${describe(value)}`]);
  }
  const problems: string[] = [];
  const specs = value.flatMap((row: unknown, index) => readRow(row, index, problems) ?? []);
  problems.push(...clashes(specs));
  if (problems.length > 0) throw new CustomKindsError(problems);
  return specs.map(configuredKindRow);
}

/** Inline JSON starts with `[`; anything else is the path of a file holding it. */
export function isInlineKinds(value: string): boolean {
  return value.trimStart().startsWith('[');
}
