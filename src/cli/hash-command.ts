/**
 * `kreload hash -f <manifest.yaml>`: prints `<Kind> <namespace>/<name> <sha1>` for every ConfigMap and
 * Secret of the manifests, the hash kreload writes into `STAKATER_*` env vars and annotations. Lets users
 * check what a rollout will carry before applying a change. `-f -` reads standard input.
 */
import { loadAllYaml } from '@kubernetes/client-node';
import yargs from 'yargs';
import type { Argv } from 'yargs';
import { formatManifestHash, hashManifestDocuments } from './manifest-hashes.ts';

export interface HashCommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  /** `-` is standard input. */
  readonly readFile: (path: string) => Promise<string>;
}

const USAGE = 'Usage: kreload hash -f <manifest.yaml> [-f <more.yaml>]';

function createParser(): Argv {
  return yargs()
    .scriptName('kreload hash')
    .usage(`${USAGE}\n\nPrints "<Kind> <namespace>/<name> <sha1>" for each ConfigMap and Secret.`)
    .parserConfiguration({
      'boolean-negation': false,
      'camel-case-expansion': false,
      'dot-notation': false,
      'duplicate-arguments-array': true,
      'parse-numbers': false,
      'parse-positional-numbers': false,
      'short-option-groups': false,
      'unknown-options-as-args': true,
    })
    .option('filename', {
      alias: 'f',
      type: 'string',
      describe:
        'Manifest file with one or more YAML documents; "-" reads standard input. Repeatable.',
    })
    .option('help', { alias: 'h', type: 'boolean', describe: 'Print this help and exit.' })
    .help(false)
    .version(false)
    .exitProcess(false)
    .wrap(100);
}

/** `-f -` must read stdin, but yargs never takes a lone `-` as a value: attach it first. */
function attachFilenames(argv: readonly string[]): string[] {
  const tokens: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] ?? '';
    const next = argv[index + 1];
    if ((token === '-f' || token === '--filename') && next !== undefined) {
      tokens.push(`--filename=${next}`);
      index += 1;
    } else {
      tokens.push(token);
    }
  }
  return tokens;
}

function filenamesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A YAML reason made of plain words is a fixed description; anything else may quote the file. */
const FIXED_REASON = /^[a-z][a-z ,-]*$/i;

/**
 * The YAML parser's message quotes the lines around the error, which may be a Secret's data: only
 * the position and a reason made of plain words are printed.
 */
function yamlProblem(error: unknown): string {
  const { mark, reason } = isRecord(error) ? error : {};
  const line = isRecord(mark) ? mark.line : undefined;
  const column = isRecord(mark) ? mark.column : undefined;
  const at =
    typeof line === 'number' && typeof column === 'number'
      ? ` at line ${String(line + 1)}, column ${String(column + 1)}`
      : '';
  const why = typeof reason === 'string' && FIXED_REASON.test(reason) ? `: ${reason}` : '';
  return `not valid YAML${at}${why}`;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null;
}

async function hashFile(path: string, io: HashCommandIo): Promise<boolean> {
  let text: string;
  try {
    text = await io.readFile(path);
  } catch (error) {
    io.stderr.write(`kreload hash: ${path}: ${errorMessage(error)}\n`);
    return false;
  }
  let documents: unknown[];
  try {
    const parsed: unknown = loadAllYaml(text);
    documents = Array.isArray(parsed) ? parsed : [];
  } catch (error) {
    io.stderr.write(`kreload hash: ${path}: ${yamlProblem(error)}\n`);
    return false;
  }
  const { hashes, problems } = hashManifestDocuments(documents);
  for (const entry of hashes) io.stdout.write(`${formatManifestHash(entry)}\n`);
  for (const problem of problems) io.stderr.write(`kreload hash: ${path}: ${problem}\n`);
  return problems.length === 0;
}

/** Exit code: 0 all hashed, 1 a file could not be read or hashed, 2 a usage error. */
export async function runHashCommand(argv: readonly string[], io: HashCommandIo): Promise<number> {
  const parser = createParser();
  const parsed = await parser.parseAsync(attachFilenames(argv));
  if (parsed.help === true) {
    io.stdout.write(`${await parser.getHelp()}\n`);
    return 0;
  }
  const files = filenamesOf(parsed.filename);
  const problems = [
    ...parsed._.map((token) => `unexpected argument "${String(token)}"`),
    ...(files.length === 0 || files.includes('') ? ['-f <manifest.yaml> is required'] : []),
  ];
  if (problems.length > 0) {
    for (const problem of problems) io.stderr.write(`kreload hash: ${problem}\n`);
    io.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let ok = true;
  for (const file of files) ok = (await hashFile(file, io)) && ok;
  return ok ? 0 : 1;
}
