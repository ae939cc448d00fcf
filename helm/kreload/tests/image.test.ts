// The Dockerfile, .dockerignore and the chart agree: non-root UID, port, entrypoint, versions.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chartDir, isRecord, parseYaml, repoRoot } from './chart-harness.ts';
import { envOf, instructions, stagesOf, type Stage } from './dockerfile.ts';

function valueAt(root: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), root);
}

describe('container image', () => {
  let dockerfile = '';
  let stages: Stage[] = [];
  let runtime: Stage | undefined;
  let values: unknown;
  let chart: unknown;
  let packageJson: unknown;

  beforeAll(async () => {
    dockerfile = await readFile(join(repoRoot, 'Dockerfile'), 'utf8');
    stages = stagesOf(dockerfile);
    runtime = stages.at(-1);
    values = parseYaml(await readFile(join(chartDir, 'values.yaml'), 'utf8'));
    chart = parseYaml(await readFile(join(chartDir, 'Chart.yaml'), 'utf8'));
    packageJson = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8'));
  });

  it('builds on Node 24 slim and runs on the distroless glibc base scripts/image.sh reproduces', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-slim$/m);
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=gcr\.io\/distroless\/cc-debian12:nonroot$/m);
    expect(stages.map((stage) => stage.from)).toEqual(['${NODE_IMAGE}', '${BASE_IMAGE}']);
    const copies = instructions(runtime, 'COPY');
    expect(copies).toContain('--from=build --chown=0:0 /node /usr/local/bin/node');
    expect(envOf(runtime)).toEqual([
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'NODE_ENV=production',
      'HOME=/tmp',
    ]);
    expect(instructions(runtime, 'WORKDIR')).toEqual(['/app']);
  });

  it('builds with the lockfile and ships the bundle only, without node_modules', () => {
    const build = stages.find((stage) => stage.name === 'build');
    expect(instructions(build, 'RUN').join('\n')).toMatch(/npm ci\b[\s\S]*npm run build/);
    // dist/ imports only Node's built-ins (ADR 0040): no stage installs production dependencies.
    expect(stages.map((stage) => stage.name)).toEqual(['build', 'runtime']);
    const copies = instructions(runtime, 'COPY');
    expect(copies.filter((copy) => copy.includes('node_modules'))).toEqual([]);
    expect(copies).toContain('--from=build --chown=0:0 /app/dist ./dist');
    // The kubectl plugin's entry is the one file of dist/ that dist/main.js never imports.
    expect(instructions(build, 'RUN').join('\n')).toMatch(/rm dist\/kubectl-kreload\.js/);
  });

  it('runs node dist/main.js directly, as the chart UID, on the chart metrics port', () => {
    expect(instructions(runtime, 'ENTRYPOINT').map((value): unknown => JSON.parse(value))).toEqual([
      ['node', 'dist/main.js'],
    ]);
    const uid = valueAt(values, 'reloader.deployment.securityContext.runAsUser');
    const gid = valueAt(values, 'reloader.deployment.securityContext.runAsGroup');
    expect(instructions(runtime, 'USER')).toEqual([`${String(uid)}:${String(gid)}`]);
    expect(uid).toBe(65532);
    expect(instructions(runtime, 'EXPOSE')).toEqual([
      String(valueAt(values, 'reloader.metricsPort')),
    ]);
  });

  it('carries OCI labels', () => {
    const labels = instructions(runtime, 'LABEL').join(' ');
    for (const key of ['title', 'description', 'licenses', 'version', 'revision', 'created']) {
      expect(labels).toContain(`org.opencontainers.image.${key}=`);
    }
  });

  it('sends only the build inputs as build context', async () => {
    const ignore = (await readFile(join(repoRoot, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignore[0]).toBe('*');
    for (const path of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'rolldown.config.ts',
      'LICENSE',
      'src/',
    ]) {
      expect(ignore).toContain(`!${path}`);
    }
  });

  it('versions the chart app like the package', () => {
    expect(valueAt(chart, 'appVersion')).toBe(valueAt(packageJson, 'version'));
  });
});
