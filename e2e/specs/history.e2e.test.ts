// `kreload history` (docs/config-revisions.md "History") against the real control plane: a
// Deployment's ReplicaSets with the snapshots each names and the keys that changed, values of
// ConfigMaps only with --show-values and never of Secrets, the live revision after `kubectl
// rollout undo`, a snapshot already gone, and the same command through the kubectl plugin.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../cluster/paths.ts';
import {
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  kubectl,
  putConfigMap,
  revisionsIdentity,
  snapshotOf,
} from '../harness/config-revisions.ts';
import { waitForBaselines } from '../harness/expectations.ts';
import { useKreload } from '../harness/kreload-fixture.ts';
import { runKreloadToExit } from '../harness/kreload-runs.ts';
import { pollUntil } from '../harness/poll.ts';
import { TEST_IMAGE } from '../harness/workloads.ts';

const run = promisify(execFile);
const AUTO = 'reloader.stakater.com/auto';
const WAIT = { timeoutMs: 60_000, intervalMs: 250 };
const FIRST_SECRET = 'first-secret-value-5b1e';
const SECOND_SECRET = 'second-secret-value-9c4d';

const fixture = useKreload({
  name: 'history',
  args: ([namespace]) => [
    `--namespaces=${String(namespace)}`,
    '--sync-delay=0',
    '--enable-config-revisions',
  ],
  identity: revisionsIdentity,
});

interface HistoryJson {
  readonly configRevisions: string;
  readonly revisions: readonly {
    readonly revision: number;
    readonly live: boolean;
    readonly snapshots: readonly {
      readonly source: string;
      readonly snapshot: string;
      readonly state: string;
      readonly comparison: { readonly state: string };
    }[];
  }[];
}

function history(args: readonly string[]) {
  return runKreloadToExit({
    args: ['history', `--kubeconfig=${fixture.cluster.kubeconfigPath}`, ...args],
    timeoutMs: 60_000,
  });
}

const CONTENTS: readonly Record<string, string>[] = [
  { a: '1', b: '1' },
  { a: '2', b: '1' },
  { a: '3', b: '1', c: 'new' },
  { a: '3', c: 'new' },
];

/** Every form a Secret value could leak in. */
function secretForms(value: string): string[] {
  return [value, Buffer.from(value).toString('base64')];
}

describe('kreload history', () => {
  it('three config changes → three revisions with their keys-changed lines; values only of ConfigMaps', async () => {
    const { cluster, namespace } = fixture;
    const core = cluster.kc.makeApiClient(CoreV1Api);
    const apps = cluster.kc.makeApiClient(AppsV1Api);
    const name = 'hist';
    const source = 'hist-config';
    await putConfigMap(cluster, namespace, source, CONTENTS[0] ?? {});
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'hist-db' }, stringData: { password: FIRST_SECRET } },
    });
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: {
          name,
          annotations: {
            [AUTO]: 'true',
            [CONFIG_REVISIONS]: 'true',
            [CONFIG_REVISIONS_SECRETS]: 'true',
          },
        },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: TEST_IMAGE,
                  envFrom: [{ configMapRef: { name: source } }, { secretRef: { name: 'hist-db' } }],
                },
              ],
            },
          },
        },
      },
    });
    const read = () => apps.readNamespacedDeployment({ namespace, name });
    const envFromConfigMap = async () =>
      (await read()).spec?.template.spec?.containers[0]?.envFrom?.[0]?.configMapRef?.name;
    await waitForBaselines(fixture.workloads, [{ kind: 'Deployment', namespace, name }], WAIT);
    const revisionCount = async (count: number) =>
      pollUntil(
        async () => {
          const { items } = await apps.listNamespacedReplicaSet({ namespace });
          return items.filter((rs) => rs.metadata?.ownerReferences?.[0]?.name === name).length ===
            count
            ? true
            : undefined;
        },
        { ...WAIT, describe: `${String(count)} ReplicaSets` },
      );
    for (const [index, data] of CONTENTS.entries()) {
      if (index === 0) continue;
      await putConfigMap(cluster, namespace, source, data);
      await pollUntil(async () => (await envFromConfigMap()) === snapshotOf(source, data), {
        ...WAIT,
        describe: `the roll onto content ${String(index + 1)}`,
      });
      await revisionCount(index + 1);
    }

    const table = await history([`deployment/${name}`, '-n', namespace]);
    expect(table.code, table.stderr).toBe(0);
    const snapshot = (index: number) => snapshotOf(source, CONTENTS[index] ?? {});
    const block = (revision: number) =>
      table.stdout.split('\n\n').find((text) => text.startsWith(`REVISION ${String(revision)} `)) ??
      '';
    expect(table.stdout).toMatch(
      /^deployment\/hist in .*: 4 revision\(s\); config revisions on \(ConfigMaps and Secrets\)\n/,
    );
    expect(block(1)).toContain('no snapshots: the template references the live sources');
    expect(block(2)).toContain(`configmap/${source} -> ${snapshot(1)}  hash `);
    expect(block(2)).toContain('the previous revision referenced the live source');
    expect(block(3)).toContain(`configmap/${source} -> ${snapshot(2)}`);
    expect(block(3)).toContain('    keys changed a; added c\n');
    expect(block(3)).toContain('no key changed (same snapshot as the previous revision)');
    expect(block(4)).toMatch(/ LIVE\n/);
    expect(block(4)).toContain('    keys removed b');
    // Without --show-values no value is printed.
    expect(table.stdout).not.toContain('a: "2" -> "3"');

    const values = await history([`deployment/${name}`, '-n', namespace, '--show-values']);
    expect(values.code, values.stderr).toBe(0);
    expect(values.stdout).toContain('      a: "2" -> "3"\n      c: (absent) -> "new"\n');
    expect(values.stdout).toContain('      b: "1" -> (absent)\n');

    // A Secret change: its key is named, its value never printed, in any format.
    await core.replaceNamespacedSecret({
      namespace,
      name: 'hist-db',
      body: { metadata: { name: 'hist-db' }, stringData: { password: SECOND_SECRET } },
    });
    await revisionCount(5);
    for (const format of ['table', 'json', 'yaml']) {
      const shown = await history([
        `deployment/${name}`,
        '-n',
        namespace,
        '--show-values',
        '-o',
        format,
      ]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain('secret/hist-db');
      for (const leak of [...secretForms(FIRST_SECRET), ...secretForms(SECOND_SECRET)]) {
        expect(shown.stdout, `${format} output`).not.toContain(leak);
      }
    }
    const afterSecret = JSON.parse(
      (await history([`deployment/${name}`, '-n', namespace, '-o', 'json'])).stdout,
    ) as HistoryJson;
    expect(
      afterSecret.revisions.at(-1)?.snapshots.find((s) => s.source === 'secret/hist-db')
        ?.comparison,
    ).toEqual({
      state: 'compared',
      added: [],
      removed: [],
      changed: ['password'],
    });

    // Undo to revision 3: its ReplicaSet becomes revision 6 and the live one.
    await kubectl(
      cluster,
      'rollout',
      'undo',
      `deployment/${name}`,
      '-n',
      namespace,
      '--to-revision=3',
    );
    await pollUntil(async () => (await envFromConfigMap()) === snapshot(2), {
      ...WAIT,
      describe: 'the undo to revision 3',
    });
    const undone = await pollUntil(
      async () => {
        const shown = await history([`deployment/${name}`, '-n', namespace, '-o', 'json']);
        const report = JSON.parse(shown.stdout) as HistoryJson;
        return report.revisions.find((r) => r.live)?.revision === 6 ? report : undefined;
      },
      { ...WAIT, describe: 'revision 6 live' },
    );
    expect(undone.revisions.map((r) => r.revision)).toEqual([1, 2, 4, 5, 6]);
    expect(
      undone.revisions.at(-1)?.snapshots.find((s) => s.source === `configmap/${source}`),
    ).toMatchObject({
      snapshot: snapshot(2),
      comparison: { state: 'compared', added: ['b'], removed: [], changed: [] },
    });

    // A snapshot deleted (as the GC does with its revision): said on its line, exit 0.
    await core.deleteNamespacedConfigMap({ namespace, name: snapshot(1) });
    const gone = await history([`deployment/${name}`, '-n', namespace]);
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stdout).toContain(
      `${snapshot(1)}  hash ${snapshot(1).slice(-10)} (gone: garbage-collected)`,
    );
  });

  it('through the kubectl plugin, and bad input: unknown kind, a kind without history, no such workload', async () => {
    const { cluster, namespace } = fixture;
    const bin = await mkdtemp(path.join(tmpdir(), 'kubectl-plugin-'));
    const plugin = path.join(bin, 'kubectl-kreload');
    // kubectl runs plugins by name from PATH (no kubectl flags before the plugin name: the
    // kubeconfig comes from KUBECONFIG); this one runs the built entry under this Node.
    await writeFile(
      plugin,
      `#!/bin/sh\nexec "${process.execPath}" "${path.join(REPO_ROOT, 'dist', 'kubectl-kreload.js')}" "$@"\n`,
    );
    await chmod(plugin, 0o755);
    const { stdout } = await run(
      'kubectl',
      ['kreload', 'history', 'deployment/hist', '-n', namespace],
      {
        env: {
          ...process.env,
          PATH: `${bin}:${process.env.PATH ?? ''}`,
          KUBECONFIG: cluster.kubeconfigPath,
        },
      },
    );
    expect(stdout).toMatch(/^deployment\/hist in /);

    const unknown = await history(['widget/x', '-n', namespace]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown kind "widget"');
    const job = await history(['cronjob/x', '-n', namespace]);
    expect(job.code).toBe(2);
    expect(job.stderr).toContain('a CronJob keeps no revision history');
    const missing = await history(['deployment/not-there', '-n', namespace]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain(`Deployment ${namespace}/not-there not found`);
    expect(missing.stdout).toBe('');
  });
});
