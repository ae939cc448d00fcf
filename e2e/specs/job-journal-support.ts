// What the Job recreation journal specs share: the journal and its key in kreload's namespace, and
// a Job that a finalizer holds in deletion, so kreload's CREATE after its DELETE keeps failing
// (AlreadyExists) until the test lets the Job go.
import { afterEach, beforeAll } from 'vitest';
import type { KubeJson } from '../harness/crds.ts';
import { KubeJsonError, MERGE_PATCH, stringAt } from '../harness/crds.ts';
import type { KreloadFixture } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import {
  AUTO,
  BUILT_IN_APIS,
  createObject,
  podTemplate,
  readObject,
  type ObjectRef,
} from './kinds-support.ts';

export const JOURNAL_NAME = 'kreload-job-recreations';
export const JOURNAL_KEY_NAME = 'kreload-job-recreations-key';
export const HOLD = 'e2e.kreload.io/hold';
export const TIMEOUT_MS = 30_000;

export function journalPath(namespace: string): string {
  return `/api/v1/namespaces/${namespace}/configmaps/${JOURNAL_NAME}`;
}

async function deleteIfPresent(client: KubeJson, path: string): Promise<void> {
  try {
    await client.request({ method: 'DELETE', path });
  } catch (error) {
    if (!(error instanceof KubeJsonError && error.status === 404)) throw error;
  }
}

/** No journal and no signing key in `namespace`: what a fresh install has. */
export async function resetJournal(client: KubeJson, namespace: string): Promise<void> {
  await deleteIfPresent(client, journalPath(namespace));
  await deleteIfPresent(client, `/api/v1/namespaces/${namespace}/secrets/${JOURNAL_KEY_NAME}`);
}

/**
 * Each test starts its own kreload on a fresh journal: none before the file's first test, and after
 * each test kreload is killed (as a crash: nothing drained) and the journal removed.
 */
export function useFreshJournal(fixture: KreloadFixture, client: KubeJson): void {
  beforeAll(async () => {
    await resetJournal(client, KRELOAD_NAMESPACE);
  });
  afterEach(async () => {
    await fixture.kill9();
    await resetJournal(client, KRELOAD_NAMESPACE);
  });
}

/** The journal's data, `{}` when it does not exist. */
export async function journalData(
  client: KubeJson,
  namespace: string,
): Promise<Record<string, string>> {
  try {
    const journal = await client.get(journalPath(namespace));
    return (journal as { data?: Record<string, string> }).data ?? {};
  } catch (error) {
    if (error instanceof KubeJsonError && error.status === 404) return {};
    throw error;
  }
}

export async function isAbsent(client: KubeJson, ref: ObjectRef): Promise<boolean> {
  try {
    await readObject(client, ref);
    return false;
  } catch (error) {
    if (error instanceof KubeJsonError && error.status === 404) return true;
    throw error;
  }
}

/** A suspended Job reading ConfigMap `configMap`, with the HOLD finalizer. */
export async function createHeldJob(
  client: KubeJson,
  ref: ObjectRef,
  configMap: string,
): Promise<unknown> {
  return createObject(client, ref, {
    metadata: { name: ref.name, annotations: { [AUTO]: 'true' }, finalizers: [HOLD] },
    spec: {
      suspend: true,
      backoffLimit: 0,
      template: podTemplate({ app: ref.name, configMap, restartPolicy: 'Never' }),
    },
  });
}

/** Waits until the Job with `uid` is being deleted (kreload's DELETE went through). */
export async function awaitTerminating(
  client: KubeJson,
  ref: ObjectRef,
  uid: string,
): Promise<void> {
  await pollUntil(
    async () => {
      const job = await readObject(client, ref);
      return (
        stringAt(job, ['metadata', 'uid']) === uid &&
        stringAt(job, ['metadata', 'deletionTimestamp']) !== undefined
      );
    },
    { timeoutMs: TIMEOUT_MS, describe: `Job ${ref.namespace}/${ref.name} deleted by kreload` },
  );
}

/** Drops the finalizers and waits until the old Job is gone. */
export async function releaseHeldJob(client: KubeJson, ref: ObjectRef, uid: string): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `/apis/batch/v1/namespaces/${ref.namespace}/jobs/${ref.name}`,
    body: { metadata: { finalizers: null } },
    contentType: MERGE_PATCH,
  });
  await pollUntil(
    async () => {
      try {
        return stringAt(await readObject(client, ref), ['metadata', 'uid']) !== uid;
      } catch (error) {
        if (error instanceof KubeJsonError && error.status === 404) return true;
        throw error;
      }
    },
    { timeoutMs: TIMEOUT_MS, describe: `the old Job ${ref.namespace}/${ref.name} to be gone` },
  );
}

export const JOBS = BUILT_IN_APIS.jobs;
