/**
 * Loads client-node's `KubeConfig` without its generated API (ADR 0032).
 *
 * `dist/config.js` imports `createConfiguration` and `ServerConfiguration` from `./gen/index.js`,
 * the barrel of the whole generated API: about 850 modules and 40 MiB of RSS, for two helpers that
 * live in `gen/configuration.js` and `gen/servers.js`. A module hook answers that one import, from
 * that one file, with a two-line module re-exporting them from where they are defined. Everything
 * else (auth, exec plugins, certificates, proxies, the undici dispatcher) is client-node's own code,
 * unchanged. The modules are the same files either way, so classes compare equal under `instanceof`
 * whether or not another import later loads the full barrel.
 */
import { registerHooks } from 'node:module';

/** The file whose import is narrowed, and the import it narrows. */
const CONFIG_MODULE_SUFFIX = '/@kubernetes/client-node/dist/config.js';
const GENERATED_BARREL = './gen/index.js';
/** Sits beside the barrel so the re-exports resolve relative to it; never read from disk. */
const NARROW_BARREL_NAME = 'kreload-narrow-index.js';

/**
 * What config.js takes from the barrel, and the module each comes from. A client-node upgrade that
 * imports more fails at link time ("does not provide an export named …"), and the unit test that
 * reads config.js fails first.
 */
export const NARROW_BARREL_EXPORTS: Readonly<Record<string, string>> = {
  createConfiguration: './configuration.js',
  ServerConfiguration: './servers.js',
};

/** The URL to serve instead of the barrel, or undefined when the import is not the narrowed one. */
export function narrowBarrelUrl(
  specifier: string,
  parentUrl: string | undefined,
): string | undefined {
  if (specifier !== GENERATED_BARREL || parentUrl?.endsWith(CONFIG_MODULE_SUFFIX) !== true) {
    return undefined;
  }
  return new URL(`./gen/${NARROW_BARREL_NAME}`, parentUrl).href;
}

/** The narrow barrel's source when `url` is one `narrowBarrelUrl` returned, else undefined. */
export function narrowBarrelSource(url: string): string | undefined {
  if (!url.endsWith(`/@kubernetes/client-node/dist/gen/${NARROW_BARREL_NAME}`)) return undefined;
  return Object.entries(NARROW_BARREL_EXPORTS)
    .map(([name, from]) => `export { ${name} } from '${from}';\n`)
    .join('');
}

/**
 * Installs the hook for this process. Synchronous and in-thread (`registerHooks`, not `register`,
 * which would start a loader worker that costs more than it saves). Must run before anything
 * imports client-node: main.ts calls it, then imports the rest dynamically.
 */
export function loadClientNodeNarrowly(): void {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = narrowBarrelUrl(specifier, context.parentURL);
      return url === undefined ? nextResolve(specifier, context) : { url, shortCircuit: true };
    },
    load(url, context, nextLoad) {
      const source = narrowBarrelSource(url);
      return source === undefined
        ? nextLoad(url, context)
        : { format: 'module', source, shortCircuit: true };
    },
  });
}
