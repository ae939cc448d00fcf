import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KubeApiError } from './api-error.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { buildUrl, createKubeTransport, HttpMethod } from './transport.ts';

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
