/**
 * A scripted fake API server on node:http for kube/ tests: it records every request and lets each
 * test answer them. Test support only (imported by *.test.ts).
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { KubeConfig } from '../kube/client-node.ts';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type TestHandler = (
  request: RecordedRequest,
  response: ServerResponse,
) => void | Promise<void>;

export interface TestApiServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Replaces the handler for requests from now on. */
  handle(handler: TestHandler): void;
  kubeConfig(): KubeConfig;
  /** Resolves once `count` requests matching `predicate` have been received. */
  waitForRequests(count: number, predicate?: (r: RecordedRequest) => boolean): Promise<void>;
  close(): Promise<void>;
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export function sendStatus(
  response: ServerResponse,
  code: number,
  reason: string,
  message = reason,
): void {
  sendJson(response, code, {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
    message,
  });
}

/** Answers a request by its path from a table; a path not in it gets a 404 `Status`. */
export type PathRoutes = Readonly<Record<string, (response: ServerResponse) => void>>;

export function routeByPath(routes: PathRoutes): TestHandler {
  return (request, response) => {
    const route = routes[request.path];
    if (route === undefined) sendStatus(response, 404, 'NotFound');
    else route(response);
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) {
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function startTestApiServer(initial?: TestHandler): Promise<TestApiServer> {
  let handler: TestHandler =
    initial ??
    ((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
  const requests: RecordedRequest[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://test');
      const recorded: RecordedRequest = {
        method: request.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
        body: await readBody(request),
      };
      requests.push(recorded);
      for (const wake of waiters) wake();
      await handler(recorded, response);
    })().catch((err: unknown) => {
      response.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    requests,
    handle(next) {
      handler = next;
    },
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'test', server: url, skipTLSVerify: true }],
        users: [{ name: 'test', token: 'test-token' }],
        contexts: [{ name: 'test', cluster: 'test', user: 'test' }],
        currentContext: 'test',
      });
      return kc;
    },
    waitForRequests(count, predicate = () => true) {
      return new Promise<void>((resolve) => {
        const check = (): void => {
          if (requests.filter(predicate).length >= count) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
