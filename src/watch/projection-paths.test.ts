// The views kreload plans on come from two paths: the list-watch (watch/kube-watches.ts) and a GET
// (the workload writer after a conflict, `kreload explain`). Both must keep exactly the same
// fields under the same configuration; a GET view without the labels unbinds a ReloadPolicy's
// target or source selector in the middle of a roll.
import { BUILT_IN_KIND_TABLE } from '../rollout/kinds.ts';
import { Readable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ExplainReader } from '../cli/explain/reader.ts';
import { parseOptions } from '../config/parse-options.ts';
import type { JsonObject } from '../core/json.ts';
import type { SourceView, WorkloadView } from '../core/types.ts';
import { projectionSettings, type ProjectionSettings } from '../kube/projections.ts';
import { OTHER_RESOURCES, resourcePath, workloadResource } from '../kube/resources.ts';
import type { KubeStreamRequest, StreamingKubeTransport } from '../kube/transport.ts';
import { WorkloadClient } from '../kube/workload-client.ts';
import { createMetrics } from '../metrics/metrics.ts';
import { WORKLOAD_KINDS, type WorkloadKindRow } from '../rollout/kinds.ts';
import type { ResourceWatch } from './kube-watches.ts';
import { WatchFactory } from './kube-watches.ts';
import type { ViewSink } from './ports.ts';

const NAMESPACE = 'ns';
const LABELS = { tier: 'web', team: 'payments' };

/** A pod template with one reference of each shape, annotations kreload reads and one it drops. */
const TEMPLATE: JsonObject = {
  metadata: {
    labels: { app: 'w' },
    annotations: { 'kreload.io/snapshots': '{"configmap/app":"app-0123456789"}', other: 'x' },
  },
  spec: {
    containers: [
      {
        name: 'app',
        env: [{ name: 'STAKATER_APP_CONFIGMAP', value: 'abc' }],
        envFrom: [{ configMapRef: { name: 'app-0123456789' } }, { secretRef: { name: 'db' } }],
        volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
      },
    ],
    volumes: [{ name: 'config', configMap: { name: 'settings' } }],
  },
};

function setAt(target: JsonObject, path: readonly string[], value: JsonObject): void {
  let node = target;
  for (const [index, field] of path.entries()) {
    if (index === path.length - 1) node[field] = value;
    else node = (node[field] ??= {}) as JsonObject;
  }
}

/** A served workload of the row's kind: labels, kreload's annotations, a template, spec flags. */
function wireWorkload(row: WorkloadKindRow): JsonObject {
  const object: JsonObject = {
    apiVersion: row.apiVersion,
    kind: row.kind,
    metadata: {
      name: 'w',
      namespace: NAMESPACE,
      uid: `uid-${row.kind}`,
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { ...LABELS, 'kreload.io/revision-digest': 'd1' },
      annotations: {
        'reloader.stakater.com/auto': 'true',
        'kreload.io/baseline': '{}',
        'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}',
      },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Owner', name: 'o', uid: 'o-1', controller: true },
      ],
      managedFields: [{ manager: 'kubectl' }],
    },
    spec: { paused: true, suspend: true, triggers: [{ type: 'ConfigChange' }] },
    status: { replicas: 1 },
  };
  setAt(object, row.templatePath ?? [], TEMPLATE);
  return object;
}

const SOURCES: readonly { readonly resource: 'configmaps' | 'secrets'; object: JsonObject }[] = [
  { resource: 'configmaps', object: { data: { a: '1' }, binaryData: { b: 'AA==' } } },
  { resource: 'secrets', object: { type: 'Opaque', data: { password: 'c2VjcmV0' } } },
];

function wireSource(object: JsonObject): JsonObject {
  return {
    ...object,
    metadata: {
      name: 'src',
      namespace: NAMESPACE,
      uid: 'uid-src',
      resourceVersion: '7',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: LABELS,
      annotations: { 'reloader.stakater.com/match': 'true', other: 'x' },
    },
  };
}

/**
 * Serves one object: a GET of its path answers it, a list of its collection holds it, a watch
 * stays open until the test stops it.
 */
function servingTransport(path: string, object: JsonObject): StreamingKubeTransport {
  const collection = path.slice(0, path.lastIndexOf('/'));
  return {
    request: (request) => {
      if (request.path === path) return Promise.resolve(structuredClone(object));
      // The list `kreload explain` makes to ask whether the watch's selectors hold the object.
      if (request.path === collection) return Promise.resolve({ items: [object] });
      return Promise.reject(new Error(`unexpected request ${request.path}`));
    },
    stream: (request: KubeStreamRequest) => {
      if (request.path !== collection) throw new Error(`unexpected stream ${request.path}`);
      if (request.query?.watch === true || request.query?.watch === 'true') {
        return new Promise(() => undefined);
      }
      const list = { metadata: { resourceVersion: '42' }, items: [object] };
      return Promise.resolve({
        status: 200,
        chunks: Readable.from([Buffer.from(JSON.stringify(list))]),
      });
    },
  };
}

/** The view the list-watch delivers for the served object. */
async function watched<V>(start: (sink: ViewSink<V>) => ResourceWatch[]): Promise<V | undefined> {
  const views = Promise.withResolvers<readonly V[]>();
  const sink: ViewSink<V> = {
    replace: (list) => {
      views.resolve(list);
    },
    upsert: () => undefined,
    remove: () => undefined,
  };
  const started = start(sink);
  running.push(...started);
  for (const watch of started) watch.start();
  return (await views.promise)[0];
}

const running: ResourceWatch[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((watch) => watch.stop()));
});

function factory(transport: StreamingKubeTransport, projection: ProjectionSettings): WatchFactory {
  return new WatchFactory({
    transport,
    projection,
    metrics: createMetrics(new Registry(), { countByNamespace: false }),
    onWatchError: () => undefined,
  });
}

const options = await parseOptions([], {});
const TARGET = [{ namespace: NAMESPACE, labelSelector: undefined, fieldSelector: undefined }];

describe.each([true, false])('--enable-reload-policies=%s', (policies) => {
  const settings = projectionSettings({ ...options, enableReloadPolicies: policies });

  it.each(WORKLOAD_KINDS.map((row) => [row.kind, row] as const))(
    '%s: the GET view equals the watched view',
    async (_kind, row) => {
      const ref = { kind: row.kind, namespace: NAMESPACE, name: 'w' };
      const path = resourcePath(workloadResource(row), { namespace: NAMESPACE, name: 'w' });
      const transport = servingTransport(path, wireWorkload(row));
      const writer = new WorkloadClient({
        transport,
        projection: settings,
        kinds: BUILT_IN_KIND_TABLE,
      });
      const fetched = await writer.get(ref);
      const fromWatch = await watched<WorkloadView>((sink) =>
        factory(transport, settings).workloads(row, TARGET, sink),
      );
      expect(fromWatch).toBeDefined();
      expect(fetched).toEqual(fromWatch);
      expect(fetched?.labels).toEqual(
        policies ? { ...LABELS, 'kreload.io/revision-digest': 'd1' } : undefined,
      );
    },
  );

  it.each(SOURCES.map((source) => [source.resource, source] as const))(
    '%s: the view `kreload explain` reads equals the watched view',
    async (resource, source) => {
      const api = resource === 'configmaps' ? OTHER_RESOURCES.configMaps : OTHER_RESOURCES.secrets;
      const path = resourcePath(api, { namespace: NAMESPACE, name: 'src' });
      const transport = servingTransport(path, wireSource(source.object));
      const read = await new ExplainReader({ transport }).readSource(
        NAMESPACE,
        resource === 'configmaps' ? 'CONFIGMAP' : 'SECRET',
        'src',
        { ...options, enableReloadPolicies: policies },
      );
      const fromWatch = await watched<SourceView>((sink) =>
        factory(transport, settings).sources(resource, TARGET, sink),
      );
      expect(fromWatch).toBeDefined();
      expect(read).toEqual({ state: 'present', view: fromWatch });
      expect(fromWatch?.labels).toEqual(policies ? LABELS : undefined);
    },
  );
});
