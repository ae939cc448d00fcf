/**
 * Store records written by someone else (docs/adr/0046, "records kreload did not write"): whoever
 * may write ConfigMaps in kreload's namespace can edit a record, and a record's hash that differs
 * from the source is what makes kreload roll a workload (R5). kreload's real pipeline on the
 * in-memory server; the store's objects are served as the API server serves them, with
 * `managedFields` naming who last wrote each record.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import { workloadKey } from '../core/keys.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { recordKey, storeObjectName } from '../kube/baseline-records.ts';
import {
  BASELINE_NAMESPACE_ANNOTATION,
  BASELINE_STORE_LABELS,
  projectStoreObject,
} from '../kube/baseline-store.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import { InMemoryCluster, isRoll, startPipeline } from '../testing/in-memory-cluster.ts';
import { aPipelineBaselineStore, InMemoryConfigMaps } from '../testing/in-memory-config-maps.ts';

const NS = 'team-a';
const HOME = 'kreload-system';
const CURRENT = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const OTHER = 'd93dd00779cd04e2ec1db21fa3d0e20deea13f9c';
const SYNC_DELAY_MS = 1_000;
const OBJECT = storeObjectName(NS, 0);

const API = aWorkload('Deployment', NS, 'api')
  .withResourceVersion('10')
  .withAnnotation(KEYS.auto, 'true')
  .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
  .build();
const KEY = recordKey(API);

/** The store object as the API server serves it: `writer` last wrote the record. */
function served(value: string, writer: string): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: OBJECT,
      namespace: HOME,
      resourceVersion: '5',
      labels: { ...BASELINE_STORE_LABELS },
      annotations: { [BASELINE_NAMESPACE_ANNOTATION]: NS },
      managedFields: [
        {
          manager: 'kreload',
          operation: 'Update',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': {}, 'f:annotations': {} },
            ...(writer === 'kreload' && { 'f:data': { '.': {}, [`f:${KEY}`]: {} } }),
          },
        },
        ...(writer === 'kreload'
          ? []
          : [
              {
                manager: writer,
                operation: 'Update',
                apiVersion: 'v1',
                fieldsType: 'FieldsV1',
                fieldsV1: { 'f:data': { [`f:${KEY}`]: {} } },
              },
            ]),
      ],
    },
    data: { [KEY]: value },
  };
}

/** One kreload start with `app-config` at CURRENT and the store holding `object`. */
async function start(object: JsonObject) {
  const cluster = new InMemoryCluster();
  const configMaps = new InMemoryConfigMaps(HOME);
  configMaps.objects.set(OBJECT, object);
  const ignored: string[] = [];
  const store = aPipelineBaselineStore(configMaps, {
    namespace: HOME,
    events: { onIgnored: (problem) => ignored.push(`${problem.reason} ${problem.object}`) },
  });
  store.consumer.replace([projectStoreObject(object)], '5');
  const { queue, router, watched } = startPipeline(cluster, {
    sourceTypes: ['CONFIGMAP'],
    debounce: { syncDelayMs: SYNC_DELAY_MS, syncMaxDelayMs: 30_000 },
    baselines: store,
  });
  watched.byType.CONFIGMAP?.replace([aConfigMap(NS, 'app-config').withHash(CURRENT).build()]);
  cluster.api.put(API);
  watched.store.replace('Deployment', [API]);
  queue.start();
  router.triggerAll([workloadKey(API.ref)]);
  await vi.advanceTimersByTimeAsync(SYNC_DELAY_MS * 3);
  await queue.idle();
  await store.flush();
  return { cluster, configMaps, store, ignored };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a store record kreload did not write', () => {
  it('kreload wrote it: a change made while kreload was down rolls once (R5)', async () => {
    const { cluster, configMaps } = await start(
      served(`{"configmap/app-config":"${OTHER}"}`, 'kreload'),
    );
    expect(cluster.sent.filter(isRoll)).toHaveLength(1);
    expect(configMaps.writes, 'the record is retired once the watch shows the roll').toEqual([
      {
        method: 'PATCH',
        path: `/api/v1/namespaces/${HOME}/configmaps/${OBJECT}`,
        body: { data: { [KEY]: null } },
      },
    ]);
  });

  it.each(['kubectl-edit', 'kubectl-client-side-apply', 'before-first-apply'])(
    'written by %s: never read, no roll; baselined again in the store and reported',
    async (writer) => {
      const { cluster, configMaps, store, ignored } = await start(
        served(`{"configmap/app-config":"${OTHER}"}`, writer),
      );
      expect(cluster.sent, 'no roll, and no workload write at all').toEqual([]);
      expect(configMaps.writes).toEqual([
        {
          method: 'PATCH',
          path: `/api/v1/namespaces/${HOME}/configmaps/${OBJECT}`,
          body: { data: { [KEY]: `{"configmap/app-config":"${CURRENT}"}` } },
        },
      ]);
      expect(store.recordOf(API)).toBe(`{"configmap/app-config":"${CURRENT}"}`);
      expect(ignored).toEqual([`foreign-writer ${OBJECT}`]);
    },
  );

  it('its value is what kreload would record anyway: adopted, not written again', async () => {
    const { cluster, configMaps, store } = await start(
      served(`{"configmap/app-config":"${CURRENT}"}`, 'kubectl-edit'),
    );
    expect(cluster.sent).toEqual([]);
    expect(configMaps.writes, 'the same value would not take the key back').toEqual([]);
    expect(store.recordOf(API)).toBe(`{"configmap/app-config":"${CURRENT}"}`);
  });
});
