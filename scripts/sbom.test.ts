import { describe, expect, it } from 'vitest';
import {
  type Component,
  BUNDLED_PROPERTY,
  bundledComponents,
  bundledPackagePaths,
  keptDependencies,
} from './sbom.ts';

const PATH = 'cdx:npm:package:path';

const component = (name: string, installedAt: string, nested?: Component[]): Component => ({
  type: 'library',
  name,
  version: '1.0.0',
  purl: `pkg:npm/${name}@1.0.0`,
  'bom-ref': `app|${name}`,
  properties: [{ name: PATH, value: installedAt }],
  ...(nested && { components: nested }),
});

describe('the image SBOM', () => {
  it.each([
    ['../node_modules/yargs/build/lib/yargs.js', ['node_modules/yargs']],
    [
      '../../node_modules/@kubernetes/client-node/dist/config.js',
      ['node_modules/@kubernetes/client-node'],
    ],
    [
      '../node_modules/winston/node_modules/@colors/colors/lib/x.js',
      ['node_modules/winston/node_modules/@colors/colors'],
    ],
    ['../node_modules/a/node_modules/b/index.js', ['node_modules/a/node_modules/b']],
    ['../src/main.ts', []],
    ['../node_modules/', []],
  ])('finds the package a bundled source %s comes from', (source, paths) => {
    expect([...bundledPackagePaths([source])]).toEqual(paths);
  });

  it('keeps only bundled packages, flattened and marked, and their dependency edges', () => {
    const components = [
      component('a', 'node_modules/a', [component('b', 'node_modules/a/node_modules/b')]),
      component('unused', 'node_modules/unused', [
        component('c', 'node_modules/unused/node_modules/c'),
      ]),
    ];
    const kept = bundledComponents(
      components,
      new Set(['node_modules/a', 'node_modules/unused/node_modules/c']),
    );
    expect(kept.map((kept) => kept.name)).toEqual(['a', 'c']);
    expect(kept.every((kept) => kept.components === undefined)).toBe(true);
    expect(kept[0]?.properties).toEqual([
      { name: PATH, value: 'node_modules/a' },
      BUNDLED_PROPERTY,
    ]);
    expect(
      keptDependencies(
        [
          { ref: 'app|a', dependsOn: ['app|b', 'app|c'] },
          { ref: 'app|unused', dependsOn: ['app|c'] },
          { ref: 'app|c' },
        ],
        new Set(['app|a', 'app|c']),
      ),
    ).toEqual([{ ref: 'app|a', dependsOn: ['app|c'] }, { ref: 'app|c' }]);
  });
});
