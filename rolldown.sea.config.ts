/**
 * The single-file kubectl-kreload executable's two inputs (scripts/plugin.sh): the plugin as one ES
 * module file with no chunks, and the CommonJS launcher Node's single-executable applications run,
 * which imports it. Narrowed like the dist/ bundle (rolldown.config.ts).
 */
import { defineConfig } from 'rolldown';
import { narrowClientNode } from './rolldown.config.ts';

const outDir = process.env.KRELOAD_SEA_BUNDLE_DIR ?? '.cache/plugin/bundle';

export default defineConfig([
  {
    input: { 'kubectl-kreload': 'build/kubectl-kreload.js' },
    platform: 'node',
    plugins: [narrowClientNode],
    output: {
      dir: outDir,
      format: 'esm',
      entryFileNames: '[name].mjs',
      codeSplitting: false,
      minify: { compress: true, mangle: false, codegen: { removeWhitespace: true } },
    },
  },
  {
    input: { launcher: 'build/sea-launcher.js' },
    platform: 'node',
    output: { dir: outDir, format: 'cjs', entryFileNames: '[name].cjs', codeSplitting: false },
  },
]);
