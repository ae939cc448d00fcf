/**
 * kube-apiserver's own view of a run, from its /metrics: the watches it serves and the requests it
 * answered (every client: the controller, the bench, kube-controller-manager), read before the
 * controller starts, once it has settled, and at the end of the drain. The parsing is pure.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parsePrometheusText, type MetricSample } from '../harness/metrics.ts';

export interface ApiServerReading {
  /** performance.now() of the read. */
  readonly at: number;
  /**
   * `apiserver_registered_watchers` summed, or null: this kube-apiserver does not serve it (it
   * went away with the watch cache's own metrics in 1.2x).
   */
  readonly registeredWatchers: number | null;
  /** `apiserver_longrunning_requests{verb="WATCH"}` summed: the watches open now. */
  readonly watches: number;
  /** `apiserver_request_total` summed: every request answered since it started. */
  readonly requests: number;
}

export interface ApiServerFigures {
  /** Watches open before the controller started, and at the end of the drain (it still runs). */
  readonly watchesBefore: number;
  readonly watches: number;
  readonly registeredWatchers: number | null;
  /** Requests per second answered (all clients) from the controller settled to the end of the drain. */
  readonly requestsPerSecond: number | null;
  readonly windowSec: number;
}

const sumOf = (
  samples: readonly MetricSample[],
  name: string,
  keep: (labels: Readonly<Record<string, string>>) => boolean = () => true,
): number | null => {
  const matching = samples.filter((sample) => sample.name === name && keep(sample.labels));
  return matching.length === 0 ? null : matching.reduce((total, s) => total + s.value, 0);
};

export function parseApiServerMetrics(text: string, at: number): ApiServerReading {
  const samples = parsePrometheusText(text);
  return {
    at,
    registeredWatchers: sumOf(samples, 'apiserver_registered_watchers'),
    watches: sumOf(samples, 'apiserver_longrunning_requests', (l) => l.verb === 'WATCH') ?? 0,
    requests: sumOf(samples, 'apiserver_request_total') ?? 0,
  };
}

/**
 * Watches before the start and at the end; the request rate between `settled` and `end` (null when that
 * window is empty or a counter went backwards: a restarted kube-apiserver).
 */
export function apiServerFigures(readings: {
  before: ApiServerReading;
  settled: ApiServerReading;
  end: ApiServerReading;
}): ApiServerFigures {
  const { before, settled, end } = readings;
  const seconds = (end.at - settled.at) / 1000;
  const delta = end.requests - settled.requests;
  return {
    watchesBefore: before.watches,
    watches: end.watches,
    registeredWatchers: end.registeredWatchers,
    requestsPerSecond: seconds > 0 && delta >= 0 ? Math.round((delta / seconds) * 10) / 10 : null,
    windowSec: Math.round(seconds * 10) / 10,
  };
}

const run = promisify(execFile);

/** `kubectl get --raw /metrics` as the cluster's admin. */
export async function readApiServer(kubeconfig: string): Promise<ApiServerReading> {
  const { stdout } = await run(
    'kubectl',
    ['--kubeconfig', kubeconfig, 'get', '--raw', '/metrics'],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return parseApiServerMetrics(stdout, performance.now());
}
