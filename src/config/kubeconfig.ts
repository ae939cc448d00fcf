/**
 * Which cluster configuration to use (§12.5 "Kubeconfig lookup"), first match wins: `--kubeconfig`,
 * `$KUBECONFIG` if the file exists, `$HOME/.kube/config` if it exists, then the in-cluster service
 * account. Existence is asked through a port so the rule stays testable without files.
 */
import type { ConfigWarning } from './config-warning.ts';
import type { KubeconfigSearch } from './env-settings.ts';

export const SERVICE_ACCOUNT_TOKEN_PATH = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export type KubeconfigSource =
  | {
      readonly kind: 'file';
      readonly path: string;
      readonly from: '--kubeconfig' | 'KUBECONFIG' | 'HOME';
    }
  | { readonly kind: 'in-cluster' };

export interface KubeconfigLookup {
  readonly source: KubeconfigSource | undefined;
  readonly problems: readonly string[];
  readonly warnings: readonly ConfigWarning[];
}

export function resolveKubeconfig(
  input: { readonly kubeconfig: string | undefined; readonly kubeconfigSearch: KubeconfigSearch },
  fileExists: (path: string) => boolean,
): KubeconfigLookup {
  if (input.kubeconfig !== undefined) {
    return fileExists(input.kubeconfig)
      ? {
          source: { kind: 'file', path: input.kubeconfig, from: '--kubeconfig' },
          problems: [],
          warnings: [],
        }
      : {
          source: undefined,
          problems: [`--kubeconfig: file "${input.kubeconfig}" does not exist`],
          warnings: [],
        };
  }
  const { kubeconfigVar, home, serviceHost } = input.kubeconfigSearch;
  const warnings: ConfigWarning[] = [];
  if (kubeconfigVar !== undefined) {
    if (fileExists(kubeconfigVar)) {
      return {
        source: { kind: 'file', path: kubeconfigVar, from: 'KUBECONFIG' },
        problems: [],
        warnings,
      };
    }
    warnings.push({
      level: 'warn',
      subject: 'KUBECONFIG',
      message: `file "${kubeconfigVar}" does not exist; looking further`,
    });
  }
  const homeConfig = home === undefined ? undefined : `${home.replace(/\/+$/, '')}/.kube/config`;
  if (homeConfig !== undefined && fileExists(homeConfig)) {
    return { source: { kind: 'file', path: homeConfig, from: 'HOME' }, problems: [], warnings };
  }
  if (serviceHost !== undefined && fileExists(SERVICE_ACCOUNT_TOKEN_PATH)) {
    return { source: { kind: 'in-cluster' }, problems: [], warnings };
  }
  return {
    source: undefined,
    problems: [
      '--kubeconfig: no cluster configuration found (not set; no $KUBECONFIG or $HOME/.kube/config file; not running in a pod)',
    ],
    warnings,
  };
}
