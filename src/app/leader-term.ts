/**
 * What the process does as leader besides reconciling (§5.2, §13.10): finish the Job recreations
 * journalled by any process (docs/adr/0019) and write the meta-info ConfigMap once per term.
 */
import type { Options } from '../config/parse-options.ts';
import type { ChangeRouter } from '../controller/change-router.ts';
import { ConfigMapClient } from '../kube/config-map-client.ts';
import { namespaceRefusal } from '../config/scope.ts';
import { JournalKey } from '../kube/journal-key.ts';
import { JOURNAL_NAME, KubeRecreationJournal } from '../kube/recreation-journal.ts';
import type { KubeTransport } from '../kube/transport.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RecreationJournal } from '../reconcile/ports.ts';
import type { Reconciler } from '../reconcile/reconciler.ts';
import type { WorkloadKey } from '../core/types.ts';
import { type BuildInfo, META_INFO_NAME, metaInfoConfigMap } from './meta-info.ts';

export interface LeaderTermContext {
  readonly options: Options;
  readonly transport: KubeTransport;
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'recordJournalRefusal'>;
  readonly version: string;
}

function buildInfo(releaseVersion: string): BuildInfo {
  return { nodeVersion: process.version, releaseVersion, commitHash: '', commitTime: '' };
}

/**
 * Where the Job recreation journal lives (docs/adr/0019): kreload's own namespace, `POD_NAMESPACE`;
 * outside a cluster (no `POD_NAMESPACE`) the namespace of the kubeconfig's current context, or
 * `default` when it names none, as kubectl does. Never memory only: a Job a roll deletes must be
 * created again after a crash.
 */
export function journalNamespace(
  podNamespace: string | undefined,
  contextNamespace: string | undefined,
): { readonly namespace: string; readonly from: string } {
  if (podNamespace !== undefined) return { namespace: podNamespace, from: 'POD_NAMESPACE' };
  if (contextNamespace !== undefined && contextNamespace !== '') {
    return { namespace: contextNamespace, from: "the kubeconfig's current context" };
  }
  return {
    namespace: 'default',
    from: "the default namespace: POD_NAMESPACE is not set and the kubeconfig's context names none",
  };
}

export interface JournalPlacement {
  /** Namespace of the kubeconfig's current context, if it names one. */
  readonly contextNamespace: string | undefined;
  /** Whether the namespace selector currently selects `namespace` (true without a selector). */
  readonly isSelected: (namespace: string) => boolean;
}

/**
 * The Job recreation journal (docs/adr/0019), signed with kreload's key, replaying only Jobs in
 * namespaces kreload acts on. Undefined with `jobs` in `--ignored-workload-types`.
 */
export function recreationJournal(
  context: LeaderTermContext,
  placement: JournalPlacement,
): RecreationJournal | undefined {
  const { options, logger, metrics, transport } = context;
  if (options.ignoredWorkloadTypes.includes('jobs')) return undefined;
  const { namespace, from } = journalNamespace(options.podNamespace, placement.contextNamespace);
  if (options.podNamespace === undefined) {
    logger.info('POD_NAMESPACE is not set: Job rolls journal the Job in this namespace', {
      journal: `${namespace}/${JOURNAL_NAME}`,
      from,
    });
  }
  return new KubeRecreationJournal({
    transport,
    namespace,
    key: new JournalKey({ transport, namespace }),
    refuseNamespace: (candidate) =>
      namespaceRefusal(options.scope, candidate, placement.isSelected),
    onInvalidEntry: (key, { refused, message }) => {
      logger.warn('refusing a Job recreation journal entry: no Job is created from it', {
        journal: `${namespace}/${JOURNAL_NAME}`,
        key,
        reason: message,
      });
      metrics.recordJournalRefusal(refused);
    },
  });
}

/**
 * Reads the journal and enqueues every Job whose recreation is pending: on gaining leadership and
 * at each resync, so a recreation another process journalled is finished here. Never in dry-run:
 * finishing one is a write. Active-active passes `select`: only the Jobs of the namespaces this
 * replica writes to now (all it owns, or a bucket just acquired); the others are their owners'.
 */
export function replayRecreations(
  context: Pick<LeaderTermContext, 'options' | 'logger'>,
  pipeline: {
    readonly reconciler: Pick<Reconciler, 'replayRecreations' | 'pendingRecreations'>;
    readonly router: Pick<ChangeRouter, 'triggerAll'>;
  },
  select: (keys: readonly WorkloadKey[]) => WorkloadKey[] = (keys) => [...keys],
): void {
  if (context.options.dryRun) return;
  const { reconciler, router } = pipeline;
  reconciler
    .replayRecreations()
    .then((keys) => {
      router.triggerAll(select(keys));
    })
    .catch((error: unknown) => {
      context.logger.warn('cannot read the Job recreation journal; retried at the next resync', {
        error: error instanceof Error ? error.message : String(error),
      });
      router.triggerAll(select(reconciler.pendingRecreations()));
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
