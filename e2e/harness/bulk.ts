// Many small objects quickly: kubectl sends a List's items over one kept-alive connection, where
// client-node opens a TLS connection per request (~35 creates/s on a loaded 2-core machine).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ClusterClient } from './cluster.ts';

const run = promisify(execFile);

/** Creates `objects` (full manifests) as the admin, in `processes` kubectl runs side by side. */
export async function createInBulk(
  cluster: ClusterClient,
  objects: readonly object[],
  processes = 4,
): Promise<void> {
  const directory = await mkdtemp(path.join(tmpdir(), 'kreload-bulk-'));
  try {
    const share = Math.ceil(objects.length / processes);
    await Promise.all(
      Array.from({ length: processes }, async (_, index) => {
        const items = objects.slice(index * share, (index + 1) * share);
        if (items.length === 0) return;
        const file = path.join(directory, `${String(index)}.json`);
        await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
        await run('kubectl', ['--kubeconfig', cluster.info.kubeconfigPath, 'create', '-f', file], {
          maxBuffer: 64 * 1024 * 1024,
        });
      }),
    );
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
