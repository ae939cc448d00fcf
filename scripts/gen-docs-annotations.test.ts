import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_ROWS } from '../src/core/annotations.ts';
import { ANNOTATIONS_DOC_URL, overrideFlag, withKeysRead } from './gen-docs-annotations.ts';

const page = readFileSync(ANNOTATIONS_DOC_URL, 'utf8');
const contract = readFileSync(new URL('../docs/behavior.md', import.meta.url), 'utf8');

describe('docs/annotations.md', () => {
  it('has the key table of src/core/annotations.ts (run `npm run docs:annotations`)', () => {
    expect(page).toBe(withKeysRead(page));
  });

  it.each(ANNOTATION_ROWS.map((row) => [row.key, row] as const))('documents %s', (_, row) => {
    if (row.setBy === 'user') {
      expect(page).toContain(`| \`${row.key}\` | ${overrideFlag(row)} | ${row.doc.placement} |`);
    } else {
      // The table of keys kreload writes names it (some with their fixed value after a colon).
      const written = page.slice(page.indexOf('## Keys and fields kreload writes'));
      expect(written).toContain(`| \`${row.key}`);
    }
  });
});

describe('docs/behavior.md §3.1', () => {
  it.each(
    ANNOTATION_ROWS.filter((row) => row.option !== undefined && row.setBy === 'user').map(
      (row) => [row.key, row] as const,
    ),
  )('names the override flag of %s', (_, row) => {
    expect(contract).toContain(`| \`${row.key}\` | ${overrideFlag(row)} |`);
  });
});
