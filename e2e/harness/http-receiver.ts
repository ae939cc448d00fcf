// A local HTTP endpoint that stands in for an alert sink or a --webhook-url receiver: it records
// every request (method, path, content type, body) and answers with a status the spec chooses.
import http from 'node:http';
import { pollUntil } from './poll.ts';

export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly contentType: string;
  readonly body: string;
  /** Date.now() when the body was complete. */
  readonly receivedAt: number;
}

export interface HttpReceiverDeps {
  /** The status each request gets, in order; the last entry repeats. Default: always 200. */
  readonly statuses?: readonly number[];
}

export class HttpReceiver {
  readonly #deps: HttpReceiverDeps;
  readonly #requests: ReceivedRequest[] = [];
  #server: http.Server | undefined;
  #port: number | undefined;

  constructor(deps: HttpReceiverDeps = {}) {
    this.#deps = deps;
  }

  get requests(): readonly ReceivedRequest[] {
    return [...this.#requests];
  }

  /** `http://127.0.0.1:<port><pathname>`; valid after start(). */
  url(pathname: string): string {
    if (this.#port === undefined) throw new Error('HttpReceiver is not started');
    return `http://127.0.0.1:${this.#port}${pathname}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const statuses = this.#deps.statuses ?? [200];
        const status = statuses[Math.min(this.#requests.length, statuses.length - 1)] ?? 200;
        this.#requests.push({
          method: request.method ?? '',
          url: request.url ?? '',
          contentType: request.headers['content-type'] ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        });
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(status < 400 ? 'ok' : 'failing on purpose');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => {
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('receiver has no port');
    this.#server = server;
    this.#port = address.port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
  }

  /** Resolves with all requests once at least `count` arrived. */
  waitForRequests(count: number, timeoutMs = 30_000): Promise<readonly ReceivedRequest[]> {
    return pollUntil(() => (this.#requests.length >= count ? this.requests : undefined), {
      timeoutMs,
      intervalMs: 50,
      describe: `${count} request(s) at the HTTP receiver`,
    });
  }
}
