/**
 * Label selectors of `--namespace-selector` and `--resource-label-selector` (§11 item 2): Reloader's
 * legacy element forms are normalised, then the result is checked with the grammar of apimachinery's
 * `labels.Parse`, so the API server never rejects what kreload accepted.
 */
import { checkLabelValue, checkQualifiedName } from './k8s-names.ts';

/** Legacy `k:v` becomes `k=v`; `k:*` and `k=*` become `k` (exists). Other forms are kept as written. */
export function normaliseSelectorElement(element: string): string {
  const trimmed = element.trim();
  const colon = trimmed.indexOf(':');
  if (colon >= 0) {
    const key = trimmed.slice(0, colon).trim();
    const value = trimmed.slice(colon + 1).trim();
    return value === '*' ? key : `${key}=${value}`;
  }
  const wildcard = /^([^=!<>(),\s]+)\s*=\s*\*$/.exec(trimmed);
  return wildcard?.[1] ?? trimmed;
}

type TokenKind = 'identifier' | 'symbol' | 'end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

const SYMBOLS = ['!=', '==', '!', '=', '(', ')', ',', '>', '<'] as const;
const SYMBOL_START = /[!=(),<>]/;
const SPACE = /\s/;

function tokenize(selector: string): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < selector.length) {
    const char = selector.charAt(index);
    if (SPACE.test(char)) {
      index += 1;
      continue;
    }
    const symbol = SYMBOLS.find((candidate) => selector.startsWith(candidate, index));
    if (symbol !== undefined) {
      tokens.push({ kind: 'symbol', text: symbol });
      index += symbol.length;
      continue;
    }
    let end = index;
    while (
      end < selector.length &&
      !SPACE.test(selector.charAt(end)) &&
      !SYMBOL_START.test(selector.charAt(end))
    ) {
      end += 1;
    }
    tokens.push({ kind: 'identifier', text: selector.slice(index, end) });
    index = end;
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

class SelectorSyntaxError extends Error {}

function describeToken(token: Token): string {
  return token.kind === 'end' ? 'end of selector' : token.text;
}

/** A recursive-descent reader over the tokens; throws SelectorSyntaxError at the first problem. */
class SelectorReader {
  readonly #tokens: readonly Token[];
  #position = 0;

  constructor(tokens: readonly Token[]) {
    this.#tokens = tokens;
  }

  readSelector(): void {
    if (this.#peek().kind === 'end') return;
    for (;;) {
      this.#readRequirement();
      const next = this.#take();
      if (next.kind === 'end') return;
      if (next.text !== ',')
        throw new SelectorSyntaxError(`found '${describeToken(next)}', expected ','`);
    }
  }

  #peek(): Token {
    return this.#tokens[this.#position] ?? { kind: 'end', text: '' };
  }

  #take(): Token {
    const token = this.#peek();
    this.#position += 1;
    return token;
  }

  #atRequirementEnd(): boolean {
    const next = this.#peek();
    return next.kind === 'end' || next.text === ',';
  }

  #readKey(): string {
    const token = this.#take();
    if (token.kind !== 'identifier') {
      throw new SelectorSyntaxError(`found '${describeToken(token)}', expected a key`);
    }
    const problem = checkQualifiedName(token.text);
    if (problem !== undefined)
      throw new SelectorSyntaxError(`invalid key "${token.text}": ${problem}`);
    return token.text;
  }

  #readRequirement(): void {
    if (this.#peek().text === '!') {
      this.#take();
      this.#readKey();
      if (!this.#atRequirementEnd())
        throw new SelectorSyntaxError(`unexpected '${this.#peek().text}' after '!key'`);
      return;
    }
    this.#readKey();
    if (this.#atRequirementEnd()) return;
    const operator = this.#take();
    switch (operator.text) {
      case 'in':
      case 'notin':
        this.#readValueSet(operator.text);
        return;
      case '=':
      case '==':
      case '!=':
        this.#readValue();
        return;
      case '>':
      case '<':
        this.#readIntegerValue();
        return;
      default:
        throw new SelectorSyntaxError(
          `found '${describeToken(operator)}', expected one of: in, notin, =, ==, !=, >, <`,
        );
    }
  }

  #readValue(): string {
    if (this.#atRequirementEnd()) return '';
    const token = this.#take();
    if (token.kind !== 'identifier')
      throw new SelectorSyntaxError(`found '${describeToken(token)}', expected a value`);
    const problem = checkLabelValue(token.text);
    if (problem !== undefined)
      throw new SelectorSyntaxError(`invalid value "${token.text}": ${problem}`);
    return token.text;
  }

  #readIntegerValue(): void {
    const value = this.#readValue();
    if (!/^-?\d+$/.test(value))
      throw new SelectorSyntaxError(`value "${value}" of '>' or '<' must be an integer`);
  }

  #readValueSet(operator: string): void {
    const open = this.#take();
    if (open.text !== '(')
      throw new SelectorSyntaxError(
        `found '${describeToken(open)}', expected '(' after '${operator}'`,
      );
    let count = 0;
    for (;;) {
      const token = this.#take();
      if (token.text === ')') break;
      if (token.kind === 'identifier') {
        const problem = checkLabelValue(token.text);
        if (problem !== undefined)
          throw new SelectorSyntaxError(`invalid value "${token.text}": ${problem}`);
        count += 1;
        const separator = this.#take();
        if (separator.text === ')') break;
        if (separator.text !== ',')
          throw new SelectorSyntaxError(`found '${describeToken(separator)}', expected ',' or ')'`);
        continue;
      }
      throw new SelectorSyntaxError(`found '${describeToken(token)}', expected a value or ')'`);
    }
    if (count === 0) throw new SelectorSyntaxError(`values of '${operator}' must not be empty`);
  }
}

/** Problem text of an invalid selector, or undefined when apimachinery would accept it. */
export function checkLabelSelector(selector: string): string | undefined {
  try {
    new SelectorReader(tokenize(selector)).readSelector();
    return undefined;
  } catch (error) {
    if (error instanceof SelectorSyntaxError) return error.message;
    throw error;
  }
}

export type SelectorResult =
  | { readonly ok: true; readonly selector: string }
  | { readonly ok: false; readonly problem: string };

/** Normalises each element, joins them with `,` (AND) and validates the result. */
export function buildLabelSelector(elements: readonly string[]): SelectorResult {
  const selector = elements
    .map(normaliseSelectorElement)
    .filter((e) => e !== '')
    .join(',');
  const problem = checkLabelSelector(selector);
  return problem === undefined
    ? { ok: true, selector }
    : { ok: false, problem: `invalid label selector "${selector}": ${problem}` };
}
