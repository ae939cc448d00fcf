/**
 * The README's first command must keep working: `npm run demo` boots its own control plane, starts
 * kreload as its CLI and shows a reload. This runs the same script with `--once` (dist/ is built by
 * the e2e npm script) and checks what a person would see.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../cluster/paths.ts';

function runDemo(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'e2e', 'demo.ts'), '--once'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => {
      resolve({ code, output });
    });
  });
}

describe('npm run demo', () => {
  it('boots a control plane, rolls the demo Deployment once and tears everything down', async () => {
    const { code, output } = await runDemo();
    expect(output).toContain('first sight: kreload recorded a baseline');
    expect(output).toContain('kreload rolled the Deployment:');
    expect(output).toMatch(/env STAKATER_APP_CONFIG_CONFIGMAP=[0-9a-f]{40}/);
    expect(output.match(/ReplicaSet api-/g)).toHaveLength(2);
    expect(output).toContain('Event Reloaded:');
    // Two Ready pods before, two other Ready pods after: the old ones were replaced.
    const before = output.split('pods before the change')[1]?.split('==>')[0] ?? '';
    const after = output.split('pods after the rollout')[1]?.split('==>')[0] ?? '';
    const ready = (table: string) =>
      [...table.matchAll(/(api-\S+)\s+1\/1\s+Running/g)].map((m) => m[1]);
    expect(ready(before)).toHaveLength(2);
    expect(ready(after)).toHaveLength(2);
    expect(ready(after).filter((name) => ready(before).includes(name))).toEqual([]);
    expect(code, output).toBe(0);
  }, 180_000);
});
