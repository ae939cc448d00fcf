import type { Options } from '../config/parse-options.ts';
import { LeaseClient } from '../kube/lease-client.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { LeaderElector } from '../leader/leader-elector.ts';
import { SYSTEM_CLOCK, SYSTEM_TIMERS } from '../time/timers.ts';
import type { Logger } from '../log/logger.ts';

/** With `--enable-ha`, the elector on the configured Lease (§13.4); undefined without HA or with active-active. */
export function createElector(parts: {
  readonly options: Options;
  readonly transport: KubeTransport;
  readonly logger: Logger;
  readonly onStartedLeading: () => void;
  readonly onLostLeading: (reason: string) => void;
}): LeaderElector | undefined {
  const { leaderElection, podName } = parts.options;
  const { logger } = parts;
  if (!leaderElection.enabled || leaderElection.namespace === undefined) return undefined;
  // Active-active mode has no leader: the shard's Leases fence each namespace (app/shard.ts).
  if (parts.options.shard.mode === 'active-active') return undefined;
  return new LeaderElector({
    store: new LeaseClient({ transport: parts.transport }),
    identity: leaderElection.identity ?? podName ?? 'kreload',
    name: leaderElection.id,
    namespace: leaderElection.namespace,
    timings: {
      leaseDurationMs: leaderElection.leaseDurationMs,
      renewDeadlineMs: leaderElection.renewDeadlineMs,
      retryPeriodMs: leaderElection.retryPeriodMs,
    },
    releaseOnCancel: leaderElection.releaseOnCancel,
    clock: SYSTEM_CLOCK,
    timers: SYSTEM_TIMERS,
    onStartedLeading: () => {
      logger.info('leadership acquired', { lease: leaderElection.id });
      parts.onStartedLeading();
    },
    onLostLeading: (reason) => {
      logger.error('leadership lost; exiting', { reason });
      parts.onLostLeading(reason);
    },
    onError: (error) => {
      logger.warn('lease request failed', { error: error.message });
    },
  });
}
