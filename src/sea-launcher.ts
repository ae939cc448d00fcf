/**
 * The main script of the single-file kubectl-kreload executable (Node's single-executable
 * applications, scripts/plugin.sh). The plugin is an ES module with top-level await, which a
 * CommonJS main script cannot require, so the executable carries the one-file ES bundle as an asset:
 * this writes it once per content into a private cache directory and imports it from there. The
 * main script's own import() loads only built-in modules (Node.js 26), so the import runs in a
 * script compiled with the default loader. The directory is the user's own (0700, owned by them) and the file is compared with the
 * asset before every run, so nothing but the embedded code ever runs.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAsset } from 'node:sea';
import { pathToFileURL } from 'node:url';
import { Script, constants } from 'node:vm';

/** Asset names, as scripts/plugin.sh embeds them. */
const SEA_ASSETS = { bundle: 'kubectl-kreload.mjs', manifest: 'package.json' } as const;

function privateDirectory(path: string): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stat = lstatSync(path);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${path} is not a private directory of this user`);
  }
  return path;
}

/** XDG_CACHE_HOME, else ~/.cache, else the temporary directory; a directory per user in each. */
function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  try {
    return privateDirectory(join(base, 'kubectl-kreload'));
  } catch {
    return privateDirectory(join(tmpdir(), `kubectl-kreload-${String(process.getuid?.() ?? 0)}`));
  }
}

function sameContent(path: string, content: Buffer): boolean {
  try {
    return readFileSync(path).equals(content);
  } catch {
    return false;
  }
}

/** Writes content to path unless it is already there, through a rename so no reader sees half. */
function place(path: string, content: Buffer): void {
  if (sameContent(path, content)) return;
  const partial = `${path}.${String(process.pid)}.partial`;
  writeFileSync(partial, content, { mode: 0o600 });
  renameSync(partial, path);
}

function extract(): string {
  const bundle = Buffer.from(getAsset(SEA_ASSETS.bundle));
  const manifest = Buffer.from(getAsset(SEA_ASSETS.manifest));
  const digest = createHash('sha256').update(bundle).update(manifest).digest('hex').slice(0, 16);
  // <dir>/dist/kubectl-kreload.mjs with <dir>/package.json: the layout the bundle reads its version from.
  const dir = privateDirectory(join(cacheRoot(), digest));
  privateDirectory(join(dir, 'dist'));
  place(join(dir, 'package.json'), manifest);
  const entry = join(dir, 'dist', SEA_ASSETS.bundle);
  place(entry, bundle);
  return entry;
}

function fail(error: unknown): never {
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(`kubectl-kreload: cannot start: ${reason}\n`);
  process.exit(1);
}

/** import() of a file, through the main context's default loader. */
function importFile(path: string): Promise<unknown> {
  const script = new Script(`import(${JSON.stringify(pathToFileURL(path).href)})`, {
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return script.runInThisContext() as Promise<unknown>;
}

try {
  importFile(extract()).catch(fail);
} catch (error) {
  fail(error);
}
