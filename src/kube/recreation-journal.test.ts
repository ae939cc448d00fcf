import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalEntry } from '../reconcile/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer, TestHandler } from '../testing/test-api-server.ts';
import {
  CONFIG_MAP_DATA_MAX_BYTES,
  decodeEntry,
  encodeEntry,
  KubeRecreationJournal,
} from './recreation-journal.ts';
import { createKubeTransport } from './transport.ts';

const COLLECTION = '/api/v1/namespaces/kreload-system/configmaps';
const PATH = `${COLLECTION}/kreload-job-recreations`;
const ENTRY: JournalEntry = {
  ref: { kind: 'Job', namespace: 'team-a', name: 'migrate' },
  deletedUid: 'old-uid',
  since: 1_767_225_600_000,
  manifest: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate' }, spec: {} },
};

let server: TestApiServer;
let invalid: [string, string][];
let journal: KubeRecreationJournal;

function answer(handler: TestHandler): void {
  server.handle(handler);
}

beforeEach(async () => {
  server = await startTestApiServer((_request, response) => {
    sendJson(response, 200, {});
  });
  invalid = [];
  journal = new KubeRecreationJournal({
    transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
    namespace: 'kreload-system',
    onInvalidEntry: (key, reason) => invalid.push([key, reason]),
  });
});
afterEach(async () => {
  await server.close();
});

describe('KubeRecreationJournal', () => {
  it('records an entry with a merge patch of its one data key', async () => {
    await journal.record(ENTRY);
    expect(server.requests).toMatchObject([
      {
        method: 'PATCH',
        path: PATH,
        headers: { 'content-type': 'application/merge-patch+json' },
      },
    ]);
    expect(server.requests[0]?.query.get('fieldManager')).toBe('kreload');
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      data: { 'team-a.migrate': encodeEntry(ENTRY) },
    });
  });

  it('the first entry creates the ConfigMap', async () => {
    answer((request, response) => {
      if (request.method === 'PATCH') sendStatus(response, 404, 'NotFound');
      else sendJson(response, 201, {});
    });
    await journal.record(ENTRY);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `PATCH ${PATH}`,
      `POST ${COLLECTION}`,
    ]);
    expect(JSON.parse(server.requests[1]?.body ?? '')).toMatchObject({
      metadata: { name: 'kreload-job-recreations', namespace: 'kreload-system' },
      data: { 'team-a.migrate': encodeEntry(ENTRY) },
    });
  });

  it('a racing creator wins: the entry is patched into its ConfigMap', async () => {
    let patches = 0;
    answer((request, response) => {
      if (request.method === 'POST') sendStatus(response, 409, 'AlreadyExists');
      else if ((patches += 1) === 1) sendStatus(response, 404, 'NotFound');
      else sendJson(response, 200, {});
    });
    await journal.record(ENTRY);
    expect(server.requests.map((r) => r.method)).toEqual(['PATCH', 'POST', 'PATCH']);
  });

  it('a refused write rejects with ApiError (the Job is then not deleted)', async () => {
    answer((_request, response) => {
      sendStatus(response, 403, 'Forbidden', 'configmaps is forbidden');
    });
    const error = await journal.record(ENTRY).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 403, retryable: false });
    expect((error as ApiError).message).toBe(
      'cannot journal Job team-a/migrate before deleting it (not deleted): 403 Forbidden: configmaps is forbidden',
    );
  });

  it('an entry larger than a ConfigMap holds is refused before any request', async () => {
    const huge = { ...ENTRY, manifest: { spec: { note: 'x'.repeat(CONFIG_MAP_DATA_MAX_BYTES) } } };
    const error = await journal.record(huge).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/cannot be journalled, so it is not deleted/);
    expect(server.requests).toEqual([]);
  });

  it('removes an entry with a null for its key; a missing ConfigMap is fine', async () => {
    answer((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await journal.remove(ENTRY.ref);
    expect(server.requests).toMatchObject([{ method: 'PATCH', path: PATH }]);
    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      data: { 'team-a.migrate': null },
    });
  });

  it('reads every entry; an invalid one is reported and skipped', async () => {
    answer((_request, response) => {
      sendJson(response, 200, {
        metadata: { name: 'kreload-job-recreations' },
        data: { 'team-a.migrate': encodeEntry(ENTRY), 'team-b.x': '{"version":9}', bad: 'nope' },
      });
    });
    await expect(journal.entries()).resolves.toEqual([ENTRY]);
    expect(invalid).toEqual([
      ['team-b.x', 'unknown entry version'],
      ['bad', 'not JSON'],
    ]);
  });

  it('no ConfigMap: no entries', async () => {
    answer((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(journal.entries()).resolves.toEqual([]);
  });

  it('an entry survives its stored form', () => {
    expect(decodeEntry(encodeEntry(ENTRY))).toEqual(ENTRY);
  });
});
