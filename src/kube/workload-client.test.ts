import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import type { WorkloadKind, WorkloadRef } from '../core/types.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import { kindRow } from '../rollout/kinds.ts';
import type { Patch } from '../rollout/patch.ts';
import { WorkloadClient } from './workload-client.ts';

let server: TestApiServer;
let client: WorkloadClient;

beforeEach(async () => {
  server = await startTestApiServer((request, response) => {
    sendJson(response, request.method === 'POST' ? 201 : 200, {
      kind: 'Echo',
      metadata: { name: 'answer', resourceVersion: '8' },
    });
  });
  client = new WorkloadClient({
    transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
    projection: { keys: DEFAULT_ANNOTATION_KEYS, keepLabels: false },
    kinds: BUILT_IN_KIND_TABLE,
  });
});
afterEach(async () => {
  await server.close();
});

function ref(kind: WorkloadKind, name = 'w'): WorkloadRef {
  return { kind, namespace: 'ns', name };
}

const PATHS: readonly [WorkloadKind, string][] = [
  ['Deployment', '/apis/apps/v1/namespaces/ns/deployments/w'],
  ['DaemonSet', '/apis/apps/v1/namespaces/ns/daemonsets/w'],
  ['StatefulSet', '/apis/apps/v1/namespaces/ns/statefulsets/w'],
  ['CronJob', '/apis/batch/v1/namespaces/ns/cronjobs/w'],
  ['Job', '/apis/batch/v1/namespaces/ns/jobs/w'],
  ['Rollout', '/apis/argoproj.io/v1alpha1/namespaces/ns/rollouts/w'],
  ['DeploymentConfig', '/apis/apps.openshift.io/v1/namespaces/ns/deploymentconfigs/w'],
];

const PATCHES: readonly [Patch, string][] = [
  [
    { type: 'strategic', body: { metadata: { resourceVersion: '7' } } },
    'application/strategic-merge-patch+json',
  ],
  [
    { type: 'merge', body: { spec: { restartAt: '2026-01-02T03:04:05Z' } } },
    'application/merge-patch+json',
  ],
];

describe('WorkloadClient', () => {
  it.each(PATHS)('GET %s → %s, the object as served', async (kind, path) => {
    const answer = await client.getObject(ref(kind));
    expect(answer).toEqual({ kind: 'Echo', metadata: { name: 'answer', resourceVersion: '8' } });
    expect(server.requests).toMatchObject([{ method: 'GET', path, body: '' }]);
    expect([...(server.requests[0]?.query ?? [])]).toEqual([]);
  });

  it.each(PATHS)('PATCH %s → %s with fieldManager=kreload', async (kind, path) => {
    const body = {
      metadata: { resourceVersion: '7', annotations: { 'kreload.io/baseline': '{}' } },
    };
    await client.patch(ref(kind), { type: 'merge', body });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'PATCH', path });
    expect(Object.fromEntries(request?.query ?? [])).toEqual({ fieldManager: 'kreload' });
    expect(JSON.parse(request?.body ?? '')).toEqual(body);
  });

  it.each(PATCHES)('a %j patch is sent as %s', async (patch, contentType) => {
    await client.patch(ref('Deployment'), patch);
    expect(server.requests[0]?.headers['content-type']).toBe(contentType);
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual(patch.body);
  });

  it('creates a Job with fieldManager=kreload and returns it as created', async () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        generateName: 'nightly-',
        namespace: 'ns',
        annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
      },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    };
    const created = await client.create(kindRow('Job'), 'ns', job);
    expect(created).toEqual({ name: 'answer', uid: '' });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/apis/batch/v1/namespaces/ns/jobs' });
    expect(request?.headers['content-type']).toBe('application/json');
    expect(Object.fromEntries(request?.query ?? [])).toEqual({ fieldManager: 'kreload' });
    expect(JSON.parse(request?.body ?? '')).toEqual(job);
  });

  it('deletes a Job in the background with uid and resourceVersion preconditions', async () => {
    await client.delete(ref('Job', 'migrate'), { uid: 'uid-1', resourceVersion: '99' });
    const [request] = server.requests;
    expect(request).toMatchObject({
      method: 'DELETE',
      path: '/apis/batch/v1/namespaces/ns/jobs/migrate',
    });
    expect([...(request?.query ?? [])]).toEqual([]);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
      preconditions: { uid: 'uid-1', resourceVersion: '99' },
    });
  });

  it('instantiates a DeploymentConfig through its subresource', async () => {
    const request = {
      kind: 'DeploymentRequest',
      apiVersion: 'apps.openshift.io/v1',
      name: 'dc',
      latest: true,
      force: true,
    };
    await client.instantiate(ref('DeploymentConfig', 'dc'), request);
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      path: '/apis/apps.openshift.io/v1/namespaces/ns/deploymentconfigs/dc/instantiate',
    });
    expect(server.requests[0]?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual(request);
  });

  it.each([
    [409, 'Conflict', true],
    [404, 'NotFound', false],
    [415, 'UnsupportedMediaType', false],
    [422, 'Invalid', false],
    [503, 'ServiceUnavailable', true],
  ])('maps %i %s to ApiError (retryable %s)', async (code, reason, retryable) => {
    server.handle((_request, response) => {
      sendStatus(response, code, reason, 'server says no');
    });
    await expect(client.patch(ref('Deployment'), PATCHES[0]![0])).rejects.toMatchObject({
      name: 'ApiError',
      status: code,
      reason,
      retryable,
      message: `${String(code)} ${reason}: server says no`,
    });
  });

  it('encodes names in the path', async () => {
    await client.getObject({ kind: 'Deployment', namespace: 'ns', name: 'a b' });
    expect(server.requests[0]?.path).toBe('/apis/apps/v1/namespaces/ns/deployments/a%20b');
  });
});
