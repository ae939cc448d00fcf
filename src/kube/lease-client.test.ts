import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LeaseRecord } from '../leader/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { LeaseConflictError } from '../leader/ports.ts';
import { formatMicroTime, LeaseClient } from './lease-client.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';

const ID = { namespace: 'kreload-system', name: 'kreload-leader' };
const PATH = '/apis/coordination.k8s.io/v1/namespaces/kreload-system/leases/kreload-leader';

const SERVED = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'kreload-leader', namespace: 'kreload-system', resourceVersion: '77' },
  spec: {
    holderIdentity: 'pod-a',
    leaseDurationSeconds: 15,
    acquireTime: '2026-01-02T03:04:05.123456Z',
    renewTime: '2026-01-02T03:04:15.000001Z',
    leaseTransitions: 3,
  },
};

const RECORD: LeaseRecord = {
  holderIdentity: 'pod-b',
  leaseDurationSeconds: 15,
  acquireTime: new Date('2026-01-02T03:05:00.000Z'),
  renewTime: new Date('2026-01-02T03:05:02.5Z'),
  leaseTransitions: 4,
};

let server: TestApiServer;
let client: LeaseClient;

beforeEach(async () => {
  server = await startTestApiServer((request, response) => {
    sendJson(response, request.method === 'POST' ? 201 : 200, SERVED);
  });
  client = new LeaseClient({ transport: createKubeTransport({ kubeConfig: server.kubeConfig() }) });
});
afterEach(async () => {
  await server.close();
});

describe('LeaseClient', () => {
  it('lists the Leases of a namespace named with the prefix, in one request', async () => {
    await server.close();
    server = await startTestApiServer((_request, response) => {
      const other = { ...SERVED, metadata: { ...SERVED.metadata, name: 'someone-else' } };
      const member = { ...SERVED, metadata: { ...SERVED.metadata, name: 'kreload-member-pod-a' } };
      sendJson(response, 200, { kind: 'LeaseList', items: [other, member] });
    });
    client = new LeaseClient({
      transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
    });
    const listed = await client.list('kreload-system', 'kreload-');
    expect(
      listed.map(({ name, lease }) => [name, lease.resourceVersion, lease.record.holderIdentity]),
    ).toEqual([['kreload-member-pod-a', '77', 'pod-a']]);
    expect(server.requests).toMatchObject([
      { method: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/kreload-system/leases' },
    ]);
  });

  it('reads a Lease, MicroTime strings becoming Dates', async () => {
    await expect(client.get(ID)).resolves.toEqual({
      resourceVersion: '77',
      record: {
        holderIdentity: 'pod-a',
        leaseDurationSeconds: 15,
        acquireTime: new Date('2026-01-02T03:04:05.123Z'),
        renewTime: new Date('2026-01-02T03:04:15.000Z'),
        leaseTransitions: 3,
      },
    });
    expect(server.requests).toMatchObject([{ method: 'GET', path: PATH }]);
  });

  it('reads a missing Lease as undefined and a released one without holder', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(client.get(ID)).resolves.toBeUndefined();
    server.handle((_request, response) => {
      sendJson(response, 200, {
        metadata: { resourceVersion: '5' },
        spec: { holderIdentity: '', leaseDurationSeconds: 1 },
      });
    });
    await expect(client.get(ID)).resolves.toEqual({
      resourceVersion: '5',
      record: {
        holderIdentity: undefined,
        leaseDurationSeconds: 1,
        acquireTime: undefined,
        renewTime: undefined,
        leaseTransitions: undefined,
      },
    });
  });

  it('creates with six fractional digits on MicroTime fields', async () => {
    await client.create(ID, RECORD);
    const [request] = server.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/apis/coordination.k8s.io/v1/namespaces/kreload-system/leases',
      headers: { 'content-type': 'application/json' },
    });
    expect(request?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'kreload-leader', namespace: 'kreload-system' },
      spec: {
        holderIdentity: 'pod-b',
        leaseDurationSeconds: 15,
        acquireTime: '2026-01-02T03:05:00.000000Z',
        renewTime: '2026-01-02T03:05:02.500000Z',
        leaseTransitions: 4,
      },
    });
  });

  it('replaces with PUT carrying the resourceVersion; a release drops the holder', async () => {
    const release: LeaseRecord = { ...RECORD, holderIdentity: undefined, leaseDurationSeconds: 1 };
    const observed = await client.replace(ID, release, '77');
    expect(observed.resourceVersion).toBe('77');
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'PUT', path: PATH });
    const body: unknown = JSON.parse(request?.body ?? '');
    expect(body).toMatchObject({
      metadata: { resourceVersion: '77' },
      spec: { leaseDurationSeconds: 1 },
    });
    expect(body).not.toHaveProperty('spec.holderIdentity');
  });

  it.each([
    ['create', () => client.create(ID, RECORD), 'AlreadyExists'],
    ['replace', () => client.replace(ID, RECORD, '1'), 'Conflict'],
  ])('%s rejects a 409 with LeaseConflictError', async (_name, write, reason) => {
    server.handle((_request, response) => {
      sendStatus(response, 409, reason);
    });
    const failure = write();
    await expect(failure).rejects.toBeInstanceOf(LeaseConflictError);
    // Still the one API error type, with what the server said.
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 409, reason, retryable: true });
  });

  it('other failures reject with ApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 403, 'Forbidden');
    });
    await expect(client.replace(ID, RECORD, '1')).rejects.toMatchObject({
      name: 'ApiError',
      status: 403,
    });
    await expect(client.get(ID)).rejects.toMatchObject({ name: 'ApiError', status: 403 });
  });

  it.each([
    ['2026-01-02T03:04:05.123Z', '2026-01-02T03:04:05.123000Z'],
    ['2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05.000000Z'],
  ])('formatMicroTime(%s) = %s', (iso, expected) => {
    expect(formatMicroTime(new Date(iso))).toBe(expected);
  });
});
