/**
 * Bundles the compiled controller (`build/`, from tsc) into `dist/` (ADR 0040). One module graph of
 * a few chunks instead of about 600 files cuts the source text V8 keeps and the per-module records,
 * and tree-shaking drops what kreload never calls: about 9 MiB of RSS at start. Names are kept (no
 * mangling) so stack traces and logged errors read as in the source. Non-ASCII characters are
 * escaped: V8 keeps a loaded file's source as UTF-16 when one character in it is past U+00FF, which
 * doubled the largest chunks' share of the heap (ADR 0054).
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineConfig, type Plugin } from 'rolldown';
import { narrowBarrelSource, narrowBarrelUrl } from './src/kube/narrow-client-node.ts';

/**
 * The bundle-time form of `loadClientNodeNarrowly`: the same two functions decide which import is
 * narrowed and what it becomes, so the bundle and an unbundled run load the same client-node code.
 */
export const narrowClientNode: Plugin = {
  name: 'kreload-narrow-client-node',
  resolveId(source, importer) {
    const url = narrowBarrelUrl(source, importer && pathToFileURL(importer).href);
    return url === undefined ? null : fileURLToPath(url);
  },
  load(id) {
    return narrowBarrelSource(pathToFileURL(id).href) ?? null;
  },
};

/** Stands in for `node:http` in the bundle: the same module object, reached through `require`. */
const HTTP_BY_REQUIRE = '\0kreload:node-http-by-require';
/** Lazy getters of `node:http` that load Node's own undici, which kreload never uses. */
const UNDICI_GETTERS = new Set(['WebSocket', 'CloseEvent', 'MessageEvent']);

/**
 * Node's ESM facade of a built-in reads every export once, and `node:http`'s `WebSocket`,
 * `CloseEvent` and `MessageEvent` getters load Node's bundled undici: 0.7 MiB of source and 3.6 MiB
 * of RSS for code kreload never calls (it sends requests with npm undici, ADR 0039). Loaded by
 * `require`, `node:http` stays as it is and those getters are never read (ADR 0054).
 */
export const httpWithoutUndiciGetters: Plugin = {
  name: 'kreload-http-without-undici-getters',
  resolveId(source) {
    return source === 'http' || source === 'node:http' ? HTTP_BY_REQUIRE : null;
  },
  load(id) {
    if (id !== HTTP_BY_REQUIRE) return null;
    const http = createRequire(import.meta.url)('node:http') as object;
    const names = Object.keys(http).filter((name) => !UNDICI_GETTERS.has(name));
    return [
      "import { createRequire } from 'node:module';",
      "const http = createRequire(import.meta.url)('node:http');",
      'export default http;',
      `export const { ${names.join(', ')} } = http;`,
    ].join('\n');
  },
};

/** Stands in for `undici` in the bundle: what kreload and client-node's KubeConfig use of it. */
const UNDICI_NARROW = '\0kreload:undici-narrow';

/**
 * undici's entry loads every part of it (fetch, WebSocket, mock agents, cache stores, SQLite) and
 * kreload's controller uses its Agent and `Dispatcher.request` (ADR 0052), and `ProxyAgent` when a
 * proxy is configured: the entry costs about 12 MiB more RSS than those modules alone. The stand-in
 * loads those modules, adds the request API to the dispatchers as the entry does, and loads the
 * entry only when `fetch` is first called (alert and webhook deliveries, the kubectl commands).
 * Only the bundle is narrowed; an unbundled run loads all of undici (ADR 0054).
 */
export const narrowUndici: Plugin = {
  name: 'kreload-narrow-undici',
  resolveId(source) {
    return source === 'undici' ? UNDICI_NARROW : null;
  },
  load(id) {
    if (id !== UNDICI_NARROW) return null;
    return [
      "import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';",
      "import api from 'undici/lib/api/index.js';",
      "import Agent from 'undici/lib/dispatcher/agent.js';",
      "import ProxyAgent from 'undici/lib/dispatcher/proxy-agent.js';",
      'Object.assign(Dispatcher.prototype, api);',
      'export { Agent, ProxyAgent };',
      "export const fetch = async (input, init) => (await import('undici/index.js')).default.fetch(input, init);",
    ].join('\n');
  },
};

/** A module-level `const <name> = new Intl.Segmenter();`, as string-width declares it. */
const EAGER_SEGMENTER = /^const (\w+) = new Intl\.Segmenter\(\);$/gm;

/**
 * string-width (yargs' help layout, three copies in the bundle) builds an `Intl.Segmenter` when its
 * module loads, and constructing one pages in ICU's break-iteration data: 2.5 MiB of RSS in bare
 * Node, held by every controller although only a non-ASCII string in `--help` output ever segments.
 * Each such declaration becomes an object whose `segment` builds the segmenter on first use.
 */
export const lazySegmenter: Plugin = {
  name: 'kreload-lazy-segmenter',
  transform(code, id) {
    if (!id.includes('node_modules') || !code.includes('new Intl.Segmenter()')) return null;
    return code.replace(
      EAGER_SEGMENTER,
      (_, name: string) =>
        `let ${name}Instance;\n` +
        `const ${name} = { segment: (input) => (${name}Instance ??= new Intl.Segmenter()).segment(input) };`,
    );
  },
};

export default defineConfig({
  input: { main: 'build/main.js', 'kubectl-kreload': 'build/kubectl-kreload.js' },
  platform: 'node',
  plugins: [narrowClientNode, httpWithoutUndiciGetters, narrowUndici, lazySegmenter],
  output: {
    dir: 'dist',
    format: 'esm',
    cleanDir: true,
    minify: { compress: true, mangle: false, codegen: { removeWhitespace: true, asciiOnly: true } },
    chunkFileNames: 'chunks/[name]-[hash].js',
  },
});
