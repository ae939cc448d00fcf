/**
 * Plain JSON values as the API serves and accepts them, and the one set of readers and builders over
 * them. Every object kube/ hands out comes from `JSON.parse`, so a value that passes the shallow
 * `isJsonObject` check holds only JSON values below. Paths are arrays, so a kind's template path from
 * its row (`rollout/kinds.ts`) is passed as it is.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
// An interface, because a recursive alias through Record<> is rejected by tsc.
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `path`, or undefined when any step is missing or not an object. */
export function objectAt(value: unknown, path: readonly string[]): JsonObject | undefined {
  let current: unknown = value;
  for (const segment of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[segment];
  }
  return isJsonObject(current) ? current : undefined;
}

/** The value at a non-empty `path`; undefined when missing. Read for every field of every event: no copy of `path`. */
function leafAt(value: unknown, path: readonly string[]): JsonValue | undefined {
  let current: unknown = value;
  const last = path.length - 1;
  for (let i = 0; i < last; i++) {
    if (!isJsonObject(current)) return undefined;
    current = current[path[i] ?? ''];
  }
  return isJsonObject(current) ? current[path[last] ?? ''] : undefined;
}

export function stringAt(value: unknown, path: readonly string[]): string | undefined {
  const leaf = leafAt(value, path);
  return typeof leaf === 'string' ? leaf : undefined;
}

export function numberAt(value: unknown, path: readonly string[]): number | undefined {
  const leaf = leafAt(value, path);
  return typeof leaf === 'number' ? leaf : undefined;
}

/** True only for a JSON `true` at `path`. */
export function booleanAt(value: unknown, path: readonly string[]): boolean {
  return leafAt(value, path) === true;
}

/** The objects of an array field; non-object elements are skipped. */
export function objectsAt(value: unknown, path: readonly string[]): readonly JsonObject[] {
  const leaf = leafAt(value, path);
  return Array.isArray(leaf) ? leaf.filter(isJsonObject) : [];
}

/** A new record holding the string-valued entries of a map field (`data`, `annotations`). */
export function stringMapAt(
  value: unknown,
  path: readonly string[],
): Record<string, string> | undefined {
  const map = objectAt(value, path);
  if (!map) return undefined;
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(map)) {
    if (typeof entry === 'string') out[key] = entry;
  }
  return out;
}

/**
 * The object at `path` inside `root`, created (as empty objects) where missing. Mutates `root`:
 * only for objects the caller has just cloned or built.
 */
export function ensureObjectAt(root: JsonObject, path: readonly string[]): JsonObject {
  let current = root;
  for (const segment of path) {
    const next = current[segment];
    if (isJsonObject(next)) {
      current = next;
    } else {
      const created: JsonObject = {};
      current[segment] = created;
      current = created;
    }
  }
  return current;
}

/** Sets `value` at a non-empty `path` inside `root`, creating parents. Mutates `root`. */
export function setAt(root: JsonObject, path: readonly string[], value: JsonValue): void {
  const leaf = path.at(-1);
  if (leaf === undefined) throw new RangeError('setAt needs a non-empty path');
  ensureObjectAt(root, path.slice(0, -1))[leaf] = value;
}

/** A deep copy, so builders never mutate an object they were given. */
export function cloneJson<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}
