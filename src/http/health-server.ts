import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { createSystemLagMonitor } from './lag-monitor.ts';
import type { LagMonitor } from './lag-monitor.ts';
import { serializeReadinessReport } from './readiness.ts';
import type { ReadinessReport } from './readiness.ts';

export interface LivenessReport {
  readonly alive: boolean;
  readonly reason?: string;
}

export interface HealthReport {
  readonly ok: boolean;
  readonly reason?: string;
}

export interface HealthServerDeps {
  /** `--metrics-port`; 0 picks a free port (tests). */
  readonly port: number;
  /** Listen address; default all interfaces. */
  readonly host?: string;
  readonly registry: Pick<Registry, 'metrics' | 'contentType'>;
  readonly readiness: () => ReadinessReport;
  readonly liveness: () => LivenessReport;
  /** Health apart from the event loop, e.g. a watch that stopped for good. */
  readonly health: () => HealthReport;
  /** Default: a monitor on the process's own clock. */
  readonly lagMonitor?: LagMonitor;
  /** `/healthz` fails at or above this lag; default 5 s. */
  readonly maxLagMs?: number;
  /** A probe callback or the registry threw; the request was answered 500. */
  readonly onError?: (error: unknown) => void;
  /**
   * `--enable-debug-explain`: answers `GET /debug/explain` from its query (ADR 0031). Without it
   * that path is a 404 like any other.
   */
  readonly explain?: (query: URLSearchParams) => HttpReply | Promise<HttpReply>;
  /** `--health-addr`'s listener: only `/live`, `/healthz` and `/readyz`; the rest is a 404. */
  readonly probesOnly?: boolean;
}

export class HealthServerError extends Error {
  override readonly name = 'HealthServerError';
}

export interface HttpReply {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}
type Reply = HttpReply;

type Route = (
  deps: HealthServerDeps,
  lagMonitor: LagMonitor,
  query: URLSearchParams,
) => Promise<Reply> | Reply;

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json';
const DEFAULT_MAX_LAG_MS = 5_000;

function text(status: number, body: string): Reply {
  return { status, contentType: TEXT, body };
}

const ROUTES: Readonly<Record<string, Route>> = {
  '/metrics': async ({ registry }) => ({
    status: 200,
    contentType: registry.contentType,
    body: await registry.metrics(),
  }),
  '/live': ({ liveness }) => {
    const report = liveness();
    return report.alive ? text(200, 'alive') : text(500, report.reason ?? 'not alive');
  },
  '/healthz': ({ health, maxLagMs }, lagMonitor) => {
    const lagMs = lagMonitor.lagMs();
    if (lagMs >= (maxLagMs ?? DEFAULT_MAX_LAG_MS)) {
      return text(500, `event loop lag ${Math.round(lagMs)}ms`);
    }
    const report = health();
    return report.ok ? text(200, 'ok') : text(500, report.reason ?? 'unhealthy');
  },
  '/debug/explain': ({ explain }, _lagMonitor, query) =>
    explain === undefined ? text(404, 'not found') : explain(query),
  '/readyz': ({ readiness }) => {
    const report = readiness();
    return {
      status: report.ready ? 200 : 503,
      contentType: JSON_TYPE,
      body: serializeReadinessReport(report),
    };
  },
};

const PROBE_PATHS: ReadonlySet<string> = new Set(['/live', '/healthz', '/readyz']);

function routeOf(url: URL, probesOnly: boolean): Route | undefined {
  if (probesOnly && !PROBE_PATHS.has(url.pathname)) return undefined;
  return Object.hasOwn(ROUTES, url.pathname) ? ROUTES[url.pathname] : undefined;
}

/**
 * The one plain-HTTP listener (§13.1): `/metrics`, `/live`, `/healthz`, `/readyz`, and
 * `/debug/explain` when enabled; 404 for every other path, so nothing else (no pprof) is ever
 * exposed here.
 */
export class HealthServer {
  readonly #deps: HealthServerDeps;
  readonly #lagMonitor: LagMonitor;
  #server: Server | undefined;

  constructor(deps: HealthServerDeps) {
    this.#deps = deps;
    this.#lagMonitor = deps.lagMonitor ?? createSystemLagMonitor();
  }

  /** Listens and resolves with the bound port. */
  async start(): Promise<number> {
    if (this.#server) throw new HealthServerError('health server already started');
    const server = createServer((request, response) => {
      this.#handle(request, response).catch((error: unknown) => {
        response.destroy(error instanceof Error ? error : undefined);
      });
    });
    this.#server = server;
    this.#lagMonitor.start();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port: this.#deps.port, host: this.#deps.host }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      this.#server = undefined;
      this.#lagMonitor.stop();
      throw new HealthServerError(`cannot listen on port ${this.#deps.port}`, { cause: error });
    }
    const address = server.address();
    return isAddressInfo(address) ? address.port : this.#deps.port;
  }

  /** Stops listening and closes open connections. */
  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    this.#lagMonitor.stop();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      server.closeAllConnections();
    });
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = await this.#reply(request);
    response.writeHead(reply.status, {
      'content-type': reply.contentType,
      'content-length': Buffer.byteLength(reply.body),
    });
    response.end(request.method === 'HEAD' ? undefined : reply.body);
  }

  async #reply(request: IncomingMessage): Promise<Reply> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const route = routeOf(url, this.#deps.probesOnly === true);
    if (!route) return text(404, 'not found');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return text(405, 'method not allowed');
    }
    try {
      return await route(this.#deps, this.#lagMonitor, url.searchParams);
    } catch (error) {
      // A failing probe callback or collector must show as a failed probe, not a hung request.
      this.#deps.onError?.(error);
      return text(500, 'internal error');
    }
  }
}

function isAddressInfo(address: ReturnType<Server['address']>): address is AddressInfo {
  return typeof address === 'object' && address !== null;
}
