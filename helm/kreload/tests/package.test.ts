// `helm package`: what a user pulls. The archive must carry the chart README, the schema and the
// metadata chart indexes show (home, sources, icon), and none of the chart's tests or CI values.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  chartDir,
  isRecord,
  locateHelm,
  parseYaml,
  runHelm,
} from './chart-harness.ts';

const run = promisify(execFile);

describe('helm package', () => {
  let dir: string;
  let entries: string[];
  let chartYaml: Record<string, unknown>;

  beforeAll(async () => {
    const helm = await locateHelm();
    dir = await mkdtemp(join(tmpdir(), 'kreload-package-'));
    const packaged = await runHelm(helm, ['package', chartDir, '--destination', dir]);
    expect(packaged.stderr).toBe('');
    const archive = packaged.stdout.trim().split(': ').at(-1) ?? '';
    const { stdout } = await run('tar', ['-tzf', archive]);
    entries = stdout.trim().split('\n');
    const extracted = await mkdtemp(join(dir, 'x-'));
    await run('tar', ['-xzf', archive, '-C', extracted, 'kreload/Chart.yaml']);
    const parsed = parseYaml(await readFile(join(extracted, 'kreload', 'Chart.yaml'), 'utf8'));
    chartYaml = isRecord(parsed) ? parsed : {};
  }, HELM_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('carries the README, the schema, the templates and the dashboard', () => {
    for (const path of [
      'kreload/README.md',
      'kreload/values.yaml',
      'kreload/values.schema.json',
      'kreload/templates/prometheusrule.yaml',
      'kreload/dashboards/kreload.json',
    ]) {
      expect(entries).toContain(path);
    }
  });

  it('leaves out the chart tests and the CI values', () => {
    expect(entries.filter((entry) => /^kreload\/(tests|ci)\//.test(entry))).toEqual([]);
  });

  it('has the metadata chart indexes show', () => {
    expect(chartYaml.home).toMatch(/^https:\/\//);
    expect(chartYaml.icon).toMatch(/^https:\/\/.+\.svg$/);
    expect(Array.isArray(chartYaml.sources) && chartYaml.sources.length > 0).toBe(true);
  });
});
