// kreload run outside a cluster (the demo, a laptop): no POD_NAMESPACE. A Job a roll deletes is
// journalled in the kubeconfig context's namespace, so kill -9 between the DELETE and the CREATE
// loses nothing: the restarted process creates it again. Never a memory-only journal.
import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeJson, KubeJsonError, recordAt } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { installKreloadIdentity, KRELOAD_NAMESPACE } from '../harness/rbac.ts';
import { configMapHash, type ConfigMapSpec } from '../harness/sources.ts';
import {
  APP,
  awaitBaseline,
  envOf,
  keyOf,
  readObject,
  uidOf,
  type ObjectRef,
} from './kinds-support.ts';
import {
  awaitTerminating,
  createHeldJob,
  JOBS,
  journalData,
  releaseHeldJob,
  useFreshJournal,
  TIMEOUT_MS,
} from './job-journal-support.ts';

const ENV = 'STAKATER_LAPTOP_CONFIG_CONFIGMAP';
const fixture = useKreload({
  name: 'journal-context',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
  // No POD_NAMESPACE (empty is unset): the kubeconfig's context names kreload's namespace instead.
  env: { POD_NAMESPACE: '' },
  identity: async (cluster) => {
    const identity = await installKreloadIdentity(cluster);
    const kc = new KubeConfig();
    kc.loadFromFile(identity.kubeconfigPath);
    kc.loadFromOptions({
      clusters: kc.clusters,
      users: kc.users,
      contexts: kc.contexts.map((context) => ({ ...context, namespace: KRELOAD_NAMESPACE })),
      currentContext: kc.getCurrentContext(),
    });
    const kubeconfigPath = identity.kubeconfigPath.replace(/\.kubeconfig$/, '-ns.kubeconfig');
    await writeFile(kubeconfigPath, kc.exportConfig(), { mode: 0o600 });
    return { kubeconfigPath };
  },
  startInBeforeAll: false,
});
const client = new KubeJson({ kc: fixture.cluster.kc });

useFreshJournal(fixture, client);

describe('without POD_NAMESPACE', () => {
  it('a Job deleted before kill -9 is created again: journalled in the context namespace', async () => {
    const namespace = fixture.namespace;
    const ref: ObjectRef = { api: JOBS, namespace, name: 'laptop' };
    const config = (version: string): ConfigMapSpec => ({
      type: 'CONFIGMAP',
      name: 'laptop-config',
      data: { version },
    });
    await fixture.sources.create(namespace, config('1'));
    await createHeldJob(client, ref, 'laptop-config');
    const uid = uidOf(await readObject(client, ref));
    const kreload = await fixture.start();
    await awaitBaseline(
      client,
      ref,
      {
        [keyOf({ type: 'CONFIGMAP', name: 'laptop-config' })]: configMapHash({
          data: { version: '1' },
        }),
      },
      TIMEOUT_MS,
    );
    // The roll deletes the Job (a finalizer holds it, so its CREATE fails), then kreload dies.
    await fixture.sources.replace(namespace, config('2'));
    await awaitTerminating(client, ref, uid);
    await pollUntil(
      async () => `${namespace}.laptop` in (await journalData(client, KRELOAD_NAMESPACE)),
      { timeoutMs: TIMEOUT_MS, describe: `the journal entry in ${KRELOAD_NAMESPACE}` },
    );
    // Said at start: where the journal is, and why there.
    const log = await kreload.readLog();
    expect(log).toMatch(/POD_NAMESPACE is not set: Job rolls journal the Job in this namespace/);
    expect(log).toContain(`${KRELOAD_NAMESPACE}/kreload-job-recreations`);
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
        return envOf(recordAt(job, ['spec', 'template']), APP)[ENV] === configMapHash(config('2'))
          ? job
          : undefined;
      },
      { timeoutMs: TIMEOUT_MS, describe: 'the Job created again with the new hash' },
    );
    expect(uidOf(recreated)).not.toBe(uid);
    await pollUntil(
      async () => !(`${namespace}.laptop` in (await journalData(client, KRELOAD_NAMESPACE))),
      { timeoutMs: TIMEOUT_MS, describe: 'the journal entry removed' },
    );
  });
});
