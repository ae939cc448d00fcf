/**
 * Kubeconfig errors are configuration errors (§12.5, §12.6): the file the lookup picks must parse and
 * name a usable context before kreload contacts anything.
 */
import { KubeConfig } from '../kube/client-node.ts';
import type { KubeconfigLookup, KubeconfigSource } from '../config/kubeconfig.ts';
import { resolveKubeconfig } from '../config/kubeconfig.ts';
import type { Options } from '../config/parse-options.ts';

/** Problem text, or undefined when the file parses and its current context names a cluster and user. */
export function checkKubeconfigFile(path: string): string | undefined {
  const config = new KubeConfig();
  try {
    config.loadFromFile(path);
  } catch (error) {
    return `cannot parse "${path}": ${error instanceof Error ? error.message : String(error)}`;
  }
  // Typed as string, but undefined when the file has no current-context: `!` covers both.
  const context = config.getCurrentContext();
  if (!context) return `"${path}" has no current-context`;
  if (config.getCurrentCluster() === null)
    return `"${path}": context "${context}" names no known cluster`;
  if (config.getCurrentUser() === null)
    return `"${path}": context "${context}" names no known user`;
  return undefined;
}

const SUBJECTS: Readonly<Record<Extract<KubeconfigSource, { kind: 'file' }>['from'], string>> = {
  '--kubeconfig': '--kubeconfig',
  KUBECONFIG: 'KUBECONFIG',
  HOME: '$HOME/.kube/config',
};

export function checkClusterConfig(
  options: Pick<Options, 'kubeconfig' | 'kubeconfigSearch'>,
  ports: {
    readonly fileExists: (path: string) => boolean;
    readonly checkFile?: (path: string) => string | undefined;
  },
): KubeconfigLookup {
  const lookup = resolveKubeconfig(options, ports.fileExists);
  if (lookup.source?.kind !== 'file') return lookup;
  const problem = (ports.checkFile ?? checkKubeconfigFile)(lookup.source.path);
  if (problem === undefined) return lookup;
  return {
    ...lookup,
    source: undefined,
    problems: [`${SUBJECTS[lookup.source.from]}: ${problem}`],
  };
}
