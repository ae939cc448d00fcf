import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { JournalKey, signPayload, verifiesPayload } from './journal-key.ts';
import { createKubeTransport } from './transport.ts';

const PATH = '/api/v1/namespaces/kreload-system/secrets/kreload-job-recreations-key';
const SERVED_KEY = Buffer.alloc(32, 3);

let server: TestApiServer;

function keyOf(random?: () => Buffer): JournalKey {
  return new JournalKey({
    transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
    namespace: 'kreload-system',
    randomKey: random,
  });
}

function secret(bytes: Buffer): object {
  return { data: { 'hmac-sha256': bytes.toString('base64') } };
}

beforeEach(async () => {
  server = await startTestApiServer((_request, response) => {
    sendJson(response, 200, secret(SERVED_KEY));
  });
});
afterEach(async () => {
  await server.close();
});

describe('JournalKey', () => {
  it('reads the Secret once and signs with its key', async () => {
    const key = keyOf();
    const first = await key.get();
    expect(await key.get()).toBe(first);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${PATH}`]);
    const signature = signPayload(first, 'payload');
    expect(verifiesPayload(first, 'payload', signature)).toBe(true);
    expect(verifiesPayload(first, 'payload!', signature)).toBe(false);
    expect(verifiesPayload(first, 'payload', 'AAAA')).toBe(false);
  });

  it('creates an immutable Secret with a fresh key when there is none', async () => {
    const fresh = Buffer.alloc(32, 9);
    server.handle((request, response) => {
      if (request.method === 'GET') sendStatus(response, 404, 'NotFound');
      else sendJson(response, 201, {});
    });
    const key = await keyOf(() => fresh).get();
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(JSON.parse(server.requests[1]?.body ?? '')).toMatchObject({
      metadata: { name: 'kreload-job-recreations-key', namespace: 'kreload-system' },
      immutable: true,
      data: { 'hmac-sha256': fresh.toString('base64') },
    });
    expect(key.export()).toEqual(fresh);
  });

  it('a racing creator wins: its key is read', async () => {
    let gets = 0;
    server.handle((request, response) => {
      if (request.method === 'POST') sendStatus(response, 409, 'AlreadyExists');
      else if ((gets += 1) === 1) sendStatus(response, 404, 'NotFound');
      else sendJson(response, 200, secret(SERVED_KEY));
    });
    const key = await keyOf(() => Buffer.alloc(32, 1)).get();
    expect(key.export()).toEqual(SERVED_KEY);
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET']);
  });

  it('a malformed Secret is refused, and a failed load is tried again', async () => {
    let gets = 0;
    server.handle((_request, response) => {
      if ((gets += 1) === 1) sendJson(response, 200, secret(Buffer.alloc(4)));
      else sendJson(response, 200, secret(SERVED_KEY));
    });
    const key = keyOf();
    await expect(key.get()).rejects.toThrow(/holds no 32-byte key/);
    expect((await key.get()).export()).toEqual(SERVED_KEY);
  });

  it('403 rejects with the server status', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 403, 'Forbidden', 'secrets is forbidden');
    });
    await expect(keyOf().get()).rejects.toMatchObject({ status: 403 });
  });
});
