/**
 * The user's kubeconfig for the read-only commands (`explain`, `history`): `--kubeconfig`, else the
 * controller's own search (KUBECONFIG, ~/.kube/config, in-cluster), and the context's namespace.
 */
import { KubeConfig } from '../kube/client-node.ts';
import { readEnvSettings } from '../config/env-settings.ts';
import { resolveKubeconfig } from '../config/kubeconfig.ts';

/** No kubeconfig was found, or it could not be loaded: a usage error (exit 2). */
export class KubeconfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KubeconfigError';
  }
}

export function loadUserKubeConfig(
  kubeconfig: string | undefined,
  io: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly fileExists: (path: string) => boolean;
  },
): KubeConfig {
  const { settings } = readEnvSettings(io.env);
  const lookup = resolveKubeconfig(
    { kubeconfig, kubeconfigSearch: settings.kubeconfigSearch },
    io.fileExists,
  );
  if (lookup.source === undefined) throw new KubeconfigError(lookup.problems.join('; '));
  const kc = new KubeConfig();
  try {
    if (lookup.source.kind === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(lookup.source.path);
  } catch (error) {
    throw new KubeconfigError('cannot load the kubeconfig', { cause: error });
  }
  return kc;
}

export function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
