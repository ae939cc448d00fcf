/**
 * Where Node keeps its compile cache for kreload (`module.enableCompileCache`): V8's code cache of
 * the modules the controller loads, so a restart skips compiling them again (docs/performance.md
 * "Start-up CPU: Node's compile cache"). The user's own cache directory as the XDG base directories
 * define it; none without `XDG_CACHE_HOME` or `HOME`, because a cache in a directory others can
 * write is code they could plant. Node validates every entry against the source's hash and its own
 * version, and writes nothing where it cannot. `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
 */
import { join } from 'node:path';

export interface CompileCacheEnv {
  readonly XDG_CACHE_HOME?: string | undefined;
  readonly HOME?: string | undefined;
}

/** The directory under which Node keeps kreload's compile cache, or undefined for none. */
export function compileCacheDirectory(env: CompileCacheEnv): string | undefined {
  if (nonEmpty(env.XDG_CACHE_HOME))
    return join(env.XDG_CACHE_HOME, 'kreload', 'node-compile-cache');
  if (nonEmpty(env.HOME)) return join(env.HOME, '.cache', 'kreload', 'node-compile-cache');
  return undefined;
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== '';
}
