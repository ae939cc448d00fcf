// deploy/ holds the chart rendered with default values; it must not drift from helm/kreload.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HELM_BUILD_TIMEOUT_MS,
  NAMESPACE,
  locateHelm,
  parseObjects,
  repoRoot,
} from './chart-harness.ts';

const run = promisify(execFile);
const DEPLOY_FILES = ['kreload.yaml', 'kustomization.yaml'];

describe('deploy/ plain manifests', () => {
  let rendered = '';

  beforeAll(async () => {
    const helm = await locateHelm();
    rendered = await mkdtemp(join(tmpdir(), 'kreload-deploy-'));
    await run('bash', [join(repoRoot, 'scripts', 'render-deploy.sh'), rendered], {
      env: { ...process.env, HELM: helm },
    });
  }, HELM_BUILD_TIMEOUT_MS);

  afterAll(async () => {
    if (rendered) {
      await rm(rendered, { recursive: true, force: true });
    }
  });

  it('holds exactly the rendered files', async () => {
    expect((await readdir(rendered)).sort()).toEqual(DEPLOY_FILES);
    const committed = await readdir(join(repoRoot, 'deploy'));
    expect(committed.filter((file) => file.endsWith('.yaml')).sort()).toEqual(DEPLOY_FILES);
  });

  it.each(DEPLOY_FILES)(
    'deploy/%s matches the chart (run scripts/render-deploy.sh)',
    async (file) => {
      const committed = await readFile(join(repoRoot, 'deploy', file), 'utf8');
      expect(committed).toBe(await readFile(join(rendered, file), 'utf8'));
    },
  );

  it('creates its namespace under the restricted Pod Security level', async () => {
    const objects = parseObjects(await readFile(join(repoRoot, 'deploy', 'kreload.yaml'), 'utf8'));
    const namespace = objects.find((object) => object.kind === 'Namespace');
    expect(namespace?.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const namespaced = objects.filter((object) => object.metadata.namespace !== undefined);
    expect(new Set(namespaced.map((object) => object.metadata.namespace))).toEqual(
      new Set([namespace?.metadata.name]),
    );
    expect(namespace?.metadata.name).toBe(NAMESPACE);
  });
});
