import { describe, expect, it } from 'vitest';
import { apiServerFigures, parseApiServerMetrics, type ApiServerReading } from './api-server.ts';

const METRICS = `# HELP apiserver_longrunning_requests [ALPHA] Gauge of all active long-running apiserver requests
# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{component="apiserver",group="",resource="configmaps",scope="cluster",subresource="",verb="WATCH",version="v1"} 3
apiserver_longrunning_requests{component="apiserver",group="apps",resource="deployments",scope="namespace",subresource="",verb="WATCH",version="v1"} 4
apiserver_longrunning_requests{component="apiserver",group="",resource="pods",scope="namespace",subresource="log",verb="CONNECT",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="cluster",subresource="",verb="LIST",version="v1"} 10
apiserver_request_total{code="201",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="namespace",subresource="",verb="POST",version="v1"} 5.5e+01
`;

describe('parseApiServerMetrics', () => {
  it.each([
    {
      name: 'watches: WATCH only; requests: every code and verb; no registered watchers',
      text: METRICS,
      reading: { at: 7, registeredWatchers: null, watches: 7, requests: 65 },
    },
    {
      name: 'registered watchers summed when served',
      text: `apiserver_registered_watchers{group="",kind="ConfigMap",version="v1"} 2\napiserver_registered_watchers{group="apps",kind="Deployment",version="v1"} 5\n`,
      reading: { at: 7, registeredWatchers: 7, watches: 0, requests: 0 },
    },
    {
      name: 'empty',
      text: '',
      reading: { at: 7, registeredWatchers: null, watches: 0, requests: 0 },
    },
  ])('$name', ({ text, reading }) => {
    expect(parseApiServerMetrics(text, 7)).toEqual(reading);
  });
});

describe('apiServerFigures', () => {
  const reading = (at: number, watches: number, requests: number): ApiServerReading => ({
    at,
    registeredWatchers: null,
    watches,
    requests,
  });
  it.each([
    {
      name: 'watches before and at the end; rate over settled → end',
      readings: {
        before: reading(0, 90, 100),
        settled: reading(10_000, 99, 1000),
        end: reading(30_000, 100, 3000),
      },
      figures: {
        watchesBefore: 90,
        watches: 100,
        registeredWatchers: null,
        requestsPerSecond: 100,
        windowSec: 20,
      },
    },
    {
      name: 'empty window: no rate',
      readings: { before: reading(0, 1, 0), settled: reading(5, 2, 10), end: reading(5, 2, 10) },
      figures: {
        watchesBefore: 1,
        watches: 2,
        registeredWatchers: null,
        requestsPerSecond: null,
        windowSec: 0,
      },
    },
    {
      name: 'counter went backwards (restarted API server): no rate',
      readings: {
        before: reading(0, 1, 0),
        settled: reading(0, 2, 500),
        end: reading(2000, 2, 10),
      },
      figures: {
        watchesBefore: 1,
        watches: 2,
        registeredWatchers: null,
        requestsPerSecond: null,
        windowSec: 2,
      },
    },
  ])('$name', ({ readings, figures }) => {
    expect(apiServerFigures(readings)).toEqual(figures);
  });
});
