/**
 * What the process does as leader besides reconciling (§5.2, §13.10): finish the Job recreations
 * journalled by any process (docs/adr/0019) and write the meta-info ConfigMap once per term.
 */
import type { Options } from '../config/parse-options.ts';
import type { ChangeRouter } from '../controller/change-router.ts';
import { ConfigMapClient } from '../kube/config-map-client.ts';
import { JOURNAL_NAME, KubeRecreationJournal } from '../kube/recreation-journal.ts';
import type { KubeTransport } from '../kube/transport.ts';
import type { Logger } from '../log/logger.ts';
import type { RecreationJournal } from '../reconcile/ports.ts';
import type { Reconciler } from '../reconcile/reconciler.ts';
import { type BuildInfo, META_INFO_NAME, metaInfoConfigMap } from './meta-info.ts';

export interface LeaderTermContext {
  readonly options: Options;
  readonly transport: KubeTransport;
  readonly logger: Logger;
  readonly version: string;
}

function buildInfo(releaseVersion: string): BuildInfo {
  return { nodeVersion: process.version, releaseVersion, commitHash: '', commitTime: '' };
}

/**
 * The Job recreation journal (docs/adr/0019) in kreload's own namespace. Without `POD_NAMESPACE`
 * (outside a cluster) it lives in this process only, and a crash between a Job's DELETE and its
 * CREATE loses the Job: said once at start.
 */
export function recreationJournal(context: LeaderTermContext): RecreationJournal | undefined {
  const { options, logger } = context;
  const namespace = options.podNamespace;
  if (options.ignoredWorkloadTypes.includes('jobs')) return undefined;
  if (namespace === undefined) {
    logger.warn(
      'POD_NAMESPACE is not set: Job recreations are journalled in memory only, and a Job ' +
        'deleted by a roll is lost if kreload stops before creating it again',
    );
    return undefined;
  }
  return new KubeRecreationJournal({
    transport: context.transport,
    namespace,
    onInvalidEntry: (key, reason) => {
      logger.warn('ignoring an invalid Job recreation journal entry', {
        journal: `${namespace}/${JOURNAL_NAME}`,
        key,
        reason,
      });
    },
  });
}

/**
 * Reads the journal and enqueues every Job whose recreation is pending: on gaining leadership and
 * at each resync, so a recreation another process journalled is finished here. Never in dry-run:
 * finishing one is a write.
 */
export function replayRecreations(
  context: LeaderTermContext,
  pipeline: { readonly reconciler: Reconciler; readonly router: ChangeRouter },
): void {
  if (context.options.dryRun) return;
  const { reconciler, router } = pipeline;
  reconciler
    .replayRecreations()
    .then((keys) => {
      router.triggerAll(keys);
    })
    .catch((error: unknown) => {
      context.logger.warn('cannot read the Job recreation journal; retried at the next resync', {
        error: error instanceof Error ? error.message : String(error),
      });
      router.triggerAll(reconciler.pendingRecreations());
    });
}

/** Once per leadership term; a failure is logged and ignored (§13.10). */
export function writeMetaInfo(context: LeaderTermContext): void {
  const { options } = context;
  const namespace = options.metaInfo.namespace;
  if (namespace === undefined || options.dryRun) return;
  const body = metaInfoConfigMap({ options, build: buildInfo(context.version), namespace });
  new ConfigMapClient({ transport: context.transport })
    .upsert(namespace, META_INFO_NAME, body)
    .catch((error: unknown) => {
      context.logger.warn('cannot write the meta-info ConfigMap', {
        namespace,
        error: error instanceof Error ? error.message : String(error),
      });
    });
}
