// Issue 10, defects 1 and 3, on the real control plane with kreload as its CLI: nothing lost,
// nothing duplicated. A ValidatingAdmissionPolicy refuses one of kreload's requests (a real API
// answer, no test hook in kreload), and kreload is killed with SIGKILL in the worst moment:
// - a Job kreload deleted but could not create again must exist again after kill -9 and a restart,
//   exactly once, with the new hash (docs/adr/0019: the journal in kreload's namespace);
// - a CronJob whose metadata patch keeps failing, with `jobs` ignored (no Job cache), must get
//   exactly one Job however often it is reconciled, across a crash too (docs/adr/0020).
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../harness/audit.ts';
import { KubeJson, KubeJsonError, recordAt, stringAt } from '../harness/crds.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { pollUntil } from '../harness/poll.ts';
import { KRELOAD_NAMESPACE, KRELOAD_USER } from '../harness/rbac.ts';
import { configMapHash, type ConfigMapSpec } from '../harness/sources.ts';
import {
  annotationsOf,
  APP,
  AUTO,
  awaitBaseline,
  BUILT_IN_APIS,
  controlledBy,
  createObject,
  envOf,
  listObjects,
  podTemplate,
  readObject,
  SOURCE_HASHES,
  stateJson,
  uidOf,
  type ObjectRef,
} from './kinds-support.ts';

const fixture = useKreload({
  name: 'batch-faults',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
  // kreload journals Job recreations in its own namespace (docs/adr/0019).
  env: { POD_NAMESPACE: KRELOAD_NAMESPACE },
  startInBeforeAll: false,
});
const client = new KubeJson({ kc: fixture.cluster.kc });
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const JOURNAL = `/api/v1/namespaces/${KRELOAD_NAMESPACE}/configmaps/kreload-job-recreations`;
const ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const NEVER_DURING_A_TEST = '0 0 1 1 *';
const TIMEOUT_MS = 30_000;
/** Admission objects are cluster-wide: each policy's name carries the test's namespace. */
const installed: string[] = [];

const config = (version: string): ConfigMapSpec => ({
  type: 'CONFIGMAP',
  name: 'app-config',
  data: { version },
});

/** Probe Jobs the policy also refuses, so the test can tell when it is (no longer) enforced. */
const PROBE_PREFIX = 'admission-probe-';

/**
 * Refuses `operation` on `resource` (batch/v1) for kreload's ServiceAccount in the test namespace,
 * and waits until the API server enforces it.
 */
async function refuseForKreload(resource: 'jobs' | 'cronjobs', operation: string): Promise<void> {
  const namespace = fixture.namespace;
  const name = `${namespace}-${resource}-${operation.toLowerCase()}`;
  await client.request({
    method: 'POST',
    path: `${ADMISSION}/validatingadmissionpolicies`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          resourceRules: [
            {
              apiGroups: ['batch'],
              apiVersions: ['v1'],
              operations: [operation, 'CREATE'],
              resources: [resource, 'jobs'],
            },
          ],
        },
        validations: [
          {
            // Kreload's requests of `operation` on `resource`, and the probe Jobs.
            expression:
              `!(request.userInfo.username == '${KRELOAD_USER}' && ` +
              `request.operation == '${operation}' && request.resource.resource == '${resource}')` +
              ` && !(request.resource.resource == 'jobs' && request.operation == 'CREATE' && ` +
              `object.metadata.name.startsWith('${PROBE_PREFIX}'))`,
            message: `e2e: kreload may not ${operation} ${resource} now`,
          },
        ],
      },
    },
  });
  await client.request({
    method: 'POST',
    path: `${ADMISSION}/validatingadmissionpolicybindings`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  });
  installed.push(name);
  await awaitEnforcement(true);
}

async function allowAgain(): Promise<void> {
  for (const name of installed.splice(0)) {
    for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies']) {
      await client
        .request({ method: 'DELETE', path: `${ADMISSION}/${kind}/${name}` })
        .catch(() => undefined);
    }
  }
  await awaitEnforcement(false);
}

/** A dry-run create of a probe Job: refused exactly while a policy of this test is enforced. */
async function awaitEnforcement(enforced: boolean): Promise<void> {
  await pollUntil(
    async () => {
      try {
        await client.request({
          method: 'POST',
          path: `/apis/batch/v1/namespaces/${fixture.namespace}/jobs?dryRun=All`,
          body: {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: `${PROBE_PREFIX}${String(Date.now())}` },
            spec: {
              template: podTemplate({ app: 'probe', configMap: 'x', restartPolicy: 'Never' }),
            },
          },
        });
        return !enforced;
      } catch (error) {
        if (error instanceof KubeJsonError && error.status >= 400 && error.status < 500) {
          return enforced;
        }
        throw error;
      }
    },
    { timeoutMs: TIMEOUT_MS, describe: `the admission policy to be ${enforced ? 'on' : 'off'}` },
  );
}

async function journalKeys(): Promise<string[]> {
  try {
    const journal = await client.get(JOURNAL);
    const data = (journal as { data?: Record<string, string> }).data ?? {};
    return Object.keys(data);
  } catch (error) {
    if (error instanceof KubeJsonError && error.status === 404) return [];
    throw error;
  }
}

async function absent(ref: ObjectRef): Promise<boolean> {
  try {
    await readObject(client, ref);
    return false;
  } catch (error) {
    if (error instanceof KubeJsonError && error.status === 404) return true;
    throw error;
  }
}

function auditLog(): AuditLog | undefined {
  const path = fixture.cluster.auditLogPath;
  return path === undefined ? undefined : new AuditLog({ path });
}

/** kreload's completed requests `verb` on jobs/`name` in the namespace, with their codes. */
async function kreloadJobRequests(
  audit: AuditLog,
  since: number,
  verb: string,
  name?: string,
): Promise<number[]> {
  const events = await audit.eventsSince(since);
  return events
    .filter(
      (event) =>
        event.stage === 'ResponseComplete' &&
        event.user.username === KRELOAD_USER &&
        event.verb === verb &&
        event.objectRef?.resource === 'jobs' &&
        event.objectRef.namespace === fixture.namespace &&
        (name === undefined || event.objectRef.name === name),
    )
    .map((event) => event.responseStatus?.code ?? 0);
}

afterEach(async () => {
  await allowAgain();
  await fixture.kill9();
});

describe('no Job lost, no CronJob run duplicated (issue 10)', () => {
  it('a Job deleted before kill -9 exists again after the restart, once, with the new hash', async () => {
    const namespace = fixture.namespace;
    const ref: ObjectRef = { api: BUILT_IN_APIS.jobs, namespace, name: 'migrate' };
    await fixture.sources.create(namespace, config('1'));
    await createObject(client, ref, {
      metadata: { name: ref.name, annotations: { [AUTO]: 'true' } },
      spec: {
        suspend: true,
        backoffLimit: 0,
        template: podTemplate({ app: ref.name, configMap: 'app-config', restartPolicy: 'Never' }),
      },
    });
    const before = await readObject(client, ref);
    await fixture.start();
    await awaitBaseline(client, ref, { 'configmap/app-config': configMapHash(config('1')) });

    // kreload may delete, not create: the Job stays deleted and journalled.
    await refuseForKreload('jobs', 'CREATE');
    await fixture.sources.replace(namespace, config('2'));
    await pollUntil(
      async () => (await absent(ref)) && (await journalKeys()).includes(`${namespace}.migrate`),
      {
        timeoutMs: TIMEOUT_MS,
        describe: `Job ${namespace}/migrate deleted by kreload and journalled`,
      },
    );
    await fixture.kill9();
    await allowAgain();
    expect(await absent(ref)).toBe(true);

    const audit = auditLog();
    const since = (await audit?.mark()) ?? 0;
    await fixture.start();
    const recreated = await pollUntil(
      async () => {
        const job = await readObject(client, ref).catch(() => undefined);
        const env = job === undefined ? {} : envOf(recordAt(job, ['spec', 'template']), APP);
        return env[ENV] === configMapHash(config('2')) ? job : undefined;
      },
      {
        timeoutMs: TIMEOUT_MS,
        describe: `Job ${namespace}/migrate created again with the new hash`,
      },
    );
    expect(uidOf(recreated)).not.toBe(uidOf(before));
    await pollUntil(async () => !(await journalKeys()).includes(`${namespace}.migrate`), {
      timeoutMs: TIMEOUT_MS,
      describe: 'the journal entry to be removed',
    });
    // Exactly once: one successful create by kreload, and the Job keeps its UID.
    if (audit !== undefined) {
      await pollUntil(
        async () => (await kreloadJobRequests(audit, since, 'create', 'migrate')).includes(201),
        {
          timeoutMs: TIMEOUT_MS,
          describe: 'the audit log to show the create',
        },
      );
      const creates = await kreloadJobRequests(audit, since, 'create', 'migrate');
      expect(creates.filter((code) => code === 201)).toEqual([201]);
      expect(await kreloadJobRequests(audit, since, 'delete', 'migrate')).toEqual([]);
    }
    expect(uidOf(await readObject(client, ref))).toBe(uidOf(recreated));
  });

  it('a CronJob whose metadata patch fails gets one Job, with `jobs` ignored and across a crash', async () => {
    const namespace = fixture.namespace;
    const ref: ObjectRef = { api: BUILT_IN_APIS.cronjobs, namespace, name: 'nightly' };
    const source: ConfigMapSpec = { ...config('a'), name: 'nightly-config' };
    await fixture.sources.create(namespace, source);
    await createObject(client, ref, {
      metadata: { name: ref.name, annotations: { [AUTO]: 'true' } },
      spec: {
        schedule: NEVER_DURING_A_TEST,
        jobTemplate: {
          spec: {
            backoffLimit: 0,
            template: podTemplate({
              app: ref.name,
              configMap: source.name,
              restartPolicy: 'Never',
            }),
          },
        },
      },
    });
    const cronJobUid = uidOf(await readObject(client, ref));
    await fixture.start(['--ignored-workload-types=jobs']);
    await awaitBaseline(client, ref, { 'configmap/nightly-config': configMapHash(source) });

    await refuseForKreload('cronjobs', 'UPDATE');
    const audit = auditLog();
    const since = (await audit?.mark()) ?? 0;
    const changed: ConfigMapSpec = { ...source, data: { version: 'b' } };
    await fixture.sources.replace(namespace, changed);
    const runs = async (): Promise<unknown[]> =>
      controlledBy(await listObjects(client, { api: BUILT_IN_APIS.jobs, namespace }), cronJobUid);
    const [run] = await pollUntil(async () => ((await runs()).length > 0 ? runs() : undefined), {
      timeoutMs: TIMEOUT_MS,
      describe: `a Job of CronJob ${namespace}/nightly`,
    });
    expect(stringAt(run, ['metadata', 'name'])).toMatch(/^nightly-[0-9a-f]{10}$/);
    // A refused patch (403/422) is not retried by itself (§10): a crash and a restart are the
    // next trigger, and the restarted kreload has no Job cache to guard it.
    await fixture.kill9();
    const afterRestart = (await audit?.mark()) ?? 0;
    await fixture.start(['--ignored-workload-types=jobs']);
    if (audit !== undefined) {
      await pollUntil(
        async () => (await kreloadJobRequests(audit, afterRestart, 'create')).length >= 1,
        { timeoutMs: TIMEOUT_MS, describe: 'the restarted kreload to POST the Job again' },
      );
      const creates = await kreloadJobRequests(audit, since, 'create');
      expect(creates.filter((code) => code === 201)).toEqual([201]);
      expect(creates.filter((code) => code !== 201).every((code) => code === 409)).toBe(true);
    }
    expect((await runs()).map(uidOf)).toEqual([uidOf(run)]);

    // The patch is allowed again, and the next start records the change: still one Job.
    await allowAgain();
    await fixture.kill9();
    await fixture.start(['--ignored-workload-types=jobs']);
    const expected = stateJson({ 'configmap/nightly-config': configMapHash(changed) });
    await pollUntil(
      async () => annotationsOf(await readObject(client, ref))[SOURCE_HASHES] === expected,
      { timeoutMs: TIMEOUT_MS, describe: `CronJob ${namespace}/nightly to record ${expected}` },
    );
    expect((await runs()).map(uidOf)).toEqual([uidOf(run)]);
  });
});
