// `kreload --help` against the help texts of the two Reloader binaries beside which kreload runs
// (testdata/, captured from `reloader --help` of Reloader 1.4.21 and of its 2.0 beta, the `v2`
// branch): every flag either binary takes is listed, and its Reloader default parses.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import type { CliIo } from './run.ts';
import { runCli } from './run.ts';

interface HelpFlag {
  readonly flag: string;
  /** Reloader's default as its help prints it; undefined when it prints none. */
  readonly default: string | undefined;
}

const HELP_FILES = ['reloader-1.4.21-help.txt', 'reloader-2.0-beta-help.txt'] as const;
/** Flag lines in each file, --help included: a parser that missed lines would pass vacuously. */
const FLAG_COUNTS: Readonly<Record<(typeof HELP_FILES)[number], number>> = {
  'reloader-1.4.21-help.txt': 30,
  'reloader-2.0-beta-help.txt': 50,
};

/** pflag's layout: `  -h, --flag type   description (default "x")`. */
function flagsOf(help: string): HelpFlag[] {
  return help.split('\n').flatMap((line) => {
    const match = /^\s+(?:-\w, )?(--[\w-]+)(?: \w+)?\s{2,}.*?(?:\(default "?([^")]*)"?\))?$/.exec(
      line,
    );
    const flag = match?.[1];
    return flag === undefined ? [] : [{ flag, default: match?.[2] }];
  });
}

function read(file: (typeof HELP_FILES)[number]): string {
  return readFileSync(new URL(`testdata/${file}`, import.meta.url), 'utf8');
}

async function kreloadHelp(): Promise<string> {
  const chunks: string[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  const io: CliIo = {
    argv: ['--help'],
    env: {},
    stdout,
    stderr: stdout,
    readFile: () => Promise.reject(new Error('no files')),
    fileExists: () => false,
    checkKubeconfigFile: () => undefined,
    version: '0.0.0',
    onShutdownSignal: () => undefined,
    loadCreateApp: () => Promise.reject(new Error('--help starts no controller')),
    now: () => new Date(0),
    fatalStopTimeoutMs: 1000,
  };
  expect(await runCli(io)).toBe(0);
  return chunks.join('');
}

describe.each(HELP_FILES)('the flags of %s', (file) => {
  const flags = flagsOf(read(file));

  it('are read from the captured help', () => {
    expect(flags.length).toBe(FLAG_COUNTS[file]);
    expect(flags.map((row) => row.flag)).toContain('--help');
  });

  it('are all listed by kreload --help', async () => {
    const help = await kreloadHelp();
    const listed = new Set(help.match(/--[\w-]+/g));
    expect(flags.map((row) => row.flag).filter((flag) => !listed.has(flag))).toEqual([]);
  });

  it.each(flags.filter((row) => row.default !== undefined && row.flag !== '--help'))(
    '$flag accepts Reloader\'s default "$default"',
    async (row) => {
      await expect(parseOptions([`${row.flag}=${row.default ?? ''}`], {})).resolves.toBeDefined();
    },
  );
});
