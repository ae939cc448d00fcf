import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeApiError } from './api-error.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { buildUrl, createKubeTransport, DISPATCHER_MAX_AGE_MS, HttpMethod } from './transport.ts';

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

  it('maps a Status answer to KubeApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 422, 'Invalid', 'metadata.annotations: Too long');
    });
    const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
    const failure = transport.request({ method: HttpMethod.GET, path: '/x' });
    await expect(failure).rejects.toBeInstanceOf(KubeApiError);
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
