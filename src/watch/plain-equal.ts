/**
 * Structural equality for plain data (views): primitives, arrays and records (own enumerable
 * string keys). It runs on every watch event of a workload, so it walks both values in place
 * instead of copying their entries.
 */
export function plainEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const aIsArray = Array.isArray(a);
  if (aIsArray || Array.isArray(b)) {
    return aIsArray && Array.isArray(b) && arraysEqual(a as readonly unknown[], b);
  }
  return recordsEqual(
    a as Readonly<Record<string, unknown>>,
    b as Readonly<Record<string, unknown>>,
  );
}

function arraysEqual(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) {
    if (!plainEqual(a[index], b[index])) return false;
  }
  return true;
}

/** Own enumerable properties, as `Object.entries` sees them. */
const isOwnEnumerable = (record: object, key: string): boolean =>
  Object.prototype.propertyIsEnumerable.call(record, key);

function recordsEqual(
  a: Readonly<Record<string, unknown>>,
  b: Readonly<Record<string, unknown>>,
): boolean {
  let unmatched = 0;
  for (const key in a) {
    if (!isOwnEnumerable(a, key)) continue;
    if (!isOwnEnumerable(b, key) || !plainEqual(a[key], b[key])) return false;
    unmatched += 1;
  }
  for (const key in b) {
    if (isOwnEnumerable(b, key)) unmatched -= 1;
  }
  return unmatched === 0;
}
