import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '../kube/client-node.ts';

/**
 * Writes a kubeconfig whose current context `nowhere` points at a closed port, beside context
 * `context` (namespace `namespace`) that reaches `server`: what `--context` must pick. Returns its
 * path.
 */
export function writeTwoContextKubeconfig(
  server: string,
  context: string,
  namespace: string,
): string {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'test', server, skipTLSVerify: true },
      { name: 'nowhere', server: 'http://127.0.0.1:9', skipTLSVerify: true },
    ],
    users: [{ name: 'test', token: 'test-token' }],
    contexts: [
      { name: context, cluster: 'test', user: 'test', namespace },
      { name: 'nowhere', cluster: 'nowhere', user: 'test' },
    ],
    currentContext: 'nowhere',
  });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kreload-contexts-')), 'config');
  writeFileSync(file, kc.exportConfig());
  return file;
}
