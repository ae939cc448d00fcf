/**
 * `--enable-pprof` (§13.10, D46): a second listener with Node-native profiles. Nothing is served
 * unless the flag is set, and never on the metrics port.
 * - `/debug/profile?seconds=N` (N ≤ 60, default 30): a V8 CPU profile (`.cpuprofile` JSON);
 * - `/debug/heapsnapshot`: a V8 heap snapshot. It is a copy of the heap: the ServiceAccount token and
 *   whatever Secret bytes are being hashed are in it (docs/security.md), hence loopback by default.
 * One capture runs at a time: each costs a core or a heap's worth of memory, and a second one
 * answers 409 instead of doubling that (ADR 0018).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { getHeapSnapshot } from 'node:v8';
import { setLongTimeout } from '../time/long-timeout.ts';

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
    await new Promise<void>((resolve) => {
      setLongTimeout(resolve, seconds * 1000);
    });
    const { profile } = await session.post('Profiler.stop');
    return JSON.stringify(profile);
  } finally {
    session.disconnect();
  }
}

export class ProfilingServer {
  readonly #deps: ProfilingServerDeps;
  #server: Server | undefined;
  /** A CPU profile or heap snapshot is being taken. */
  #capturing = false;

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
    const capture = CAPTURES.get(url.pathname);
    if (capture === undefined) {
      res.writeHead(404).end('not found\n');
      return;
    }
    if (this.#capturing) {
      res
        .writeHead(409)
        .end('another profile or heap snapshot is being taken; retry when it is done\n');
      return;
    }
    this.#capturing = true;
    try {
      await capture(url, res);
    } finally {
      this.#capturing = false;
    }
  }
}

async function serveCpuProfile(url: URL, res: ServerResponse): Promise<void> {
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
}

async function serveHeapSnapshot(_url: URL, res: ServerResponse): Promise<void> {
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Disposition': 'attachment; filename="kreload.heapsnapshot"',
  });
  // Resolves when the whole snapshot is written or the client went away: the capture is over either way.
  await pipeline(getHeapSnapshot(), res);
}

/** What each path captures. */
const CAPTURES: ReadonlyMap<string, (url: URL, res: ServerResponse) => Promise<void>> = new Map([
  ['/debug/profile', serveCpuProfile],
  ['/debug/heapsnapshot', serveHeapSnapshot],
]);
