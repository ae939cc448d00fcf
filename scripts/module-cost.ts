/**
 * What loading kreload's modules costs in RSS: each case runs in a fresh Node (`--expose-gc
 * --max-semi-space-size=2`, the controller's young generation), loads its modules, runs three full
 * GCs and reports VmRSS. Standalone costs overlap in Node's own built-ins (http, tls, streams), so
 * the controller graph is also measured with one library at a time replaced by an empty module:
 * what that saves is the library's own share. With `--kubeconfig`, the graph also sends requests
 * through kreload's transport, once on npm undici and once on Node's bundled undici (ADR 0039).
 * Used for docs/performance.md "The module floor"; needs `npm run build` first.
 *
 *   node scripts/module-cost.ts [--runs 3] [--kubeconfig FILE] [--requests 20]
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The unbundled graph, module by module: tsc's output, which `npm run build` then bundles into dist/.
const DIST = pathToFileURL(`${ROOT}build/`).href;
const NODE_FLAGS = ['--expose-gc', '--max-semi-space-size=2'];

/** Libraries kreload's controller imports by package name, and an empty stand-in for each. */
const STAND_INS: Readonly<Record<string, { readonly format: string; readonly source: string }>> = {
  'prom-client': {
    format: 'commonjs',
    source:
      'exports.Counter = exports.Gauge = exports.Histogram = exports.Registry = exports.collectDefaultMetrics = function () {};',
  },
  winston: { format: 'commonjs', source: 'module.exports = {};' },
  yargs: { format: 'module', source: 'export default {};' },
  undici: {
    format: 'commonjs',
    source: 'exports.Agent = exports.ProxyAgent = exports.fetch = function () {};',
  },
};

/** Serves 'undici' from Node's own copy: its global fetch and the class of its global Agent. */
const BUILTIN_UNDICI =
  "globalThis.Headers; const dispatcher = globalThis[Symbol.for('undici.globalDispatcher.1')];" +
  ' exports.Agent = dispatcher.constructor; exports.fetch = globalThis.fetch;' +
  " exports.ProxyAgent = function () { throw new Error('no proxy in this measurement'); };";

interface Case {
  readonly name: string;
  /** Package names answered by their stand-in (or, for `builtin-undici`, by Node's undici). */
  readonly replace?: readonly string[];
  readonly body: string;
}

const GRAPH = `
  const { loadClientNodeNarrowly } = await import(${JSON.stringify(`${DIST}kube/narrow-client-node.js`)});
  loadClientNodeNarrowly();
  await import(${JSON.stringify(`${DIST}cli/run.js`)});
  await import(${JSON.stringify(`${DIST}app.js`)});
`;

function requestsBody(kubeconfig: string, requests: number): string {
  return `${GRAPH}
  const { KubeConfig } = await import(${JSON.stringify(import.meta.resolve('@kubernetes/client-node/dist/config.js'))});
  const { createKubeTransport } = await import(${JSON.stringify(`${DIST}kube/transport.js`)});
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(${JSON.stringify(kubeconfig)});
  const transport = createKubeTransport({ kubeConfig });
  for (let i = 0; i < ${String(requests)}; i++) {
    await transport.request({ method: 'GET', path: '/api/v1/namespaces' });
  }
`;
}

function cases(kubeconfig: string | undefined, requests: number): Case[] {
  const alone = ['undici', 'prom-client', 'winston', 'yargs'].map((name) => ({
    name: `${name} alone`,
    body: `await import(${JSON.stringify(import.meta.resolve(name))});`,
  }));
  const without = [...Object.keys(STAND_INS).map((name) => [name]), Object.keys(STAND_INS)].map(
    (replace) => ({ name: `controller graph without ${replace.join(', ')}`, replace, body: GRAPH }),
  );
  const list: Case[] = [
    { name: 'bare Node', body: '' },
    ...alone,
    { name: 'controller graph (cli/run.js + app.js)', body: GRAPH },
    ...without,
  ];
  if (kubeconfig !== undefined) {
    const body = requestsBody(kubeconfig, requests);
    list.push(
      { name: `graph + ${String(requests)} requests, npm undici`, body },
      {
        name: `graph + ${String(requests)} requests, Node's undici`,
        replace: ['builtin-undici'],
        body,
      },
    );
  }
  return list;
}

function childScript(testCase: Case): string {
  const replace = testCase.replace ?? [];
  const sources = Object.fromEntries(
    replace.map((name) => [
      name === 'builtin-undici' ? 'undici' : name,
      name === 'builtin-undici'
        ? { format: 'commonjs', source: BUILTIN_UNDICI }
        : (STAND_INS[name] ?? { format: 'module', source: '' }),
    ]),
  );
  return `
    import { registerHooks } from 'node:module';
    const sources = ${JSON.stringify(sources)};
    registerHooks({
      resolve(specifier, context, next) {
        return specifier in sources
          ? { url: 'kreload-stand-in:' + specifier, shortCircuit: true }
          : next(specifier, context);
      },
      load(url, context, next) {
        const name = url.startsWith('kreload-stand-in:') ? url.slice(17) : undefined;
        return name === undefined ? next(url, context) : { ...sources[name], shortCircuit: true };
      },
    });
    ${testCase.body}
    for (let i = 0; i < 3; i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(process.memoryUsage().rss);
  `;
}

function measure(testCase: Case): number {
  const output = execFileSync(
    process.execPath,
    [...NODE_FLAGS, '--input-type=module', '-e', childScript(testCase)],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return Number(output.trim()) / (1024 * 1024);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      kubeconfig: { type: 'string' },
      requests: { type: 'string', default: '20' },
    },
  });
  if (!existsSync(fileURLToPath(`${DIST}app.js`))) {
    throw new Error('build/app.js is missing: run `npm run build` first');
  }
  const runs = Number(values.runs);
  console.log(`| what is loaded | RSS after GC, MiB (median of ${String(runs)}) | spread |`);
  console.log('|---|---|---|');
  for (const testCase of cases(values.kubeconfig, Number(values.requests))) {
    const samples = Array.from({ length: runs }, () => measure(testCase)).sort((a, b) => a - b);
    const median = samples[Math.floor(samples.length / 2)] ?? Number.NaN;
    const spread = (samples.at(-1) ?? 0) - (samples[0] ?? 0);
    console.log(`| ${testCase.name} | ${median.toFixed(1)} | ${spread.toFixed(1)} |`);
  }
}

main();
