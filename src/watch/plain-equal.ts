/** Structural equality for plain data (views): primitives, arrays and records. */
export function plainEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => plainEqual(item, b[index]))
    );
  }
  return recordsEqual(Object.entries(a), new Map(Object.entries(b)));
}

function recordsEqual(a: readonly [string, unknown][], b: ReadonlyMap<string, unknown>): boolean {
  return (
    a.length === b.size && a.every(([key, value]) => b.has(key) && plainEqual(value, b.get(key)))
  );
}
