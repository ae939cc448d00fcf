import { describe, expect, it } from 'vitest';
import { findInfoRequest, readCommandLine, renderHelp } from './command-line.ts';
import { OPTION_SPECS } from './options.ts';

describe('findInfoRequest', () => {
  it.each<[string[], 'help' | 'version' | undefined]>([
    [[], undefined],
    [['--help'], 'help'],
    [['-h'], 'help'],
    [['--dry-run', '--help', '--foo'], 'help'],
    [['--help=true'], 'help'],
    [['--help=false'], undefined],
    [['--version'], 'version'],
    [['--help', '--version'], 'help'],
    [['--', '--help'], undefined],
    [['--namespaces', 'help'], undefined],
    [['--namespaces', '--help'], undefined],
    [['--help', 'false'], undefined],
    [['--help', 'x'], 'help'],
  ])('%j → %s', (argv, request) => {
    expect(findInfoRequest(argv)).toBe(request);
  });
});

describe('readCommandLine', () => {
  it('keeps each occurrence in order, keyed by the exact flag name', async () => {
    const commandLine = await readCommandLine([
      '--is-Argo-Rollouts',
      '--namespaces',
      'a',
      '--namespaces=b',
      '--sync-delay',
      '-1s',
    ]);
    expect(commandLine.problems).toEqual([]);
    expect(Object.fromEntries(commandLine.values)).toEqual({
      'is-Argo-Rollouts': ['true'],
      namespaces: ['a', 'b'],
      'sync-delay': ['-1s'],
    });
  });

  it('does not coerce numbers or bools', async () => {
    const commandLine = await readCommandLine(['--worker-threads=08', '--reload-on-create=True']);
    expect(Object.fromEntries(commandLine.values)).toEqual({
      'worker-threads': ['08'],
      'reload-on-create': ['True'],
    });
  });
});

describe('renderHelp', () => {
  it('lists every flag with its help text and env var', async () => {
    const help = (await renderHelp()).replace(/\s+/g, ' ');
    for (const spec of OPTION_SPECS) {
      expect(help).toContain(spec.flag);
      expect(help).toContain(spec.env);
      expect(help).toContain(spec.help.replace(/\s+/g, ' ').slice(0, 30));
    }
    expect(help).toContain('--help');
    expect(help).toContain('--version');
    expect(help).toContain('kreload hash -f <manifest.yaml>');
  });
});
