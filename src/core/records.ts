/**
 * Lookups in plain-object tables and annotation maps by a key that comes from outside (an annotation,
 * a flag, a persisted state key). `key in table` and `table[key]` also find Object.prototype's members:
 * `constructor/x` looked like a source key, and a `1constructor` duration threw a TypeError.
 */

/** The record's own value for `key`; undefined for inherited members such as `constructor`. */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
