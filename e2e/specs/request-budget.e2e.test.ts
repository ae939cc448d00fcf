// Spec §9.2 items 3 and 5, D26: after the initial sync, a ConfigMap edit costs no LIST and no GET
// (workloads are watched and indexed) and exactly one patch per affected workload. The apiserver's
// audit log, which records kreload's ServiceAccount only, is the witness.
import { beforeAll, describe, expect, it } from 'vitest';
import { AUTO } from '../harness/annotations.ts';
import { AuditLog } from '../harness/audit.ts';
import {
  auditedRequestsWhen,
  countByObject,
  type AuditedRequest,
} from '../harness/audit-objects.ts';
import { waitForBaseline, waitForEnv } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics, waitUntilSettled } from '../harness/metrics.ts';
import { KRELOAD_USER } from '../harness/rbac.ts';
import { envVarName, sourceHash, sourceKey, type ConfigMapSpec } from '../harness/sources.ts';
import { APP, WORKLOAD_KINDS, podSpec, type WorkloadRef } from '../harness/workloads.ts';

const fixture = useKreload({
  name: 'request-budget',
  args: ([namespace]) => [`--namespaces=${String(namespace)}`, '--sync-delay=0'],
});

const SHARED: ConfigMapSpec = { type: 'CONFIGMAP', name: 'shared-cfg', data: { v: '1' } };
const SHARED_EDITED: ConfigMapSpec = { ...SHARED, data: { v: '2' } };
const OTHER: ConfigMapSpec = { type: 'CONFIGMAP', name: 'other-cfg', data: { v: '1' } };
const WORKLOAD_RESOURCES = new Set<string>(WORKLOAD_KINDS.map((kind) => kind.resource));

describe('request budget of one ConfigMap edit (audit log)', () => {
  const affected: WorkloadRef[] = [];
  let requests: AuditedRequest[] = [];

  beforeAll(async () => {
    const { namespace, kreload, workloads, sources } = fixture;
    const auditLogPath = fixture.cluster.auditLogPath;
    if (auditLogPath === undefined) throw new Error('the shared cluster runs without an audit log');
    const audit = new AuditLog({ path: auditLogPath });
    await sources.create(namespace, SHARED);
    await sources.create(namespace, OTHER);

    const trackingOther: WorkloadRef[] = [];
    for (const kind of WORKLOAD_KINDS) {
      for (const suffix of ['a', 'b']) {
        affected.push(
          await workloads.create(kind.kind, {
            namespace,
            name: `${kind.short}-shared-${suffix}`,
            annotations: { [AUTO]: 'true' },
            podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: SHARED.name } }] } }),
          }),
        );
      }
      trackingOther.push(
        await workloads.create(kind.kind, {
          namespace,
          name: `${kind.short}-other`,
          annotations: { [AUTO]: 'true' },
          podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: OTHER.name } }] } }),
        }),
      );
      await workloads.create(kind.kind, {
        namespace,
        name: `${kind.short}-plain`,
        podSpec: podSpec({ app: { envFrom: [{ configMapRef: { name: SHARED.name } }] } }),
      });
    }
    for (const ref of affected) {
      await waitForBaseline(workloads, ref, { [sourceKey(SHARED)]: sourceHash(SHARED) });
    }
    for (const ref of trackingOther) {
      await waitForBaseline(workloads, ref, { [sourceKey(OTHER)]: sourceHash(OTHER) });
    }
    const synced = await scrapeMetrics(kreload);
    await waitUntilSettled(kreload, { since: synced });

    const offset = await audit.mark();
    const before = await scrapeMetrics(kreload);
    await sources.replace(namespace, SHARED_EDITED);
    for (const ref of affected) {
      await waitForEnv(workloads, ref, {
        container: APP,
        name: envVarName(SHARED_EDITED),
        value: sourceHash(SHARED_EDITED),
      });
    }
    await waitUntilSettled(kreload, {
      since: before,
      events: [{ resource: 'configmaps', event: 'update', atLeast: 1 }],
    });
    requests = await auditedRequestsWhen(audit, {
      offset,
      username: KRELOAD_USER,
      done: (seen) => seen.filter((r) => r.verb === 'patch').length >= affected.length,
    });
  }, 180_000);

  it('lists nothing and reads no workload', () => {
    const reads = requests.filter(
      (r) => r.verb === 'list' || (r.verb === 'get' && WORKLOAD_RESOURCES.has(r.resource)),
    );
    expect(reads).toEqual([]);
  });

  it('patches each affected workload exactly once and nothing else', () => {
    const patches = requests.filter((r) => r.verb === 'patch' && r.resource !== 'events');
    expect(countByObject(patches)).toEqual(
      Object.fromEntries(
        affected.map((ref) => [
          `patch ${WORKLOAD_KINDS.find((k) => k.kind === ref.kind)?.resource ?? ''} ${ref.name}`,
          1,
        ]),
      ),
    );
    expect(patches.every((r) => r.code === 200)).toBe(true);
  });

  it('sends nothing but those patches and Events', () => {
    const others = requests.filter(
      (r) => r.resource !== 'events' && !(r.verb === 'patch' && WORKLOAD_RESOURCES.has(r.resource)),
    );
    expect(others).toEqual([]);
  });
});
