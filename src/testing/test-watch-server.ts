/**
 * A watch server wired as the app wires it, against a test API server: the options' kind table,
 * fresh metrics, a recording logger, the system timers, no write ledger.
 */
import { Registry } from 'prom-client';
import { createKubeTransport } from '../kube/transport.ts';
import { createMetrics } from '../metrics/metrics.ts';
import { kindTable } from '../rollout/kinds.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import {
  createWatchServer,
  type WatchServer,
  type WatchServerDeps,
} from '../watch/watch-server.ts';
import { RecordingLogger } from './recording-logger.ts';
import type { TestApiServer } from './test-api-server.ts';

export function watchServerAgainst(
  api: TestApiServer,
  options: WatchServerDeps['options'] & {
    readonly customWorkloadKinds: Parameters<typeof kindTable>[0];
  },
  extra: Pick<WatchServerDeps, 'holdsNamespace'> = {},
): WatchServer {
  const metrics = createMetrics(new Registry(), { countByNamespace: false });
  return createWatchServer({
    options,
    kinds: kindTable(options.customWorkloadKinds),
    transport: createKubeTransport({ kubeConfig: api.kubeConfig(), metrics }),
    metrics,
    logger: new RecordingLogger(),
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    writeBasis: () => undefined,
    ...extra,
  });
}
