import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_ENGINES, runsAsSingleExecutable, unsupportedNodeMessage } from './node-support.ts';

describe('unsupportedNodeMessage', () => {
  it('states the range package.json declares', () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    ) as { engines: { node: string } };
    expect(manifest.engines.node).toBe(NODE_ENGINES);
  });

  it.each([
    ['24.11.0', false],
    ['24.21.0', false],
    ['24.11.9', false],
    ['24.10.9', true],
    ['24.0.0', true],
    ['20.20.2', true],
    ['22.13.0', true],
    ['25.0.0', true],
    ['26.1.0', true],
    ['3.0.0', true],
    ['124.11.0', true],
    ['v24.12.0', false],
  ])('Node.js %s unsupported: %s', (version, unsupported) => {
    expect(unsupportedNodeMessage('kubectl-kreload', version) !== undefined).toBe(unsupported);
  });

  it('is one line naming the program, the range and the running version', () => {
    const message = unsupportedNodeMessage('kubectl-kreload', '20.20.2') ?? '';
    expect(message).not.toContain('\n');
    expect(message).toMatch(
      /^kubectl-kreload needs Node\.js >=24\.11\.0 <25, this is Node\.js 20\.20\.2: /,
    );
  });

  it('says it cannot tell for a version it cannot read', () => {
    expect(unsupportedNodeMessage('kubectl-kreload', 'nightly')).toBe(
      'kubectl-kreload needs Node.js >=24.11.0 <25; cannot tell which Node.js this is ("nightly")',
    );
  });

  it('is not a single-executable application when run as a script', () => {
    expect(runsAsSingleExecutable()).toBe(false);
  });
});
