// Config revisions (issue 15, docs/adr/0036) against the real kube-apiserver, etcd and
// kube-controller-manager (Deployment, ReplicaSet and garbage-collector controllers): snapshots per
// roll, `kubectl rollout undo` back to a revision's configuration without a roll forward, the real
// GC collecting the snapshots of pruned ReplicaSets, Secrets opted in or not, both strategies, a
// kill -9 that leaves no orphan, and refusals (name too long, quota) with no half state.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type V1Deployment,
  type V1PodTemplateSpec,
  type V1ReplicaSet,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../harness/cluster.ts';
import {
  CONFIG_REVISIONS,
  REVISION_DIGEST,
  SNAPSHOTS,
  UID_LABEL,
  kubectl,
  ownerKinds,
  putConfigMap,
  revisionsIdentity,
  apis,
  createRevisionedDeployment,
  snapshotNamesOf as snapshotNames,
  snapshotOf,
  snapshotsOf as snapshots,
  v,
} from '../harness/config-revisions.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { pollUntil } from '../harness/poll.ts';
import { envVarName, sourceHash } from '../harness/sources.ts';

const SOURCE_HASHES = 'kreload.io/source-hashes';
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

const envVars = useKreload({
  name: 'revisions',
  namespaces: 2,
  args: (namespaces) => [
    `--namespaces=${namespaces.join(',')}`,
    '--sync-delay=0',
    '--enable-config-revisions',
  ],
  identity: revisionsIdentity,
});

const annotations = useKreload({
  name: 'revisions-ann',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--enable-config-revisions',
    '--reload-strategy=annotations',
  ],
  identity: revisionsIdentity,
});

const createDeployment = createRevisionedDeployment;

async function deployment(cluster: ClusterClient, namespace: string, name: string) {
  return apis(cluster).apps.readNamespacedDeployment({ namespace, name });
}

function volumeConfigMap(template: V1PodTemplateSpec | undefined): string | undefined {
  return template?.spec?.volumes?.[0]?.configMap?.name;
}

/** Waits until the template's ConfigMap volume names `expected`. */
async function templateNames(
  cluster: ClusterClient,
  namespace: string,
  name: string,
  expected: string,
): Promise<V1Deployment> {
  return pollUntil(
    async () => {
      const d = await deployment(cluster, namespace, name);
      return volumeConfigMap(d.spec?.template) === expected ? d : undefined;
    },
    { ...WAIT, describe: `${name}'s template to reference ${expected}` },
  );
}

async function replicaSetsOf(
  cluster: ClusterClient,
  namespace: string,
  uid: string,
): Promise<V1ReplicaSet[]> {
  const { items } = await apis(cluster).apps.listNamespacedReplicaSet({ namespace });
  return items.filter((rs) => rs.metadata?.ownerReferences?.some((o) => o.uid === uid));
}

/** Waits for `count` ReplicaSets of the Deployment; the timeout lists what there is. */
async function waitForRevisions(
  cluster: ClusterClient,
  namespace: string,
  uid: string,
  count: number,
): Promise<void> {
  let seen: string[] = [];
  await pollUntil(
    async () => {
      const replicaSets = await replicaSetsOf(cluster, namespace, uid);
      seen = replicaSets.map(
        (rs) =>
          `${rs.metadata?.name ?? ''}@${rs.metadata?.annotations?.['deployment.kubernetes.io/revision'] ?? '?'}:${volumeConfigMap(rs.spec?.template) ?? ''}`,
      );
      return replicaSets.length === count;
    },
    { ...WAIT, describe: `${String(count)} ReplicaSets (seen: ${seen.join(' ')})` },
  ).catch((error: unknown) => {
    throw new Error(`${String(count)} ReplicaSets expected, seen: ${seen.join(' ')}`, {
      cause: error,
    });
  });
}

/** The generation stays put for `ms`: kreload wrote no template (no roll forward). */
async function staysAt(cluster: ClusterClient, namespace: string, name: string, ms: number) {
  const before = await deployment(cluster, namespace, name);
  await sleep(ms);
  const after = await deployment(cluster, namespace, name);
  expect(after.metadata?.generation).toBe(before.metadata?.generation);
  return after;
}

describe('config revisions, env-vars strategy', () => {
  it('three changes → three revisions with three snapshots; undo → revision 2, no roll forward; revert reuses', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespace;
    const name = 'web';
    await putConfigMap(cluster, namespace, 'app-config', v(1));
    await apis(cluster).core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'db' }, stringData: { password: 'hunter2' } },
    });
    const uid = await createDeployment(cluster, {
      namespace,
      name,
      configMap: 'app-config',
      secret: 'db',
    });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    for (const n of [2, 3, 4]) {
      await putConfigMap(cluster, namespace, 'app-config', v(n));
      await templateNames(cluster, namespace, name, snapshotOf('app-config', v(n)));
      await waitForRevisions(cluster, namespace, uid, n);
    }
    const expected = [2, 3, 4].map((n) => snapshotOf('app-config', v(n))).sort();
    expect(await snapshotNames(cluster, namespace, uid)).toEqual(expected);
    const found = await snapshots(cluster, namespace, uid);
    for (const cm of found.configMaps) {
      expect(cm.immutable).toBe(true);
      expect(cm.metadata?.labels?.['kreload.io/snapshot-of']).toBe('app-config');
    }
    // The Secret is not opted in: still the live one, never copied.
    expect(found.secrets).toEqual([]);
    const current = await deployment(cluster, namespace, name);
    expect(
      current.spec?.template.spec?.containers[0]?.env?.[0]?.valueFrom?.secretKeyRef?.name,
    ).toBe('db');
    expect(current.spec?.template.spec?.containers[0]?.envFrom?.[0]?.configMapRef?.name).toBe(
      snapshotOf('app-config', v(4)),
    );

    // Each older snapshot is handed to its ReplicaSet; the current one keeps the Deployment too.
    const replicaSets = await replicaSetsOf(cluster, namespace, uid);
    const rsNaming = (snapshot: string) =>
      replicaSets
        .filter((rs) => volumeConfigMap(rs.spec?.template) === snapshot)
        .map((rs) => `ReplicaSet/${rs.metadata?.name ?? ''}`);
    await pollUntil(
      async () => {
        const { configMaps } = await snapshots(cluster, namespace, uid);
        return configMaps.every((cm) => {
          const snapshot = cm.metadata?.name ?? '';
          const want = [...rsNaming(snapshot)];
          if (snapshot === snapshotOf('app-config', v(4))) want.push(`Deployment/${name}`);
          return JSON.stringify(ownerKinds(cm)) === JSON.stringify(want.sort());
        });
      },
      { ...WAIT, describe: 'snapshots owned by their ReplicaSets' },
    );

    // kubectl rollout undo to revision 2: the configuration of revision 2 comes back.
    await kubectl(
      cluster,
      'rollout',
      'undo',
      `deployment/${name}`,
      '-n',
      namespace,
      '--to-revision=2',
    );
    const undone = await templateNames(cluster, namespace, name, snapshotOf('app-config', v(2)));
    const container = undone.spec?.template.spec?.containers[0];
    expect(
      container?.env?.find((e) => e.name === envVarName({ type: 'CONFIGMAP', name: 'app-config' }))
        ?.value,
    ).toBe(sourceHash({ type: 'CONFIGMAP', name: 'app-config', data: v(2) }));
    const revision2 = await apis(cluster).core.readNamespacedConfigMap({
      namespace,
      name: snapshotOf('app-config', v(2)),
    });
    expect(revision2.data).toEqual(v(2));
    // The user's intent: kreload does not roll forward while the live source stays at v4.
    const after = await staysAt(cluster, namespace, name, 6_000);
    expect(volumeConfigMap(after.spec?.template)).toBe(snapshotOf('app-config', v(2)));
    expect(after.metadata?.labels?.[REVISION_DIGEST]).toMatch(/^[0-9a-f]{40}$/);

    // The live source reverted to v3's content: kreload rolls onto the existing v3 snapshot.
    await putConfigMap(cluster, namespace, 'app-config', v(3));
    await templateNames(cluster, namespace, name, snapshotOf('app-config', v(3)));
    expect(await snapshotNames(cluster, namespace, uid)).toEqual(expected);
  });

  it('revisionHistoryLimit 2: the real garbage collector deletes the snapshots of pruned ReplicaSets', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespace;
    const name = 'gc';
    await putConfigMap(cluster, namespace, 'gc-config', v(1));
    const uid = await createDeployment(cluster, {
      namespace,
      name,
      configMap: 'gc-config',
      historyLimit: 2,
    });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    for (const n of [2, 3, 4, 5]) {
      await putConfigMap(cluster, namespace, 'gc-config', v(n));
      await templateNames(cluster, namespace, name, snapshotOf('gc-config', v(n)));
      // Adoption hands the previous snapshot to its ReplicaSet before the next change.
      await pollUntil(
        async () => {
          const { configMaps } = await snapshots(cluster, namespace, uid);
          return configMaps.every((cm) => ownerKinds(cm).some((o) => o.startsWith('ReplicaSet/')));
        },
        { ...WAIT, describe: `adoption after change ${String(n)}` },
      );
    }
    const kept = [3, 4, 5].map((n) => snapshotOf('gc-config', v(n))).sort();
    await pollUntil(
      async () =>
        JSON.stringify(await snapshotNames(cluster, namespace, uid)) === JSON.stringify(kept),
      { ...WAIT, describe: 'the GC to delete the snapshot of the pruned ReplicaSet' },
    );
    // Deleting the workload takes every snapshot with it.
    await apis(cluster).apps.deleteNamespacedDeployment({
      namespace,
      name,
      propagationPolicy: 'Background',
    });
    await pollUntil(async () => (await snapshotNames(cluster, namespace, uid)).length === 0, {
      ...WAIT,
      describe: 'the GC to delete the snapshots with the Deployment',
    });
  });

  it('Secrets opted in are copied too; the references point at both copies', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespace;
    const name = 'sec';
    await putConfigMap(cluster, namespace, 'sec-config', v(1));
    const { core } = apis(cluster);
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'sec-db' }, stringData: { password: 'one' } },
    });
    const uid = await createDeployment(cluster, {
      namespace,
      name,
      configMap: 'sec-config',
      secret: 'sec-db',
      secrets: true,
    });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    await core.replaceNamespacedSecret({
      namespace,
      name: 'sec-db',
      body: { metadata: { name: 'sec-db' }, stringData: { password: 'two' } },
    });
    const secretSnapshot = `sec-db-${sourceHash({ type: 'SECRET', name: 'sec-db', data: { password: 'two' } }).slice(0, 10)}`;
    const rolled = await pollUntil(
      async () => {
        const d = await deployment(cluster, namespace, name);
        const ref = d.spec?.template.spec?.containers[0]?.env?.[0]?.valueFrom?.secretKeyRef?.name;
        return ref === secretSnapshot ? d : undefined;
      },
      { ...WAIT, describe: 'the Secret reference to point at its snapshot' },
    );
    expect(volumeConfigMap(rolled.spec?.template)).toBe(snapshotOf('sec-config', v(1)));
    const copy = await core.readNamespacedSecret({ namespace, name: secretSnapshot });
    expect(copy.immutable).toBe(true);
    expect(Buffer.from(copy.data?.password ?? '', 'base64').toString()).toBe('two');
    expect((await snapshots(cluster, namespace, uid)).secrets.map((s) => s.metadata?.name)).toEqual(
      [secretSnapshot],
    );
  });

  it('bad input: a source name too long for the suffix gives ReloadFail and no half state', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespace;
    const name = 'long';
    const source = `l${'o'.repeat(241)}ng`;
    await putConfigMap(cluster, namespace, source, v(1));
    const uid = await createDeployment(cluster, { namespace, name, configMap: source });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    await putConfigMap(cluster, namespace, source, v(2));
    const failed = await pollUntil(
      async () =>
        (await envVars.events.about({ kind: 'Deployment', namespace, name })).find(
          (event) => event.reason === 'ReloadFail',
        ),
      { ...WAIT, describe: 'a ReloadFail Event' },
    );
    expect(failed.message).toContain('over 253');
    const d = await deployment(cluster, namespace, name);
    expect(volumeConfigMap(d.spec?.template)).toBe(source);
    expect(d.spec?.template.metadata?.annotations?.[SNAPSHOTS]).toBeUndefined();
    expect(await snapshotNames(cluster, namespace, uid)).toEqual([]);
  });

  it('bad input: a quota that forbids more ConfigMaps gives ReloadFail with the reason, no half state', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespaces[1] ?? '';
    const name = 'quota';
    const { core } = apis(cluster);
    await putConfigMap(cluster, namespace, 'quota-config', v(1));
    const uid = await createDeployment(cluster, { namespace, name, configMap: 'quota-config' });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    const { items } = await core.listNamespacedConfigMap({ namespace });
    const count = String(items.length);
    await core.createNamespacedResourceQuota({
      namespace,
      body: {
        metadata: { name: 'no-more-configmaps' },
        spec: { hard: { 'count/configmaps': count } },
      },
    });
    // No resourcequota controller runs here: the admin records the usage it would have computed.
    await core.replaceNamespacedResourceQuotaStatus({
      namespace,
      name: 'no-more-configmaps',
      body: {
        metadata: {
          name: 'no-more-configmaps',
          resourceVersion: (
            await core.readNamespacedResourceQuota({ namespace, name: 'no-more-configmaps' })
          ).metadata?.resourceVersion,
        },
        spec: { hard: { 'count/configmaps': count } },
        status: { hard: { 'count/configmaps': count }, used: { 'count/configmaps': count } },
      },
    });
    await putConfigMap(cluster, namespace, 'quota-config', v(2));
    const failed = await pollUntil(
      async () =>
        (await envVars.events.about({ kind: 'Deployment', namespace, name })).find(
          (event) => event.reason === 'ReloadFail',
        ),
      { ...WAIT, describe: 'a ReloadFail Event' },
    );
    expect(failed.message).toMatch(/exceeded quota/);
    const d = await deployment(cluster, namespace, name);
    expect(volumeConfigMap(d.spec?.template)).toBe('quota-config');
    expect(await snapshotNames(cluster, namespace, uid)).toEqual([]);
  });

  it('kill -9 between snapshot and patch: after the restart no snapshot is left that nothing uses', async () => {
    const { cluster } = envVars;
    const namespace = envVars.namespace;
    const name = 'crash';
    const { core } = apis(cluster);
    await putConfigMap(cluster, namespace, 'crash-config', v(1));
    const uid = await createDeployment(cluster, { namespace, name, configMap: 'crash-config' });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    await envVars.kill9();
    // What a kreload killed after its POST and before its PATCH leaves: a snapshot owned by the
    // workload that no template names (its content has since changed).
    const orphan = snapshotOf('crash-config', v(9));
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: orphan,
          labels: { [UID_LABEL]: uid, 'kreload.io/snapshot-of': 'crash-config' },
          annotations: { 'kreload.io/snapshot-source': 'crash-config' },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid }],
        },
        data: v(9),
        immutable: true,
      },
    });
    // And one a restart re-uses: the snapshot of the content the roll is still owed for.
    const owed = snapshotOf('crash-config', v(2));
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: owed,
          labels: { [UID_LABEL]: uid, 'kreload.io/snapshot-of': 'crash-config' },
          annotations: {
            'kreload.io/snapshot-source': 'crash-config',
            'kreload.io/snapshot-source-hash': sourceHash({
              type: 'CONFIGMAP',
              name: 'crash-config',
              data: v(2),
            }),
          },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid }],
        },
        data: v(2),
        immutable: true,
      },
    });
    await putConfigMap(cluster, namespace, 'crash-config', v(2));
    await envVars.start();
    await templateNames(cluster, namespace, name, owed);
    await pollUntil(
      async () =>
        JSON.stringify(await snapshotNames(cluster, namespace, uid)) === JSON.stringify([owed]),
      { ...WAIT, describe: 'the orphan to be swept and the owed snapshot re-used' },
    );
    // A real kill -9 right after a change, wherever it lands: after the restart every snapshot is
    // named by the template or by a ReplicaSet of the Deployment.
    await putConfigMap(cluster, namespace, 'crash-config', v(3));
    await sleep(150);
    await envVars.kill9();
    await envVars.start();
    await templateNames(cluster, namespace, name, snapshotOf('crash-config', v(3)));
    await pollUntil(
      async () => {
        const replicaSets = await replicaSetsOf(cluster, namespace, uid);
        const named = new Set(replicaSets.map((rs) => volumeConfigMap(rs.spec?.template)));
        const names = await snapshotNames(cluster, namespace, uid);
        return names.every((snapshot) => named.has(snapshot));
      },
      { ...WAIT, describe: 'every snapshot to be used by a ReplicaSet' },
    );
  });
});

describe('config revisions, opting out across a restart', () => {
  it('kill -9 before the opt-out adoption: after the restart the snapshot belongs to its ReplicaSet only', async () => {
    const { cluster } = envVars;
    // Not the second namespace: the quota test leaves it full.
    const namespace = envVars.namespace;
    const name = 'optout';
    await putConfigMap(cluster, namespace, 'optout-config', v(1));
    const uid = await createDeployment(cluster, { namespace, name, configMap: 'optout-config' });
    await waitForBaselines(envVars.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    await putConfigMap(cluster, namespace, 'optout-config', v(2));
    const pinned = snapshotOf('optout-config', v(2));
    await templateNames(cluster, namespace, name, pinned);
    await waitForRevisions(cluster, namespace, uid, 2);
    const revision2 = (await replicaSetsOf(cluster, namespace, uid)).find(
      (rs) => volumeConfigMap(rs.spec?.template) === pinned,
    );
    const rsOwner = `ReplicaSet/${revision2?.metadata?.name ?? ''}`;
    const ownersOfPinned = async () => {
      const { configMaps } = await snapshots(cluster, namespace, uid);
      return ownerKinds(configMaps.find((cm) => cm.metadata?.name === pinned) ?? {});
    };
    await pollUntil(
      async () =>
        JSON.stringify(await ownersOfPinned()) ===
        JSON.stringify([`Deployment/${name}`, rsOwner].sort()),
      { ...WAIT, describe: 'the snapshot owned by its ReplicaSet and the Deployment' },
    );

    // Opt out: kreload restores the live reference, then owes the adoption 2 s later; kill it first.
    await envVars.workloads.patch(
      { kind: 'Deployment', namespace, name },
      { metadata: { annotations: { [CONFIG_REVISIONS]: 'false' } } },
    );
    await pollUntil(
      async () =>
        volumeConfigMap((await deployment(cluster, namespace, name)).spec?.template) ===
        'optout-config',
      { timeoutMs: 60_000, intervalMs: 50, describe: 'the restoring roll' },
    );
    await envVars.kill9();
    // Reached the window: the workload still owns the snapshot the template no longer names.
    expect(await ownersOfPinned()).toContain(`Deployment/${name}`);

    await envVars.start();
    let owners: string[] = [];
    await pollUntil(
      async () => {
        owners = await ownersOfPinned();
        return JSON.stringify(owners) === JSON.stringify([rsOwner]);
      },
      { ...WAIT, describe: 'the snapshot handed to its ReplicaSet after the restart' },
    ).catch((error: unknown) => {
      throw new Error(`owners of ${pinned}: ${owners.join(', ')}`, { cause: error });
    });
  });
});

describe('config revisions, annotations strategy', () => {
  it('rolls onto snapshots with source-hashes; undo to revision 2 stays', async () => {
    const { cluster } = annotations;
    const namespace = annotations.namespace;
    const name = 'ann';
    await putConfigMap(cluster, namespace, 'ann-config', v(1));
    const uid = await createDeployment(cluster, { namespace, name, configMap: 'ann-config' });
    await waitForBaselines(annotations.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    for (const n of [2, 3]) {
      await putConfigMap(cluster, namespace, 'ann-config', v(n));
      const d = await templateNames(cluster, namespace, name, snapshotOf('ann-config', v(n)));
      expect(d.spec?.template.metadata?.annotations?.[SOURCE_HASHES]).toContain(
        sourceHash({ type: 'CONFIGMAP', name: 'ann-config', data: v(n) }),
      );
      expect(d.spec?.template.spec?.containers[0]?.env ?? []).toEqual([]);
      await waitForRevisions(cluster, namespace, uid, n);
    }
    await kubectl(
      cluster,
      'rollout',
      'undo',
      `deployment/${name}`,
      '-n',
      namespace,
      '--to-revision=2',
    );
    await templateNames(cluster, namespace, name, snapshotOf('ann-config', v(2)));
    const after = await staysAt(cluster, namespace, name, 6_000);
    expect(volumeConfigMap(after.spec?.template)).toBe(snapshotOf('ann-config', v(2)));
    expect(after.spec?.template.metadata?.annotations?.[SOURCE_HASHES]).toContain(
      sourceHash({ type: 'CONFIGMAP', name: 'ann-config', data: v(2) }),
    );
  });

  it('opting out restores the live references in one roll', async () => {
    const { cluster } = annotations;
    const namespace = annotations.namespace;
    const name = 'ann';
    await annotations.stop();
    await annotations.workloads.patch(
      { kind: 'Deployment', namespace, name },
      { metadata: { annotations: { [CONFIG_REVISIONS]: 'false' } } },
    );
    // A Deployment's generation counts annotation changes too: measured after the user's edit.
    const before = await deployment(cluster, namespace, name);
    await annotations.start();
    const restored = await templateNames(cluster, namespace, name, 'ann-config');
    expect(restored.spec?.template.metadata?.annotations?.[SNAPSHOTS]).toBeUndefined();
    expect(restored.metadata?.labels?.[REVISION_DIGEST]).toBeUndefined();
    expect(restored.metadata?.generation).toBe((before.metadata?.generation ?? 0) + 1);
  });
});
