// Config revisions with snapshots shared between workloads (docs/config-revisions.md) against the
// real kube-apiserver and kube-controller-manager: Deployments that use one ConfigMap share each
// snapshot, and the real garbage collector still deletes every snapshot no ReplicaSet or live
// template names; an object made beforehand under a snapshot's name with other content is refused
// with ReloadFail, never pinned.
import { setTimeout as sleep } from 'node:timers/promises';
import { type V1PodTemplateSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../harness/cluster.ts';
import {
  ownerKinds,
  putConfigMap,
  revisionsIdentity,
  apis,
  createRevisionedDeployment,
  snapshotOf,
  v,
} from '../harness/config-revisions.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { scrapeMetrics } from '../harness/metrics.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { pollUntil } from '../harness/poll.ts';
import { sourceHash } from '../harness/sources.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

const fixture = useKreload({
  name: 'revisions-shared',
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--sync-delay=0',
    '--enable-config-revisions',
  ],
  identity: revisionsIdentity,
});

/** A Deployment that only mounts `configMap`: its UID. */
function createDeployment(
  cluster: ClusterClient,
  setup: { namespace: string; name: string; configMap: string; historyLimit: number },
): Promise<string> {
  return createRevisionedDeployment(cluster, { ...setup, envFrom: false });
}

function volumeConfigMap(template: V1PodTemplateSpec | undefined): string | undefined {
  return template?.spec?.volumes?.[0]?.configMap?.name;
}

/** What the namespace holds for `source`: its snapshots, and the names templates reference. */
async function snapshotCensus(cluster: ClusterClient, namespace: string, source: string) {
  const { core, apps } = apis(cluster);
  const [configMaps, deployments, replicaSets] = await Promise.all([
    core.listNamespacedConfigMap({ namespace, labelSelector: `kreload.io/snapshot-of=${source}` }),
    apps.listNamespacedDeployment({ namespace }),
    apps.listNamespacedReplicaSet({ namespace }),
  ]);
  const named = new Set(
    [...deployments.items, ...replicaSets.items]
      .map((object) => volumeConfigMap(object.spec?.template))
      .filter((name): name is string => name !== undefined && name !== source),
  );
  return {
    snapshots: configMaps.items.map((cm) => cm.metadata?.name ?? '').sort(),
    named: [...named].sort(),
    /** `snapshot: owners` of each snapshot, for the failure message. */
    owners: configMaps.items.map((cm) => `${cm.metadata?.name ?? ''}: ${ownerKinds(cm).join(',')}`),
  };
}

describe('config revisions: snapshots shared by several Deployments', () => {
  it('three Deployments (revisionHistoryLimit 1) share one ConfigMap: after 5 changes the GC keeps only the snapshots ReplicaSets and templates name', async () => {
    const { cluster, namespace } = fixture;
    const deployments = ['one', 'two', 'three'];
    await putConfigMap(cluster, namespace, 'shared', v(1));
    for (const name of deployments) {
      await createDeployment(cluster, { namespace, name, configMap: 'shared', historyLimit: 1 });
    }
    for (const name of deployments) {
      await waitForBaselines(fixture.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    }
    for (const n of [2, 3, 4, 5, 6]) {
      await putConfigMap(cluster, namespace, 'shared', v(n));
      const snapshot = snapshotOf('shared', v(n));
      await pollUntil(
        async () => {
          const { items } = await apis(cluster).apps.listNamespacedDeployment({ namespace });
          return items.every((d) => volumeConfigMap(d.spec?.template) === snapshot);
        },
        { ...WAIT, describe: `every Deployment on ${snapshot} (change ${String(n)})` },
      );
      // Let the Deployment controller make the ReplicaSet before the next change.
      await sleep(1000);
    }
    let census = await snapshotCensus(cluster, namespace, 'shared');
    await pollUntil(
      async () => {
        census = await snapshotCensus(cluster, namespace, 'shared');
        return JSON.stringify(census.snapshots) === JSON.stringify(census.named);
      },
      {
        timeoutMs: 90_000,
        intervalMs: 500,
        get describe() {
          return `the GC to keep only the named snapshots ${census.named.join(' ')} (kept: ${census.owners.join('; ')})`;
        },
      },
    );
    // One ReplicaSet of the current template and one older one per Deployment, all shared.
    expect(census.named).toEqual([snapshotOf('shared', v(5)), snapshotOf('shared', v(6))].sort());
  });

  it('a forged snapshot (right name and annotations, other data) is refused with ReloadFail, never pinned', async () => {
    const { cluster, namespace } = fixture;
    const name = 'victim';
    await putConfigMap(cluster, namespace, 'forged-config', v(1));
    await createDeployment(cluster, {
      namespace,
      name,
      configMap: 'forged-config',
      historyLimit: 2,
    });
    await waitForBaselines(fixture.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    const forged = snapshotOf('forged-config', v(2));
    await apis(cluster).core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: forged,
          labels: { 'kreload.io/snapshot-of': 'forged-config' },
          annotations: {
            'kreload.io/snapshot-source': 'forged-config',
            'kreload.io/snapshot-source-hash': sourceHash({
              type: 'CONFIGMAP',
              name: 'forged-config',
              data: v(2),
            }),
          },
        },
        data: { 'app.yaml': 'level: forged' },
        immutable: true,
      },
    });
    const before = await scrapeMetrics(fixture.kreload);
    await putConfigMap(cluster, namespace, 'forged-config', v(2));
    const failed = await pollUntil(
      async () =>
        (await fixture.events.about({ kind: 'Deployment', namespace, name })).find(
          (event) => event.reason === 'ReloadFail',
        ),
      { ...WAIT, describe: 'a ReloadFail Event' },
    );
    expect(failed.message).toContain(forged);
    expect(failed.message).toMatch(/does not match/);
    const after = await scrapeMetrics(fixture.kreload);
    expect(
      after.delta(before, 'reloader_reload_executed_total', { success: 'false' }),
    ).toBeGreaterThanOrEqual(1);
    const deployment = await apis(cluster).apps.readNamespacedDeployment({ namespace, name });
    expect(volumeConfigMap(deployment.spec?.template)).toBe('forged-config');
    const object = await apis(cluster).core.readNamespacedConfigMap({ namespace, name: forged });
    expect(object.metadata?.ownerReferences ?? []).toEqual([]);
  });
});
