/**
 * Orders strings by UTF-16 code unit, as Go's `sort.Strings` does: the same order on every machine
 * and locale, with no Intl service loaded (ADR 0061).
 */
export function byCodeUnit(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}
