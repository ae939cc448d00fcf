/**
 * Reads each option from the command line, then the environment, then its default (§12.5), parses it by
 * its type, and collects every problem instead of stopping at the first (§12.6).
 */
import { splitListValue } from './list-values.ts';
import { buildLabelSelector } from './label-selector.ts';
import type { OptionName, OptionNameOfType, OptionSpecRow } from './options.ts';
import { OPTION_SPECS } from './options.ts';
import type { CountOrPercent } from '../rollout/waves.ts';
import type { ListenAddress, Parsed } from './value-parsers.ts';
import {
  parseAddressValue,
  parseAnnotationKeyValue,
  parseBoolValue,
  parseChoiceValue,
  parseCountOrPercentValue,
  parseDurationValue,
  parseIntValue,
  parseNamespaceValue,
  parseObjectNameValue,
  parseOptionalAddressValue,
  parsePathValue,
  parsePortValue,
  parseStringBoolValue,
  parseUrlValue,
} from './value-parsers.ts';
import { checkDnsLabel } from './k8s-names.ts';

export type Origin = 'flag' | 'env' | 'default';

export interface OptionSources {
  /** Occurrences per flag name without the leading dashes, in command-line order. */
  readonly commandLine: ReadonlyMap<string, readonly string[]>;
  readonly env: Readonly<Record<string, string | undefined>>;
}

interface RawValue {
  readonly values: readonly string[];
  /** The flag or env var that supplied the value; the flag for defaults. */
  readonly subject: string;
  readonly origin: Origin;
}

type SpecOf<N extends OptionName> = Extract<OptionSpecRow, { readonly name: N }>;

function specOf<N extends OptionName>(name: N): SpecOf<N> {
  const spec = OPTION_SPECS.find((row): row is SpecOf<N> => row.name === name);
  if (spec === undefined) throw new Error(`no option named ${name}`);
  return spec;
}

function assertSameChoices(spec: OptionSpecRow, choices: readonly string[]): void {
  if (!('choices' in spec) || spec.choices !== choices) {
    throw new Error(`${spec.flag} is read with choices that are not its own`);
  }
}

export class OptionReader {
  readonly #sources: OptionSources;
  readonly #problems: string[] = [];
  readonly #failed = new Set<OptionName>();

  constructor(sources: OptionSources) {
    this.#sources = sources;
  }

  get problems(): readonly string[] {
    return this.#problems;
  }

  addProblem(subject: string, problem: string): void {
    this.#problems.push(`${subject}: ${problem}`);
  }

  /** False when the option's value was rejected; cross-checks skip it so one mistake is reported once. */
  isValid(name: OptionName): boolean {
    return !this.#failed.has(name);
  }

  subject(name: OptionName): string {
    return this.#raw(specOf(name)).subject;
  }

  origin(name: OptionName): Origin {
    return this.#raw(specOf(name)).origin;
  }

  bool(name: OptionNameOfType<'bool'>): boolean {
    return this.#scalar(name, parseBoolValue);
  }

  stringBool(name: OptionNameOfType<'string-bool'>): boolean {
    return this.#scalar(name, parseStringBoolValue);
  }

  duration(name: OptionNameOfType<'duration'>): number {
    const spec = specOf(name);
    return this.#scalar(name, (raw) => parseDurationValue(raw, spec));
  }

  int(name: OptionNameOfType<'int'>): number {
    const spec = specOf(name);
    return this.#scalar(name, (raw) => parseIntValue(raw, spec));
  }

  countOrPercent(name: OptionNameOfType<'count-or-percent'>): CountOrPercent {
    const spec = specOf(name);
    return this.#scalar(name, (raw) => parseCountOrPercentValue(raw, spec));
  }

  port(name: OptionNameOfType<'port'>): number {
    return this.#scalar(name, parsePortValue);
  }

  /** `choices` must be the row's own table (checked), which gives the value its literal type. */
  choice<C extends string>(name: OptionNameOfType<'enum'>, choices: readonly C[]): C {
    const spec = specOf(name);
    assertSameChoices(spec, choices);
    const caseInsensitive = 'caseInsensitive' in spec && spec.caseInsensitive;
    return this.#scalar(name, (raw) => parseChoiceValue(raw, { choices, caseInsensitive }));
  }

  annotationKey(name: OptionNameOfType<'annotation-key'>): string {
    return this.#scalar(name, parseAnnotationKeyValue);
  }

  url(name: OptionNameOfType<'url'>): string | undefined {
    return this.#scalar(name, parseUrlValue);
  }

  path(name: OptionNameOfType<'path'>): string | undefined {
    return this.#scalar(name, parsePathValue);
  }

  address(name: OptionNameOfType<'address'>): ListenAddress {
    return this.#scalar(name, parseAddressValue);
  }

  optionalAddress(name: OptionNameOfType<'optional-address'>): ListenAddress | undefined {
    return this.#scalar(name, parseOptionalAddressValue);
  }

  /** Any string; empty means unset. */
  text(name: OptionNameOfType<'text'>): string | undefined {
    return this.#scalar(name, (raw) => ({ ok: true, value: raw === '' ? undefined : raw }));
  }

  namespace(name: OptionNameOfType<'namespace'>): string | undefined {
    return this.#scalar(name, parseNamespaceValue);
  }

  objectName(name: OptionNameOfType<'name'>): string {
    return this.#scalar(name, parseObjectNameValue);
  }

  /** A list restricted to `choices`, de-duplicated, in first-seen order. */
  choiceList<C extends string>(name: OptionNameOfType<'list'>, choices: readonly C[]): C[] {
    const spec = specOf(name);
    assertSameChoices(spec, choices);
    const caseInsensitive = 'caseInsensitive' in spec && spec.caseInsensitive;
    return this.#list(name, (item) => parseChoiceValue(item, { choices, caseInsensitive }));
  }

  /** A list of namespace names, de-duplicated. */
  namespaceList(name: OptionNameOfType<'list'>): string[] {
    return this.#list(name, (item) => {
      const problem = checkDnsLabel(item);
      return problem === undefined
        ? { ok: true, value: item }
        : { ok: false, problem: `invalid namespace "${item}": ${problem}` };
    });
  }

  /** Normalised elements joined into one selector; empty string means no selector. */
  selector(name: OptionNameOfType<'selector'>): string {
    const spec = specOf(name);
    const raw = this.#raw(spec);
    const elements = this.#splitAll(spec.name, raw);
    if (elements === undefined) return '';
    const built = buildLabelSelector(elements);
    if (built.ok) return built.selector;
    this.#fail(spec.name, raw.subject, built.problem);
    return '';
  }

  #raw(spec: OptionSpecRow): RawValue {
    const fromCommandLine = this.#sources.commandLine.get(spec.flag.slice(2));
    if (fromCommandLine !== undefined && fromCommandLine.length > 0) {
      return { values: fromCommandLine, subject: spec.flag, origin: 'flag' };
    }
    const fromEnv = this.#sources.env[spec.env];
    if (fromEnv !== undefined && fromEnv !== '') {
      return { values: [fromEnv], subject: spec.env, origin: 'env' };
    }
    return { values: [spec.default], subject: spec.flag, origin: 'default' };
  }

  #fail(name: OptionName, subject: string, problem: string): void {
    this.#failed.add(name);
    this.addProblem(subject, problem);
  }

  /** A repeated scalar keeps its last value (§12.3); a rejected value falls back to the default. */
  #scalar<T>(name: OptionName, parse: (raw: string) => Parsed<T>): T {
    const spec = specOf(name);
    const raw = this.#raw(spec);
    const parsed = parse(raw.values.at(-1) ?? spec.default);
    if (parsed.ok) return parsed.value;
    this.#fail(name, raw.subject, parsed.problem);
    const fallback = parse(spec.default);
    if (!fallback.ok) throw new Error(`default of ${spec.flag} is invalid: ${fallback.problem}`);
    return fallback.value;
  }

  #splitAll(name: OptionName, raw: RawValue): string[] | undefined {
    const items: string[] = [];
    for (const value of raw.values) {
      const split = splitListValue(value);
      if (!split.ok) {
        this.#fail(name, raw.subject, split.problem);
        return undefined;
      }
      items.push(...split.items);
    }
    return items;
  }

  /** Each occurrence is CSV and occurrences append (§12.3); every bad item is reported. */
  #list<T>(name: OptionName, parse: (item: string) => Parsed<T>): T[] {
    const raw = this.#raw(specOf(name));
    const values: T[] = [];
    for (const item of this.#splitAll(name, raw) ?? []) {
      const parsed = parse(item);
      if (!parsed.ok) this.#fail(name, raw.subject, parsed.problem);
      else if (!values.includes(parsed.value)) values.push(parsed.value);
    }
    return values;
  }
}
