/**
 * Persisted state kreload reads back from workloads: the `kreload.io/*` hash maps (§3.2) and Reloader's
 * `last-reloaded-from` document (§6.2). Malformed values count as absent (§5.1).
 */
import { goJsonString } from './go-json.ts';
import { parseSourceKey, sourceKey } from './keys.ts';
import type { SourceKey, SourceType } from './types.ts';
import { asSourceType } from './source-types.ts';

const SHA1_HEX = /^[0-9a-f]{40}$/;

export function isSha1Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA1_HEX.test(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export interface ParsedHashMap {
  /** undefined when the annotation is absent or malformed. */
  readonly map: ReadonlyMap<SourceKey, string> | undefined;
  readonly malformed: boolean;
}

const MALFORMED_MAP: ParsedHashMap = { map: undefined, malformed: true };

function asSourceKey(key: string): SourceKey | undefined {
  const parsed = parseSourceKey(key);
  return parsed === undefined ? undefined : sourceKey(parsed.type, parsed.name);
}

/** A JSON object from source key to 40-hex hash; anything else is malformed (and counts as absent). */
export function parseHashMap(v: string | undefined): ParsedHashMap {
  if (v === undefined) return { map: undefined, malformed: false };
  const json = parseJson(v);
  if (!json.ok || !isPlainObject(json.value)) return MALFORMED_MAP;
  const map = new Map<SourceKey, string>();
  for (const [key, hash] of Object.entries(json.value)) {
    const parsedKey = asSourceKey(key);
    if (parsedKey === undefined || !isSha1Hex(hash)) return MALFORMED_MAP;
    map.set(parsedKey, hash);
  }
  return { map, malformed: false };
}

/** How many distinct values a `HashMapCache` keeps. */
const HASH_MAP_CACHE_ENTRIES = 16;

/**
 * Memoises `parseHashMap` per distinct value. Under a policy selector hundreds of workloads hold the
 * same `kreload.io/baseline` of hundreds of entries, each re-planned at every reconcile: parsed once,
 * not per pass. Owned by the caller; the most recently used values are kept.
 */
export class HashMapCache {
  readonly #entries = new Map<string, ParsedHashMap>();

  parse(v: string | undefined): ParsedHashMap {
    if (v === undefined) return parseHashMap(v);
    const cached = this.#entries.get(v);
    if (cached !== undefined) {
      // Re-inserting moves the value to the end of the Map's order: most recently used.
      this.#entries.delete(v);
      this.#entries.set(v, cached);
      return cached;
    }
    const parsed = parseHashMap(v);
    this.#entries.set(v, parsed);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= HASH_MAP_CACHE_ENTRIES) break;
      this.#entries.delete(oldest);
    }
    return parsed;
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * A UTF-16 code unit ranked in code point order: surrogates (D800–DFFF) stand for code points above
 * FFFF, so they come after E000–FFFF, which move down into their place.
 */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
}

/**
 * UTF-8 byte order, as Go sorts map keys: code point order, compared in place (no encoding per
 * comparison: sorting hundreds of keys per reconcile must not allocate).
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let index = 0; index < length; index += 1) {
    const x = a.charCodeAt(index);
    const y = b.charCodeAt(index);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Compact JSON with keys sorted byte-wise; `null` for an empty map (removes the annotation in a patch). */
export function formatHashMap(map: ReadonlyMap<SourceKey, string>): string | null {
  if (map.size === 0) return null;
  const members = [...map.keys()]
    .sort(compareUtf8)
    .map((key) => `${goJsonString(key)}:${goJsonString(map.get(key) ?? '')}`);
  return `{${members.join(',')}}`;
}

/** `reloader.stakater.com/last-reloaded-from` (§6.2). */
export interface LastReloadedFrom {
  readonly type: SourceType;
  readonly name: string;
  readonly namespace: string;
  readonly hash: string;
  readonly containerRefs: readonly string[];
  /** Unix seconds. */
  readonly observedAt: number;
}

export interface ParsedLastReloadedFrom {
  /** undefined when the annotation is absent or malformed. */
  readonly value: LastReloadedFrom | undefined;
  readonly malformed: boolean;
}

const MALFORMED_LAST_RELOADED_FROM: ParsedLastReloadedFrom = { value: undefined, malformed: true };

/** Go writes a nil slice as `null`; an absent field unmarshals to nil too. */
function asContainerRefs(value: unknown): readonly string[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const refs: unknown[] = value;
  const names = refs.filter((ref) => typeof ref === 'string');
  return names.length === refs.length ? names : undefined;
}

/** An int64 in Go: absent means 0, a fraction fails to unmarshal. */
function asObservedAt(value: unknown): number | undefined {
  if (value === undefined) return 0;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

function toLastReloadedFrom(document: Record<string, unknown>): LastReloadedFrom | undefined {
  const { name, namespace, hash } = document;
  const type = asSourceType(document.type);
  const containerRefs = asContainerRefs(document.containerRefs);
  const observedAt = asObservedAt(document.observedAt);
  const valid =
    type !== undefined &&
    typeof name === 'string' &&
    typeof namespace === 'string' &&
    isSha1Hex(hash) &&
    containerRefs !== undefined &&
    observedAt !== undefined;
  return valid ? { type, name, namespace, hash, containerRefs, observedAt } : undefined;
}

/**
 * Reads the document kreload or Reloader wrote. Only `type`, `name`, `namespace` and a 40-hex `hash` are
 * required (they make A(K), §5.1); anything unusable is malformed and counts as absent.
 */
export function parseLastReloadedFrom(v: string | undefined): ParsedLastReloadedFrom {
  if (v === undefined) return { value: undefined, malformed: false };
  const json = parseJson(v);
  if (!json.ok || !isPlainObject(json.value)) return MALFORMED_LAST_RELOADED_FROM;
  const value = toLastReloadedFrom(json.value);
  return value === undefined ? MALFORMED_LAST_RELOADED_FROM : { value, malformed: false };
}

/** Exactly Reloader's bytes: field order, compact, Go's HTML-safe escaping, integer `observedAt`. */
export function formatLastReloadedFrom(x: LastReloadedFrom): string {
  const refs = x.containerRefs.map(goJsonString).join(',');
  return (
    `{"type":${goJsonString(x.type)},"name":${goJsonString(x.name)},` +
    `"namespace":${goJsonString(x.namespace)},"hash":${goJsonString(x.hash)},` +
    `"containerRefs":[${refs}],"observedAt":${Math.trunc(x.observedAt)}}`
  );
}
