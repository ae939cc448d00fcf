/**
 * The user's kubeconfig for the read-only commands (`explain`, `history`): `--kubeconfig`, else the
 * controller's own search (KUBECONFIG, ~/.kube/config, in-cluster), switched to `--context` when
 * given, and that context's namespace.
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
  choice: { readonly kubeconfig: string | undefined; readonly context: string | undefined },
  io: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly fileExists: (path: string) => boolean;
  },
): KubeConfig {
  const { settings } = readEnvSettings(io.env);
  const lookup = resolveKubeconfig(
    { kubeconfig: choice.kubeconfig, kubeconfigSearch: settings.kubeconfigSearch },
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
  const { context } = choice;
  if (context !== undefined) {
    const where =
      lookup.source.kind === 'in-cluster' ? 'the in-cluster config' : lookup.source.path;
    const known = kc.getContexts().map((entry) => entry.name);
    if (!known.includes(context)) {
      const names = known.length === 0 ? 'none' : known.join(', ');
      throw new KubeconfigError(`context "${context}" is not in ${where} (contexts: ${names})`);
    }
    kc.setCurrentContext(context);
  }
  return kc;
}

export function contextNamespace(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}
