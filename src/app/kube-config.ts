import { KubeConfig } from '../kube/client-node.ts';
import { existsSync } from 'node:fs';
import { resolveKubeconfig } from '../config/kubeconfig.ts';
import type { Options } from '../config/parse-options.ts';

/** The first match of §12.5's lookup; run.ts has already checked that it exists and parses. */
export function loadKubeConfig(options: Options): KubeConfig {
  const lookup = resolveKubeconfig(options, existsSync);
  const kc = new KubeConfig();
  if (lookup.source === undefined) {
    throw new Error(`no cluster configuration: ${lookup.problems.join('; ')}`);
  }
  if (lookup.source.kind === 'in-cluster') kc.loadFromCluster();
  else kc.loadFromFile(lookup.source.path);
  return kc;
}
