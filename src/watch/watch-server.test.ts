// The watch server against a scripted fake API server: initial sync, the subscription, /readyz
// status, and an optional API (CSI) served only after start (§2.2).
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseOptions } from '../config/parse-options.ts';
import {
  sendJson,
  sendStatus,
  startTestApiServer,
  type RecordedRequest,
  type TestApiServer,
} from '../testing/test-api-server.ts';
import type { WatchHandler } from './watch-caches.ts';
import type { WatchServer } from './watch-server.ts';
import { watchServerAgainst } from '../testing/test-watch-server.ts';

const CSI_GROUP = '/apis/secrets-store.csi.x-k8s.io/v1';
const CONFIG_MAP = {
  metadata: { name: 'cfg', namespace: 'ma', uid: 'c1', resourceVersion: '5' },
  data: { v: '1' },
};

const POLICY_GROUP = '/apis/kreload.io/v1alpha1';
const POLICY = {
  metadata: { name: 'web', namespace: 'ma', uid: 'p1', resourceVersion: '6', generation: 1 },
  spec: {
    sources: [{ kind: 'ConfigMap', name: 'cfg' }],
    targets: [{ kind: 'Deployment', name: 'web' }],
  },
};

/**
 * Lists are empty but for one ConfigMap and one ReloadPolicy; watches stay open and silent; CSI
 * and the policy API as `csiServed` and `policiesServed` say.
 */
function answer(state: { csiServed: boolean; policiesServed?: boolean }) {
  return (request: RecordedRequest, response: ServerResponse): void => {
    if (request.path === POLICY_GROUP) {
      if (state.policiesServed !== true) sendStatus(response, 404, 'NotFound');
      else sendJson(response, 200, { resources: [{ name: 'reloadpolicies' }] });
    } else if (request.path === CSI_GROUP) {
      if (!state.csiServed) sendStatus(response, 404, 'NotFound');
      else {
        sendJson(response, 200, {
          resources: [
            { name: 'secretproviderclasspodstatuses' },
            { name: 'secretproviderclasses' },
          ],
        });
      }
    } else if (request.query.get('watch') === 'true') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.flushHeaders();
    } else if (/^\/(api\/v1|apis\/[^/]+\/[^/]+)\/namespaces\/ma\/[a-z]+$/.test(request.path)) {
      const items = request.path.endsWith('/configmaps')
        ? [CONFIG_MAP]
        : request.path.endsWith('/reloadpolicies')
          ? [POLICY]
          : [];
      sendJson(response, 200, { metadata: { resourceVersion: '10' }, items });
    } else {
      sendStatus(response, 404, 'NotFound');
    }
  };
}

function recordingHandler(log: string[]): WatchHandler {
  return {
    onSourceEvent: (event) => log.push(`source ${event.kind} ${event.ref.name}`),
    onWorkloadEvent: (event) => log.push(`workload ${event.kind} ${event.key}`),
    onNamespaceEntered: (namespace) => log.push(`entered ${namespace}`),
    onNamespaceLeft: (namespace) => log.push(`left ${namespace}`),
    onScopeJoined: (resource, namespace) => log.push(`joined ${resource} ${String(namespace)}`),
    onKindWatched: (kind) => log.push(`watched ${kind ?? 'csi'}`),
    onPolicyEvent: (event) => log.push(`policy ${event.kind} ${event.view.name}`),
  };
}

let api: TestApiServer | undefined;
let server: WatchServer | undefined;
afterEach(async () => {
  await server?.stop();
  await api?.close();
  api = server = undefined;
});

async function start(
  state: { csiServed: boolean; policiesServed?: boolean },
  extraArgs: readonly string[] = [],
) {
  api = await startTestApiServer(answer(state));
  const options = await parseOptions(
    ['--namespaces=ma', '--enable-csi-integration', ...extraArgs],
    {},
  );
  server = watchServerAgainst(api, options);
  const log: string[] = [];
  server.subscribe(recordingHandler(log));
  expect(server.watchStates()).toEqual([
    { resource: 'configmaps', namespace: undefined, status: 'syncing' },
  ]);
  await server.start();
  await server.initialSync();
  return { server, log };
}

describe('WatchServer', () => {
  it('syncs every watch, fills its caches and reports each kind; nothing is emitted', async () => {
    const { server: watch, log } = await start({ csiServed: false });
    expect(watch.caches.sources.get('ma', 'CONFIGMAP', 'cfg')?.uid).toBe('c1');
    expect(watch.isTypeHealthy('CONFIGMAP', 'ma')).toBe(true);
    expect(watch.isTypeHealthy('SECRETPROVIDERCLASS', 'ma')).toBe(false);
    expect(watch.syncSummary().kinds).toContain('configmaps=ok');
    // An absent CSI API is not listed; an absent DeploymentConfig API is.
    expect(watch.unwatchedKinds()).toMatchObject({ deploymentconfigs: 'absent' });
    expect(watch.unwatchedKinds()).not.toHaveProperty('secretproviderclasses');
    expect(watch.apiServerStatus()).toBe('ok');
    expect(log).toEqual([]);
  });

  it(
    'watches the CSI API once it is served, then tells the subscribers',
    { timeout: 15_000 },
    async () => {
      const state = { csiServed: false };
      const { server: watch, log } = await start(state);
      expect(watch.watchStates().map((w) => w.resource)).not.toContain('secretproviderclasses');
      state.csiServed = true;
      watch.recheckAbsentApis();
      while (!log.includes('watched csi')) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(watch.watchStates().map((w) => w.resource)).toContain('secretproviderclasses');
      expect(watch.isTypeHealthy('SECRETPROVIDERCLASS', 'ma')).toBe(true);
    },
  );

  it(
    'ReloadPolicies: absent is reported, then watched once served, and the workloads re-planned',
    { timeout: 15_000 },
    async () => {
      const state = { csiServed: false, policiesServed: false };
      const { server: watch, log } = await start(state, ['--enable-reload-policies']);
      expect(watch.unwatchedKinds()).toMatchObject({
        deploymentconfigs: 'absent',
        reloadpolicies: 'absent',
      });
      expect(watch.caches.policies?.size).toBe(0);
      state.policiesServed = true;
      watch.recheckAbsentApis();
      while (!log.includes('joined reloadpolicies undefined')) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(watch.unwatchedKinds()).toMatchObject({ deploymentconfigs: 'absent' });
      expect(watch.unwatchedKinds()).not.toHaveProperty('reloadpolicies');
      expect(watch.caches.policies?.get('ma', 'web')?.sources).toEqual([
        { kind: 'CONFIGMAP', name: 'cfg' },
      ]);
      expect(watch.caches.sources.get('ma', 'CONFIGMAP', 'cfg')?.labels).toEqual({});
    },
  );
});
