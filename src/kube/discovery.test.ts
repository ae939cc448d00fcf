import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiDiscovery } from './discovery.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { createKubeTransport } from './transport.ts';

let server: TestApiServer;
let discovery: ApiDiscovery;

const ROLLOUTS_GROUP = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: 'argoproj.io/v1alpha1',
  resources: [
    { name: 'rollouts', namespaced: true, kind: 'Rollout', verbs: ['get', 'list', 'watch'] },
    { name: 'rollouts/status', namespaced: true, kind: 'Rollout', verbs: ['get'] },
    { name: 'analysisruns', namespaced: true, kind: 'AnalysisRun', verbs: ['get'] },
  ],
};

beforeEach(async () => {
  server = await startTestApiServer((request, response) => {
    if (request.path === '/apis/argoproj.io/v1alpha1') sendJson(response, 200, ROLLOUTS_GROUP);
    else if (request.path === '/api/v1')
      sendJson(response, 200, { resources: [{ name: 'configmaps' }] });
    else if (request.path === '/apis/forbidden.io/v1') sendStatus(response, 403, 'Forbidden');
    else if (request.path === '/apis/metrics.k8s.io/v1beta1')
      sendStatus(response, 503, 'ServiceUnavailable');
    else sendStatus(response, 404, 'NotFound');
  });
  discovery = new ApiDiscovery({
    transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
  });
});
afterEach(async () => {
  await server.close();
});

describe('ApiDiscovery.isApiServed', () => {
  it.each([
    ['argoproj.io', 'v1alpha1', 'rollouts', true, '/apis/argoproj.io/v1alpha1'],
    ['argoproj.io', 'v1alpha1', 'experiments', false, '/apis/argoproj.io/v1alpha1'],
    ['apps.openshift.io', 'v1', 'deploymentconfigs', false, '/apis/apps.openshift.io/v1'],
    ['', 'v1', 'configmaps', true, '/api/v1'],
  ])('%s/%s %s → %s (GET %s)', async (group, version, plural, served, path) => {
    await expect(discovery.isApiServed(group, version, plural)).resolves.toBe(served);
    expect(server.requests).toMatchObject([{ method: 'GET', path }]);
  });

  it.each([
    ['forbidden.io', 403, false],
    ['metrics.k8s.io', 503, true],
  ])('%s answering %i rejects instead of guessing', async (group, status, retryable) => {
    const version = group === 'metrics.k8s.io' ? 'v1beta1' : 'v1';
    await expect(discovery.isApiServed(group, version, 'x')).rejects.toMatchObject({
      name: 'ApiError',
      status,
      retryable,
    });
  });
});
