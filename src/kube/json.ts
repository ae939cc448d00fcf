/**
 * Readers for API objects in wire form (parsed JSON). Every object kube/ hands out comes from
 * `JSON.parse`, so a value that passes the shallow `isJsonObject` check holds only JSON values below.
 */
import type { JsonObject } from '../rollout/patch.ts';

export type { JsonObject, JsonValue } from '../rollout/patch.ts';

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: unknown, ...path: readonly string[]): JsonObject | undefined {
  let current: unknown = value;
  for (const key of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[key];
  }
  return isJsonObject(current) ? current : undefined;
}

export function stringAt(value: unknown, ...path: readonly string[]): string | undefined {
  const parent = objectAt(value, ...path.slice(0, -1));
  const leaf = parent?.[path[path.length - 1] ?? ''];
  return typeof leaf === 'string' ? leaf : undefined;
}

export function numberAt(value: unknown, ...path: readonly string[]): number | undefined {
  const parent = objectAt(value, ...path.slice(0, -1));
  const leaf = parent?.[path[path.length - 1] ?? ''];
  return typeof leaf === 'number' ? leaf : undefined;
}

export function booleanAt(value: unknown, ...path: readonly string[]): boolean {
  const parent = objectAt(value, ...path.slice(0, -1));
  return parent?.[path[path.length - 1] ?? ''] === true;
}

/** The objects of an array field; non-object elements are skipped. */
export function objectsAt(value: unknown, ...path: readonly string[]): readonly JsonObject[] {
  const parent = objectAt(value, ...path.slice(0, -1));
  const leaf = parent?.[path[path.length - 1] ?? ''];
  return Array.isArray(leaf) ? leaf.filter(isJsonObject) : [];
}

/** A new record holding the string-valued entries of a map field (`data`, `annotations`). */
export function stringMapAt(
  value: unknown,
  ...path: readonly string[]
): Record<string, string> | undefined {
  const map = objectAt(value, ...path);
  if (!map) return undefined;
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(map)) {
    if (typeof entry === 'string') out[key] = entry;
  }
  return out;
}
