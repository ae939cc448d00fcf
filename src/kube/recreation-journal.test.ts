import { createSecretKey } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalEntry, JournalRefusalReason } from '../reconcile/ports.ts';
import { ApiError } from '../core/api-error.ts';
import { sendJson, sendStatus, startTestApiServer } from '../testing/test-api-server.ts';
import type { TestApiServer, TestHandler } from '../testing/test-api-server.ts';
import {
  CONFIG_MAP_DATA_MAX_BYTES,
  decodeEntry,
  encodeEntry,
  type EntryChecks,
  KubeRecreationJournal,
  parseEntry,
} from './recreation-journal.ts';
import { createKubeTransport, type KubeTransport } from './transport.ts';
import { REPORTED_REFUSALS_LIMIT } from './reported-refusals.ts';

const COLLECTION = '/api/v1/namespaces/kreload-system/configmaps';
const PATH = `${COLLECTION}/kreload-job-recreations`;
const ENTRY: JournalEntry = {
  ref: { kind: 'Job', namespace: 'team-a', name: 'migrate' },
  deletedUid: 'old-uid',
  since: 1_767_225_600_000,
  manifest: {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'migrate', namespace: 'team-a' },
    spec: {},
  },
};
const KEY = createSecretKey(Buffer.alloc(32, 7));
const OTHER_KEY = createSecretKey(Buffer.alloc(32, 8));
const CHECKS: EntryChecks = {
  key: KEY,
  refuseNamespace: (namespace) =>
    namespace === 'kube-system' ? 'namespace kube-system is ignored' : undefined,
};

let server: TestApiServer;
let invalid: [string, JournalRefusalReason, string][];
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
    key: { get: () => Promise.resolve(KEY) },
    refuseNamespace: CHECKS.refuseNamespace,
    onInvalidEntry: (key, { refused, message }) => invalid.push([key, refused, message]),
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
      data: { 'team-a.migrate': encodeEntry(ENTRY, KEY) },
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
      data: { 'team-a.migrate': encodeEntry(ENTRY, KEY) },
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
        data: {
          'team-a.migrate': encodeEntry(ENTRY, KEY),
          'team-b.x': '{"version":9}',
          bad: 'nope',
          'kube-system.pwn': encodeEntry(jobEntry('kube-system', 'pwn'), KEY),
        },
      });
    });
    await expect(journal.entries()).resolves.toEqual([ENTRY]);
    expect(invalid).toEqual([
      ['team-b.x', 'malformed', 'not a signed entry of version 2'],
      ['bad', 'malformed', 'not JSON'],
      ['kube-system.pwn', 'namespace_refused', 'namespace kube-system is ignored'],
    ]);
  });

  it('no ConfigMap: no entries', async () => {
    answer((_request, response) => {
      sendStatus(response, 404, 'NotFound');
    });
    await expect(journal.entries()).resolves.toEqual([]);
  });

  it('an entry survives its stored form', () => {
    expect(decodeEntry('team-a.migrate', encodeEntry(ENTRY, KEY), CHECKS)).toEqual(ENTRY);
  });

  it('a key that cannot be read journals nothing (the Job is then not deleted)', async () => {
    const keyless = new KubeRecreationJournal({
      transport: createKubeTransport({ kubeConfig: server.kubeConfig() }),
      namespace: 'kreload-system',
      key: {
        get: () =>
          Promise.reject(new ApiError('secrets is forbidden', { status: 403, retryable: false })),
      },
      refuseNamespace: CHECKS.refuseNamespace,
      onInvalidEntry: () => undefined,
    });
    await expect(keyless.record(ENTRY)).rejects.toMatchObject({
      status: 403,
      message:
        'cannot journal Job team-a/migrate before deleting it (not deleted): secrets is forbidden',
    });
    expect(server.requests).toEqual([]);
  });
});

function jobEntry(namespace: string, name: string): JournalEntry {
  return {
    ref: { kind: 'Job', namespace, name },
    deletedUid: 'old-uid',
    since: 1,
    manifest: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace }, spec: {} },
  };
}

/** The stored form of `entry` with `edit` applied to its JSON after signing. */
function tampered(entry: JournalEntry, edit: (stored: Record<string, unknown>) => void): string {
  const stored = JSON.parse(encodeEntry(entry, KEY)) as Record<string, unknown>;
  edit(stored);
  return JSON.stringify(stored);
}

describe('decodeEntry: what kreload refuses to replay', () => {
  const rows: [string, string, string, string, JournalRefusalReason][] = [
    [
      'unsigned (an older or hand-written entry)',
      'team-a.migrate',
      JSON.stringify({
        ...(JSON.parse(encodeEntry(ENTRY, KEY)) as object),
        version: 1,
        signature: undefined,
      }),
      'not a signed entry of version 2',
      'malformed',
    ],
    [
      'no signature',
      'team-a.migrate',
      tampered(ENTRY, (e) => {
        delete e.signature;
      }),
      "not signed with kreload's key (the Secret kreload-job-recreations-key)",
      'bad_signature',
    ],
    [
      'signed with another key',
      'team-a.migrate',
      encodeEntry(ENTRY, OTHER_KEY),
      "not signed with kreload's key (the Secret kreload-job-recreations-key)",
      'bad_signature',
    ],
    [
      'a manifest edited after signing',
      'team-a.migrate',
      tampered(ENTRY, (e) => {
        (e.manifest as Record<string, unknown>).spec = { parallelism: 9 };
      }),
      "not signed with kreload's key (the Secret kreload-job-recreations-key)",
      'bad_signature',
    ],
    [
      'another deleted UID',
      'team-a.migrate',
      tampered(ENTRY, (e) => {
        e.deletedUid = 'x';
      }),
      "not signed with kreload's key (the Secret kreload-job-recreations-key)",
      'bad_signature',
    ],
    [
      'a key naming another Job',
      'team-a.other',
      encodeEntry(ENTRY, KEY),
      'the key does not name Job team-a/migrate',
      'wrong_key',
    ],
    [
      'a namespace kreload does not act on',
      'kube-system.pwn',
      encodeEntry(jobEntry('kube-system', 'pwn'), KEY),
      'namespace kube-system is ignored',
      'namespace_refused',
    ],
    [
      'not a Job',
      'team-a.migrate',
      encodeEntry(
        { ...ENTRY, manifest: { ...ENTRY.manifest, kind: 'Pod', apiVersion: 'v1' } },
        KEY,
      ),
      'the manifest is not a batch/v1 Job',
      'wrong_manifest',
    ],
    [
      'a manifest for another name',
      'team-a.migrate',
      encodeEntry({ ...ENTRY, manifest: { ...ENTRY.manifest, metadata: { name: 'x' } } }, KEY),
      'the manifest is not named migrate',
      'wrong_manifest',
    ],
    [
      'a manifest for another namespace',
      'team-a.migrate',
      encodeEntry(
        {
          ...ENTRY,
          manifest: { ...ENTRY.manifest, metadata: { name: 'migrate', namespace: 'kube-system' } },
        },
        KEY,
      ),
      'the manifest is not in namespace team-a',
      'wrong_manifest',
    ],
    ['not JSON', 'team-a.migrate', '{', 'not JSON', 'malformed'],
    ['not an object', 'team-a.migrate', '[]', 'not a JSON object', 'malformed'],
  ];
  it.each(rows)('%s', (_name, dataKey, text, message, refused) => {
    expect(decodeEntry(dataKey, text, CHECKS)).toEqual({ refused, message });
  });

  it('parseEntry checks the shape only: a reader without the key sees the entry', () => {
    expect(
      parseEntry('kube-system.pwn', encodeEntry(jobEntry('kube-system', 'pwn'), OTHER_KEY)),
    ).toMatchObject({
      entry: { ref: { namespace: 'kube-system', name: 'pwn' } },
    });
  });
});

describe('a refused entry left in place', () => {
  /** The journal's ConfigMap as an in-memory transport serves it: `data` as it is at each read. */
  function journalOver(data: () => Record<string, string>): {
    readonly journal: KubeRecreationJournal;
    readonly reported: [string, JournalRefusalReason][];
  } {
    const reported: [string, JournalRefusalReason][] = [];
    const transport: KubeTransport = {
      request: () =>
        Promise.resolve({ metadata: { name: 'kreload-job-recreations' }, data: data() }),
    };
    const journal = new KubeRecreationJournal({
      transport,
      namespace: 'kreload-system',
      key: { get: () => Promise.resolve(KEY) },
      refuseNamespace: CHECKS.refuseNamespace,
      onInvalidEntry: (key, { refused }) => reported.push([key, refused]),
    });
    return { journal, reported };
  }

  const FORGED = encodeEntry(ENTRY, OTHER_KEY);

  it('is reported once, however many replays read it', async () => {
    const { journal, reported } = journalOver(() => ({ 'team-a.migrate': FORGED }));
    await expect(journal.entries()).resolves.toEqual([]);
    await expect(journal.entries()).resolves.toEqual([]);
    await expect(journal.entries()).resolves.toEqual([]);
    expect(reported).toEqual([['team-a.migrate', 'bad_signature']]);
  });

  it('is reported again when its content changes, or once removed and written again', async () => {
    let data: Record<string, string> = { 'team-a.migrate': FORGED };
    const { journal, reported } = journalOver(() => data);
    await journal.entries();
    data = { 'team-a.migrate': tampered(ENTRY, (e) => (e.deletedUid = 'other')) };
    await journal.entries();
    data = {};
    await journal.entries();
    data = { 'team-a.migrate': FORGED };
    await journal.entries();
    expect(reported).toEqual([
      ['team-a.migrate', 'bad_signature'],
      ['team-a.migrate', 'bad_signature'],
      ['team-a.migrate', 'bad_signature'],
    ]);
  });

  it('keeps at most REPORTED_REFUSALS_LIMIT digests: the rest are reported at each read', async () => {
    const many = Object.fromEntries(
      Array.from({ length: REPORTED_REFUSALS_LIMIT + 2 }, (_, i) => [`k${String(i)}`, '{']),
    );
    const { journal, reported } = journalOver(() => many);
    await journal.entries();
    await journal.entries();
    expect(reported).toHaveLength(REPORTED_REFUSALS_LIMIT + 2 + 2);
  });

  it('is reported again once the journal was emptied and it is written again', async () => {
    let data: Record<string, string> = { 'team-a.migrate': FORGED };
    const { journal, reported } = journalOver(() => data);
    await journal.entries();
    data = {};
    await journal.entries();
    data = { 'team-a.migrate': FORGED };
    await journal.entries();
    expect(reported).toHaveLength(2);
  });
});
