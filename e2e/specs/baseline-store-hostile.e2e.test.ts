// The baseline store (docs/adr/0046) on the real control plane, attacked and used as a cluster
// would: a record edited by someone else while kreload is stopped (a wrong hash, which would roll
// the workload) is not read, is reported without its value, and is written back by kreload; and
// the store path end to end with pods on kwok's nodes: kreload stopped, the ConfigMap changed,
// kreload started, the workload rolled exactly once and its new pods Ready.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { auditedRequestsWhen, countByObject } from '../harness/audit-objects.ts';
import { KubeJson } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { PodLifecycle, runnable } from '../harness/pod-lifecycle.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE, KRELOAD_USER } from '../harness/rbac.ts';
import { changeProgressFromPods } from '../harness/rollout-watch.ts';
import { envVarName, sourceHash, type SourceSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const STORE_LABEL = 'kreload.io/baseline-store=true';
const REPLICAS = 2;
/** A well-formed hash that no source of this file has: read as B, it would roll the workload. */
const FORGED = 'f'.repeat(40);

const fixture = useKreload({
  name: 'bstore-hostile',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
  startInBeforeAll: false,
});

const config = (name: string, value: string): SourceSpec => ({
  type: 'CONFIGMAP',
  name,
  data: { value },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StoreEntry {
  readonly object: string;
  readonly key: string;
  readonly value: string;
  /** The field managers that own the key (managedFields). */
  readonly owners: readonly string[];
}

/** The store's record of the workload object `uid`, with who owns it. */
async function storeEntry(uid: string): Promise<StoreEntry | undefined> {
  const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
  const listed = await core.listNamespacedConfigMap({
    namespace: KRELOAD_NAMESPACE,
    labelSelector: STORE_LABEL,
  });
  for (const item of listed.items) {
    for (const [key, value] of Object.entries(item.data ?? {})) {
      if (!key.endsWith(`.${uid}`)) continue;
      const owners = (item.metadata?.managedFields ?? [])
        .filter((entry) => {
          const fields = entry.fieldsV1 as Record<string, Record<string, unknown>> | undefined;
          return fields?.['f:data']?.[`f:${key}`] !== undefined;
        })
        .map((entry) => entry.manager ?? '');
      return { object: item.metadata?.name ?? '', key, value, owners };
    }
  }
  return undefined;
}

function envOf(view: { containers: readonly { name: string; env: Record<string, string> }[] }) {
  return view.containers.find((c) => c.name === APP)?.env ?? {};
}

function audit(): AuditLog {
  const path = fixture.cluster.auditLogPath;
  if (path === undefined) throw new Error('the shared cluster runs without an audit log');
  return new AuditLog({ path });
}

/** Creates a Deployment on `source` and waits for kreload's store record of it. */
async function recordedDeployment(name: string, source: SourceSpec) {
  const { namespace, workloads } = fixture;
  const ref: WorkloadRef = await workloads.create('Deployment', {
    namespace,
    name,
    annotations: { [AUTO]: 'true' },
    replicas: REPLICAS,
    podSpec: runnable(podSpec({ app: { envFrom: [{ configMapRef: { name: source.name } }] } })),
  });
  const { uid } = await workloads.read(ref);
  return { ref, uid };
}

function waitForRecord(uid: string, ok: (entry: StoreEntry) => boolean, describe: string) {
  return pollUntil(
    async () => {
      const entry = await storeEntry(uid);
      return entry !== undefined && ok(entry) ? entry : undefined;
    },
    { timeoutMs: 30_000, describe },
  );
}

describe('the baseline store against a hostile or careless cluster', () => {
  it('a record edited by someone else is not read: no roll, reported, written back', async () => {
    const { namespace, sources, workloads } = fixture;
    const source = config('edited-config', 'one');
    await sources.create(namespace, source);
    const { ref, uid } = await recordedDeployment('edited', source);
    await fixture.start();
    const recorded = await waitForRecord(
      uid,
      (entry) => entry.owners.includes('kreload'),
      'the first-sight record, written by kreload',
    );
    expect(recorded.value).toBe(`{"configmap/${source.name}":"${sourceHash(source)}"}`);
    await fixture.stop();

    // A tenant with write access to kreload's namespace rewrites the hash while kreload is down.
    const client = new KubeJson({ kc: fixture.cluster.kc });
    await client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${KRELOAD_NAMESPACE}/configmaps/${recorded.object}?fieldManager=tenant-edit`,
      contentType: 'application/merge-patch+json',
      body: { data: { [recorded.key]: `{"configmap/${source.name}":"${FORGED}"}` } },
    });
    const edited = await storeEntry(uid);
    expect(edited?.owners).toEqual(['tenant-edit']);

    const log = audit();
    const offset = await log.mark();
    const kreload = await fixture.start();
    const rewritten = await waitForRecord(
      uid,
      (entry) => entry.owners.includes('kreload'),
      'the record written back by kreload',
    );
    expect(rewritten.value).toBe(`{"configmap/${source.name}":"${sourceHash(source)}"}`);
    await sleep(2_000);
    const requests = await auditedRequestsWhen(log, {
      offset,
      username: KRELOAD_USER,
      done: (seen) => seen.some((r) => r.resource === 'configmaps' && r.verb === 'patch'),
    });
    expect(
      requests.filter((r) => r.resource.startsWith('deployments') && r.verb === 'patch'),
      'no roll, no write to the workload',
    ).toEqual([]);
    expect(envOf(await workloads.read(ref))).toEqual({});
    const text = await kreload.readLog();
    expect(text).toContain('baseline store record not read');
    expect(text).toContain('tenant-edit');
    expect(text, 'never the value').not.toContain(FORGED);

    // The record works again: a change now rolls the workload once.
    const next = config('edited-config', 'two');
    await sources.replace(namespace, next);
    await pollUntil(
      async () => {
        const view = await workloads.read(ref);
        return envOf(view)[envVarName(next)] === sourceHash(next) ? view : undefined;
      },
      { timeoutMs: 30_000, describe: 'the edited workload rolled for a later change' },
    );
    await fixture.stop();
  }, 180_000);

  it('stopped, the ConfigMap changed, started: rolled once, its new pods Ready', async () => {
    const { namespace, sources, workloads, cluster } = fixture;
    const pods = new PodLifecycle({ kc: cluster.kc });
    const first = config('app-config', 'one');
    await sources.create(namespace, first);
    const { ref, uid } = await recordedDeployment('app', first);
    await pods.waitComplete(ref);
    await fixture.start();
    await waitForRecord(uid, () => true, 'the first-sight record');
    const before = await workloads.read(ref);
    expect(before.annotations['kreload.io/baseline'], 'nothing written to the workload').toBe(
      undefined,
    );
    await fixture.stop();

    const second = config('app-config', 'two');
    await sources.replace(namespace, second);
    const log = audit();
    const offset = await log.mark();
    await fixture.start();
    const rolled = { name: envVarName(second), value: sourceHash(second) };
    const progress = await pollUntil(
      async () => {
        const seen = await changeProgressFromPods(cluster.kc, namespace, rolled, REPLICAS);
        return seen.complete === 1 ? seen : undefined;
      },
      { timeoutMs: 90_000, describe: 'the new ReplicaSet with every pod Ready, no old pod left' },
    );
    expect(progress).toEqual({ complete: 1, inFlight: 0 });
    await pods.waitComplete(ref);
    await sleep(3_000);
    const requests = await auditedRequestsWhen(log, {
      offset,
      username: KRELOAD_USER,
      done: (seen) => seen.some((r) => r.verb === 'patch' && r.name === ref.name),
    });
    expect(
      countByObject(requests.filter((r) => r.verb === 'patch' && r.namespace === namespace)),
      'one roll',
    ).toEqual({ 'patch deployments app': 1 });
    const sets = await cluster.kc
      .makeApiClient(AppsV1Api)
      .listNamespacedReplicaSet({ namespace, labelSelector: `app=${ref.name}` });
    expect(sets.items, 'the first ReplicaSet and the roll’s').toHaveLength(2);
    await pollUntil(async () => ((await storeEntry(uid)) === undefined ? true : undefined), {
      timeoutMs: 30_000,
      describe: 'the record retired once the roll shows (a removal waits up to 10 s)',
    });
    await fixture.stop();
  }, 240_000);
});
