// The Job recreation journal (docs/adr/0019) on the real control plane, as someone who may write
// ConfigMaps in kreload's namespace would use it: a hand-written entry, for an ignored namespace or
// with a forged manifest, must never make kreload create a Job, and each is reported with its
// reason; a recreation whose entry is removed from the journal (or the journal deleted) is dropped.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../harness/audit.ts';
import { KubeJson, KubeJsonError, recordAt } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE, KRELOAD_USER } from '../harness/rbac.ts';
import { configMapHash, type ConfigMapSpec } from '../harness/sources.ts';
import {
  APP,
  awaitBaseline,
  envOf,
  IMAGE,
  keyOf,
  readObject,
  uidOf,
  type ObjectRef,
} from './kinds-support.ts';
import {
  awaitTerminating,
  createHeldJob,
  isAbsent,
  JOBS,
  journalData,
  journalPath,
  releaseHeldJob,
  useFreshJournal,
  TIMEOUT_MS,
} from './job-journal-support.ts';

/** The shortest resync kreload accepts: each one replays the journal. */
const RESYNC_MS = 30_000;
const fixture = useKreload({
  name: 'job-journal',
  // Global mode with kube-system ignored.
  args: () => [
    '--namespaces-to-ignore=kube-system',
    '--sync-delay=0',
    `--resync-period=${String(RESYNC_MS / 1000)}s`,
  ],
  env: { POD_NAMESPACE: KRELOAD_NAMESPACE },
  startInBeforeAll: false,
});
const client = new KubeJson({ kc: fixture.cluster.kc });

function auditLog(): AuditLog | undefined {
  const path = fixture.cluster.auditLogPath;
  return path === undefined ? undefined : new AuditLog({ path });
}

/** kreload's completed requests `verb` on `resource` since `offset`, as `namespace/name code`. */
async function kreloadRequests(
  audit: AuditLog,
  offset: number,
  verb: string,
  resource: string,
): Promise<string[]> {
  return (await audit.eventsSince(offset))
    .filter(
      (event) =>
        event.stage === 'ResponseComplete' &&
        event.user.username === KRELOAD_USER &&
        event.verb === verb &&
        event.objectRef?.resource === resource,
    )
    .map(
      (event) =>
        `${event.objectRef?.namespace ?? ''}/${event.objectRef?.name ?? ''} ${String(event.responseStatus?.code ?? 0)}`,
    );
}

/** A Job that runs as `serviceAccountName` — what an attacker would have kreload create. */
function forgedJob(namespace: string, name: string): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          serviceAccountName: 'default',
          restartPolicy: 'Never',
          containers: [{ name: 'pwn', image: IMAGE, command: ['sh', '-c', 'true'] }],
        },
      },
    },
  };
}

/** An entry as a hand would write it: `version` 1 is unsigned, 2 carries a made-up signature. */
function handWritten(version: 1 | 2, namespace: string, name: string): string {
  return JSON.stringify({
    version,
    namespace,
    name,
    deletedUid: 'd9b7f1c2-0000-4000-8000-000000000000',
    since: Date.now(),
    manifest: forgedJob(namespace, name),
    ...(version === 2 ? { signature: randomBytes(32).toString('base64') } : {}),
  });
}

async function writeJournal(data: Record<string, string>): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${KRELOAD_NAMESPACE}/configmaps`,
    body: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kreload-job-recreations' },
      data,
    },
  });
}

useFreshJournal(fixture, client);

describe('the Job recreation journal is not trusted input', () => {
  it('hand-written entries create no Job, and each is reported with its reason', async () => {
    const namespace = fixture.namespace;
    const entries: Record<string, { ref: ObjectRef; reason: RegExp }> = {
      'kube-system.pwn': {
        ref: { api: JOBS, namespace: 'kube-system', name: 'pwn' },
        reason: /not a signed entry/,
      },
      'kube-system.pwn-signed': {
        ref: { api: JOBS, namespace: 'kube-system', name: 'pwn-signed' },
        reason: /namespace kube-system is ignored/,
      },
      [`${namespace}.forged`]: {
        ref: { api: JOBS, namespace, name: 'forged' },
        reason: /not a signed entry/,
      },
      [`${namespace}.forged-signed`]: {
        ref: { api: JOBS, namespace, name: 'forged-signed' },
        reason: /not signed with kreload's key/,
      },
      // The key names one Job, the entry another.
      [`${namespace}.other`]: {
        ref: { api: JOBS, namespace, name: 'elsewhere' },
        reason: /the key does not name Job/,
      },
    };
    await writeJournal({
      'kube-system.pwn': handWritten(1, 'kube-system', 'pwn'),
      'kube-system.pwn-signed': handWritten(2, 'kube-system', 'pwn-signed'),
      [`${namespace}.forged`]: handWritten(1, namespace, 'forged'),
      [`${namespace}.forged-signed`]: handWritten(2, namespace, 'forged-signed'),
      [`${namespace}.other`]: handWritten(2, namespace, 'elsewhere'),
    });
    const audit = auditLog();
    const since = (await audit?.mark()) ?? 0;
    const kreload = await fixture.start();

    // Every entry refused at the replay on start, by key, with its reason.
    const refusals = async (): Promise<string[]> =>
      (await kreload.readLog())
        .split('\n')
        .filter((line) => line.includes('refusing a Job recreation journal entry'));
    await pollUntil(
      async () => {
        const lines = await refusals();
        return Object.entries(entries).every(([key, { reason }]) =>
          lines.some((line) => line.includes(key) && reason.test(line)),
        );
      },
      { timeoutMs: TIMEOUT_MS, describe: 'each hand-written entry refused with its reason' },
    );
    // Time for a create to show: the replay enqueues keys right after reading the journal.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    if (audit !== undefined) {
      expect(await kreloadRequests(audit, since, 'create', 'jobs')).toEqual([]);
    }
    for (const { ref } of Object.values(entries)) expect(await isAbsent(client, ref)).toBe(true);
    // Refused entries are left in place for whoever investigates.
    expect(Object.keys(await journalData(client, KRELOAD_NAMESPACE)).sort()).toEqual(
      Object.keys(entries).sort(),
    );
  });

  it('a recreation whose journal is deleted is dropped: the Job is not created', async () => {
    const namespace = fixture.namespace;
    const ref: ObjectRef = { api: JOBS, namespace, name: 'held' };
    const config = (version: string): ConfigMapSpec => ({
      type: 'CONFIGMAP',
      name: 'held-config',
      data: { version },
    });
    await fixture.sources.create(namespace, config('1'));
    await createHeldJob(client, ref, 'held-config');
    const uid = uidOf(await readObject(client, ref));
    const kreload = await fixture.start();
    await pollUntil(async () => (await kreload.readLog()).includes('caches synced'), {
      timeoutMs: TIMEOUT_MS,
      describe: 'kreload to sync',
    });
    await awaitBaseline(
      client,
      ref,
      { [keyOf(config('1'))]: configMapHash(config('1')) },
      TIMEOUT_MS,
    );

    // kreload journals the Job and deletes it; the finalizer holds it, so CREATE keeps failing.
    await fixture.sources.replace(namespace, config('2'));
    await awaitTerminating(client, ref, uid);
    await pollUntil(
      async () => `${namespace}.held` in (await journalData(client, KRELOAD_NAMESPACE)),
      { timeoutMs: TIMEOUT_MS, describe: 'the journal entry' },
    );
    // The roll's own retries are over (about 30 s): the recreation is left to the journal.
    await pollUntil(
      async () =>
        (await kreload.readLog())
          .split('\n')
          .some(
            (line) =>
              line.includes('Job deleted but not re-created; kept for retry') &&
              line.includes('held'),
          ),
      { timeoutMs: 60_000, describe: "the roll's own CREATE retries to give up" },
    );

    // Someone deletes the journal; then the old Job goes.
    await client.request({ method: 'DELETE', path: journalPath(KRELOAD_NAMESPACE) });
    const audit = auditLog();
    const since = (await audit?.mark()) ?? 0;
    await releaseHeldJob(client, ref, uid);
    // The next resync replays the journal: the recreation is withdrawn, nothing is created.
    await pollUntil(
      async () =>
        (await kreload.readLog())
          .split('\n')
          .some((line) => line.includes('withdrawn') && line.includes(`${namespace}/held`)),
      { timeoutMs: RESYNC_MS + 20_000, describe: 'the recreation withdrawn at the next resync' },
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await isAbsent(client, ref)).toBe(true);
    if (audit !== undefined) {
      expect(await kreloadRequests(audit, since, 'create', 'jobs')).toEqual([]);
    }
  });

  it('a genuine entry of another kreload process is replayed after kill -9', async () => {
    const namespace = fixture.namespace;
    const ref: ObjectRef = { api: JOBS, namespace, name: 'genuine' };
    const config = (version: string): ConfigMapSpec => ({
      type: 'CONFIGMAP',
      name: 'genuine-config',
      data: { version },
    });
    await fixture.sources.create(namespace, config('1'));
    await createHeldJob(client, ref, 'genuine-config');
    const uid = uidOf(await readObject(client, ref));
    await fixture.start();
    await awaitBaseline(
      client,
      ref,
      { [keyOf(config('1'))]: configMapHash(config('1')) },
      TIMEOUT_MS,
    );
    await fixture.sources.replace(namespace, config('2'));
    await awaitTerminating(client, ref, uid);
    await pollUntil(
      async () => `${namespace}.genuine` in (await journalData(client, KRELOAD_NAMESPACE)),
      { timeoutMs: TIMEOUT_MS, describe: 'the journal entry' },
    );
    await fixture.kill9();
    await releaseHeldJob(client, ref, uid);
    await fixture.start();
    const recreated = await pollUntil(
      async () => {
        const job = await readObject(client, ref).catch((error: unknown) => {
          if (error instanceof KubeJsonError && error.status === 404) return undefined;
          throw error;
        });
        if (job === undefined) return undefined;
        const env = envOf(recordAt(job, ['spec', 'template']), APP);
        return Object.keys(env).length > 0 ? job : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: 'the Job created again from the journal' },
    );
    expect(uidOf(recreated)).not.toBe(uid);
    await pollUntil(
      async () => !(`${namespace}.genuine` in (await journalData(client, KRELOAD_NAMESPACE))),
      { timeoutMs: TIMEOUT_MS, describe: 'the journal entry removed' },
    );
  });
});
