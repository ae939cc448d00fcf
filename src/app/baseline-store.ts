/**
 * The baseline store of `--baseline-store=namespace` (docs/adr/0046), composed: its ConfigMaps in
 * kreload's own namespace list-watched, the batched writer, and what `/readyz` and the log say of
 * it. kreload reconciles nothing before the store is synced, so a first sight never mistakes a
 * record not yet read for a missing one.
 */
import type { Options } from '../config/parse-options.ts';
import { heldWriteMessage, holdForever, type TestFailpoint } from '../config/test-failpoint.ts';
import type { WatchState } from '../http/readiness.ts';
import {
  type BaselineFence,
  BASELINE_STORE_SELECTOR,
  type FallBackCause,
  KubeBaselineStore,
  projectStoreObject,
  refusedMessage,
  storeProblemMessage,
} from '../kube/baseline-store.ts';
import type { StoreObject } from '../kube/baseline-records.ts';
import type { ListWatch } from '../kube/list-watch.ts';
import type { BaselineStoreMetrics } from '../metrics/baseline-store-metrics.ts';
import { createResourceListWatch } from '../kube/resource-list-watch.ts';
import { OTHER_RESOURCES } from '../kube/resources.ts';
import type { StreamingKubeTransport } from '../kube/transport.ts';
import type { Logger } from '../log/logger.ts';
import type { Timers } from '../time/timers.ts';
import { journalNamespace } from './leader-term.ts';

/** The resource name the store's list-watch has in `/readyz`. */
export const STORE_READINESS_RESOURCE = 'baseline-store';

export interface BaselineStoreRuntime {
  readonly store: KubeBaselineStore;
  readonly watch: ListWatch<StoreObject>;
  readonly namespace: string;
  /**
   * Resolves once first sights may be planned: the store's first list is read, or the store fell
   * back to baselines on the workloads (its ConfigMaps are forbidden).
   */
  readonly settled: Promise<void>;
  /** The store's watch as `/readyz` sees it while the store is in use; none after a fall-back. */
  readiness(): readonly WatchState[];
}

export interface BaselineStoreContext {
  readonly options: Options;
  readonly transport: StreamingKubeTransport;
  readonly logger: Logger;
  readonly timers: Timers;
  readonly random: () => number;
  readonly mayWrite: () => boolean;
  /** Active-active: the bucket fence the records of each namespace pass (docs/adr/0051). */
  readonly fence?: BaselineFence | undefined;
  /** Namespace of the kubeconfig's current context, if it names one. */
  readonly contextNamespace: string | undefined;
  /** After a fall-back: every workload again, so those the store held get B in W. */
  readonly onFellBack: () => void;
  readonly metrics: BaselineStoreMetrics;
  /** Test-only: `baseline-store-write` holds every batch forever (config/test-failpoint.ts). */
  readonly testFailpoint?: TestFailpoint | undefined;
}

const FALL_BACK_CAUSES: Readonly<Record<FallBackCause, string>> = {
  'list-forbidden': 'cannot list',
  'write-forbidden': 'cannot write',
};

/** Undefined unless `--baseline-store=namespace`. */
export function createBaselineStore(
  context: BaselineStoreContext,
): BaselineStoreRuntime | undefined {
  const { options, transport, logger, timers, random } = context;
  if (options.baselineStore !== 'namespace') return undefined;
  const { namespace, from } = journalNamespace(options.podNamespace, context.contextNamespace);
  const where = { namespace, selector: BASELINE_STORE_SELECTOR };
  if (options.podNamespace === undefined) {
    logger.info('POD_NAMESPACE is not set: first-sight baselines are kept in this namespace', {
      ...where,
      from,
    });
  }
  const fellBack = Promise.withResolvers<undefined>();
  const store = new KubeBaselineStore({
    transport,
    namespace,
    timers,
    random,
    mayWrite: context.mayWrite,
    fence: context.fence,
    ...(context.testFailpoint === 'baseline-store-write' && {
      beforeWrite: (batch) => {
        logger.warn(heldWriteMessage('baseline-store-write'), {
          ...where,
          object: batch.object,
          records: batch.data.size,
        });
        return holdForever();
      },
    }),
    events: {
      onRefused: (refused) => {
        logger.warn('baseline not recorded', { ...where, reason: refusedMessage(refused) });
      },
      onLost: (object, records) => {
        logger.warn(
          'baseline store object gone: its workloads are baselined again, without a roll',
          { ...where, object, records },
        );
      },
      onIgnored: (problem) => {
        logger.warn('baseline store record not read', {
          ...where,
          object: problem.object,
          reason: storeProblemMessage(problem),
        });
      },
      onWriteFailed: (batch, error, retryInMs) => {
        context.metrics.writeFailed(retryInMs !== undefined);
        logger.warn('baseline store write failed', {
          ...where,
          object: batch.object,
          records: batch.data.size,
          error: error.message,
          ...(retryInMs === undefined ? { givenUp: true } : { retryInMs }),
        });
      },
      onStatus: (status) => {
        if (status !== 'forbidden') return;
        if (watch.isSynced) {
          logger.error(
            'cannot list the baseline store any more: records already read are kept ' +
              '(configmaps get, list, watch, create and patch in its own namespace)',
            where,
          );
        } else {
          store.fallBack('list-forbidden');
        }
      },
      onFellBack: (cause) => {
        logger.error(
          `${FALL_BACK_CAUSES[cause]} the baseline store: first-sight baselines are written to ` +
            'the workloads instead, as with --baseline-store=workload. Grant configmaps get, ' +
            "list, watch, create and patch in kreload's namespace and restart to keep them off " +
            'the workloads',
          where,
        );
        fellBack.resolve(undefined);
        void watch.stop();
        context.onFellBack();
      },
    },
  });
  const watch = createResourceListWatch({
    transport,
    resource: OTHER_RESOURCES.configMaps,
    namespace,
    labelSelector: BASELINE_STORE_SELECTOR,
    project: projectStoreObject,
    consumer: store.consumer,
    timers,
    random,
  });
  return {
    store,
    watch,
    namespace,
    settled: Promise.race([watch.synced, fellBack.promise]),
    readiness: () =>
      store.inUse()
        ? [
            {
              resource: STORE_READINESS_RESOURCE,
              namespace,
              status: watch.isSynced ? 'ok' : 'syncing',
            },
          ]
        : [],
  };
}
