import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKubeTransport } from '../kube/transport.ts';
import type { TestApiServer } from '../testing/test-api-server.ts';
import { writeTwoContextKubeconfig } from '../testing/two-context-kubeconfig.ts';
import {
  routeByPath,
  sendJson,
  sendStatus,
  startTestApiServer,
} from '../testing/test-api-server.ts';
import { HISTORY_EXIT, runHistoryCommand } from './history-command.ts';

const NS = 'shop';
const SECRET_VALUE = 'hunter2-do-not-print';
const base64 = (text: string) => Buffer.from(text).toString('base64');

function template(snapshots: Record<string, string> | undefined) {
  return {
    metadata:
      snapshots === undefined
        ? {}
        : { annotations: { 'kreload.io/snapshots': JSON.stringify(snapshots) } },
    spec: { containers: [{ name: 'app' }] },
  };
}

const DEPLOYMENT = {
  metadata: {
    name: 'web',
    namespace: NS,
    uid: 'uid-web',
    annotations: {
      'kreload.io/config-revisions': 'true',
      'deployment.kubernetes.io/revision': '3',
    },
  },
  spec: { template: template({}) },
};

function replicaSet(
  revision: number,
  snapshots: Record<string, string> | undefined,
  owner = 'uid-web',
) {
  return {
    metadata: {
      name: `web-${String(revision)}`,
      creationTimestamp: `2026-12-02T05:0${String(revision)}:00Z`,
      annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [{ kind: 'Deployment', name: 'web', uid: owner, controller: true }],
    },
    spec: { template: template(snapshots) },
  };
}

const snap = (n: number) => ({
  'configmap/app': `app-${String(n).repeat(10)}`,
  'secret/db': `db-${String(n).repeat(10)}`,
});

const REPLICA_SETS = {
  items: [
    replicaSet(1, undefined),
    replicaSet(2, snap(2)),
    replicaSet(3, snap(3)),
    replicaSet(7, snap(7), 'uid-other'),
  ],
};

function configMap(n: number, data: Record<string, string>) {
  return {
    metadata: {
      name: `app-${String(n).repeat(10)}`,
      annotations: { 'kreload.io/snapshot-source-hash': String(n).repeat(40) },
    },
    data,
  };
}

function secret(n: number, data: Record<string, string>) {
  return { metadata: { name: `db-${String(n).repeat(10)}` }, data };
}

type Route = (response: Parameters<typeof sendJson>[0]) => void;

const json =
  (body: unknown): Route =>
  (response) => {
    sendJson(response, 200, body);
  };
const status =
  (code: number, reason: string): Route =>
  (response) => {
    sendStatus(response, code, reason, `${reason} for the test`);
  };

const DEFAULT_ROUTES: Readonly<Record<string, Route>> = {
  [`/apis/apps/v1/namespaces/${NS}/deployments/web`]: json(DEPLOYMENT),
  [`/apis/apps/v1/namespaces/${NS}/replicasets`]: json(REPLICA_SETS),
  [`/api/v1/namespaces/${NS}/configmaps/app-2222222222`]: json(
    configMap(2, { 'app.yaml': 'level: v2', old: 'x' }),
  ),
  [`/api/v1/namespaces/${NS}/configmaps/app-3333333333`]: json(
    configMap(3, { 'app.yaml': 'level: v3', added: 'y' }),
  ),
  [`/api/v1/namespaces/${NS}/secrets/db-2222222222`]: json(secret(2, { password: base64('one') })),
  [`/api/v1/namespaces/${NS}/secrets/db-3333333333`]: json(
    secret(3, { password: base64(SECRET_VALUE) }),
  ),
};

let server: TestApiServer;
let kubeconfig: string;

beforeEach(async () => {
  server = await startTestApiServer();
  const dir = mkdtempSync(path.join(tmpdir(), 'history-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
});

afterEach(async () => {
  await server.close();
});

function serve(overrides: Readonly<Record<string, Route>> = {}): void {
  server.handle(routeByPath({ ...DEFAULT_ROUTES, ...overrides }));
}

async function run(argv: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runHistoryCommand([`--kubeconfig=${kubeconfig}`, ...argv], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    fileExists: (file) => file === kubeconfig,
    connect: () => createKubeTransport({ kubeConfig: server.kubeConfig() }),
  });
  return { code, stdout, stderr };
}

interface JsonReport {
  revisions: {
    revision: number;
    live: boolean;
    snapshots: {
      source: string;
      snapshot: string;
      hash: string;
      state: string;
      comparison: unknown;
    }[];
  }[];
  incomplete: boolean;
}

describe('kreload history: a Deployment', () => {
  it('lists its own ReplicaSets oldest first with snapshots, live revision and keys changed', async () => {
    serve();
    const { code, stdout, stderr } = await run(['deployment/web', '-n', NS]);
    expect(stderr).toBe('');
    expect(code).toBe(HISTORY_EXIT.ok);
    expect(stdout).toBe(
      [
        'deployment/web in shop: 3 revision(s); config revisions on (ConfigMaps)',
        '',
        'REVISION 1  2026-12-02T05:01:00Z  ReplicaSet web-1',
        '  no snapshots: the template references the live sources',
        '',
        'REVISION 2  2026-12-02T05:02:00Z  ReplicaSet web-2',
        '  configmap/app -> app-2222222222  hash 222222222222',
        '    the previous revision referenced the live source: nothing to compare with',
        '  secret/db -> db-2222222222  hash 2222222222',
        '    the previous revision referenced the live source: nothing to compare with',
        '',
        'REVISION 3  2026-12-02T05:03:00Z  ReplicaSet web-3  LIVE',
        '  configmap/app -> app-3333333333  hash 333333333333',
        '    keys changed app.yaml; added added; removed old',
        '  secret/db -> db-3333333333  hash 3333333333',
        '    keys changed password',
        '',
      ].join('\n'),
    );
    // Read-only: GETs, nothing else.
    expect(new Set(server.requests.map((r) => r.method))).toEqual(new Set(['GET']));
  });

  it('takes kubectl\'s "<kind> <name>" form; -o wide prints whole hashes', async () => {
    serve();
    const slash = await run(['deployment/web', '-n', NS]);
    const spaced = await run(['deployment', 'web', '-n', NS]);
    expect(spaced.code, spaced.stderr).toBe(HISTORY_EXIT.ok);
    expect(spaced.stdout).toBe(slash.stdout);
    const wide = await run(['deployment', 'web', '-n', NS, '-o', 'wide']);
    expect(wide.code, wide.stderr).toBe(HISTORY_EXIT.ok);
    expect(wide.stdout).toContain(`  configmap/app -> app-3333333333  hash ${'3'.repeat(40)}\n`);
    expect(wide.stdout).toBe(
      slash.stdout.replace(
        /hash (\d)\1{11}\n/g,
        (_, digit: string) => `hash ${digit.repeat(40)}\n`,
      ),
    );
  });

  it('--context picks the cluster and the namespace of that context', async () => {
    serve();
    const config = writeTwoContextKubeconfig(
      server.kubeConfig().getCurrentCluster()?.server ?? '',
      'shop',
      NS,
    );
    const runIn = async (argv: readonly string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await runHistoryCommand([`--kubeconfig=${config}`, ...argv], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: {},
        fileExists: (file) => file === config,
        connect: (kubeConfig) => createKubeTransport({ kubeConfig }),
      });
      return { code, stdout, stderr };
    };
    const viaContext = await runIn(['deployment/web', '--context', 'shop']);
    expect(viaContext.code, viaContext.stderr).toBe(HISTORY_EXIT.ok);
    expect(viaContext.stdout).toMatch(/^deployment\/web in shop: 3 revision\(s\)/);
    const current = await runIn(['deployment/web', '-n', NS]);
    expect(current.code).toBe(HISTORY_EXIT.failure);
    const unknown = await runIn(['deployment/web', '--context=prod']);
    expect(unknown.code).toBe(HISTORY_EXIT.usage);
    expect(unknown.stderr).toContain('context "prod" is not in');
  });

  it('--show-values prints ConfigMap values and never a Secret value', async () => {
    serve();
    const { code, stdout } = await run(['deploy/web', '-n', NS, '--show-values']);
    expect(code).toBe(HISTORY_EXIT.ok);
    expect(stdout).toContain('      app.yaml: "level: v2" -> "level: v3"');
    expect(stdout).toContain('      old: "x" -> (absent)');
    expect(stdout).not.toContain(SECRET_VALUE);
    expect(stdout).not.toContain(base64(SECRET_VALUE));
    const asJson = await run(['deploy/web', '-n', NS, '--show-values', '-o', 'json']);
    expect(asJson.stdout).not.toContain(SECRET_VALUE);
    expect(asJson.stdout).not.toContain(base64(SECRET_VALUE));
    const asYaml = await run(['deploy/web', '-n', NS, '--show-values', '-o', 'yaml']);
    expect(asYaml.stdout).toContain('level: v3');
    expect(asYaml.stdout).not.toContain(base64(SECRET_VALUE));
  });

  it('a snapshot already garbage-collected: said on its line, exit 0', async () => {
    serve({ [`/api/v1/namespaces/${NS}/configmaps/app-2222222222`]: status(404, 'NotFound') });
    const { code, stdout } = await run(['deployment/web', '-n', NS, '-o', 'json']);
    expect(code).toBe(HISTORY_EXIT.ok);
    const report = JSON.parse(stdout) as JsonReport;
    expect(report.revisions[1]?.snapshots[0]).toMatchObject({ state: 'gone', hash: '2222222222' });
    expect(report.revisions[2]?.snapshots[0]?.comparison).toEqual({
      state: 'cannot-compare',
      why: 'app-2222222222 garbage-collected',
    });
  });

  it('Secrets that may not be read: the rest is shown, exit 4', async () => {
    serve({
      [`/api/v1/namespaces/${NS}/secrets/db-2222222222`]: status(403, 'Forbidden'),
      [`/api/v1/namespaces/${NS}/secrets/db-3333333333`]: status(403, 'Forbidden'),
    });
    const { code, stdout } = await run(['deployment/web', '-n', NS]);
    expect(code).toBe(HISTORY_EXIT.forbidden);
    expect(stdout).toContain('secret/db -> db-3333333333  hash 3333333333 (may not be read)');
    expect(stdout).toContain('keys changed app.yaml; added added; removed old');
    expect(stdout).toContain('incomplete: some snapshots may not be read');
  });

  it.each<{ name: string; overrides: Record<string, Route>; exit: number; message: string }>([
    {
      name: 'ReplicaSets may not be listed',
      overrides: { [`/apis/apps/v1/namespaces/${NS}/replicasets`]: status(403, 'Forbidden') },
      exit: HISTORY_EXIT.forbidden,
      message: 'the ReplicaSets of Deployment shop/web may not be listed: forbidden',
    },
    {
      name: 'the workload does not exist',
      overrides: { [`/apis/apps/v1/namespaces/${NS}/deployments/web`]: status(404, 'NotFound') },
      exit: HISTORY_EXIT.targetNotFound,
      message: 'Deployment shop/web not found',
    },
    {
      name: 'the workload may not be read',
      overrides: { [`/apis/apps/v1/namespaces/${NS}/deployments/web`]: status(403, 'Forbidden') },
      exit: HISTORY_EXIT.forbidden,
      message: 'Deployment shop/web may not be read',
    },
    {
      name: 'the API server fails',
      overrides: { [`/apis/apps/v1/namespaces/${NS}/replicasets`]: status(500, 'InternalError') },
      exit: HISTORY_EXIT.failure,
      message: 'kreload history: ',
    },
  ])('$name: a message and exit $exit, nothing on stdout', async ({ overrides, exit, message }) => {
    serve(overrides);
    const { code, stdout, stderr } = await run(['deployment/web', '-n', NS]);
    expect(code).toBe(exit);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });
});

describe('kreload history: StatefulSet and DaemonSet', () => {
  const revision = (n: number, snapshots: Record<string, string>) => ({
    metadata: {
      name: `db-${String(n)}`,
      creationTimestamp: '2026-12-02T05:00:00Z',
      ownerReferences: [{ uid: 'uid-db', controller: true }],
    },
    revision: n,
    data: { spec: { template: { ...template(snapshots), $patch: 'replace' } } },
  });
  const revisions = {
    items: [
      revision(2, { 'configmap/app': 'app-2222222222' }),
      revision(5, { 'configmap/app': 'app-3333333333' }),
    ],
  };

  it.each([
    {
      kind: 'statefulset',
      resource: 'statefulsets',
      status: { updateRevision: 'db-2' },
      live: [true, false],
    },
    { kind: 'daemonset', resource: 'daemonsets', status: {}, live: [false, true] },
  ])(
    '$kind: ControllerRevisions with .revision, the live one as its controller says',
    async (row) => {
      serve({
        [`/apis/apps/v1/namespaces/${NS}/${row.resource}/db`]: json({
          metadata: { name: 'db', uid: 'uid-db', annotations: {} },
          status: row.status,
        }),
        [`/apis/apps/v1/namespaces/${NS}/controllerrevisions`]: json(revisions),
      });
      const { code, stdout } = await run([`${row.kind}/db`, '-n', NS, '-o', 'json']);
      expect(code).toBe(HISTORY_EXIT.ok);
      const report = JSON.parse(stdout) as JsonReport & {
        configRevisions: string;
        revisionKind: string;
      };
      expect(report.revisionKind).toBe('ControllerRevision');
      expect(report.configRevisions).toBe('off');
      expect(report.revisions.map((r) => [r.revision, r.live])).toEqual([
        [2, row.live[0]],
        [5, row.live[1]],
      ]);
      expect(report.revisions[1]?.snapshots[0]?.comparison).toEqual({
        state: 'compared',
        added: ['added'],
        removed: ['old'],
        changed: ['app.yaml'],
      });
    },
  );
});

describe('kreload history: usage', () => {
  it.each([
    [['cronjob/nightly'], 'a CronJob keeps no revision history'],
    [['configmap/app'], 'unknown kind "configmap"'],
    [['widget/x'], 'unknown kind "widget"'],
    [['web'], 'expected <kind>/<name> or <kind> <name>, got only "web"'],
    [[], 'expected <kind>/<name> or <kind> <name>'],
    [['deployment', 'web', 'extra'], 'unexpected argument "extra"'],
    [['cronjob', 'nightly'], 'a CronJob keeps no revision history'],
    [['deployment/web', '-o', 'tree'], '-o must be one of table, wide, json, yaml, got "tree"'],
    [['deployment/web', '--context'], "Option '--context <value>' argument missing"],
    [['deployment/web', '--frobnicate'], "Unknown option '--frobnicate'"],
    [['deployment/web', 'extra'], 'unexpected argument "extra"'],
    // A slash in the name would reach a subresource: `deployments/web/status` is the Deployment.
    [['deployment/web/status'], 'name "web/status" is not a valid object name'],
    [[`deployment/${'a'.repeat(254)}`], 'must be at most 253 characters'],
    [['deployment/Web'], 'name "Web" is not a valid object name'],
    [
      ['deployment/web', '-n', 'kube-system/x'],
      'namespace "kube-system/x" is not a valid namespace',
    ],
    [['deployment/web', '-n', ''], 'namespace "" is not a valid namespace'],
  ])('%j → exit 2: %s', async (argv, message) => {
    serve();
    const { code, stderr } = await run(argv);
    expect(code).toBe(HISTORY_EXIT.usage);
    expect(stderr).toContain(message);
    expect(stderr).toContain('Usage: kreload history');
    expect(server.requests).toEqual([]);
  });

  it('no kubeconfig to be found: a usage error, exit 2', async () => {
    let stderr = '';
    const code = await runHistoryCommand(['deployment/web'], {
      stdout: { write: () => undefined },
      stderr: { write: (text: string) => (stderr += text) },
      env: {},
      fileExists: () => false,
    });
    expect(code).toBe(HISTORY_EXIT.usage);
    expect(stderr).toMatch(/^kreload history: .*kubeconfig/i);
  });

  it('--help prints the usage, exit 0', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(HISTORY_EXIT.ok);
    expect(stdout).toContain('Usage: kreload history <kind>/<name>');
  });
});
