/** Parsing of annotation values: bools and exact values (§3.3), lists (§3.4) and Go durations (§12.4). */
import { RE2JS, RE2JSSyntaxException } from 're2js';

export { parseGoDuration } from './go-duration.ts';

const TRUE_VALUES: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_VALUES: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go `strconv.ParseBool`: no trimming; undefined when the value is not in its set. */
export function parseBool(v: string): boolean | undefined {
  if (TRUE_VALUES.has(v)) return true;
  if (FALSE_VALUES.has(v)) return false;
  return undefined;
}

/** Reading of an exact-`true` key (`search`, `match`, `ignore`). */
export type ExactValue = 'true' | 'false' | 'empty' | 'invalid';

export function parseExact(v: string): ExactValue {
  if (v === 'true' || v === 'false') return v;
  return v === '' ? 'empty' : 'invalid';
}

/** Go `unicode.IsSpace` (what `strings.TrimSpace` removes); JS `trim()` differs on U+0085 and U+FEFF. */
const GO_SPACE =
  '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const SURROUNDING_SPACE = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'gu');

/** Splits on `,`, trims each element, drops empty ones (§3.4 item 1). */
export function splitList(v: string): readonly string[] {
  return v
    .split(',')
    .map((element) => element.replace(SURROUNDING_SPACE, ''))
    .filter((element) => element !== '');
}

/** Exclude lists compare names for exact equality (§3.4 item 4). */
export function parseExcludeList(v: string): readonly string[] {
  return splitList(v);
}

export interface ReloadPattern {
  /** The element as written (trimmed). */
  readonly source: string;
  /** Whole-name match, i.e. `^(?:source)$`. */
  matches(name: string): boolean;
}

export interface InvalidReloadElement {
  readonly element: string;
  /** Parser error, e.g. `missing closing )`. */
  readonly error: string;
}

export interface ParsedReloadList {
  readonly patterns: readonly ReloadPattern[];
  readonly invalid: readonly InvalidReloadElement[];
}

function compileElement(element: string): ReloadPattern | InvalidReloadElement {
  try {
    // The element is compiled on its own and matched with RE2JS#matches, an anchored whole-input match:
    // this is `^(?:element)$` (D3), and an element such as `a)|(b` is rejected instead of escaping the
    // group that a textual wrapper would add.
    const compiled = RE2JS.compile(element);
    return { source: element, matches: (name) => compiled.matches(name) };
  } catch (error) {
    return { element, error: parserErrorText(error) };
  }
}

/** A tenant's pattern must never throw out of the decision, whatever the engine raises. */
function parserErrorText(error: unknown): string {
  if (error instanceof RE2JSSyntaxException) return error.getDescription();
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * Compiles each distinct element with a linear-time RE2 engine (§3.4 item 2). Invalid elements are listed
 * once each and skipped; the valid ones still apply.
 */
export function parseReloadList(v: string): ParsedReloadList {
  const patterns: ReloadPattern[] = [];
  const invalid: InvalidReloadElement[] = [];
  for (const element of new Set(splitList(v))) {
    const parsed = compileElement(element);
    if ('matches' in parsed) patterns.push(parsed);
    else invalid.push(parsed);
  }
  return { patterns, invalid };
}

export function reloadListMatches(list: ParsedReloadList, name: string): boolean {
  return list.patterns.some((pattern) => pattern.matches(name));
}

export interface ReloadListCacheOptions {
  /** Distinct list values kept; the least recently used one is dropped beyond this. */
  readonly maxEntries: number;
}

/**
 * Memoises `parseReloadList` per distinct value, so a pattern is compiled once and not per decision. Owned by
 * the caller (one per process); values are few because many workloads share the same lists.
 */
export class ReloadListCache {
  readonly #options: ReloadListCacheOptions;
  readonly #entries = new Map<string, ParsedReloadList>();

  constructor(options: ReloadListCacheOptions = { maxEntries: 10_000 }) {
    this.#options = options;
  }

  get(v: string): ParsedReloadList {
    const cached = this.#entries.get(v);
    if (cached !== undefined) {
      // Re-inserting moves the value to the end of the Map's order: most recently used.
      this.#entries.delete(v);
      this.#entries.set(v, cached);
      return cached;
    }
    const parsed = parseReloadList(v);
    this.#entries.set(v, parsed);
    this.#evict();
    return parsed;
  }

  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#options.maxEntries) return;
      this.#entries.delete(key);
    }
  }
}
