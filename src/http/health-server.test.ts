import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { HealthServer, HealthServerError } from './health-server.ts';
import type { HealthReport, HealthServerDeps, LivenessReport } from './health-server.ts';
import type { LagMonitor } from './lag-monitor.ts';
import type { ReadinessReport } from './readiness.ts';

class FakeLagMonitor implements LagMonitor {
  lag = 0;
  running = false;
  start(): void {
    this.running = true;
  }
  stop(): void {
    this.running = false;
  }
  lagMs(): number {
    return this.lag;
  }
}

const READY: ReadinessReport = {
  ready: true,
  checks: {
    cachesSynced: true,
    apiServer: 'ok',
    leaderElection: 'leader',
    kinds: { configmaps: 'ok', rollouts: 'forbidden' },
    namespaces: {},
    permitted: true,
  },
};

interface Probes {
  readiness: ReadinessReport;
  liveness: LivenessReport;
  health: HealthReport;
}

const servers: HealthServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function startServer(
  override: Partial<HealthServerDeps> = {},
): Promise<{ base: string; probes: Probes; lag: FakeLagMonitor; server: HealthServer }> {
  const registry = new Registry();
  new Counter({ name: 'test_total', help: 'a test counter', registers: [registry] }).inc(3);
  const probes: Probes = { readiness: READY, liveness: { alive: true }, health: { ok: true } };
  const lag = new FakeLagMonitor();
  const server = new HealthServer({
    port: 0,
    host: '127.0.0.1',
    registry,
    readiness: () => probes.readiness,
    liveness: () => probes.liveness,
    health: () => probes.health,
    lagMonitor: lag,
    ...override,
  });
  servers.push(server);
  const port = await server.start();
  return { base: `http://127.0.0.1:${port}`, probes, lag, server };
}

async function get(
  url: string,
  method = 'GET',
): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(url, { method });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: await response.text(),
  };
}

describe('HealthServer', () => {
  it('serves the injected registry on /metrics in Prometheus text format', async () => {
    const { base } = await startServer();
    const response = await get(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.body).toContain('\ntest_total 3\n');
  });

  it('answers /live with 200 alive, then 500 with the reason', async () => {
    const { base, probes } = await startServer();
    expect(await get(`${base}/live`)).toEqual({
      status: 200,
      type: 'text/plain; charset=utf-8',
      body: 'alive',
    });
    probes.liveness = { alive: false, reason: 'lost leadership' };
    expect(await get(`${base}/live`)).toMatchObject({ status: 500, body: 'lost leadership' });
  });

  it('answers /healthz with 200 ok while healthy and 500 with the reason otherwise', async () => {
    const { base, probes } = await startServer();
    expect(await get(`${base}/healthz`)).toEqual({
      status: 200,
      type: 'text/plain; charset=utf-8',
      body: 'ok',
    });
    probes.health = { ok: false, reason: 'watch of deployments stopped' };
    expect(await get(`${base}/healthz`)).toMatchObject({
      status: 500,
      body: 'watch of deployments stopped',
    });
  });

  it.each([
    [4_999, 200, 'ok'],
    [5_000, 500, 'event loop lag 5000ms'],
  ])('answers /healthz with lag %i ms → %i', async (lagMs, status, body) => {
    const { base, lag } = await startServer();
    lag.lag = lagMs;
    expect(await get(`${base}/healthz`)).toMatchObject({ status, body });
  });

  it('runs the lag monitor only while started', async () => {
    const { lag, server } = await startServer();
    expect(lag.running).toBe(true);
    await server.stop();
    expect(lag.running).toBe(false);
  });

  it('answers /readyz with 200 and the exact JSON body when ready', async () => {
    const { base } = await startServer();
    expect(await get(`${base}/readyz`)).toEqual({
      status: 200,
      type: 'application/json',
      body:
        '{"ready":true,"checks":{"cachesSynced":true,"apiServer":"ok","leaderElection":"leader",' +
        '"kinds":{"configmaps":"ok","rollouts":"forbidden"},"permitted":true}}',
    });
  });

  it('answers /readyz with 503 and the JSON body when not ready', async () => {
    const { base, probes } = await startServer();
    probes.readiness = {
      ready: false,
      checks: {
        cachesSynced: false,
        apiServer: 'unreachable: timeout',
        leaderElection: 'disabled',
        kinds: { secrets: 'syncing' },
        namespaces: {},
        permitted: false,
      },
    };
    expect(await get(`${base}/readyz`)).toMatchObject({
      status: 503,
      body:
        '{"ready":false,"checks":{"cachesSynced":false,"apiServer":"unreachable: timeout",' +
        '"leaderElection":"disabled","kinds":{"secrets":"syncing"},"permitted":false}}',
    });
  });

  it.each(['/', '/debug/pprof/', '/metricsx', '/live/', '/readyz/extra'])(
    'answers %s with 404',
    async (path) => {
      const { base } = await startServer();
      expect((await get(`${base}${path}`)).status).toBe(404);
    },
  );

  it('ignores the query string when routing', async () => {
    const { base } = await startServer();
    expect(await get(`${base}/live?verbose=1`)).toMatchObject({ status: 200, body: 'alive' });
  });

  it('answers HEAD without a body and other methods with 405', async () => {
    const { base } = await startServer();
    expect(await get(`${base}/live`, 'HEAD')).toMatchObject({ status: 200, body: '' });
    expect((await get(`${base}/live`, 'POST')).status).toBe(405);
  });

  it('answers 500 and reports the error when a probe throws', async () => {
    const errors: unknown[] = [];
    const boom = new Error('boom');
    const { base } = await startServer({
      readiness: () => {
        throw boom;
      },
      onError: (error) => errors.push(error),
    });
    expect(await get(`${base}/readyz`)).toMatchObject({ status: 500, body: 'internal error' });
    expect(errors).toEqual([boom]);
  });

  it('rejects with a HealthServerError when the port is taken', async () => {
    const { base } = await startServer();
    const port = Number(new URL(base).port);
    const second = new HealthServer({
      port,
      host: '127.0.0.1',
      registry: new Registry(),
      readiness: () => READY,
      liveness: () => ({ alive: true }),
      health: () => ({ ok: true }),
      lagMonitor: new FakeLagMonitor(),
    });
    await expect(second.start()).rejects.toBeInstanceOf(HealthServerError);
  });

  it('stops listening on stop', async () => {
    const { base, server } = await startServer();
    await server.stop();
    await expect(fetch(`${base}/live`)).rejects.toThrow();
  });
});

describe('HealthServer /debug/explain', () => {
  it('is a 404 unless an explain handler is given', async () => {
    const { base } = await startServer();
    expect((await get(`${base}/debug/explain?kind=Deployment`)).status).toBe(404);
  });

  it('hands the query to the handler and serves its reply; other methods are 405', async () => {
    const queries: string[] = [];
    const { base } = await startServer({
      explain: (query) => {
        queries.push(query.toString());
        return { status: 400, contentType: 'application/json', body: '{"error":"x"}' };
      },
    });
    const reply = await get(`${base}/debug/explain?kind=cm&namespace=a&name=b`);
    expect(reply).toEqual({ status: 400, type: 'application/json', body: '{"error":"x"}' });
    expect(queries).toEqual(['kind=cm&namespace=a&name=b']);
    expect((await get(`${base}/debug/explain`, 'POST')).status).toBe(405);
  });

  it('answers 500 when the handler throws, and reports it', async () => {
    const errors: unknown[] = [];
    const { base } = await startServer({
      explain: () => {
        throw new Error('boom');
      },
      onError: (error) => errors.push(error),
    });
    expect((await get(`${base}/debug/explain?kind=cm`)).status).toBe(500);
    expect(errors).toHaveLength(1);
  });
});

describe('HealthServer with probesOnly (--health-addr)', () => {
  it('answers the probes and 404s /metrics and /debug/explain', async () => {
    const { base } = await startServer({
      probesOnly: true,
      explain: () => ({ status: 200, contentType: 'text/plain', body: 'explained' }),
    });
    const statuses = await Promise.all(
      ['/live', '/healthz', '/readyz', '/metrics', '/debug/explain?kind=Deployment'].map(
        async (path) => [path, (await fetch(`${base}${path}`)).status],
      ),
    );
    expect(statuses).toEqual([
      ['/live', 200],
      ['/healthz', 200],
      ['/readyz', 200],
      ['/metrics', 404],
      ['/debug/explain?kind=Deployment', 404],
    ]);
  });
});
