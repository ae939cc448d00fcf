/** The reconciler options of a default install, for tests that build a Reconciler. */
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import type { ReconcileOptions } from '../reconcile/reconciler.ts';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';

export const DEFAULT_RECONCILE_OPTIONS: ReconcileOptions = {
  strategy: 'env-vars',
  reloadOnCreate: false,
  reloadOnDelete: false,
  keys: DEFAULT_ANNOTATION_KEYS,
  autoReloadAll: false,
  configRevisions: false,
  dryRun: false,
  kinds: BUILT_IN_KIND_TABLE,
};
