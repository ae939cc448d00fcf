/** Parsing of annotation values: bools and exact values (§3.3), lists (§3.4) and Go durations (§12.4). */
import { RE2JS, RE2JSSyntaxException } from 're2js';
import { estimatePatternCost } from './pattern-cost.ts';

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

/**
 * What one reload-list value may cost (ADR 0018, docs/annotations.md "Limits"). A source name is at most
 * 253 characters, so a useful element is short and cheap; these bounds keep a hostile value to about
 * 1 MiB and 50 ms of compilation, and everything else keeps working.
 */
export const RELOAD_LIST_LIMITS = {
  /** Characters of the whole value; a longer value is ignored without being split. */
  maxValueLength: 32_768,
  /** Distinct elements compiled per value; later ones are ignored. */
  maxElements: 100,
  /** Characters of one element; a longer element is skipped. */
  maxElementLength: 1_024,
  /** Estimated compile cost of one element (`estimatePatternCost`); a costlier element is skipped. */
  maxElementCost: 2_000,
  /** Estimated compile cost of all elements of a value; the element that would exceed it and later ones are ignored. */
  maxValueCost: 10_000,
} as const;

export type ReloadListLimits = typeof RELOAD_LIST_LIMITS;

/** How much of an element an error message quotes. */
const QUOTED_ELEMENT_LENGTH = 64;

export interface ReloadPattern {
  /** The element as written (trimmed). */
  readonly source: string;
  /** Whole-name match, i.e. `^(?:source)$`. */
  matches(name: string): boolean;
}

export interface InvalidReloadElement {
  /** The element as written, cut to its first 64 characters when longer. */
  readonly element: string;
  /** Parser error, e.g. `missing closing )`, or the limit the element exceeds. */
  readonly error: string;
}

/** A list-wide limit that made kreload ignore part or all of the value. */
export interface ReloadListOverLimit {
  readonly problem: string;
  readonly consequence: string;
}

export interface ParsedReloadList {
  readonly patterns: readonly ReloadPattern[];
  readonly invalid: readonly InvalidReloadElement[];
  readonly overLimit?: ReloadListOverLimit | undefined;
  /** Estimated compile cost of `patterns` (`estimatePatternCost` units). */
  readonly cost: number;
}

/** An element as messages show it: long ones are cut, so an Event or log line stays small. */
export function shownElement(element: string): string {
  if (element.length <= QUOTED_ELEMENT_LENGTH) return element;
  return `${element.slice(0, QUOTED_ELEMENT_LENGTH)}…`;
}

function invalidElement(element: string, error: string): InvalidReloadElement {
  return { element: shownElement(element), error };
}

function compileElement(element: string): ReloadPattern | InvalidReloadElement {
  try {
    // The element is compiled on its own and matched with RE2JS#matches, an anchored whole-input match:
    // this is `^(?:element)$` (D3), and an element such as `a)|(b` is rejected instead of escaping the
    // group that a textual wrapper would add.
    const compiled = RE2JS.compile(element);
    return { source: element, matches: (name) => compiled.matches(name) };
  } catch (error) {
    return invalidElement(element, parserErrorText(error));
  }
}

/** A tenant's pattern must never throw out of the decision, whatever the engine raises. */
function parserErrorText(error: unknown): string {
  if (error instanceof RE2JSSyntaxException) return error.getDescription();
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The element's estimated cost, or why it is not even compiled (per-element limits). */
function elementCost(
  element: string,
  limits: ReloadListLimits,
): { readonly cost: number } | { readonly tooBig: string } {
  // Length first: the estimate itself is linear in the length, so a long element is not even scanned.
  if (element.length > limits.maxElementLength) {
    return {
      tooBig: `${element.length} characters, more than the ${limits.maxElementLength} allowed`,
    };
  }
  const cost = estimatePatternCost(element);
  if (cost > limits.maxElementCost) {
    return {
      tooBig: `too complex: estimated cost ${cost}, more than the ${limits.maxElementCost} allowed`,
    };
  }
  return { cost };
}

function valueTooLong(v: string, limits: ReloadListLimits): ParsedReloadList {
  return {
    patterns: [],
    invalid: [],
    overLimit: {
      problem: `reload list is ${v.length} characters long, more than the ${limits.maxValueLength} allowed`,
      consequence: 'the whole list is ignored',
    },
    cost: 0,
  };
}

/**
 * Compiles each distinct element with a linear-time RE2 engine (§3.4 item 2). Invalid elements are listed
 * once each and skipped; the valid ones still apply. Nothing is compiled before its estimated cost is
 * checked against `limits` (§3.4 item 5).
 */
export function parseReloadList(
  v: string,
  limits: ReloadListLimits = RELOAD_LIST_LIMITS,
): ParsedReloadList {
  if (v.length > limits.maxValueLength) return valueTooLong(v, limits);
  const patterns: ReloadPattern[] = [];
  const invalid: InvalidReloadElement[] = [];
  const elements = [...new Set(splitList(v))];
  let cost = 0;
  let overLimit: ReloadListOverLimit | undefined;
  if (elements.length > limits.maxElements) {
    overLimit = {
      problem: `reload list has ${elements.length} distinct elements, more than the ${limits.maxElements} allowed`,
      consequence: `the elements after the ${limits.maxElements}th are ignored`,
    };
  }
  for (const element of elements.slice(0, limits.maxElements)) {
    const estimate = elementCost(element, limits);
    if ('tooBig' in estimate) {
      invalid.push(invalidElement(element, estimate.tooBig));
      continue;
    }
    if (cost + estimate.cost > limits.maxValueCost) {
      overLimit = {
        problem: `reload list is too complex: estimated cost over the ${limits.maxValueCost} allowed`,
        consequence: `${JSON.stringify(shownElement(element))} and the elements after it are ignored`,
      };
      break;
    }
    const parsed = compileElement(element);
    if ('matches' in parsed) {
      patterns.push(parsed);
      cost += estimate.cost;
    } else {
      invalid.push(parsed);
    }
  }
  return { patterns, invalid, overLimit, cost };
}

export function reloadListMatches(list: ParsedReloadList, name: string): boolean {
  return list.patterns.some((pattern) => pattern.matches(name));
}

/** Heap bytes per cost unit of a compiled pattern (ADR 0018), for the cache's byte budget. */
const BYTES_PER_COST_UNIT = 80;

export interface ReloadListCacheOptions {
  /** Distinct list values kept; the least recently used one is dropped beyond this. */
  readonly maxEntries: number;
  /** Estimated bytes of the kept values and their compiled patterns; least recently used ones go first. */
  readonly maxBytes: number;
}

export const DEFAULT_RELOAD_LIST_CACHE: ReloadListCacheOptions = {
  maxEntries: 10_000,
  maxBytes: 32 * 1024 * 1024,
};

interface CacheEntry {
  readonly parsed: ParsedReloadList;
  readonly bytes: number;
}

/** The key (UTF-16) and the compiled patterns. */
function entryBytes(v: string, parsed: ParsedReloadList): number {
  return 2 * v.length + BYTES_PER_COST_UNIT * parsed.cost;
}

/**
 * Memoises `parseReloadList` per distinct value, so a pattern is compiled once and not per decision. Owned by
 * the caller (one per process); values are few because many workloads share the same lists. Bounded in
 * entries and in estimated bytes.
 */
export class ReloadListCache {
  readonly #options: ReloadListCacheOptions;
  readonly #entries = new Map<string, CacheEntry>();
  #bytes = 0;

  constructor(options: Partial<ReloadListCacheOptions> = {}) {
    this.#options = { ...DEFAULT_RELOAD_LIST_CACHE, ...options };
  }

  get(v: string): ParsedReloadList {
    const cached = this.#entries.get(v);
    if (cached !== undefined) {
      // Re-inserting moves the value to the end of the Map's order: most recently used.
      this.#entries.delete(v);
      this.#entries.set(v, cached);
      return cached.parsed;
    }
    const parsed = parseReloadList(v);
    const bytes = entryBytes(v, parsed);
    this.#entries.set(v, { parsed, bytes });
    this.#bytes += bytes;
    this.#evict();
    return parsed;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Estimated bytes held, as counted against `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  #evict(): void {
    // The newest entry is last and is never dropped: its caller is about to use it.
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= 1) return;
      if (this.#entries.size <= this.#options.maxEntries && this.#bytes <= this.#options.maxBytes)
        return;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes;
    }
  }
}
