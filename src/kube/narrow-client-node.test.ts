import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  NARROW_BARREL_EXPORTS,
  narrowBarrelSource,
  narrowBarrelUrl,
} from './narrow-client-node.ts';

const CLIENT_NODE_DIST = dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node'));
const CONFIG_URL = pathToFileURL(join(CLIENT_NODE_DIST, 'config.js')).href;

describe('narrowBarrelUrl', () => {
  it.each([
    ['the barrel from config.js', './gen/index.js', CONFIG_URL, true],
    ['another import of config.js', './gen/configuration.js', CONFIG_URL, false],
    [
      'the barrel from the package root',
      './gen/index.js',
      CONFIG_URL.replace('config.js', 'index.js'),
      false,
    ],
    [
      'the barrel from another package',
      './gen/index.js',
      'file:///app/node_modules/other/dist/config.js',
      false,
    ],
    ['the entry point (no parent)', './gen/index.js', undefined, false],
  ])('%s → narrowed: %s', (_case, specifier, parent, narrowed) => {
    const url = narrowBarrelUrl(specifier, parent);
    expect(url !== undefined).toBe(narrowed);
    if (url !== undefined) {
      expect(url).toBe(new URL('./gen/kreload-narrow-index.js', CONFIG_URL).href);
      expect(narrowBarrelSource(url)).toBe(
        "export { createConfiguration } from './configuration.js';\n" +
          "export { ServerConfiguration } from './servers.js';\n",
      );
    }
  });

  it('serves no source for any other URL', () => {
    expect(narrowBarrelSource(new URL('./gen/index.js', CONFIG_URL).href)).toBeUndefined();
    expect(narrowBarrelSource('file:///tmp/kreload-narrow-index.js')).toBeUndefined();
  });
});

describe('the installed client-node', () => {
  it('config.js takes from the barrel exactly the names the narrow barrel re-exports', () => {
    const source = readFileSync(join(CLIENT_NODE_DIST, 'config.js'), 'utf8');
    const imports = [...source.matchAll(/import\s*{([^}]*)}\s*from\s*'\.\/gen\/index\.js'/g)];
    expect(imports).toHaveLength(1);
    const names = (imports[0]?.[1] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    expect(names.sort()).toEqual(Object.keys(NARROW_BARREL_EXPORTS).sort());
  });

  it('each re-exported name is defined in the module it is taken from', async () => {
    for (const [name, from] of Object.entries(NARROW_BARREL_EXPORTS)) {
      const module = (await import(
        pathToFileURL(join(CLIENT_NODE_DIST, 'gen', from)).href
      )) as Record<string, unknown>;
      expect(typeof module[name], `${name} in ${from}`).toBe('function');
    }
  });

  it('with the hook, KubeConfig works and the generated API is never loaded', () => {
    // A fresh process: vitest's own module loader would bypass the hook.
    const hook = pathToFileURL(join(import.meta.dirname, 'narrow-client-node.ts')).href;
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
      const { loadClientNodeNarrowly } = await import(${JSON.stringify(hook)});
      loadClientNodeNarrowly();
      const { KubeConfig } = await import('@kubernetes/client-node/dist/config.js');
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
        users: [{ name: 'u', token: 'token-value' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const { RequestContext } = await import('@kubernetes/client-node/dist/gen/http/http.js');
      const request = new RequestContext('https://127.0.0.1:6443/api', 'GET');
      await kc.applySecurityAuthentication(request);
      const generated = loaded.filter((url) => url.includes('/dist/gen/') && !/\\/(configuration|servers|middleware|rxjsStub|auth\\/auth|http\\/http|http\\/isomorphic-fetch)\\.js$|kreload-narrow-index/.test(url));
      console.log(JSON.stringify({ generated, authorization: request.getHeaders().Authorization }));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({ generated: [], authorization: 'Bearer token-value' });
  });

  it('the whole controller graph (app.ts) loads no generated model', () => {
    // Any root import of client-node's values (dumpYaml, loadYaml, …) in a module the controller
    // loads would bring back the generated API; this walks what app.ts really imports.
    const hook = pathToFileURL(join(import.meta.dirname, 'narrow-client-node.ts')).href;
    const app = pathToFileURL(join(import.meta.dirname, '..', 'app.ts')).href;
    const script = `
      import { registerHooks } from 'node:module';
      const loaded = [];
      registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
      const { loadClientNodeNarrowly } = await import(${JSON.stringify(hook)});
      loadClientNodeNarrowly();
      await import(${JSON.stringify(app)});
      const models = loaded.filter((url) => url.includes('/dist/gen/models/'));
      const ownModules = loaded.filter((url) => url.includes('/src/')).length;
      console.log(JSON.stringify({ models, loadedApp: ownModules > 20 }));
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(JSON.parse(output)).toEqual({ models: [], loadedApp: true });
  });
});
