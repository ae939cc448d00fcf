/**
 * Bundles the compiled controller (`build/`, from tsc) into `dist/` (ADR 0040). One module graph of
 * a few chunks instead of about 600 files cuts the source text V8 keeps and the per-module records,
 * and tree-shaking drops what kreload never calls: about 9 MiB of RSS at start. Names are kept (no
 * mangling) so stack traces and logged errors read as in the source. Non-ASCII characters are
 * escaped: V8 keeps a loaded file's source as UTF-16 when one character in it is past U+00FF, which
 * doubled the largest chunks' share of the heap (ADR 0054).
 */
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

export default defineConfig({
  input: { main: 'build/main.js', 'kubectl-kreload': 'build/kubectl-kreload.js' },
  platform: 'node',
  plugins: [narrowClientNode],
  output: {
    dir: 'dist',
    format: 'esm',
    cleanDir: true,
    minify: { compress: true, mangle: false, codegen: { removeWhitespace: true, asciiOnly: true } },
    chunkFileNames: 'chunks/[name]-[hash].js',
  },
});
