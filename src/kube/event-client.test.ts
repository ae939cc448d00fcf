import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventDraft } from '../events/ports.ts';
import { EventClient, formatTime } from './event-client.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';

let server: TestApiServer;
let client: EventClient;

beforeEach(async () => {
  server = await startTestApiServer((_request, response) => {
    sendJson(response, 201, {});
  });
  client = new EventClient({ transport: createKubeTransport({ kubeConfig: server.kubeConfig() }) });
});
afterEach(async () => {
  await server.close();
});

const DRAFT: EventDraft = {
  name: 'api.1881c3a2b1d2e3f4',
  namespace: 'team-a',
  involvedObject: {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'team-a',
    name: 'api',
    uid: 'uid-1',
  },
  type: 'Normal',
  reason: 'Reloaded',
  message:
    "Changes detected in 'app' of type 'CONFIGMAP' in namespace 'team-a', Updated 'api' of type 'Deployment' in namespace 'team-a'",
  count: 1,
  firstTimestamp: new Date('2026-01-02T03:04:05.678Z'),
  lastTimestamp: new Date('2026-01-02T03:04:05.678Z'),
  sourceComponent: 'kreload',
  reportingController: 'kreload',
  reportingInstance: 'kreload-7d9f-abcde',
};

describe('EventClient', () => {
  it('creates the Event in the involved object namespace', async () => {
    await client.create(DRAFT);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/team-a/events' });
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'api.1881c3a2b1d2e3f4', namespace: 'team-a' },
      involvedObject: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        namespace: 'team-a',
        name: 'api',
        uid: 'uid-1',
      },
      type: 'Normal',
      reason: 'Reloaded',
      message: DRAFT.message,
      count: 1,
      firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:04:05Z',
      source: { component: 'kreload' },
      reportingComponent: 'kreload',
      reportingInstance: 'kreload-7d9f-abcde',
    });
  });

  it('sends the action when the Event has one (the strategy a roll ran)', async () => {
    await client.create({ ...DRAFT, action: 'evict' });
    const [request] = server.requests;
    expect(JSON.parse(request?.body ?? '')).toMatchObject({ reason: 'Reloaded', action: 'evict' });
  });

  it('patches count and lastTimestamp with a merge patch', async () => {
    const result = await client.patchCount(
      { namespace: 'team-a', name: 'api.1881c3a2b1d2e3f4' },
      4,
      new Date('2026-01-02T03:09:00Z'),
    );
    expect(result).toBe('patched');
    const [request] = server.requests;
    expect(request).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/namespaces/team-a/events/api.1881c3a2b1d2e3f4',
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(request?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      count: 4,
      lastTimestamp: '2026-01-02T03:09:00Z',
    });
  });

  it('reports an expired Event as not-found and rejects other failures', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(client.patchCount({ namespace: 'n', name: 'e' }, 2, new Date(0))).resolves.toBe(
      'not-found',
    );
    server.handle((_request, response) => {
      sendStatus(response, 403, 'Forbidden');
    });
    await expect(
      client.patchCount({ namespace: 'n', name: 'e' }, 2, new Date(0)),
    ).rejects.toMatchObject({
      name: 'ApiError',
      status: 403,
    });
    await expect(client.create(DRAFT)).rejects.toMatchObject({ status: 403, retryable: false });
  });

  it.each([
    ['2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T03:04:05.999Z', '2026-01-02T03:04:05Z'],
  ])('formatTime(%s) = %s', (iso, expected) => {
    expect(formatTime(new Date(iso))).toBe(expected);
  });
});
