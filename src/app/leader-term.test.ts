import { createSecretKey } from 'node:crypto';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import type { WorkloadKey } from '../core/types.ts';
import { encodeEntry } from '../kube/recreation-journal.ts';
import type { KubeTransport } from '../kube/transport.ts';
import { createMetrics } from '../metrics/metrics.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { journalNamespace, recreationJournal, replayRecreations } from './leader-term.ts';

describe('journalNamespace: where Job recreations are journalled', () => {
  const rows: [string, string | undefined, string | undefined, string, RegExp][] = [
    ['in a cluster: POD_NAMESPACE', 'kreload-system', 'ops', 'kreload-system', /POD_NAMESPACE/],
    ['outside: the kubeconfig context', undefined, 'ops', 'ops', /current context/],
    ['outside, a context without a namespace', undefined, undefined, 'default', /names none/],
    ['outside, an empty context namespace', undefined, '', 'default', /names none/],
  ];
  it.each(rows)('%s', (_name, podNamespace, contextNamespace, namespace, from) => {
    const placed = journalNamespace(podNamespace, contextNamespace);
    expect(placed.namespace).toBe(namespace);
    expect(placed.from).toMatch(from);
  });
});

describe('recreationJournal: a forged entry left in the journal', () => {
  const SECRET_PATH = '/api/v1/namespaces/kreload-system/secrets/kreload-job-recreations-key';
  const FORGED = encodeEntry(
    {
      ref: { kind: 'Job', namespace: 'team-a', name: 'migrate' },
      deletedUid: 'old-uid',
      since: 1,
      manifest: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate' }, spec: {} },
    },
    createSecretKey(Buffer.alloc(32, 8)),
  );

  /** Serves kreload's key and a journal holding one entry signed with another key. */
  const transport: KubeTransport = {
    request: ({ path }) =>
      Promise.resolve(
        path === SECRET_PATH
          ? { data: { 'hmac-sha256': Buffer.alloc(32, 7).toString('base64') } }
          : { data: { 'team-a.migrate': FORGED } },
      ),
  };

  it('two replays: one log line, counted once', async () => {
    const options = await parseOptions([], { POD_NAMESPACE: 'kreload-system' });
    const logger = new RecordingLogger();
    const registry = new Registry();
    const metrics = createMetrics(registry, { countByNamespace: false });
    const journal = recreationJournal(
      { options, transport, logger, metrics, version: 'test' },
      { contextNamespace: undefined, isSelected: () => true },
    );
    await expect(journal?.entries()).resolves.toEqual([]);
    await expect(journal?.entries()).resolves.toEqual([]);
    expect(logger.written).toEqual([
      {
        level: 'warn',
        message: 'refusing a Job recreation journal entry: no Job is created from it',
        fields: {
          journal: 'kreload-system/kreload-job-recreations',
          key: 'team-a.migrate',
          reason: "not signed with kreload's key (the Secret kreload-job-recreations-key)",
        },
      },
    ]);
    expect(await registry.metrics()).toContain(
      'kreload_job_recreations_refused_total{reason="bad_signature"} 1',
    );
  });
});

describe('replayRecreations: the journal finished only where this replica writes', () => {
  const JOURNALLED: WorkloadKey[] = ['Job/team-a/migrate', 'Job/team-b/seed'];

  async function replay(
    select?: (keys: readonly WorkloadKey[]) => WorkloadKey[],
  ): Promise<string[][]> {
    const options = await parseOptions([], { POD_NAMESPACE: 'kreload-system' });
    const triggered: string[][] = [];
    const context = {
      options,
      transport: { request: () => Promise.resolve({}) },
      logger: new RecordingLogger(),
      metrics: createMetrics(new Registry(), { countByNamespace: false }),
      version: 'test',
    };
    const pipeline = {
      reconciler: {
        replayRecreations: () => Promise.resolve(JOURNALLED),
        pendingRecreations: () => JOURNALLED,
      },
      router: {
        triggerAll: (keys: readonly WorkloadKey[]) => {
          triggered.push([...keys]);
        },
      },
    };
    replayRecreations(context, pipeline, select);
    await new Promise((resolve) => setImmediate(resolve));
    return triggered;
  }

  it.each([
    { name: 'leader election: every journalled Job', select: undefined, expected: JOURNALLED },
    {
      name: 'active-active: the Jobs of the namespaces selected (a bucket, or those owned)',
      select: (keys: readonly WorkloadKey[]) => keys.filter((key) => key.includes('/team-b/')),
      expected: ['Job/team-b/seed'],
    },
  ])('$name', async ({ select, expected }) => {
    expect(await replay(select)).toEqual([expected]);
  });
});
