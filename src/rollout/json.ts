/** Plain JSON values as the API serves and accepts them, and small readers over them. */

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
// An interface, because a recursive alias through Record<> is rejected by tsc.
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object at `path`, or undefined when any step is missing or not an object. */
export function objectAt(
  value: JsonValue | undefined,
  path: readonly string[],
): JsonObject | undefined {
  let current = value;
  for (const segment of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[segment];
  }
  return isJsonObject(current) ? current : undefined;
}

/**
 * The object at `path` inside `root`, created (as empty objects) where missing. Mutates `root`:
 * only for objects this module's callers have just cloned or built.
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

export function stringAt(
  value: JsonValue | undefined,
  path: readonly string[],
): string | undefined {
  const parent = objectAt(value, path.slice(0, -1));
  const leaf = parent?.[path[path.length - 1] ?? ''];
  return typeof leaf === 'string' ? leaf : undefined;
}

/** A deep copy, so builders never mutate an object they were given. */
export function cloneJson<T extends JsonValue>(value: T): T {
  return structuredClone(value);
}
