import path from 'node:path';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = path.resolve(import.meta.dirname, '..');
// eslint.config.js is plain JS without declarations; the path keeps tsc from asking for them.
const eslintConfig = (await import(path.join(REPO_ROOT, 'eslint.config.js'))) as {
  PURE_MODULES_RULE: Linter.Config;
};
const { PURE_MODULES_RULE } = eslintConfig;

/** Lints one import line as if it stood in `file`, with only the purity rule. */
function violations(file: string, specifier: string): string[] {
  const linter = new Linter({ configType: 'flat', cwd: REPO_ROOT });
  const messages = linter.verify(
    `import x from '${specifier}';\nexport default x;\n`,
    [{ files: ['**/*.ts'] }, PURE_MODULES_RULE],
    path.join(REPO_ROOT, file),
  );
  return messages.map((message) => message.ruleId ?? message.message);
}

describe('purity of core/ and rollout/ (an allow-list)', () => {
  it.each([
    ['src/core/keys.ts', '../time/timers.ts'],
    ['src/core/keys.ts', '../log/logger.ts'],
    ['src/core/keys.ts', '../app.ts'],
    ['src/rollout/kinds.ts', '../kube/transport.ts'],
    ['src/rollout/kinds.ts', '../queue/work-queue.ts'],
    ['src/core/keys.ts', '@kubernetes/client-node'],
    ['src/core/keys.ts', 'winston'],
    ['src/core/keys.ts', 'node:fs'],
    ['src/core/keys.ts', 'node:timers/promises'],
    ['src/rollout/patch.ts', 'undici'],
  ])('%s may not import %s', (file, specifier) => {
    expect(violations(file, specifier)).toEqual(['no-restricted-imports']);
  });

  it.each([
    ['src/core/keys.ts', './types.ts'],
    ['src/core/keys.ts', '../rollout/kinds.ts'],
    ['src/rollout/kinds.ts', '../core/types.ts'],
    ['src/core/hash.ts', 'node:crypto'],
    ['src/core/references.ts', 're2js'],
  ])('%s may import %s', (file, specifier) => {
    expect(violations(file, specifier)).toEqual([]);
  });

  it('does not apply outside core/ and rollout/', () => {
    expect(violations('src/queue/work-queue.ts', 'node:fs')).toEqual([]);
  });
});
