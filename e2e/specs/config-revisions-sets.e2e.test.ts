// Config revisions of StatefulSets and DaemonSets (issue 15, docs/config-revisions.md) against the
// real kube-controller-manager's StatefulSet, DaemonSet (ControllerRevision history) and garbage
// collector controllers: three changes → three ControllerRevisions naming their snapshots, the
// snapshots handed to those revisions, `kubectl rollout undo --to-revision=2` back to revision 2's
// configuration with no roll forward, and revisionHistoryLimit pruning → the real GC deletes the
// snapshots of the pruned revisions.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AppsV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1ControllerRevision,
  type V1ObjectMeta,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { ClusterClient } from '../harness/cluster.ts';
import {
  CONFIG_REVISIONS,
  SNAPSHOTS,
  kubectl,
  ownerKinds,
  putConfigMap,
  revisionsIdentity,
  snapshotNamesOf,
  snapshotOf,
  snapshotsOf,
  v,
} from '../harness/config-revisions.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { runKreloadToExit } from '../harness/kreload-runs.ts';
import { pollUntil } from '../harness/poll.ts';
import { envVarName, sourceHash } from '../harness/sources.ts';
import { TEST_IMAGE } from '../harness/workloads.ts';

const AUTO = 'reloader.stakater.com/auto';
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };

const fixture = useKreload({
  name: 'revisions-sets',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--enable-config-revisions',
  ],
  identity: revisionsIdentity,
});

type SetKind = 'StatefulSet' | 'DaemonSet';

interface SetObject {
  readonly metadata?: V1ObjectMeta;
  readonly spec?: { readonly template: V1PodTemplateSpec };
}

/** What differs between the two kinds: how to create, read and patch one. */
interface SetRow {
  readonly kind: SetKind;
  readonly word: 'statefulset' | 'daemonset';
  create(
    apps: AppsV1Api,
    namespace: string,
    name: string,
    template: V1PodTemplateSpec,
  ): Promise<string>;
  read(apps: AppsV1Api, namespace: string, name: string): Promise<SetObject>;
  setHistoryLimit(apps: AppsV1Api, namespace: string, name: string, limit: number): Promise<void>;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const SET_ROWS: readonly SetRow[] = [
  {
    kind: 'StatefulSet',
    word: 'statefulset',
    async create(apps, namespace, name, template) {
      const created = await apps.createNamespacedStatefulSet({
        namespace,
        body: {
          metadata: { name, annotations: { [AUTO]: 'true', [CONFIG_REVISIONS]: 'true' } },
          spec: {
            replicas: 0,
            serviceName: name,
            revisionHistoryLimit: 10,
            selector: { matchLabels: { app: name } },
            template,
          },
        },
      });
      return created.metadata?.uid ?? '';
    },
    read: (apps, namespace, name) => apps.readNamespacedStatefulSet({ namespace, name }),
    async setHistoryLimit(apps, namespace, name, limit) {
      await apps.patchNamespacedStatefulSet(
        { namespace, name, body: { spec: { revisionHistoryLimit: limit } } },
        mergePatch,
      );
    },
  },
  {
    kind: 'DaemonSet',
    word: 'daemonset',
    async create(apps, namespace, name, template) {
      const created = await apps.createNamespacedDaemonSet({
        namespace,
        body: {
          metadata: { name, annotations: { [AUTO]: 'true', [CONFIG_REVISIONS]: 'true' } },
          spec: { revisionHistoryLimit: 10, selector: { matchLabels: { app: name } }, template },
        },
      });
      return created.metadata?.uid ?? '';
    },
    read: (apps, namespace, name) => apps.readNamespacedDaemonSet({ namespace, name }),
    async setHistoryLimit(apps, namespace, name, limit) {
      await apps.patchNamespacedDaemonSet(
        { namespace, name, body: { spec: { revisionHistoryLimit: limit } } },
        mergePatch,
      );
    },
  },
];

function podTemplate(name: string, configMap: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: name } },
    spec: {
      containers: [
        {
          name: 'app',
          image: TEST_IMAGE,
          envFrom: [{ configMapRef: { name: configMap } }],
          volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
        },
      ],
      volumes: [{ name: 'config', configMap: { name: configMap } }],
    },
  };
}

function volumeConfigMap(template: V1PodTemplateSpec | undefined): string | undefined {
  return template?.spec?.volumes?.[0]?.configMap?.name;
}

/** A ControllerRevision's template: `data` is the strategic patch the controller stores. */
function revisionTemplate(revision: V1ControllerRevision): V1PodTemplateSpec | undefined {
  const data = revision.data as { spec?: { template?: V1PodTemplateSpec } } | undefined;
  return data?.spec?.template;
}

async function controllerRevisions(cluster: ClusterClient, namespace: string, uid: string) {
  const apps = cluster.kc.makeApiClient(AppsV1Api);
  const { items } = await apps.listNamespacedControllerRevision({ namespace });
  return items
    .filter((r) => r.metadata?.ownerReferences?.some((o) => o.uid === uid && o.controller))
    .sort((a, b) => a.revision - b.revision);
}

/** `revision:snapshot` of each ControllerRevision, `-` when its template names none. */
async function revisionLines(cluster: ClusterClient, namespace: string, uid: string) {
  return (await controllerRevisions(cluster, namespace, uid)).map((r) => {
    const template = revisionTemplate(r);
    const named = template?.metadata?.annotations?.[SNAPSHOTS] === undefined;
    return `${String(r.revision)}:${named ? '-' : (volumeConfigMap(template) ?? '?')}`;
  });
}

describe.each(SET_ROWS)('config revisions of a $kind', (row) => {
  it('three changes → three ControllerRevisions with their snapshots; undo → revision 2; limit → GC', async () => {
    const { cluster, namespace } = fixture;
    const apps = cluster.kc.makeApiClient(AppsV1Api);
    const name = `${row.word.slice(0, 3)}-web`;
    const source = `${row.word.slice(0, 3)}-config`;
    await putConfigMap(cluster, namespace, source, v(1));
    const uid = await row.create(apps, namespace, name, podTemplate(name, source));
    const read = () => row.read(apps, namespace, name);
    const templateNames = (expected: string) =>
      pollUntil(
        async () => {
          const object = await read();
          return volumeConfigMap(object.spec?.template) === expected ? object : undefined;
        },
        { ...WAIT, describe: `${name}'s template to reference ${expected}` },
      );
    const revisionsAre = async (expected: readonly string[]) => {
      let seen: string[] = [];
      await pollUntil(
        async () => {
          seen = await revisionLines(cluster, namespace, uid);
          return JSON.stringify(seen) === JSON.stringify(expected);
        },
        { ...WAIT, describe: `ControllerRevisions ${expected.join(' ')}` },
      ).catch((error: unknown) => {
        throw new Error(
          `ControllerRevisions ${expected.join(' ')} expected, seen ${seen.join(' ')}`,
          {
            cause: error,
          },
        );
      });
    };
    await waitForBaselines(fixture.workloads, [{ kind: row.kind, namespace, name }], WAIT);
    for (const n of [2, 3, 4]) {
      await putConfigMap(cluster, namespace, source, v(n));
      await templateNames(snapshotOf(source, v(n)));
    }
    const snapshot = (n: number) => snapshotOf(source, v(n));
    // Revision 1 is the template before the first change: live references, no snapshot.
    await revisionsAre(['1:-', `2:${snapshot(2)}`, `3:${snapshot(3)}`, `4:${snapshot(4)}`]);
    expect(await snapshotNamesOf(cluster, namespace, uid)).toEqual([2, 3, 4].map(snapshot).sort());

    // Each snapshot is adopted by the ControllerRevision naming it; the live one keeps the workload.
    const revisions = await controllerRevisions(cluster, namespace, uid);
    const revisionNaming = (snapshotName: string) =>
      revisions
        .filter((r) => volumeConfigMap(revisionTemplate(r)) === snapshotName)
        .map((r) => `ControllerRevision/${r.metadata?.name ?? ''}`);
    let owners: string[] = [];
    await pollUntil(
      async () => {
        const { configMaps } = await snapshotsOf(cluster, namespace, uid);
        owners = configMaps.map((cm) => `${cm.metadata?.name ?? ''}<-${ownerKinds(cm).join(',')}`);
        return configMaps.every((cm) => {
          const snapshotName = cm.metadata?.name ?? '';
          const want = revisionNaming(snapshotName);
          if (snapshotName === snapshot(4)) want.push(`${row.kind}/${name}`);
          return JSON.stringify(ownerKinds(cm)) === JSON.stringify(want.sort());
        });
      },
      { ...WAIT, describe: 'snapshots owned by their ControllerRevisions' },
    ).catch((error: unknown) => {
      throw new Error(`owners: ${owners.join(' ')}`, { cause: error });
    });

    // kubectl rollout undo to revision 2: revision 2's snapshot and data come back.
    await kubectl(
      cluster,
      'rollout',
      'undo',
      `${row.word}/${name}`,
      '-n',
      namespace,
      '--to-revision=2',
    );
    const undone = await templateNames(snapshot(2));
    const container = undone.spec?.template.spec?.containers[0];
    expect(
      container?.env?.find((e) => e.name === envVarName({ type: 'CONFIGMAP', name: source }))
        ?.value,
    ).toBe(sourceHash({ type: 'CONFIGMAP', name: source, data: v(2) }));
    const data = await cluster.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace, name: snapshot(2) });
    expect(data.data).toEqual(v(2));
    // The user's intent: no roll forward while the live source stays at v4.
    const generation = undone.metadata?.generation;
    await sleep(6_000);
    const after = await read();
    expect(after.metadata?.generation).toBe(generation);
    expect(volumeConfigMap(after.spec?.template)).toBe(snapshot(2));
    // The controller moved revision 2 to the top of the history.
    await revisionsAre(['1:-', `3:${snapshot(3)}`, `4:${snapshot(4)}`, `5:${snapshot(2)}`]);

    // kreload history reads the same ControllerRevisions: revision 5 live, running revision 2's snapshot.
    const shown = await runKreloadToExit({
      args: [
        'history',
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `${row.word}/${name}`,
        '-n',
        namespace,
        '-o',
        'json',
      ],
      timeoutMs: 60_000,
    });
    expect(shown.code, shown.stderr).toBe(0);
    const report = JSON.parse(shown.stdout) as {
      revisionKind: string;
      revisions: { revision: number; live: boolean; snapshots: { snapshot: string }[] }[];
    };
    expect(report.revisionKind).toBe('ControllerRevision');
    expect(
      report.revisions.map((r) => [r.revision, r.live, r.snapshots.map((p) => p.snapshot)]),
    ).toEqual([
      [1, false, []],
      [3, false, [snapshot(3)]],
      [4, false, [snapshot(4)]],
      [5, true, [snapshot(2)]],
    ]);

    // revisionHistoryLimit 1, two more changes: the pruned revisions take their snapshots along.
    await row.setHistoryLimit(apps, namespace, name, 1);
    for (const n of [5, 6]) {
      await putConfigMap(cluster, namespace, source, v(n));
      await templateNames(snapshot(n));
      await pollUntil(
        async () =>
          (await revisionLines(cluster, namespace, uid)).includes(
            `${String(n + 1)}:${snapshot(n)}`,
          ),
        { ...WAIT, describe: `the revision of change ${String(n)}` },
      );
    }
    let left: string[] = [];
    await pollUntil(
      async () => {
        left = await snapshotNamesOf(cluster, namespace, uid);
        return JSON.stringify(left) === JSON.stringify([snapshot(5), snapshot(6)].sort());
      },
      { ...WAIT, describe: 'the GC to delete the snapshots of the pruned revisions' },
    ).catch(async (error: unknown) => {
      throw new Error(
        `snapshots left: ${left.join(' ')}; revisions ${(await revisionLines(cluster, namespace, uid)).join(' ')}`,
        {
          cause: error,
        },
      );
    });
  });
});
