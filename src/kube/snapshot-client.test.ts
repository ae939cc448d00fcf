import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sendJson, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { KubeSnapshotClient } from './snapshot-client.ts';
import { createKubeTransport } from './transport.ts';

let server: TestApiServer;
let client: KubeSnapshotClient;

beforeEach(async () => {
  server = await startTestApiServer((_request, response) => {
    sendJson(response, 200, {});
  });
  client = new KubeSnapshotClient({
    transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
  });
});
afterEach(async () => {
  await server.close();
});

const OWNER = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u-web' };
const LABEL = 'snapshot-owner.kreload.io/u-web';

function read(metadata: Record<string, unknown>) {
  return { metadata: { name: 'cm-0123456789', namespace: 'ns', uid: 'u-cm', ...metadata } };
}

describe('KubeSnapshotClient', () => {
  it.each([
    [
      'appends to the owners and labels it has',
      read({ ownerReferences: [{ uid: 'u-1' }], labels: { a: 'b' } }),
      [
        { op: 'add', path: '/metadata/ownerReferences/-', value: OWNER },
        { op: 'add', path: '/metadata/labels/snapshot-owner.kreload.io~1u-web', value: 'true' },
      ],
    ],
    [
      'sets the lists it lacks',
      read({}),
      [
        { op: 'add', path: '/metadata/ownerReferences', value: [OWNER] },
        { op: 'add', path: '/metadata/labels', value: { [LABEL]: 'true' } },
      ],
    ],
  ])(
    'addOwner %s: a JSON patch that tests the uid, no resourceVersion',
    async (_case, current, ops) => {
      await client.addOwner('CONFIGMAP', current, OWNER, LABEL);
      expect(server.requests).toHaveLength(1);
      const [request] = server.requests;
      expect(request).toMatchObject({
        method: 'PATCH',
        path: '/api/v1/namespaces/ns/configmaps/cm-0123456789',
      });
      expect(request?.headers['content-type']).toBe('application/json-patch+json');
      expect(request?.query.get('fieldManager')).toBe('kreload');
      expect(JSON.parse(request?.body ?? '')).toEqual([
        { op: 'test', path: '/metadata/uid', value: 'u-cm' },
        ...ops,
      ]);
    },
  );

  it('setOwners: a merge patch with the resourceVersion, owners and the labels to drop', async () => {
    await client.setOwners(
      'SECRET',
      { namespace: 'ns', name: 's-0123456789', resourceVersion: '9' },
      [OWNER],
      { [LABEL]: null },
    );
    const [request] = server.requests;
    expect(request?.path).toBe('/api/v1/namespaces/ns/secrets/s-0123456789');
    expect(request?.headers['content-type']).toBe('application/merge-patch+json');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      metadata: { resourceVersion: '9', ownerReferences: [OWNER], labels: { [LABEL]: null } },
    });
  });

  it('delete: UID and resourceVersion preconditions', async () => {
    await client.delete('CONFIGMAP', {
      namespace: 'ns',
      name: 'cm-0123456789',
      uid: 'u-cm',
      resourceVersion: '9',
    });
    const [request] = server.requests;
    expect(request?.method).toBe('DELETE');
    expect(JSON.parse(request?.body ?? '')).toMatchObject({
      preconditions: { uid: 'u-cm', resourceVersion: '9' },
    });
  });
});
