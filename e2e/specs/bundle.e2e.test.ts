// What `npm run build` ships in dist/ (ADR 0040): a rolldown bundle of the compiled controller. These
// read the built files themselves; every other spec runs the same dist/main.js as kreload's CLI.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KRELOAD_ENTRY } from '../harness/kreload-process.ts';

const DIST = path.dirname(KRELOAD_ENTRY);
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(path.join(DIST, '..', 'package.json'), 'utf8')) as { version: string }
).version;
/** Every generated client-node model carries one; the controller needs none of them. */
const GENERATED_MODEL_MARK = 'attributeTypeMap';
/** Only undici's entry (index.js) requires its SQLite cache store. */
const UNDICI_ENTRY_MARK = 'SqliteCacheStore';

function bundleFiles(): string[] {
  return readdirSync(DIST, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.js'))
    .map((file) => path.join(DIST, file));
}

/** `import … from "x"`, `export … from "x"`, `import "x"` and `import("x")` of one output file. */
function specifiersOf(file: string): { static: string[]; dynamic: string[] } {
  const text = readFileSync(file, 'utf8');
  // An import or export statement: its keyword starts a statement, and a module id is a plain path.
  const statement =
    /(?:^|[;}\n])\s*(?:import|export)\b[^;"'`()]*?(?:\bfrom)?\s*["']([\w@:./-]+)["']/g;
  const statics = [...text.matchAll(statement)].map((m) => m[1]!);
  const dynamics = [...text.matchAll(/\bimport\(\s*["']([\w@:./-]+)["']\s*\)/g)].map((m) => m[1]!);
  return { static: statics, dynamic: dynamics };
}

/** The files Node loads with `file`, following static imports only (what loads before it runs). */
function staticClosure(file: string): Set<string> {
  const seen = new Set<string>();
  const pending = [file];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next)) continue;
    seen.add(next);
    for (const specifier of specifiersOf(next).static) {
      if (specifier.startsWith('.')) pending.push(path.resolve(path.dirname(next), specifier));
    }
  }
  return seen;
}

function chunkNamed(name: string): string {
  const pattern = new RegExp(`^${name}-[\\w-]+\\.js$`);
  const found = bundleFiles().filter((file) => pattern.test(path.basename(file)));
  expect(found, `one chunk named ${name}-<hash>.js in ${DIST}`).toHaveLength(1);
  return found[0]!;
}

const run = promisify(execFile);

describe('the dist/ bundle', () => {
  it('imports nothing but Node built-ins and its own chunks: it runs without node_modules', () => {
    const outside = bundleFiles().flatMap((file) => {
      const { static: statics, dynamic } = specifiersOf(file);
      return [...statics, ...dynamic]
        .filter((specifier) => !specifier.startsWith('.') && !isBuiltin(specifier))
        .map((specifier) => `${path.relative(DIST, file)}: ${specifier}`);
    });
    expect(outside).toEqual([]);
  });

  it("loads the controller without client-node's generated API (narrowed at bundle time)", () => {
    const controller = new Set([
      ...staticClosure(KRELOAD_ENTRY),
      ...staticClosure(chunkNamed('run')),
      ...staticClosure(chunkNamed('app')),
    ]);
    const withModels = [...controller].filter((file) =>
      readFileSync(file, 'utf8').includes(GENERATED_MODEL_MARK),
    );
    expect(withModels.map((file) => path.relative(DIST, file))).toEqual([]);
    // The explain/history commands print YAML with client-node's serializer, which does need them.
    expect(
      bundleFiles().some((file) => readFileSync(file, 'utf8').includes(GENERATED_MODEL_MARK)),
    ).toBe(true);
  });

  it('is Latin-1 text throughout, so V8 keeps each loaded source one byte per character', () => {
    // One character past U+00FF anywhere in a file makes V8 hold the whole file's source as UTF-16,
    // twice the memory (megabytes for the largest chunks); the bundler escapes them (ADR 0054).
    const wide = bundleFiles().flatMap((file) => {
      const found = /[\u0100-\u{10ffff}]/u.exec(readFileSync(file, 'utf8'));
      return found === null ? [] : [`${path.relative(DIST, file)}: ${JSON.stringify(found[0])}`];
    });
    expect(wide).toEqual([]);
  });

  it("loads undici's entry (fetch, mock agents, cache stores) only when fetch is called", () => {
    const controller = new Set([
      ...staticClosure(KRELOAD_ENTRY),
      ...staticClosure(chunkNamed('run')),
      ...staticClosure(chunkNamed('app')),
    ]);
    const withEntry = [...controller].filter((file) =>
      readFileSync(file, 'utf8').includes(UNDICI_ENTRY_MARK),
    );
    expect(withEntry.map((file) => path.relative(DIST, file))).toEqual([]);
    expect(
      bundleFiles().some((file) => readFileSync(file, 'utf8').includes(UNDICI_ENTRY_MARK)),
    ).toBe(true);
  });

  it("loads the controller's chunks without Node's bundled undici", async () => {
    // node:http's ESM facade would read its WebSocket getters, which load it (ADR 0054).
    const script = [
      `await import(${JSON.stringify(pathToFileURL(chunkNamed('run')).href)});`,
      `await import(${JSON.stringify(pathToFileURL(chunkNamed('app')).href)});`,
      "const loaded = process.moduleLoadList.filter((name) => name.includes('undici'));",
      'process.stdout.write(JSON.stringify(loaded));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it("loads the controller's chunks without building an Intl object", async () => {
    // Each Intl service pages in its share of ICU's data when it is built: 2.5 MiB for a
    // Segmenter, 8 MiB for a DateTimeFormat (docs/performance.md, "Where the floor goes").
    const script = [
      'const built = [];',
      'for (const name of Object.getOwnPropertyNames(Intl)) {',
      '  const service = Intl[name];',
      "  if (typeof service !== 'function') continue;",
      '  Intl[name] = new Proxy(service, {',
      '    construct: (target, args, newTarget) => (built.push(name), Reflect.construct(target, args, newTarget)),',
      '  });',
      '}',
      `await import(${JSON.stringify(pathToFileURL(chunkNamed('run')).href)});`,
      `await import(${JSON.stringify(pathToFileURL(chunkNamed('app')).href)});`,
      'process.stdout.write(JSON.stringify(built));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it.each(['main.js', 'kubectl-kreload.js'])(
    '%s reports the package version from any working directory',
    async (entry) => {
      const { stdout } = await run(process.execPath, [path.join(DIST, entry), '--version'], {
        cwd: '/',
      });
      expect(stdout.trim()).toBe(`kreload ${PACKAGE_VERSION}`);
    },
  );
});
