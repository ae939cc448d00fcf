import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { Registry } from 'prom-client';
import { createMetrics, type RestRequestRecord } from '../metrics/metrics.ts';
import {
  buildUrl,
  createKubeTransport,
  DISPATCHER_MAX_AGE_MS,
  HttpMethod,
  NO_ANSWER_CODE,
} from './transport.ts';

let server: TestApiServer;
beforeEach(async () => {
  server = await startTestApiServer();
});
afterEach(async () => {
  await server.close();
});

describe('buildUrl', () => {
  it.each([
    ['https://k:6443', '/api/v1/pods', {}, 'https://k:6443/api/v1/pods'],
    ['https://k:6443/', '/api/v1/pods', { limit: 500 }, 'https://k:6443/api/v1/pods?limit=500'],
    [
      'https://k/prefix',
      '/apis/apps/v1/deployments',
      { labelSelector: 'a in (b,c)', continue: undefined, watch: true },
      'https://k/prefix/apis/apps/v1/deployments?labelSelector=a+in+%28b%2Cc%29&watch=true',
    ],
  ])('%s + %s', (serverUrl, path, query, expected) => {
    expect(buildUrl(serverUrl, path, query)).toBe(expected);
  });
});

describe('createKubeTransport', () => {
  it('sends an authenticated JSON request and parses the answer', async () => {
    server.handle((_request, response) => {
      sendJson(response, 201, { metadata: { name: 'x' } });
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const answer = await transport.request({
      method: HttpMethod.POST,
      path: '/api/v1/namespaces/ns/events',
      query: { fieldManager: 'kreload' },
      body: { reason: 'Reloaded' },
      contentType: 'application/json',
    });
    expect(answer).toEqual({ metadata: { name: 'x' } });
    const [request] = server.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/api/v1/namespaces/ns/events',
      body: '{"reason":"Reloaded"}',
    });
    expect(request?.query.get('fieldManager')).toBe('kreload');
    expect(request?.headers).toMatchObject({
      authorization: 'Bearer test-token',
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': 'kreload',
    });
  });

  it('sends no body and no content type on GET; an empty answer is undefined', async () => {
    server.handle((_request, response) => {
      response.writeHead(200).end();
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    await expect(
      transport.request({ method: HttpMethod.GET, path: '/x' }),
    ).resolves.toBeUndefined();
    expect(server.requests[0]?.headers['content-type']).toBeUndefined();
    expect(server.requests[0]?.body).toBe('');
  });

  it('maps a Status answer to ApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 422, 'Invalid', 'metadata.annotations: Too long');
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const failure = transport.request({ method: HttpMethod.GET, path: '/x' });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({
      status: 422,
      reason: 'Invalid',
      retryable: false,
      message: '422 Invalid: metadata.annotations: Too long',
    });
  });

  it('a refused connection is a retryable network error', async () => {
    const kubeConfig = server.kubeConfig();
    await server.close();
    const transport = createKubeTransport({ kubeConfig });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).rejects.toMatchObject({
      reason: 'ECONNREFUSED',
      retryable: true,
    });
    server = await startTestApiServer();
  });

  it('a server that never answers times out, retryably', async () => {
    server.handle(() => {
      // never answer
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig(), timeoutMs: 50 });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).rejects.toMatchObject({
      reason: 'Timeout',
      retryable: true,
    });
  });

  it('a caller abort is not retryable', async () => {
    server.handle(() => {
      // never answer
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const controller = new AbortController();
    const pending = transport.request({
      method: HttpMethod.GET,
      path: '/x',
      signal: controller.signal,
    });
    await server.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ reason: 'Aborted', retryable: false });
  });
});

describe('createKubeTransport: answers read whole', () => {
  it('an answer sent in many chunks is parsed once it is complete', async () => {
    const items = Array.from({ length: 2_000 }, (_, i) => ({ name: `item-${String(i)}` }));
    const text = JSON.stringify({ items });
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      for (let at = 0; at < text.length; at += 1_000) response.write(text.slice(at, at + 1_000));
      response.end();
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).resolves.toEqual({
      items,
    });
  });

  it('a body that stops half-way times out, retryably', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"kind":');
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig(), timeoutMs: 100 });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).rejects.toMatchObject({
      reason: 'Timeout',
      retryable: true,
    });
  });

  it('a caller signal aborted before the request is never sent', async () => {
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const controller = new AbortController();
    controller.abort();
    await expect(
      transport.request({ method: HttpMethod.GET, path: '/x', signal: controller.signal }),
    ).rejects.toMatchObject({ reason: 'Aborted', retryable: false });
    expect(server.requests).toHaveLength(0);
  });

  it("an error answer larger than 64 KiB still gives its Status's message and retry delay", async () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'too many requests',
      reason: 'TooManyRequests',
      code: 429,
    };
    server.handle((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      response.write(JSON.stringify(status));
      response.end(' '.repeat(200 * 1024));
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).rejects.toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 3_000,
    });
  });
});

const MARKER = 'c2VjcmV0LW1hcmtlci05ZjI=';

describe('createKubeTransport: answers that are not JSON', () => {
  it('a 200 Secret list that is not JSON fails with status and position, never the body', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`{"kind":"SecretList","items":[{"data":{"k":"${MARKER}"}}] <html>${MARKER}`);
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const error = await transport.request({ method: HttpMethod.GET, path: '/api/v1/secrets' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 200, reason: 'MalformedResponse', cause: undefined });
    expect(String(error)).toMatch(/malformed 200 response: \d+ bytes that are not valid JSON/);
    expect(
      `${String(error)} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`,
    ).not.toContain(MARKER);
  });

  it('an error answer that is not a Status keeps only its HTTP status', async () => {
    server.handle((_request, response) => {
      response.writeHead(503, { 'content-type': 'text/html' });
      response.end(`<html>${MARKER}</html>`);
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const failure = transport.request({ method: HttpMethod.GET, path: '/api/v1/secrets' });
    await expect(failure).rejects.toMatchObject({ status: 503, message: '503', retryable: true });
  });
});

describe('createKubeTransport: rest_client metrics', () => {
  function recording(): {
    records: RestRequestRecord[];
    metrics: { recordRestRequest(r: RestRequestRecord): void };
  } {
    const records: RestRequestRecord[] = [];
    return { records, metrics: { recordRestRequest: (r) => records.push(r) } };
  }

  it('records every request once: its status, method, host and duration', async () => {
    server.handle((request, response) => {
      if (request.method === 'PATCH') sendStatus(response, 409, 'Conflict');
      else sendJson(response, 200, {});
    });
    const { records, metrics } = recording();
    let clock = 10;
    const transport = createKubeTransport({
      kubeConfig: server.kubeConfig(),
      metrics,
      monotonicSeconds: () => (clock += 0.25),
    });
    await transport.request({ method: HttpMethod.GET, path: '/x' });
    await transport
      .request({ method: HttpMethod.PATCH, path: '/x', body: {} })
      .catch(() => undefined);
    const host = new URL(server.url).host;
    expect(records).toEqual([
      { code: '200', method: 'GET', verb: 'GET', host, seconds: 0.25 },
      { code: '409', method: 'PATCH', verb: 'PATCH', host, seconds: 0.25 },
    ]);
  });

  it('a request without an answer is counted as <error>', async () => {
    const kubeConfig = server.kubeConfig();
    await server.close();
    const { records, metrics } = recording();
    const transport = createKubeTransport({ kubeConfig, metrics });
    await transport.request({ method: HttpMethod.DELETE, path: '/x' }).catch(() => undefined);
    expect(records).toMatchObject([{ code: NO_ANSWER_CODE, method: 'DELETE' }]);
    server = await startTestApiServer();
  });

  it('a stream is counted once, when it opens', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"a":');
      setTimeout(() => response.end('1}'), 20);
    });
    const { records, metrics } = recording();
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig(), metrics });
    const stream = await transport.stream({
      path: '/w',
      query: { watch: true },
      idleTimeoutMs: 5000,
    });
    expect(records).toMatchObject([{ code: '200', method: 'GET' }]);
    const chunks: string[] = [];
    for await (const chunk of stream.chunks) chunks.push(Buffer.from(chunk).toString('utf8'));
    expect(chunks.join('')).toBe('{"a":1}');
    expect(records).toHaveLength(1);
    expect(server.requests[0]?.query.get('watch')).toBe('true');
  });
});

describe('createKubeTransport: rest_client series in the registry', () => {
  it('counts requests by code, method and host and times them by verb and host', async () => {
    server.handle((request, response) => {
      if (request.method === 'DELETE') sendStatus(response, 404, 'NotFound');
      else sendJson(response, 200, { items: [] });
    });
    const registry = new Registry();
    const transport = createKubeTransport({
      kubeConfig: server.kubeConfig(),
      metrics: createMetrics(registry, { countByNamespace: false }),
    });
    await transport.request({ method: HttpMethod.GET, path: '/x' });
    await transport.request({ method: HttpMethod.DELETE, path: '/x' }).catch(() => undefined);
    const stream = await transport.stream({ path: '/x', idleTimeoutMs: 5000 });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream.chunks) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe('{"items":[]}');
    const host = new URL(server.url).host;
    const text = await registry.metrics();
    const lines = text.split('\n').filter((line) => line.startsWith('rest_client_'));
    expect(lines).toContain(`rest_client_requests_total{code="200",method="GET",host="${host}"} 2`);
    expect(lines).toContain(
      `rest_client_requests_total{code="404",method="DELETE",host="${host}"} 1`,
    );
    expect(lines).toContain(
      `rest_client_request_duration_seconds_count{verb="GET",host="${host}"} 2`,
    );
    expect(lines).toContain(
      `rest_client_request_duration_seconds_count{verb="DELETE",host="${host}"} 1`,
    );
  });
});

describe('createKubeTransport: streams', () => {
  it('a non-2xx stream rejects with the Status as a ApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 410, 'Expired', 'too old');
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    await expect(transport.stream({ path: '/w', idleTimeoutMs: 5000 })).rejects.toMatchObject({
      status: 410,
      reason: 'Expired',
    });
  });

  it('a stream with no data within the idle timeout fails with a Timeout', async () => {
    server.handle((_request, response) => {
      response.writeHead(200);
      response.flushHeaders();
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const stream = await transport.stream({ path: '/w', idleTimeoutMs: 50 });
    const reading = (async () => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of stream.chunks) chunks.push(chunk);
      return chunks;
    })();
    await expect(reading).rejects.toMatchObject({ reason: 'Timeout', retryable: true });
  });

  it('headers that never come time out like a request', async () => {
    server.handle(() => {
      // never answer
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig(), timeoutMs: 50 });
    await expect(transport.stream({ path: '/w', idleTimeoutMs: 5000 })).rejects.toMatchObject({
      reason: 'Timeout',
    });
  });
});

describe('createKubeTransport over TLS', () => {
  let tls: { server: Server; url: string; ca: string; handshakes: () => number } | undefined;

  beforeEach(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kreload-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const key = readFileSync(path.join(dir, 'key.pem'), 'utf8');
    rmSync(dir, { recursive: true, force: true });
    let handshakes = 0;
    const server = createHttpsServer({ cert, key }, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    server.on('secureConnection', () => {
      handshakes += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    tls = {
      server,
      url: `https://127.0.0.1:${String(port)}`,
      ca: cert,
      handshakes: () => handshakes,
    };
  });

  afterEach(async () => {
    tls?.server.closeAllConnections();
    await new Promise((resolve) => tls?.server.close(resolve));
  });

  function kubeConfigFor(server: string, ca: string): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server, caData: Buffer.from(ca).toString('base64') }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  }

  it('reuses one connection pool: twenty requests, at most two TLS handshakes', async () => {
    if (!tls) throw new Error('no TLS server');
    const transport = createKubeTransport({ kubeConfig: kubeConfigFor(tls.url, tls.ca) });
    for (let i = 0; i < 20; i += 1) {
      await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).resolves.toEqual({
        ok: true,
      });
    }
    // undici may open a second connection while the first is being released; not twenty.
    expect(tls.handshakes()).toBeLessThanOrEqual(2);
  });

  it('takes a freshly built pool once the current one is DISPATCHER_MAX_AGE_MS old', async () => {
    if (!tls) throw new Error('no TLS server');
    let now = 0;
    const transport = createKubeTransport({
      kubeConfig: kubeConfigFor(tls.url, tls.ca),
      now: () => now,
    });
    const get = () => transport.request({ method: HttpMethod.GET, path: '/x' });
    await Promise.all([get(), get(), get()]); // three connections in the first pool
    now = DISPATCHER_MAX_AGE_MS - 1;
    await get();
    expect(tls.handshakes()).toBe(3);
    now = DISPATCHER_MAX_AGE_MS;
    await get(); // a new pool: its own connection(s)
    await get();
    expect(tls.handshakes()).toBeGreaterThanOrEqual(4);
    expect(tls.handshakes()).toBeLessThanOrEqual(5);
  });
});

describe('createKubeTransport: hostile answers', () => {
  it('a connection reset in the middle of a stream fails the reader with a retryable network error', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"type":"ADDED","object":{}}\n', () => {
        setTimeout(() => response.socket?.destroy(), 20);
      });
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const stream = await transport.stream({ path: '/w', idleTimeoutMs: 5000 });
    const chunks: Uint8Array[] = [];
    const reading = (async () => {
      for await (const chunk of stream.chunks) chunks.push(chunk);
    })();
    await expect(reading).rejects.toMatchObject({ retryable: true });
    expect(Buffer.concat(chunks).toString()).toBe('{"type":"ADDED","object":{}}\n');
  });

  it('a caller abort in the middle of a stream ends it as Aborted', async () => {
    server.handle((_request, response) => {
      response.writeHead(200);
      response.write('{}\n');
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const controller = new AbortController();
    const stream = await transport.stream({
      path: '/w',
      idleTimeoutMs: 5000,
      signal: controller.signal,
    });
    const reading = (async () => {
      for await (const chunk of stream.chunks) {
        if (chunk.byteLength > 0) controller.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ reason: 'Aborted', retryable: false });
  });

  it('a timeout past 2^31 ms is clamped, not fired at once', async () => {
    server.handle((_request, response) => {
      setTimeout(() => {
        sendJson(response, 200, { ok: true });
      }, 30);
    });
    const transport = createKubeTransport({
      kubeConfig: server.kubeConfig(),
      timeoutMs: 2 ** 32,
    });
    await expect(transport.request({ method: HttpMethod.GET, path: '/x' })).resolves.toEqual({
      ok: true,
    });
    const stream = await transport.stream({ path: '/x', idleTimeoutMs: 2 ** 40 });
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream.chunks) chunks.push(chunk);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual({ ok: true });
  });

  it('leaves no listener on a long-lived caller signal after many requests', async () => {
    server.handle((_request, response) => {
      sendJson(response, 200, {});
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const controller = new AbortController();
    for (let i = 0; i < 20; i += 1) {
      await transport.request({ method: HttpMethod.GET, path: '/x', signal: controller.signal });
    }
    expect(EventEmitter.getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it("client-node's KubeConfig still has the per-request authorization step the transport calls", () => {
    // Without it every request would take the whole applySecurityAuthentication (ADR 0052).
    expect(typeof Reflect.get(new KubeConfig(), 'applyAuthorizationHeader')).toBe('function');
  });

  it("sends each request with the exec plugin's current token", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kreload-exec-'));
    const counter = path.join(dir, 'n');
    // An already expired credential makes client-node run the plugin for every request.
    const script = [
      `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}`,
      'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t%s","expirationTimestamp":"2000-01-01T00:00:00Z"}}\' $n',
    ].join('; ');
    server.handle((_request, response) => {
      sendJson(response, 200, {});
    });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, skipTLSVerify: true }],
      users: [
        {
          name: 'u',
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'sh',
            args: ['-c', script],
            interactiveMode: 'Never',
          },
        },
      ],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    try {
      const transport = createKubeTransport({ kubeConfig: kc });
      await transport.request({ method: HttpMethod.GET, path: '/x' });
      await transport.request({ method: HttpMethod.GET, path: '/x' });
      const tokens = server.requests.map((r) => r.headers.authorization);
      expect(tokens.at(-1)).not.toBe(tokens.at(-2));
      expect(tokens.at(-1)).toMatch(/^Bearer t\d+$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
