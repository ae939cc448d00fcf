import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import type { WorkloadRef } from '../core/types.ts';
import { ApiError } from '../core/api-error.ts';
import { kindRow } from '../rollout/kinds.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';
import { WorkloadClient } from './workload-client.ts';

const REF: WorkloadRef = { kind: 'StatefulSet', namespace: 'ns', name: 'db' };

let server: TestApiServer;
let writer: WorkloadClient;

beforeEach(async () => {
  server = await startTestApiServer();
  const transport = createKubeTransport({ kubeConfig: server.kubeConfig() });
  writer = new WorkloadClient({
    transport,
    projection: { keys: DEFAULT_ANNOTATION_KEYS, keepLabels: false },
    kinds: BUILT_IN_KIND_TABLE,
  });
});
afterEach(async () => {
  await server.close();
});

describe('WorkloadClient as the WorkloadWriter port', () => {
  it('sends the patch as a strategic merge patch with fieldManager=kreload', async () => {
    server.handle((_request, response) => {
      sendJson(response, 200, {});
    });
    const body = {
      metadata: { resourceVersion: '5', annotations: { 'kreload.io/baseline': '{}' } },
    };
    await writer.patch(REF, { type: 'strategic', body });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/ns/statefulsets/db',
      headers: { 'content-type': 'application/strategic-merge-patch+json' },
    });
    expect(server.requests[0]?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual(body);
  });

  it.each([
    [{ metadata: { name: 'db', generation: 8, resourceVersion: '41' } }, 8, '41'],
    [{ metadata: { name: 'db', generation: '8', resourceVersion: 41 } }, undefined, undefined],
    [{}, undefined, undefined],
  ])(
    'answers the generation and resourceVersion of the patched object %j',
    async (answer, generation, resourceVersion) => {
      server.handle((_request, response) => {
        sendJson(response, 200, answer);
      });
      const result = await writer.patch(REF, { type: 'strategic', body: {} });
      expect(result).toEqual({ generation, resourceVersion });
    },
  );

  it.each([
    [409, 'Conflict', true, undefined],
    [429, 'TooManyRequests', true, 3000],
    [403, 'Forbidden', false, undefined],
    [422, 'Invalid', false, undefined],
  ])('rejects a %i with ApiError (retryable %s)', async (code, reason, retryable, retryAfterMs) => {
    server.handle((_request, response) => {
      if (code === 429) response.setHeader('retry-after', '3');
      sendStatus(response, code, reason, 'nope');
    });
    const failure = writer.patch(REF, { type: 'strategic', body: {} });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    // The client's ApiError itself, not a copy: the server's reason survives.
    await expect(failure).rejects.toMatchObject({
      status: code,
      reason,
      retryable,
      retryAfterMs,
      message: `${String(code)} ${reason}: nope`,
    });
  });

  it('get projects the fresh object', async () => {
    server.handle((_request, response) => {
      sendJson(response, 200, {
        metadata: {
          name: 'db',
          namespace: 'ns',
          uid: 'u',
          resourceVersion: '9',
          annotations: { a: 'b' },
        },
        spec: { template: { spec: { containers: [{ name: 'db', image: 'postgres' }] } } },
      });
    });
    const view = await writer.get(REF);
    expect(view).toMatchObject({
      ref: REF,
      uid: 'u',
      resourceVersion: '9',
      annotations: {},
      podSpec: { containers: [{ name: 'db' }] },
    });
    expect(server.requests[0]).toMatchObject({
      method: 'GET',
      path: '/apis/apps/v1/namespaces/ns/statefulsets/db',
    });
  });

  it('get is undefined for a 404 and rejects with ApiError otherwise', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(writer.get(REF)).resolves.toBeUndefined();
    server.handle((_request, response) => {
      sendStatus(response, 500, 'InternalError');
    });
    await expect(writer.get(REF)).rejects.toMatchObject({
      name: 'ApiError',
      status: 500,
      retryable: true,
    });
  });

  it('getObject returns the object as served, or undefined once it is gone', async () => {
    const served = {
      metadata: { name: 'db', uid: 'u', managedFields: [{}] },
      status: { replicas: 1 },
    };
    server.handle((_request, response) => {
      sendJson(response, 200, served);
    });
    await expect(writer.getObject(REF)).resolves.toEqual(served);
    server.handle((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(writer.getObject(REF)).resolves.toBeUndefined();
  });

  it('create posts to the row resource and returns the final name and uid', async () => {
    server.handle((_request, response) => {
      sendJson(response, 201, { metadata: { name: 'nightly-x7k2p', uid: 'uid-new' } });
    });
    const body = { metadata: { generateName: 'nightly-' }, spec: {} };
    await expect(writer.create(kindRow('Job'), 'ns', body)).resolves.toEqual({
      name: 'nightly-x7k2p',
      uid: 'uid-new',
    });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/apis/batch/v1/namespaces/ns/jobs',
    });
    expect(server.requests[0]?.query.get('fieldManager')).toBe('kreload');
  });

  it('create rejects AlreadyExists as a retryable 409 ApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 409, 'AlreadyExists');
    });
    await expect(writer.create(kindRow('Job'), 'ns', {})).rejects.toMatchObject({
      name: 'ApiError',
      status: 409,
      retryable: true,
    });
  });

  it('delete sends the preconditions; a failed precondition is a 409 ApiError', async () => {
    server.handle((_request, response) => {
      sendStatus(response, 409, 'Conflict', 'Precondition failed: UID in precondition: u');
    });
    const job: WorkloadRef = { kind: 'Job', namespace: 'ns', name: 'migrate' };
    await expect(writer.delete(job, { uid: 'u', resourceVersion: '3' })).rejects.toMatchObject({
      name: 'ApiError',
      status: 409,
    });
    expect(server.requests[0]).toMatchObject({
      method: 'DELETE',
      path: '/apis/batch/v1/namespaces/ns/jobs/migrate',
    });
    expect(JSON.parse(server.requests[0]?.body ?? '')).toMatchObject({
      propagationPolicy: 'Background',
      preconditions: { uid: 'u', resourceVersion: '3' },
    });
  });

  it('instantiate posts the DeploymentRequest', async () => {
    server.handle((_request, response) => {
      sendJson(response, 201, {});
    });
    const dc: WorkloadRef = { kind: 'DeploymentConfig', namespace: 'ns', name: 'dc' };
    const body = {
      kind: 'DeploymentRequest',
      apiVersion: 'apps.openshift.io/v1',
      name: 'dc',
      latest: true,
      force: true,
    };
    await writer.instantiate(dc, body);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/apis/apps.openshift.io/v1/namespaces/ns/deploymentconfigs/dc/instantiate',
    });
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual(body);
  });
});
