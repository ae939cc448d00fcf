// The built dist/main.js re-executes a controller run in place with its process settings (ADRs 0033,
// 0056), and an operator's own setting wins. A preload reports what each process image runs with;
// an invalid option ends the run at validation, before any cluster is contacted.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KRELOAD_ENTRY } from '../harness/kreload-process.ts';

interface Image {
  readonly pid: number;
  readonly execArgv: string[];
  readonly arenas: string | null;
}

const dir = mkdtempSync(path.join(tmpdir(), 'kreload-process-settings-'));
const PRELOAD = path.join(dir, 'report.cjs');
writeFileSync(
  PRELOAD,
  `process.stderr.write('IMAGE ' + JSON.stringify({ pid: process.pid, execArgv: process.execArgv, arenas: process.env.MALLOC_ARENA_MAX ?? null }) + '\\n');\n`,
);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Every process image the run went through, in order. */
function images(args: string[], env: Record<string, string>): Promise<Image[]> {
  return new Promise((resolve) => {
    const base: Record<string, string | undefined> = { ...process.env };
    delete base.MALLOC_ARENA_MAX;
    delete base.NODE_OPTIONS;
    execFile(
      process.execPath,
      ['--require', PRELOAD, KRELOAD_ENTRY, ...args],
      { env: { ...base, ...env }, timeout: 30_000 },
      (_error, _stdout, stderr) => {
        resolve(
          stderr
            .split('\n')
            .filter((line) => line.startsWith('IMAGE '))
            .map((line) => JSON.parse(line.slice('IMAGE '.length)) as Image),
        );
      },
    );
  });
}

const INVALID = '--log-level=nope';

describe('process settings of a controller run', () => {
  it.each<[string, string[], Record<string, string>, { pool: string[]; arenas: string | null }]>([
    ['defaults', [INVALID], {}, { pool: ['--v8-pool-size=2'], arenas: '2' }],
    [
      "the operator's MALLOC_ARENA_MAX",
      [INVALID],
      { MALLOC_ARENA_MAX: '4' },
      { pool: ['--v8-pool-size=2'], arenas: '4' },
    ],
    [
      "the operator's pool size in NODE_OPTIONS",
      [INVALID],
      { NODE_OPTIONS: '--v8-pool-size=3' },
      { pool: [], arenas: '2' },
    ],
  ])('%s', async (_case, args, env, expected) => {
    const seen = await images(args, env);
    expect(seen).toHaveLength(2);
    const [first, last] = seen as [Image, Image];
    expect(last.pid).toBe(first.pid);
    expect(last.execArgv.filter((flag) => flag.startsWith('--v8-pool-size'))).toEqual(
      expected.pool,
    );
    expect(last.execArgv).toContain('--heap-growing-percent=20');
    expect(last.arenas).toBe(expected.arenas);
  });

  it('leaves a one-shot command as it started', async () => {
    const seen = await images(['--version'], {});
    expect(seen).toEqual([{ pid: seen[0]?.pid, execArgv: ['--require', PRELOAD], arenas: null }]);
  });
});
