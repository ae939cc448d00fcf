/**
 * `--enable-pprof` (§13.10, D46): a second listener with Node-native profiles. Nothing is served
 * unless the flag is set, and never on the metrics port.
 * - `/debug/profile?seconds=N` (N ≤ 60, default 30): a V8 CPU profile (`.cpuprofile` JSON);
 * - `/debug/heapsnapshot`: a V8 heap snapshot.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { getHeapSnapshot } from 'node:v8';

export interface ProfilingServerDeps {
  readonly host: string | undefined;
  readonly port: number;
  readonly onError?: (error: unknown) => void;
}

const MAX_SECONDS = 60;
const DEFAULT_SECONDS = 30;

/** Parses `seconds`; undefined when it is not an integer in 1…60. */
export function profileSeconds(query: URLSearchParams): number | undefined {
  const raw = query.get('seconds');
  if (raw === null) return DEFAULT_SECONDS;
  if (!/^\d+$/.test(raw)) return undefined;
  const seconds = Number(raw);
  return seconds >= 1 && seconds <= MAX_SECONDS ? seconds : undefined;
}

async function cpuProfile(seconds: number): Promise<string> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = await session.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
  }
}

export class ProfilingServer {
  readonly #deps: ProfilingServerDeps;
  #server: Server | undefined;

  constructor(deps: ProfilingServerDeps) {
    this.#deps = deps;
  }

  async start(): Promise<number> {
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#deps.onError?.(error);
        if (!res.headersSent) res.writeHead(500).end('profile failed\n');
        else res.destroy();
      });
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#deps.port, this.#deps.host, () => {
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/debug/profile') {
      const seconds = profileSeconds(url.searchParams);
      if (seconds === undefined) {
        res.writeHead(400).end(`seconds must be an integer from 1 to ${MAX_SECONDS}\n`);
        return;
      }
      const body = await cpuProfile(seconds);
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Disposition': 'attachment; filename="kreload.cpuprofile"',
      });
      res.end(body);
      return;
    }
    if (url.pathname === '/debug/heapsnapshot') {
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Disposition': 'attachment; filename="kreload.heapsnapshot"',
      });
      getHeapSnapshot().pipe(res);
      return;
    }
    res.writeHead(404).end('not found\n');
  }
}
