#!/usr/bin/env node
/**
 * The process edge and the only user of `process`: hands argv, env, streams and signals to runCli and
 * exits with its code (0 clean, 1 runtime failure, 2 invalid configuration; §12.6).
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { enableCompileCache } from 'node:module';
import { compileCacheDirectory } from './config/compile-cache.ts';
import { loadClientNodeNarrowly } from './kube/narrow-client-node.ts';
import { processSettings } from './config/process-settings.ts';

// V8 fixes its heap limits, and glibc its malloc arenas, at start: a controller run without its
// process settings becomes one with them, in place (same PID, so signals and the container runtime
// see no difference; ADRs 0033, 0056).
const missing = processSettings({
  memoryLimitBytes: process.constrainedMemory(),
  execArgv: process.execArgv,
  nodeOptions: process.env.NODE_OPTIONS,
  argv: process.argv.slice(2),
  env: process.env,
});
// process.execve is missing only on Windows, where cgroups do not exist either.
if (
  (missing.flags.length > 0 || Object.keys(missing.env).length > 0) &&
  process.execve !== undefined
) {
  try {
    // argv[0] as it was started (`node` in the image), so process listings read as before.
    process.execve(
      process.execPath,
      [process.argv0, ...process.execArgv, ...missing.flags, ...process.argv.slice(1)],
      { ...process.env, ...missing.env },
    );
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `kreload: running with Node's default process settings: re-exec failed: ${reason}\n`,
    );
  }
}

// Restarts skip compiling the modules loaded below; NODE_DISABLE_COMPILE_CACHE=1 opts out.
const compileCache = compileCacheDirectory(process.env);
if (compileCache !== undefined) enableCompileCache(compileCache);

// Before anything imports client-node; hence the dynamic import below (ADR 0032).
loadClientNodeNarrowly();
const { runCli } = await import('./cli/run.ts');

/** main.ts and dist/main.js both sit one level below the package root. */
function readPackageVersion(): string {
  try {
    const manifest: unknown = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    );
    if (typeof manifest === 'object' && manifest !== null && 'version' in manifest) {
      return typeof manifest.version === 'string' ? manifest.version : 'unknown';
    }
  } catch {
    // A missing package.json only costs the version string.
  }
  return 'unknown';
}

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

process.on('unhandledRejection', (reason) => {
  const text = reason instanceof Error ? (reason.stack ?? reason.message) : String(reason);
  process.stderr.write(`kreload: unhandled rejection: ${text}\n`);
  process.exit(1);
});

const exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  readFile: (path) => (path === '-' ? readStandardInput() : readFile(path, 'utf8')),
  fileExists: existsSync,
  version: readPackageVersion(),
  onShutdownSignal: (handler) => {
    process.on('SIGTERM', () => {
      handler('SIGTERM');
    });
    process.on('SIGINT', () => {
      handler('SIGINT');
    });
  },
});
process.exit(exitCode);
