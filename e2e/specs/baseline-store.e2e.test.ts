// The default baseline store (`namespace`, docs/adr/0046) on the real control plane, kreload as its
// CLI with no --baseline-store flag: a first start records the baselines of never-rolled workloads in ConfigMaps of its own namespace
// and writes nothing to the workloads (audit log); a change made while kreload is killed with -9
// rolls each of them once at the restart; a workload created while it was down, already on the
// changed content, is not rolled.
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import { auditedRequestsWhen, countByObject } from '../harness/audit-objects.ts';
import { askController, type ExplainJson } from '../harness/explain.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE, KRELOAD_USER } from '../harness/rbac.ts';
import { envVarName, sourceHash, type SourceSpec } from '../harness/sources.ts';
import { APP, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const STORE_LABEL = 'kreload.io/baseline-store=true';
const DEPENDENTS = ['dependent-0', 'dependent-1', 'dependent-2'];

const fixture = useKreload({
  name: 'bstore',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    // The shortest resync: records of deleted workloads are swept at each full reconcile.
    '--resync-period=30s',
    '--enable-debug-explain',
  ],
  startInBeforeAll: false,
});

const config = (value: string): SourceSpec => ({
  type: 'CONFIGMAP',
  name: 'app-config',
  data: { value },
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Every data key of the store objects in kreload's namespace. */
async function storeKeys(): Promise<string[]> {
  const core = fixture.cluster.kc.makeApiClient(CoreV1Api);
  const listed = await core.listNamespacedConfigMap({
    namespace: KRELOAD_NAMESPACE,
    labelSelector: STORE_LABEL,
  });
  return listed.items.flatMap((item) => Object.keys(item.data ?? {}));
}

function envOf(view: { containers: readonly { name: string; env: Record<string, string> }[] }) {
  return view.containers.find((c) => c.name === APP)?.env ?? {};
}

describe('the default baseline store (namespace)', () => {
  it('a first start writes no workload; a change made while down rolls each once', async () => {
    const { namespace, workloads, sources, cluster } = fixture;
    const auditLogPath = cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    const first = config('one');
    await sources.create(namespace, first);
    const refs: WorkloadRef[] = [];
    for (const name of DEPENDENTS) {
      refs.push(
        await workloads.create('Deployment', {
          namespace,
          name,
          annotations: { [AUTO]: 'true' },
          podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: first.name } }] } }),
        }),
      );
    }
    const created = await Promise.all(refs.map((ref) => workloads.read(ref)));
    const uids = created.map((view) => view.uid);

    const startOffset = await audit.mark();
    await fixture.start();
    await pollUntil(
      async () => {
        const keys = await storeKeys();
        return uids.every((uid) => keys.some((key) => key.endsWith(`.${uid}`))) ? keys : undefined;
      },
      { timeoutMs: 30_000, describe: 'a baseline record of each Deployment in the store' },
    );
    await sleep(2_000);
    const atStart = await auditedRequestsWhen(audit, {
      offset: startOffset,
      username: KRELOAD_USER,
      done: (seen) => seen.some((r) => r.resource === 'configmaps' && r.verb !== 'list'),
    });
    const workloadWrites = atStart.filter(
      (r) => r.resource.startsWith('deployments') && r.verb !== 'get' && r.verb !== 'list',
    );
    expect(workloadWrites, 'no write to any workload before a change').toEqual([]);
    // Seen from the workloads too: the same annotations and generation as created.
    const settled = await Promise.all(refs.map((ref) => workloads.read(ref)));
    expect(settled.map((view) => [view.annotations, view.generation])).toEqual(
      created.map((view) => [view.annotations, view.generation]),
    );
    for (const view of settled) expect(view.annotations['kreload.io/baseline']).toBeUndefined();

    // /debug/explain names the store object holding B, and its hash, never content.
    const explained = await askController(fixture.kreload, {
      namespace,
      kind: 'Deployment',
      name: DEPENDENTS[0] ?? '',
    });
    expect(explained.status, explained.body).toBe(200);
    const report = JSON.parse(explained.body) as ExplainJson;
    expect(report.workload?.facts.baselineIn).toMatch(
      new RegExp(`^${KRELOAD_NAMESPACE}/kreload-baselines-[0-9a-f]{16}-0$`),
    );
    expect(report.workload?.sources.find((s) => s.key === `configmap/${first.name}`)).toMatchObject(
      { baseline: sourceHash(first) },
    );
    expect(explained.body).not.toContain('"one"');

    // Killed; the change and a new workload (already on the new content) arrive meanwhile.
    await fixture.kill9();
    const second = config('two');
    await sources.replace(namespace, second);
    const late = await workloads.create('Deployment', {
      namespace,
      name: 'late',
      annotations: { [AUTO]: 'true' },
      podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: second.name } }] } }),
    });
    const restartOffset = await audit.mark();
    await fixture.start();
    for (const ref of refs) {
      await pollUntil(
        async () => {
          const view = await workloads.read(ref);
          return envOf(view)[envVarName(second)] === sourceHash(second) ? view : undefined;
        },
        { timeoutMs: 30_000, describe: `${ref.name} rolled for the change made while down` },
      );
    }
    await sleep(3_000);
    expect(envOf(await workloads.read(late)), 'the late workload is not rolled').toEqual({});
    const afterRestart = await auditedRequestsWhen(audit, {
      offset: restartOffset,
      username: KRELOAD_USER,
      done: (seen) =>
        DEPENDENTS.every((name) => seen.some((r) => r.verb === 'patch' && r.name === name)),
    });
    expect(
      countByObject(
        afterRestart.filter((r) => r.verb === 'patch' && r.namespace === namespace && r.code < 300),
      ),
    ).toEqual(Object.fromEntries(DEPENDENTS.map((name) => [`patch deployments ${name}`, 1])));

    // The late workload, never rolled, has a record; deleted, its record is swept by the next
    // full reconcile (--resync-period=30s), in a batched write.
    const lateUid = (await workloads.read(late)).uid;
    expect(await storeKeys()).toContainEqual(expect.stringMatching(`\\.${lateUid}$`));
    const apps = cluster.kc.makeApiClient(AppsV1Api);
    await apps.deleteNamespacedDeployment({ name: late.name, namespace });
    await pollUntil(
      async () =>
        (await storeKeys()).some((key) => key.endsWith(`.${lateUid}`)) ? undefined : true,
      { timeoutMs: 60_000, describe: 'the record of the deleted Deployment swept from the store' },
    );
  }, 240_000);
});
