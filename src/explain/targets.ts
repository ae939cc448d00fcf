/**
 * The words that name what to explain, shared by `kreload explain <kind>/<name>` and
 * `GET /debug/explain?kind=…`: a workload kind of the kind table (its kind, plural or short name)
 * or a source type, case-insensitive.
 */
import type { SourceType, WorkloadKind } from '../core/types.ts';
import { WORKLOAD_KINDS } from '../rollout/kinds.ts';

export type ExplainTarget =
  | { readonly what: 'workload'; readonly kind: WorkloadKind }
  | { readonly what: 'source'; readonly type: SourceType };

const SHORT_NAMES: Readonly<Record<string, WorkloadKind>> = {
  deploy: 'Deployment',
  ds: 'DaemonSet',
  sts: 'StatefulSet',
  cj: 'CronJob',
  ro: 'Rollout',
  dc: 'DeploymentConfig',
};

const SOURCE_NAMES: Readonly<Record<string, SourceType>> = {
  configmap: 'CONFIGMAP',
  configmaps: 'CONFIGMAP',
  cm: 'CONFIGMAP',
  secret: 'SECRET',
  secrets: 'SECRET',
  secretproviderclass: 'SECRETPROVIDERCLASS',
  secretproviderclasses: 'SECRETPROVIDERCLASS',
  spc: 'SECRETPROVIDERCLASS',
};

/** What `word` names, or undefined for a word that names nothing explain knows. */
export function explainTargetOf(word: string): ExplainTarget | undefined {
  const lower = word.toLowerCase();
  const row = WORKLOAD_KINDS.find(
    (candidate) => candidate.kind.toLowerCase() === lower || candidate.plural === lower,
  );
  const kind = row?.kind ?? (Object.hasOwn(SHORT_NAMES, lower) ? SHORT_NAMES[lower] : undefined);
  if (kind !== undefined) return { what: 'workload', kind };
  const type = Object.hasOwn(SOURCE_NAMES, lower) ? SOURCE_NAMES[lower] : undefined;
  return type === undefined ? undefined : { what: 'source', type };
}
