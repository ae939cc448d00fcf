import { writeFile } from 'node:fs/promises';

export interface KubeconfigSpec {
  readonly server: string;
  readonly caPath: string;
  readonly userName: string;
  readonly token: string;
}

/**
 * A single-context kubeconfig as JSON (a subset of YAML, so kubectl, client-node and the Go
 * components all read it). The CA is referenced by path: it lives as long as the run directory.
 */
export function renderKubeconfig(spec: KubeconfigSpec): string {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'kreload-e2e',
        cluster: { server: spec.server, 'certificate-authority': spec.caPath },
      },
    ],
    users: [{ name: spec.userName, user: { token: spec.token } }],
    contexts: [{ name: spec.userName, context: { cluster: 'kreload-e2e', user: spec.userName } }],
    'current-context': spec.userName,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** Writes the kubeconfig readable by the owner only: it carries a bearer token. */
export async function writeKubeconfig(filePath: string, spec: KubeconfigSpec): Promise<string> {
  await writeFile(filePath, renderKubeconfig(spec), { mode: 0o600 });
  return filePath;
}
