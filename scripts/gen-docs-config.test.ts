import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_SPECS, OPTION_SPECS } from '../src/config/options.ts';
import { CONFIGURATION_DOC_URL, renderConfigurationDoc } from './gen-docs-config.ts';

describe('docs/configuration.md', () => {
  it('is up to date (run `npx node scripts/gen-docs-config.ts`)', () => {
    expect(readFileSync(CONFIGURATION_DOC_URL, 'utf8')).toBe(renderConfigurationDoc());
  });

  it('has one row per flag and per variable', () => {
    const doc = renderConfigurationDoc();
    for (const spec of OPTION_SPECS)
      expect(doc).toContain(`| \`${spec.flag}\` | \`${spec.env}\` |`);
    for (const spec of ENV_SPECS) expect(doc).toContain(`| \`${spec.env}\` |`);
  });
});
