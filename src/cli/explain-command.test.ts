import { createSecretKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashConfigMap } from '../core/hash.ts';
import { DEFAULT_ANNOTATION_KEYS as K } from '../core/types.ts';
import { encodeEntry } from '../kube/recreation-journal.ts';
import { createKubeTransport } from '../kube/transport.ts';
import type { RecordedRequest, TestApiServer } from '../testing/test-api-server.ts';
import { writeTwoContextKubeconfig } from '../testing/two-context-kubeconfig.ts';
import {
  routeByPath,
  sendJson,
  sendStatus,
  startTestApiServer,
} from '../testing/test-api-server.ts';
import { EXPLAIN_EXIT, runExplainCommand } from './explain-command.ts';
import { storeObjectName } from '../kube/baseline-records.ts';

const NS = 'shop';

function deployment(name: string, extra: { annotations?: Record<string, string>; spec?: unknown }) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: '1', ...extra },
    spec: extra.spec ?? {
      template: {
        spec: {
          containers: [
            {
              name: 'app',
              envFrom: [{ configMapRef: { name: 'cfg' } }, { secretRef: { name: 'creds' } }],
            },
          ],
        },
      },
    },
  };
}

const CONFIG_MAP = {
  metadata: { name: 'cfg', namespace: NS, uid: 'uid-cfg', resourceVersion: '3' },
  data: { a: '1' },
};

type Routes = Readonly<Record<string, (response: Parameters<typeof sendJson>[0]) => void>>;

let server: TestApiServer;
let kubeconfig: string;

beforeEach(async () => {
  server = await startTestApiServer();
  const dir = mkdtempSync(path.join(tmpdir(), 'explain-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, server.kubeConfig().exportConfig());
});

afterEach(async () => {
  await server.close();
});

function serve(routes: Routes): void {
  server.handle(routeByPath(routes));
}

async function run(argv: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runExplainCommand([`--kubeconfig=${kubeconfig}`, ...argv], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    fileExists: (file) => file === kubeconfig,
    connect: () => createKubeTransport({ kubeConfig: server.kubeConfig() }),
    now: () => new Date('2026-06-01T00:00:00Z'),
  });
  return { code, stdout, stderr };
}

const methods = (requests: readonly RecordedRequest[]) => [
  ...new Set(requests.map((r) => r.method)),
];

describe('kreload explain (CLI)', () => {
  it.each([
    // A kind no row names, once the controller's options (here `--`) are known.
    [['widget/x', '--'], 'unknown kind "widget"'],
    [['deployment'], 'expected <kind>/<name> or <kind> <name>, got only "deployment"'],
    [[], 'expected <kind>/<name> or <kind> <name>'],
    [['deployment/a', 'deployment/b'], 'unexpected argument "deployment/b"'],
    [['deployment', 'a', 'b'], 'unexpected argument "b"'],
    [['deployment', 'A'], 'name "A" is not a valid object name'],
    [['widget', 'a', '--'], 'unknown kind "widget"'],
    [['deployment/a', '-o', 'xml'], '-o must be one of table, wide, json, yaml'],
    [['deployment/a', '--context'], '--context needs a value'],
    [['deployment/a', '--from', 'x/y', '--', '--dry-run'], 'alternatives'],
    [['deployment/a', '--bogus'], 'unknown flag "--bogus"'],
    // A slash in the name would reach a subresource: `deployments/a/status` is the Deployment.
    [['deployment/a/status'], 'name "a/status" is not a valid object name'],
    [['configmap/a/b'], 'name "a/b" is not a valid object name'],
    [[`secret/${'a'.repeat(254)}`], 'must be at most 253 characters'],
    [['deployment/a', '-n', 'x/y'], 'namespace "x/y" is not a valid namespace'],
    [
      ['deployment/a', '--from', 'kreload-system/kreload/status'],
      '--from must be <namespace>/<deployment>',
    ],
    [['deployment/a', '--from', 'Kreload/kreload'], '--from must be <namespace>/<deployment>'],
  ])('%j is a usage error (exit 2) without any request', async (argv, message) => {
    const result = await run(argv);
    expect(result.code).toBe(EXPLAIN_EXIT.usage);
    expect(result.stderr).toContain(message);
    expect(server.requests).toEqual([]);
  });

  const FORBIDDEN_SECRET_ROUTES: Routes = {
    [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
      sendJson(r, 200, deployment('api', { annotations: { [K.auto]: 'true' } }));
    },
    [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
      sendJson(r, 200, CONFIG_MAP);
    },
    [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
      sendStatus(r, 403, 'Forbidden', 'secrets "creds" is forbidden');
    },
  };

  it('takes kubectl\'s "<kind> <name>" form as "<kind>/<name>"', async () => {
    serve(FORBIDDEN_SECRET_ROUTES);
    const slash = await run(['deployment/api', '-n', NS]);
    const spaced = await run(['deployment', 'api', '-n', NS]);
    expect(spaced.code, spaced.stderr).toBe(EXPLAIN_EXIT.cannotTell);
    expect(spaced.stdout).toBe(slash.stdout);
    expect(spaced.stdout).toContain(`Deployment ${NS}/api`);
  });

  it('counts the pods of a roll by eviction under way: rolls by pod eviction, progress', async () => {
    const api = deployment('api', {
      annotations: {
        [K.auto]: 'true',
        'kreload.io/rollout-strategy': 'evict',
        'kreload.io/evict-before': '2026-05-31T23:00:00Z',
      },
    });
    const pod = (name: string, created: string) => ({
      metadata: {
        name,
        namespace: NS,
        uid: `uid-${name}`,
        creationTimestamp: created,
        labels: { app: 'api' },
        ownerReferences: [{ kind: 'ReplicaSet', name: 'api-1', uid: 'uid-rs', controller: true }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    serve({
      ...FORBIDDEN_SECRET_ROUTES,
      [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
        sendJson(r, 200, {
          ...api,
          spec: { ...api.spec, replicas: 3, selector: { matchLabels: { app: 'api' } } },
        });
      },
      [`/apis/apps/v1/namespaces/${NS}/replicasets`]: (r) => {
        sendJson(r, 200, {
          items: [
            {
              metadata: {
                name: 'api-1',
                uid: 'uid-rs',
                ownerReferences: [
                  { kind: 'Deployment', name: 'api', uid: 'uid-api', controller: true },
                ],
              },
            },
          ],
        });
      },
      [`/api/v1/namespaces/${NS}/pods`]: (r) => {
        sendJson(r, 200, {
          items: [
            pod('api-a', '2026-05-31T22:00:00Z'),
            pod('api-b', '2026-05-31T22:30:00Z'),
            pod('api-r1', '2026-05-31T23:30:00Z'),
          ],
        });
      },
    });
    const result = await run(['deployment/api', '-n', NS]);
    expect(result.stdout).toContain('rolls by: pod eviction');
    expect(result.stdout).toContain('progress: 1/3 pods replaced');
    const listed = server.requests.filter((request) => request.path.endsWith('/pods'));
    expect(listed.map((request) => request.query.get('labelSelector'))).toEqual(['app=api']);
    expect(methods(server.requests)).toEqual(['GET']);
  });

  it('-o wide prints whole hashes where the table shortens them', async () => {
    serve(FORBIDDEN_SECRET_ROUTES);
    const table = await run(['deployment/api', '-n', NS]);
    const wide = await run(['deployment/api', '-n', NS, '-o', 'wide']);
    expect(wide.code, wide.stderr).toBe(EXPLAIN_EXIT.cannotTell);
    const hash = /configmap\/cfg .*? ([0-9a-f]{12}) /.exec(table.stdout)?.[1] ?? 'none';
    const whole = new RegExp(`configmap/cfg .*? (${hash}[0-9a-f]{28}) `).exec(wide.stdout)?.[1];
    expect(whole).toHaveLength(40);
    expect(table.stdout).not.toContain(whole);
  });

  describe('--context', () => {
    const twoContexts = (): string =>
      writeTwoContextKubeconfig(server.kubeConfig().getCurrentCluster()?.server ?? '', 'test', NS);

    /** Connects where the kubeconfig (after --context) points, as the real command does. */
    async function runWith(argv: readonly string[]) {
      let stdout = '';
      let stderr = '';
      const config = twoContexts();
      const code = await runExplainCommand([`--kubeconfig=${config}`, ...argv], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: {},
        fileExists: (file) => file === config,
        connect: (kubeConfig) => createKubeTransport({ kubeConfig }),
        now: () => new Date('2026-06-01T00:00:00Z'),
      });
      return { code, stdout, stderr };
    }

    it("reads the named context's cluster and namespace, not the current context's", async () => {
      serve(FORBIDDEN_SECRET_ROUTES);
      const result = await runWith(['deployment', 'api', '--context', 'test']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.cannotTell);
      expect(result.stdout).toContain(`Deployment ${NS}/api`);
      const current = await runWith(['deployment', 'api', '-n', NS]);
      expect(current.code).toBe(EXPLAIN_EXIT.failure);
      expect(current.stdout).toBe('');
    });

    it('an unknown context is a usage error naming the contexts there are, with no request', async () => {
      const result = await runWith(['deployment/api', '--context=prod']);
      expect(result.code).toBe(EXPLAIN_EXIT.usage);
      expect(result.stderr).toMatch(
        /^kreload explain: context "prod" is not in \S+ \(contexts: test, nowhere\)\n$/,
      );
      expect(server.requests).toEqual([]);
    });
  });

  it('rejects controller flags kreload would reject (exit 2)', async () => {
    const result = await run(['deployment/api', '-n', NS, '--', '--reload-strategy=sometimes']);
    expect(result.code).toBe(EXPLAIN_EXIT.usage);
    expect(result.stderr).toContain('--reload-strategy');
  });

  it('a missing workload exits 3', async () => {
    serve({});
    const result = await run(['deployment/api', '-n', NS, '--']);
    expect(result).toMatchObject({ code: EXPLAIN_EXIT.targetNotFound, stdout: '' });
    expect(result.stderr).toContain('Deployment shop/api not found');
  });

  it('a forbidden Secret is "cannot tell" (exit 4); explain only reads', async () => {
    serve({
      [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
        sendJson(r, 200, deployment('api', { annotations: { [K.auto]: 'true' } }));
      },
      [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
        sendJson(r, 200, CONFIG_MAP);
      },
      [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
        sendStatus(r, 403, 'Forbidden', 'secrets "creds" is forbidden');
      },
    });
    const result = await run(['deployment/api', '-n', NS]);
    expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.cannotTell);
    expect(result.stdout).toContain('default options (Deployment kreload-system/kreload not found');
    expect(result.stdout).toMatch(/secret\/creds .* cannot tell, because explain may not read/);
    expect(result.stdout).toMatch(/configmap\/cfg .* AUTO auto .* no state yet/);
    expect(methods(server.requests)).toEqual(['GET']);
  });

  it('--from takes the options of the kreload Deployment and says so', async () => {
    const controller = deployment('kreload', {
      spec: {
        template: {
          spec: {
            containers: [
              {
                name: 'kreload',
                args: ['--namespaces=elsewhere'],
                env: [
                  {
                    name: 'KUBERNETES_NAMESPACE',
                    valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
                  },
                  { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
                ],
              },
            ],
          },
        },
      },
    });
    serve({
      [`/apis/apps/v1/namespaces/ops/deployments/kreload`]: (r) => {
        sendJson(r, 200, { ...controller, metadata: { ...controller.metadata, namespace: 'ops' } });
      },
      [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
        sendJson(r, 200, deployment('api', { annotations: { [K.auto]: 'true' } }));
      },
      [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
        sendJson(r, 200, CONFIG_MAP);
      },
      [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
        sendStatus(r, 404, 'NotFound');
      },
    });
    const result = await run(['deployment/api', '-n', NS, '--from', 'ops/kreload', '-o', 'json']);
    expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
    const report = JSON.parse(result.stdout) as {
      config: unknown;
      assumptions: string[];
      workload: { gate: string };
    };
    expect(report.config).toEqual({ kind: 'deployment', namespace: 'ops', name: 'kreload' });
    expect(report.workload.gate).toBe('namespace-not-watched');
    expect(report.assumptions).toContain(
      'env var TOKEN of the controller comes from its pod and was left unset',
    );
  });

  /** kreload's own Deployment, which names its namespace through POD_NAMESPACE. */
  const controller = deployment('kreload', {
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'kreload',
              env: [
                {
                  name: 'POD_NAMESPACE',
                  valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
                },
              ],
            },
          ],
        },
      },
    },
  });

  describe('a pending Job recreation, from the journal in the controller namespace', () => {
    const SINCE = Date.parse('2026-05-31T23:59:00Z');
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', namespace: NS, uid: 'uid-old', resourceVersion: '5' },
      spec: { template: { spec: { containers: [{ name: 'app' }] } } },
    };
    const journal = {
      metadata: { name: 'kreload-job-recreations', namespace: 'ops' },
      data: {
        [`${NS}.migrate`]: encodeEntry(
          {
            ref: { kind: 'Job', namespace: NS, name: 'migrate' },
            manifest: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'migrate' } },
            deletedUid: 'uid-old',
            since: SINCE,
          },
          // The user reading it need not hold kreload's key: the CLI shows the entry unverified.
          createSecretKey(Buffer.alloc(32, 1)),
        ),
      },
    };
    const routes = (jobRoute: Routes[string], journalRoute: Routes[string]): Routes => ({
      '/apis/apps/v1/namespaces/ops/deployments/kreload': (r) => {
        sendJson(r, 200, { ...controller, metadata: { ...controller.metadata, namespace: 'ops' } });
      },
      '/api/v1/namespaces/ops/configmaps/kreload-job-recreations': journalRoute,
      [`/apis/batch/v1/namespaces/${NS}/jobs/migrate`]: jobRoute,
    });

    it('names it for a Job that is being deleted', async () => {
      serve(
        routes(
          (r) => {
            sendJson(r, 200, job);
          },
          (r) => {
            sendJson(r, 200, journal);
          },
        ),
      );
      const result = await run(['job/migrate', '-n', NS, '--from', 'ops/kreload', '-o', 'json']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      const report = JSON.parse(result.stdout) as { workload: { facts: unknown } };
      expect(report.workload.facts).toMatchObject({
        recreationPending: { since: '2026-05-31T23:59:00.000Z' },
      });
    });

    it('says so when the deleted Job is not there yet (exit 3)', async () => {
      serve(
        routes(
          (r) => {
            sendStatus(r, 404, 'NotFound');
          },
          (r) => {
            sendJson(r, 200, journal);
          },
        ),
      );
      const result = await run(['job/migrate', '-n', NS, '--from', 'ops/kreload']);
      expect(result.code).toBe(EXPLAIN_EXIT.targetNotFound);
      expect(result.stderr).toContain(
        'Job shop/migrate not found: kreload deleted it to roll it and its recreation is pending since 2026-05-31T23:59:00.000Z',
      );
    });

    it('shows none for a Job with another UID, and says when the journal is forbidden', async () => {
      serve(
        routes(
          (r) => {
            sendJson(r, 200, { ...job, metadata: { ...job.metadata, uid: 'uid-new' } });
          },
          (r) => {
            sendJson(r, 200, journal);
          },
        ),
      );
      const fresh = await run(['job/migrate', '-n', NS, '--from', 'ops/kreload', '-o', 'json']);
      expect(fresh.stdout).not.toContain('recreationPending');
      serve(
        routes(
          (r) => {
            sendJson(r, 200, job);
          },
          (r) => {
            sendStatus(r, 403, 'Forbidden', 'configmaps is forbidden');
          },
        ),
      );
      const forbidden = await run(['job/migrate', '-n', NS, '--from', 'ops/kreload']);
      expect(forbidden.code).toBe(EXPLAIN_EXIT.ok);
      expect(forbidden.stdout).toContain(
        'a pending Job recreation is not shown: the journal ConfigMap ops/kreload-job-recreations could not be read',
      );
    });
  });

  describe('the baseline store in the controller namespace', () => {
    const STORE_OBJECT = storeObjectName(NS, 0);
    const cfgHash = hashConfigMap(CONFIG_MAP.data, undefined);
    const storeList = (records: Record<string, string>, watched = NS) => ({
      kind: 'ConfigMapList',
      metadata: { resourceVersion: '9' },
      items: [
        {
          metadata: {
            name: storeObjectName(watched, 0),
            namespace: 'ops',
            resourceVersion: '8',
            labels: {
              'app.kubernetes.io/managed-by': 'kreload',
              'kreload.io/baseline-store': 'true',
            },
            annotations: { 'kreload.io/baseline-namespace': watched },
          },
          data: records,
        },
      ],
    });
    const routes = (
      store: Routes[string],
      api = deployment('api', { annotations: { [K.auto]: 'true' } }),
    ): Routes => ({
      '/apis/apps/v1/namespaces/ops/deployments/kreload': (r) => {
        sendJson(r, 200, { ...controller, metadata: { ...controller.metadata, namespace: 'ops' } });
      },
      '/api/v1/namespaces/ops/configmaps': store,
      [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
        sendJson(r, 200, api);
      },
      [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
        sendJson(r, 200, CONFIG_MAP);
      },
      [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
        sendStatus(r, 404, 'NotFound');
      },
    });
    interface Report {
      assumptions: string[];
      workload: {
        facts: { baselineIn?: string };
        sources: { key: string; baseline?: string; verdict: string }[];
      };
    }
    const cfgOf = (report: Report) =>
      report.workload.sources.find((s) => s.key === 'configmap/cfg');

    it('reads the baseline of a never-rolled workload from its record, and says where', async () => {
      const record = `{"configmap/cfg":"${cfgHash}"}`;
      serve(
        routes((r) => {
          sendJson(r, 200, storeList({ 'Deployment.api.uid-api': record }));
        }),
      );
      const result = await run(['deployment/api', '-n', NS, '--from', 'ops/kreload', '-o', 'json']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      const report = JSON.parse(result.stdout) as Report;
      expect(report.workload.facts.baselineIn).toBe(`ops/${STORE_OBJECT}`);
      expect(cfgOf(report)).toMatchObject({ baseline: cfgHash, verdict: 'rolls-on-change' });
      const listed = server.requests.find((r) => r.path === '/api/v1/namespaces/ops/configmaps');
      expect(listed?.query.get('labelSelector')).toBe(
        'app.kubernetes.io/managed-by=kreload,kreload.io/baseline-store=true',
      );
      const table = await run(['deployment/api', '-n', NS, '--from', 'ops/kreload']);
      expect(table.stdout).toContain(
        `baseline in: ConfigMap ops/${STORE_OBJECT} (the baseline store)`,
      );
      expect(table.stdout).not.toContain('no state yet');
      expect(methods(server.requests)).toEqual(['GET']);
    });

    it.each([
      [
        'another workload object (same name, another UID)',
        { 'Deployment.api.uid-old': `{"configmap/cfg":"${'a'.repeat(40)}"}` },
        NS,
      ],
      [
        'a record of another namespace',
        { 'Deployment.api.uid-api': `{"configmap/cfg":"${'a'.repeat(40)}"}` },
        'other',
      ],
      // Only hashes are baselines: a value that is not one counts as absent and is never shown.
      [
        'a record that is not a hash map',
        { 'Deployment.api.uid-api': '{"configmap/cfg":"s3cr3t-value"}' },
        NS,
      ],
    ])('shows no baseline for %s', async (_what, records, watched) => {
      serve(
        routes((r) => {
          sendJson(r, 200, storeList(records, watched));
        }),
      );
      const result = await run(['deployment/api', '-n', NS, '--from', 'ops/kreload', '-o', 'json']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      const report = JSON.parse(result.stdout) as Report;
      expect(cfgOf(report)?.baseline).toBeUndefined();
      expect(cfgOf(report)?.verdict).toBe('first-sight');
      expect(result.stdout).not.toContain('s3cr3t');
    });

    it('says in one line when the store may not be read, and explains the rest', async () => {
      serve(
        routes((r) => {
          sendStatus(r, 403, 'Forbidden', 'configmaps is forbidden: User "dev" cannot list');
        }),
      );
      const result = await run(['deployment/api', '-n', NS, '--from', 'ops/kreload']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(
        'the baseline store (ConfigMaps in ops) could not be read (forbidden): a workload kreload never rolled shows no baseline; --via-controller asks the controller',
      );
      expect(result.stdout).toMatch(/configmap\/cfg .* no state yet/);
    });

    it('is not read with --baseline-store=workload, where W holds B', async () => {
      serve(
        routes(() => {
          throw new Error('the store was read');
        }),
      );
      const result = await run(['deployment/api', '-n', NS, '--', '--baseline-store=workload']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      expect(server.requests.map((r) => r.path)).not.toContain('/api/v1/namespaces/ops/configmaps');
      expect(server.requests.map((r) => r.path)).not.toContain(
        '/api/v1/namespaces/kreload-system/configmaps',
      );
    });

    it("reads it in --from's namespace when the options do not name kreload's", async () => {
      serve({
        '/api/v1/namespaces/kreload-system/configmaps': (r) => {
          sendJson(
            r,
            200,
            storeList({ 'Deployment.api.uid-api': `{"configmap/cfg":"${cfgHash}"}` }),
          );
        },
        [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
          sendJson(r, 200, deployment('api', { annotations: { [K.auto]: 'true' } }));
        },
        [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
          sendJson(r, 200, CONFIG_MAP);
        },
      });
      const result = await run(['deployment/api', '-n', NS, '-o', 'json']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      expect(cfgOf(JSON.parse(result.stdout) as Report)).toMatchObject({ baseline: cfgHash });
    });
  });

  describe('--via-controller asks the controller instead of the cluster', () => {
    const report = {
      config: { kind: 'controller', pod: 'kreload-0' },
      assumptions: [],
      source: { key: 'configmap/cfg', namespace: NS, rolls: [], doesNotRoll: [] },
    };

    async function via(argv: readonly string[], answer: () => Response) {
      const urls: string[] = [];
      let stdout = '';
      let stderr = '';
      const code = await runExplainCommand(argv, {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        env: {},
        fileExists: () => false,
        fetch: (input) => {
          urls.push(input instanceof URL ? input.href : JSON.stringify(input));
          return Promise.resolve(answer());
        },
      });
      return { code, stdout, stderr, urls };
    }

    it("renders the controller's JSON answer in the chosen format, reading no kubeconfig", async () => {
      const result = await via(
        ['configmap/cfg', '-n', NS, '--via-controller', 'http://127.0.0.1:9090'],
        () => Response.json(report),
      );
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      expect(result.urls).toEqual([
        `http://127.0.0.1:9090/debug/explain?kind=configmap&namespace=${NS}&name=cfg&o=json`,
      ]);
      expect(result.stdout).toContain('answer of the running kreload (pod kreload-0)');
      expect(server.requests).toEqual([]);
    });

    it.each([
      [
        404,
        '{"error":"not in the cache"}',
        EXPLAIN_EXIT.targetNotFound,
        'answered 404: not in the cache',
      ],
      [404, 'not found', EXPLAIN_EXIT.usage, '--enable-debug-explain'],
      [400, '{"error":"unknown kind"}', EXPLAIN_EXIT.usage, 'answered 400: unknown kind'],
      [503, '{"error":"not synced"}', EXPLAIN_EXIT.failure, 'answered 503: not synced'],
    ])('a %i answer exits %#', async (status, body, code, message) => {
      const result = await via(
        ['deployment/api', '--via-controller=http://127.0.0.1:9090'],
        () => new Response(body, { status }),
      );
      expect(result.code).toBe(code);
      expect(result.stderr).toContain(message);
      expect(result.urls[0]).toContain('kind=Deployment&namespace=default&name=api');
    });

    it('an unreachable controller exits 1 and names it', async () => {
      const result = await via(['deployment/api', '--via-controller=http://127.0.0.1:1'], () => {
        throw new TypeError('fetch failed');
      });
      expect(result.code).toBe(EXPLAIN_EXIT.failure);
      expect(result.stderr).toContain(
        'cannot reach the controller at http://127.0.0.1:1: fetch failed',
      );
    });

    it.each([
      [['deployment/api', '--via-controller=localhost:9090'], 'must be an http:// or https:// URL'],
      [['deployment/api', '--via-controller=http://x', '--from', 'a/b'], 'no --from or --'],
      [['deployment/api', '--via-controller=http://x', '--', '--dry-run'], 'no --from or --'],
    ])('%j is a usage error', async (argv, message) => {
      const result = await via(argv, () => Response.json(report));
      expect(result.code).toBe(EXPLAIN_EXIT.usage);
      expect(result.stderr).toContain(message);
      expect(result.urls).toEqual([]);
    });
  });

  it('explains a source query in YAML', async () => {
    serve({
      [`/apis/apps/v1/namespaces/${NS}/deployments`]: (r) => {
        sendJson(r, 200, {
          items: [
            deployment('api', { annotations: { [K.auto]: 'true' } }),
            deployment('worker', {}),
          ],
        });
      },
      [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
        sendJson(r, 200, CONFIG_MAP);
      },
      [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
        sendStatus(r, 404, 'NotFound');
      },
    });
    const result = await run(['configmap/cfg', '-n', NS, '-o', 'yaml', '--']);
    expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
    expect(result.stdout).toMatch(
      /rolls:\n\s+- kind: Deployment\n\s+namespace: shop\n\s+name: api/,
    );
    expect(result.stdout).toContain('because: not-annotated');
  });

  describe('with --enable-reload-policies', () => {
    const POLICIES = `/apis/kreload.io/v1alpha1/namespaces/${NS}/reloadpolicies`;
    const labelled = {
      ...deployment('api', {}),
      metadata: { ...deployment('api', {}).metadata, labels: { app: 'api' } },
    };
    const policy = (name: string, spec: Record<string, unknown>) => ({
      apiVersion: 'kreload.io/v1alpha1',
      kind: 'ReloadPolicy',
      metadata: { name, namespace: NS, uid: `uid-${name}`, generation: 1 },
      spec,
    });
    const workloadRoutes: Routes = {
      [`/apis/apps/v1/namespaces/${NS}/deployments/api`]: (r) => {
        sendJson(r, 200, labelled);
      },
      [`/api/v1/namespaces/${NS}/configmaps/cfg`]: (r) => {
        sendJson(r, 200, CONFIG_MAP);
      },
      [`/api/v1/namespaces/${NS}/configmaps/extra`]: (r) => {
        sendJson(r, 200, { ...CONFIG_MAP, metadata: { ...CONFIG_MAP.metadata, name: 'extra' } });
      },
      [`/api/v1/namespaces/${NS}/secrets/creds`]: (r) => {
        sendStatus(r, 404, 'NotFound');
      },
    };

    it('binds by selector and by name with the controller rules, and names the policy', async () => {
      serve({
        ...workloadRoutes,
        [POLICIES]: (r) => {
          sendJson(r, 200, {
            items: [
              policy('by-selector', {
                sources: [{ kind: 'ConfigMap', name: 'cfg' }],
                targets: [{ kind: 'Deployment', selector: { matchLabels: { app: 'api' } } }],
                strategy: 'annotations',
              }),
              policy('by-name', {
                sources: [{ kind: 'ConfigMap', name: 'extra' }],
                targets: [{ kind: 'Deployment', name: 'api' }],
              }),
              policy('off', {
                sources: [{ kind: 'Secret', name: 'creds' }],
                targets: [{ kind: 'Deployment', name: 'api' }],
                suspend: true,
              }),
            ],
          });
        },
      });
      const result = await run(['deployment/api', '-n', NS, '--', '--enable-reload-policies']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.ok);
      expect(result.stdout).toMatch(/configmap\/cfg .* LIST policy by-selector /);
      expect(result.stdout).toMatch(/configmap\/extra +policy only +LIST policy by-name +/);
      expect(result.stdout).toMatch(/secret\/creds .* NO not-annotated/);
      expect(result.stdout).toContain(
        'bound by ReloadPolicy by-name, by-selector: strategy annotations from by-selector',
      );
      expect(methods(server.requests)).toEqual(['GET']);
    });

    it.each([
      [403, 'forbidden'],
      [404, 'is not served'],
    ])('a %i on ReloadPolicies is "cannot tell", never "not bound"', async (status, why) => {
      serve({
        ...workloadRoutes,
        [POLICIES]: (r) => {
          sendStatus(r, status, status === 403 ? 'Forbidden' : 'NotFound');
        },
      });
      const result = await run(['deployment/api', '-n', NS, '--', '--enable-reload-policies']);
      expect(result.code, result.stderr).toBe(EXPLAIN_EXIT.cannotTell);
      expect(result.stdout).toMatch(
        /configmap\/cfg .* cannot tell, because explain could not list/,
      );
      expect(result.stdout).toContain(`ReloadPolicies: cannot tell (`);
      expect(result.stdout).toContain(why);
      expect(result.stdout).not.toMatch(/configmap\/cfg .* will not roll/);
      expect(result.stdout).toContain(
        '  - ReloadPolicies could not be listed: which sources a policy binds is not known',
      );
    });

    it('does not read ReloadPolicies without the flag', async () => {
      serve(workloadRoutes);
      const result = await run(['deployment/api', '-n', NS, '--']);
      expect(result.stdout).toMatch(/configmap\/cfg .* NO not-annotated/);
      expect(server.requests.map((r) => r.path)).not.toContain(POLICIES);
    });
  });
});
