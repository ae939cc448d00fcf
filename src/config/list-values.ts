/**
 * Splitting of list flag values (§12.3, §11 item 2): CSV with double quotes removed, as pflag's
 * string slices do, except that commas inside parentheses do not split, so set-based selectors such as
 * `env in (a,b)` survive. Elements are trimmed and empty ones dropped.
 */

export type SplitListResult =
  | { readonly ok: true; readonly items: readonly string[] }
  | { readonly ok: false; readonly problem: string };

interface SplitState {
  readonly items: string[];
  current: string;
  inQuotes: boolean;
  depth: number;
}

function closeItem(state: SplitState): void {
  const item = state.current.trim();
  if (item !== '') state.items.push(item);
  state.current = '';
}

function stepQuoted(state: SplitState, char: string, next: string | undefined): number {
  if (char !== '"') {
    state.current += char;
    return 1;
  }
  if (next === '"') {
    state.current += '"';
    return 2;
  }
  state.inQuotes = false;
  return 1;
}

function stepUnquoted(state: SplitState, char: string): void {
  if (char === '"') state.inQuotes = true;
  else if (char === ',' && state.depth === 0) closeItem(state);
  else {
    if (char === '(') state.depth += 1;
    if (char === ')') state.depth = Math.max(0, state.depth - 1);
    state.current += char;
  }
}

export function splitListValue(value: string): SplitListResult {
  const state: SplitState = { items: [], current: '', inQuotes: false, depth: 0 };
  let index = 0;
  while (index < value.length) {
    const char = value.charAt(index);
    if (state.inQuotes) {
      index += stepQuoted(state, char, value[index + 1]);
    } else {
      stepUnquoted(state, char);
      index += 1;
    }
  }
  if (state.inQuotes) return { ok: false, problem: `unterminated quote in "${value}"` };
  closeItem(state);
  return { ok: true, items: state.items };
}
