// Faults at the component level: the whole app (createApp) against a local fake API server.
// Issue 10 defect 5: every request about namespace `mb` is forbidden; `ma` must be seeded and
// reconciled and /readyz must name `mb`. Defect 8: a failing discovery is an error, retried.
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import type { App } from './app-types.ts';
import { parseOptions } from '../config/parse-options.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import {
  sendJson,
  sendStatus,
  startTestApiServer,
  type RecordedRequest,
  type TestApiServer,
} from '../testing/test-api-server.ts';
import type { ServerResponse } from 'node:http';
import { storeObjectName } from '../kube/baseline-records.ts';

const CONFIG_MAP = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cfg',
    namespace: 'ma',
    uid: 'c1',
    resourceVersion: '5',
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  data: { v: '1' },
};
const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'api',
    namespace: 'ma',
    uid: 'd1',
    resourceVersion: '6',
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { 'reloader.stakater.com/auto': 'true' },
  },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: 'api' } },
    template: {
      metadata: { labels: { app: 'api' } },
      spec: {
        containers: [{ name: 'app', image: 'x', envFrom: [{ configMapRef: { name: 'cfg' } }] }],
      },
    },
  },
};
const LISTED: Readonly<Record<string, unknown>> = {
  '/api/v1/namespaces/ma/configmaps': CONFIG_MAP,
  '/apis/apps/v1/namespaces/ma/deployments': DEPLOYMENT,
};

/** 403 for every request `forbids`; watches stay open and silent, as a quiet server's do. */
const answer = (forbids: (request: RecordedRequest) => boolean) =>
  function (request: RecordedRequest, response: ServerResponse): void {
    if (forbids(request)) {
      sendStatus(response, 403, 'Forbidden', `cannot list resource at ${request.path}`);
    } else if (request.query.get('watch') === 'true') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.flushHeaders();
    } else if (request.method === 'GET' && /\/namespaces\/[a-z]+\/[a-z]+$/.test(request.path)) {
      const item = LISTED[request.path];
      sendJson(response, 200, {
        metadata: { resourceVersion: '10' },
        items: item === undefined ? [] : [item],
      });
    } else if (request.method === 'PATCH') {
      sendJson(response, 200, {
        ...DEPLOYMENT,
        metadata: { ...DEPLOYMENT.metadata, resourceVersion: '7' },
      });
    } else if (request.method === 'POST' && request.path.endsWith('/events')) {
      sendJson(response, 201, {});
    } else {
      sendStatus(response, 404, 'NotFound');
    }
  };

const IN_MB = (request: RecordedRequest): boolean => request.path.includes('/namespaces/mb/');
/** Discovery (`/apis/<group>/<version>`) answers; every list and watch is forbidden. */
const EVERY_LIST = (request: RecordedRequest): boolean =>
  request.method === 'GET' && !/^\/(api\/v1|apis\/[^/]+\/[^/]+)$/.test(request.path);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

let server: TestApiServer | undefined;
let app: App | undefined;
let dir: string | undefined;
afterEach(async () => {
  await app?.stop('test done');
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  app = server = dir = undefined;
});

/** Starts the app with `args` against a fake API server; resolves after its initial sync. */
async function startApp(
  forbids: (request: RecordedRequest) => boolean,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  fake?: TestApiServer,
) {
  const api = fake ?? (await startTestApiServer(answer(forbids)));
  server = api;
  dir = await mkdtemp(path.join(tmpdir(), 'kreload-scope-'));
  const kubeconfig = path.join(dir, 'kubeconfig');
  await writeFile(kubeconfig, api.kubeConfig().exportConfig());
  const port = await freePort();
  const options = await parseOptions(
    [`--kubeconfig=${kubeconfig}`, `--metrics-port=${String(port)}`, ...args],
    env,
  );
  const logger = new RecordingLogger();
  app = createApp(options, { logger, version: '0.0.0-test', onFatal: () => undefined });
  await app.start();
  const get = (pathname: string) => fetch(`http://127.0.0.1:${String(port)}${pathname}`);
  return { api, logger, get };
}

interface ReadyzBody {
  readonly ready: boolean;
  readonly checks: {
    readonly kinds: Readonly<Record<string, string>>;
    readonly namespaces?: Readonly<Record<string, Readonly<Record<string, string>>>>;
    readonly permitted: boolean;
  };
}

const EVERY_KIND_FORBIDDEN = {
  configmaps: 'forbidden',
  secrets: 'forbidden',
  deployments: 'forbidden',
  daemonsets: 'forbidden',
  statefulsets: 'forbidden',
  cronjobs: 'forbidden',
  jobs: 'forbidden',
};

describe('scoped mode with one forbidden namespace (issue 10, defect 5)', () => {
  it(
    'the permitted namespace is reconciled and /readyz names the forbidden one',
    { timeout: 30_000 },
    async () => {
      const { api, logger, get } = await startApp(IN_MB, [
        '--namespaces=ma,mb',
        '--baseline-store=workload',
      ]);
      const baseline = (r: RecordedRequest): boolean =>
        r.method === 'PATCH' && r.path === '/apis/apps/v1/namespaces/ma/deployments/api';
      const giveUp = new AbortController();
      await Promise.race([
        api.waitForRequests(1, baseline),
        sleep(15_000, undefined, { signal: giveUp.signal }).then(
          () => {
            throw new Error(
              'no baseline PATCH of ma/api within 15 s: namespace ma is not reconciled',
            );
          },
          () => undefined,
        ),
      ]);
      giveUp.abort();
      expect(api.requests.find(baseline)?.body).toContain('configmap/cfg');

      const readyz = await get('/readyz');
      expect(readyz.status).toBe(200);
      const body = (await readyz.json()) as ReadyzBody;
      expect(body.checks.namespaces).toEqual({ mb: EVERY_KIND_FORBIDDEN });
      expect(body.checks.kinds).toMatchObject({ configmaps: 'partial', deployments: 'partial' });

      const metrics = await (await get('/metrics')).text();
      expect(metrics).toContain(
        'reloader_watch_status{namespace="mb",resource_type="configmaps",status="forbidden"} 1',
      );
      expect(metrics).toContain(
        'reloader_watch_status{namespace="ma",resource_type="configmaps",status="ok"} 1',
      );
      const forbiddenLines = logger.written.filter((line) => line.message.includes('forbidden'));
      expect(forbiddenLines.map((line) => line.fields?.resource).sort()).toEqual(
        Object.keys(EVERY_KIND_FORBIDDEN).sort(),
      );
    },
  );
});

describe('nothing can be listed: not ready, and says why (ADR 0021)', () => {
  it('single-namespace mode in a forbidden namespace', { timeout: 30_000 }, async () => {
    const { get } = await startApp(IN_MB, [], { KUBERNETES_NAMESPACE: 'mb' });
    const readyz = await get('/readyz');
    expect(readyz.status).toBe(503);
    const body = (await readyz.json()) as ReadyzBody;
    expect(body).toMatchObject({ ready: false, checks: { permitted: false } });
    expect(body.checks.namespaces).toEqual({ mb: EVERY_KIND_FORBIDDEN });
    expect(body.checks.kinds).toMatchObject(EVERY_KIND_FORBIDDEN);
  });

  it('--namespace-selector with only per-namespace grants', { timeout: 30_000 }, async () => {
    const { get } = await startApp(EVERY_LIST, ['--namespace-selector=team=a']);
    const readyz = await get('/readyz');
    expect(readyz.status).toBe(503);
    const body = (await readyz.json()) as ReadyzBody;
    expect(body).toMatchObject({ ready: false, checks: { permitted: false } });
    expect(body.checks.namespaces).toBeUndefined();
    expect(body.checks.kinds).toMatchObject({ ...EVERY_KIND_FORBIDDEN, namespaces: 'forbidden' });
  });
});

describe('optional API discovery that fails (issue 10, defect 8)', () => {
  it(
    'a 503 is an error in /readyz, retried, then the kind is watched',
    { timeout: 30_000 },
    async () => {
      const ROLLOUTS_DISCOVERY = '/apis/argoproj.io/v1alpha1';
      let rolloutsServed = false;
      const serve = answer(IN_MB);
      const api = await startTestApiServer((request, response) => {
        if (request.path !== ROLLOUTS_DISCOVERY) serve(request, response);
        else if (rolloutsServed) sendJson(response, 200, { resources: [{ name: 'rollouts' }] });
        else sendStatus(response, 503, 'ServiceUnavailable');
      });
      const { get } = await startApp(
        IN_MB,
        ['--namespaces=ma', '--is-Argo-Rollouts=true'],
        {},
        api,
      );
      const status = async (): Promise<ReadyzBody> =>
        (await (await get('/readyz')).json()) as ReadyzBody;
      expect((await status()).checks.kinds.rollouts).toBe('error');
      expect((await status()).ready).toBe(true);

      rolloutsServed = true;
      const giveUp = Date.now() + 20_000;
      while ((await status()).checks.kinds.rollouts !== 'ok' && Date.now() < giveUp) {
        await sleep(200);
      }
      expect((await status()).checks.kinds.rollouts).toBe('ok');
      expect(
        api.requests.some((r) => r.path === '/apis/argoproj.io/v1alpha1/namespaces/ma/rollouts'),
      ).toBe(true);
    },
  );
});

describe('a namespace forbidden after it was listed (ADR 0021)', () => {
  it(
    'is shown as forbidden; its sources are unknown, not deleted',
    { timeout: 30_000 },
    async () => {
      let maForbidden = false;
      const openWatches: ServerResponse[] = [];
      const serve = answer((request) => maForbidden && request.path.includes('/namespaces/ma/'));
      const api = await startTestApiServer((request, response) => {
        if (request.query.get('watch') === 'true' && !maForbidden) openWatches.push(response);
        serve(request, response);
      });
      const { get } = await startApp(
        () => false,
        [
          '--namespaces=ma,mb',
          '--reload-on-delete=true',
          '--sync-delay=0',
          '--baseline-store=workload',
        ],
        {},
        api,
      );
      const patches = (): RecordedRequest[] =>
        api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/deployments/api'));
      await api.waitForRequests(1, (r) => r.method === 'PATCH');

      // The Role is gone: the next watch (after the server ends these) and relist get 403.
      maForbidden = true;
      for (const response of openWatches.splice(0)) response.end();
      const status = async (): Promise<ReadyzBody> =>
        (await (await get('/readyz')).json()) as ReadyzBody;
      const giveUp = Date.now() + 20_000;
      while ((await status()).checks.namespaces?.ma?.configmaps !== 'forbidden') {
        if (Date.now() > giveUp) throw new Error('ma never showed as forbidden in /readyz');
        await sleep(100);
      }
      const body = await status();
      expect(body, JSON.stringify(body)).toMatchObject({ ready: true });
      expect(body.checks.kinds.configmaps).toBe('partial');
      // With --reload-on-delete and no debounce, a cache that took the 403 for deletions would
      // have queued a delete-marker roll by now.
      await sleep(500);
      expect(patches()).toHaveLength(1);
    },
  );
});

const STORE_HOME = '/api/v1/namespaces/kreload/configmaps';
const STORE_LIST = (request: RecordedRequest): boolean =>
  request.method === 'GET' &&
  request.path === STORE_HOME &&
  (request.query.get('labelSelector') ?? '').includes('kreload.io/baseline-store=true');
const STORE_WRITE = (request: RecordedRequest): boolean =>
  request.method !== 'GET' && request.path.startsWith(STORE_HOME);
const BASELINE_PATCH = (request: RecordedRequest): boolean =>
  request.method === 'PATCH' && request.path === '/apis/apps/v1/namespaces/ma/deployments/api';

/** Resolves with the first request `matches`, or fails after 15 s. */
async function firstRequest(
  api: TestApiServer,
  matches: (request: RecordedRequest) => boolean,
): Promise<RecordedRequest> {
  const giveUp = new AbortController();
  await Promise.race([
    api.waitForRequests(1, matches),
    sleep(15_000, undefined, { signal: giveUp.signal }).then(
      () => {
        throw new Error('no such request within 15 s');
      },
      () => undefined,
    ),
  ]);
  giveUp.abort();
  const request = api.requests.find(matches);
  if (request === undefined) throw new Error('request vanished');
  return request;
}

describe('the baseline store forbidden: baselines go to the workloads (docs/adr/0046)', () => {
  it.each([
    ['its list', STORE_LIST],
    ['its writes', STORE_WRITE],
  ])(
    '%s forbidden: logged, then B in W as with --baseline-store=workload',
    { timeout: 30_000 },
    async (_what, forbids) => {
      const { api, logger, get } = await startApp(forbids, ['--namespaces=ma'], {
        POD_NAMESPACE: 'kreload',
      });
      const patch = await firstRequest(api, BASELINE_PATCH);
      expect(patch.body).toContain('kreload.io/baseline');
      expect(patch.body).toContain('configmap/cfg');
      const fellBack = logger.written.filter((line) =>
        line.message.includes(
          'the baseline store: first-sight baselines are written to the workloads',
        ),
      );
      expect(fellBack).toHaveLength(1);
      expect(fellBack[0]?.fields).toMatchObject({ namespace: 'kreload' });
      const readyz = await get('/readyz');
      expect(readyz.status).toBe(200);
      const metrics = await (await get('/metrics')).text();
      expect(metrics).toContain('kreload_baseline_store_in_use 0');
      const refusedWrites = forbids === STORE_WRITE ? 1 : 0;
      expect(metrics).toContain(
        `kreload_baseline_store_write_errors_total{retryable="false"} ${String(refusedWrites)}`,
      );
    },
  );

  it('a readable store keeps the first sight off the workload', { timeout: 30_000 }, async () => {
    const { api, get } = await startApp(() => false, ['--namespaces=ma'], {
      POD_NAMESPACE: 'kreload',
    });
    await firstRequest(api, (r) => r.method === 'POST' && r.path.startsWith(STORE_HOME));
    expect(api.requests.filter(BASELINE_PATCH)).toEqual([]);
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toContain('kreload_baseline_store_in_use 1');
    expect(metrics).toContain('kreload_baseline_store_records 1');
    expect(metrics).toContain('kreload_baseline_store_write_errors_total{retryable="true"} 0');
  });
});

describe('a dry run sends nothing to the baseline store (§13.8, docs/adr/0046)', () => {
  /** The store as an earlier run left it: a record of a workload deleted since. */
  const STORE_OBJECT = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: storeObjectName('ma', 0),
      namespace: 'kreload',
      uid: 's1',
      resourceVersion: '8',
      labels: { 'app.kubernetes.io/managed-by': 'kreload', 'kreload.io/baseline-store': 'true' },
      annotations: { 'kreload.io/baseline-namespace': 'ma' },
    },
    data: { 'Deployment.gone.uid-gone': '{"configmap/cfg":"0000"}' },
  };
  const withStore = answer(() => false);
  const storeAnswer = (request: RecordedRequest, response: ServerResponse): void => {
    if (STORE_LIST(request) && request.query.get('watch') !== 'true') {
      sendJson(response, 200, { metadata: { resourceVersion: '10' }, items: [STORE_OBJECT] });
    } else if (STORE_WRITE(request)) {
      sendJson(response, 200, STORE_OBJECT);
    } else {
      withStore(request, response);
    }
  };

  it.each([
    ['a normal run sweeps the deleted workload’s record', [], true],
    ['a dry run leaves it, and records no first sight', ['--dry-run'], false],
    ['webhook mode leaves it', ['--webhook-url=http://127.0.0.1:9/hook'], false],
  ])('%s', { timeout: 30_000 }, async (_name, flags, sweeps) => {
    const fake = await startTestApiServer(storeAnswer);
    const { api } = await startApp(
      () => false,
      ['--namespaces=ma', '--resync-period=0', ...flags],
      { POD_NAMESPACE: 'kreload' },
      fake,
    );
    await firstRequest(api, STORE_LIST);
    // The start's full reconcile sweeps; a batch goes out within a second of it.
    await sleep(2_500);
    const writes = api.requests.filter((r) => r.method !== 'GET' && !r.path.endsWith('/events'));
    const swept = writes.filter(
      (r) => STORE_WRITE(r) && r.body.includes('"Deployment.gone.uid-gone":null'),
    );
    if (sweeps) expect(swept).toHaveLength(1);
    else expect(writes).toEqual([]);
  });
});
