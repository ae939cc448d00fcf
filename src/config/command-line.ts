/**
 * Command-line tokenising with yargs (§12.3). yargs only splits `--flag=value` tokens and renders the
 * help: values are parsed by option-reader, and the env is bound there from the table, because yargs'
 * own `.env()` reads `process.env` and would make parsing impure.
 */
import yargs from 'yargs';
import type { Argv } from 'yargs';
import { parseBool } from '../core/annotation-values.ts';
import type { OptionSpec } from './options.ts';
import { INFO_FLAGS, OPTION_SPECS } from './options.ts';

export interface CommandLine {
  /** Occurrences per flag name without dashes, in order. */
  readonly values: ReadonlyMap<string, readonly string[]>;
  readonly problems: readonly string[];
}

const SPEC_BY_FLAG: ReadonlyMap<string, OptionSpec> = new Map(
  OPTION_SPECS.map((spec) => [spec.flag, spec]),
);

const BOOL_FLAGS: ReadonlySet<string> = new Set([
  ...OPTION_SPECS.filter((spec) => spec.type === 'bool' || spec.type === 'string-bool').map(
    (spec) => spec.flag,
  ),
  ...INFO_FLAGS.map((info) => info.flag),
]);

const KNOWN_NAMES: ReadonlySet<string> = new Set([
  ...OPTION_SPECS.map((spec) => spec.flag.slice(2)),
  ...INFO_FLAGS.map((info) => info.name),
]);

/** yargs also accepts `--no-<flag>` and other spellings of known flags; kreload takes only the exact one. */
function isUnknownFlag(token: string): boolean {
  if (!token.startsWith('-') || token === '-') return false;
  const name = token.startsWith('--') ? (token.slice(2).split('=')[0] ?? '') : '';
  return !KNOWN_NAMES.has(name) && token !== '-h';
}

/**
 * Rewrites `--flag value` into `--flag=value` by kreload's rules before yargs sees it: a bool flag takes
 * the next token only when it is a valid bool, and is otherwise true; any other flag always takes the
 * next token, even one starting with `-` (as pflag does, so `--sync-delay -1s` is reported as negative).
 * Unknown flags are reported here, in the user's spelling, and never reach yargs.
 */
function attachValues(argv: readonly string[]): { tokens: string[]; problems: string[] } {
  const tokens: string[] = [];
  const problems: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] ?? '';
    const next = argv[index + 1];
    if (token === '--') {
      tokens.push(...argv.slice(index));
      break;
    }
    if (isUnknownFlag(token)) {
      problems.push(`${token.split('=')[0] ?? token}: unknown flag`);
    } else if (BOOL_FLAGS.has(token)) {
      const takesNext = next !== undefined && parseBool(next) !== undefined;
      tokens.push(`${token}=${takesNext ? next : 'true'}`);
      if (takesNext) index += 1;
    } else if (!SPEC_BY_FLAG.has(token)) {
      tokens.push(token);
    } else if (next === undefined) {
      problems.push(`${token}: flag needs a value`);
    } else {
      tokens.push(`${token}=${next}`);
      index += 1;
    }
  }
  return { tokens, problems };
}

/**
 * Every flag is declared without a yargs type: after attachValues every known flag arrives as
 * `--flag=value`, and an untyped option keeps that string exactly (no bool or number coercion).
 */
function declareOptions(parser: Argv): Argv {
  let declared = parser;
  for (const spec of OPTION_SPECS) {
    declared = declared.option(spec.flag.slice(2), {
      describe: `${spec.help} (${spec.type}; env ${spec.env})`,
      defaultDescription: describeDefault(spec),
    });
  }
  for (const info of INFO_FLAGS) {
    declared = declared.option(info.name, {
      type: 'boolean',
      describe: info.help,
      ...(info.alias === undefined ? {} : { alias: info.alias.slice(1) }),
    });
  }
  return declared;
}

function describeDefault(spec: OptionSpec): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  return spec.default === '' ? 'none' : spec.default;
}

function createParser(): Argv {
  const parser = yargs()
    .scriptName('kreload')
    .parserConfiguration({
      'boolean-negation': false,
      'camel-case-expansion': false,
      'dot-notation': false,
      'duplicate-arguments-array': true,
      'greedy-arrays': false,
      'parse-numbers': false,
      'parse-positional-numbers': false,
      'populate--': true,
      'short-option-groups': false,
      'unknown-options-as-args': true,
    })
    .help(false)
    .version(false)
    .exitProcess(false)
    .wrap(100);
  return declareOptions(parser);
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function unexpectedArgument(token: string): string {
  return `${token}: unexpected argument (kreload takes no arguments)`;
}

export async function readCommandLine(argv: readonly string[]): Promise<CommandLine> {
  const { tokens, problems } = attachValues(argv);
  const parsed = await createParser().parseAsync(tokens);
  const values = new Map<string, string[]>();
  for (const spec of OPTION_SPECS) {
    const occurrences = stringsOf(parsed[spec.flag.slice(2)]);
    if (occurrences.length > 0) values.set(spec.flag.slice(2), occurrences);
  }
  const positionals = [...parsed._.map(String), ...stringsOf(parsed['--'])];
  return { values, problems: [...problems, ...positionals.map(unexpectedArgument)] };
}

export type InfoRequest = 'help' | 'version';

/** `--help`/`-h` or `--version` before any `--`, read by the same rules as the other bool flags. */
export function findInfoRequest(argv: readonly string[]): InfoRequest | undefined {
  const { tokens } = attachValues(argv);
  const end = tokens.indexOf('--');
  const flags = end === -1 ? tokens : tokens.slice(0, end);
  const asked = (info: (typeof INFO_FLAGS)[number]): boolean =>
    flags.some(
      (token) =>
        token === info.alias ||
        (token.startsWith(`${info.flag}=`) &&
          parseBool(token.slice(info.flag.length + 1)) === true),
    );
  return INFO_FLAGS.find(asked)?.name;
}

export async function renderHelp(): Promise<string> {
  const parser = createParser()
    .usage(
      [
        'Usage:',
        '  kreload [flags]                      run the controller',
        '  kreload hash -f <manifest.yaml>      print the hashes of ConfigMaps and Secrets',
        '',
        'Every flag can also be set as KRELOAD_<FLAG> (upper case, "-" as "_");',
        'the command line wins over the environment.',
      ].join('\n'),
    )
    .epilogue(
      'Durations use Go syntax (300ms, 2s, 1m30s, 1.5h). Lists are comma-separated and may repeat.',
    );
  return parser.getHelp();
}
