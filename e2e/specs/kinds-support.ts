// Shared by the kinds-*.e2e.test.ts specs (§2.2, §6, §7): the two reload strategies as rows (how
// a pod template shows a roll under each), pod templates, and wire-JSON access to any workload
// kind. Expected values come from the contract (hashes from sources.ts, keys from
// annotations.ts), never from src/.
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import {
  AUTO,
  BASELINE,
  LAST_RELOADED_FROM,
  SOURCE_HASHES,
  stateJson,
} from '../harness/annotations.ts';
import {
  arrayAt,
  customObjectPath,
  isRecord,
  MERGE_PATCH,
  stringAt,
  stringMapAt,
  valueAt,
  type CustomApi,
  type JsonRecord,
  type KubeJson,
} from '../harness/crds.ts';
import { BaselineStoreReader } from '../harness/baseline-store.ts';
import { pollUntil } from '../harness/poll.ts';

export { AUTO, BASELINE, SOURCE_HASHES, stateJson };

/** Never pulled: no kubelet runs in the test cluster. */
export const IMAGE = 'registry.invalid/pause:3.10';
export const APP = 'app';
export const SIDECAR = 'sidecar';

export type ReloadStrategy = 'env-vars' | 'annotations';
export type SourceTypeName = 'CONFIGMAP' | 'SECRET' | 'SECRETPROVIDERCLASS';

/** One source a roll is about, with everything a pod template may name it by. */
export interface RolledSource {
  readonly type: SourceTypeName;
  readonly name: string;
  readonly namespace: string;
  readonly hash: string;
}

const KEY_PREFIX: Readonly<Record<SourceTypeName, string>> = {
  CONFIGMAP: 'configmap',
  SECRET: 'secret',
  SECRETPROVIDERCLASS: 'secretproviderclass',
};

/** §0: `configmap/<name>`, `secret/<name>`, `secretproviderclass/<name>`. */
export function keyOf(source: Pick<RolledSource, 'type' | 'name'>): string {
  return `${KEY_PREFIX[source.type]}/${source.name}`;
}

/** §4.3: `STAKATER_` + sanitised name + `_` + TYPE. */
export function envNameOf(source: Pick<RolledSource, 'type' | 'name'>): string {
  let sanitised = '';
  let previousKept = false;
  for (const char of source.name.toUpperCase()) {
    const kept = /^[A-Z0-9]$/.test(char);
    if (kept) sanitised += char;
    else if (previousKept) sanitised += '_';
    previousKept = kept;
  }
  return `STAKATER_${sanitised}_${source.type}`;
}

export interface SecretObject {
  readonly id: string;
  readonly version: string;
}

/** §4.1: `id=version` per object plus `SecretProviderClassName=<class>`, byte-wise sorted. */
export function podStatusHash(className: string, objects: readonly SecretObject[]): string {
  const entries = [
    `SecretProviderClassName=${className}`,
    ...objects.map((object) => `${object.id}=${object.version}`),
  ].map((entry) => Buffer.from(entry, 'utf8'));
  const hash = createHash('sha1');
  entries
    .sort((a, b) => Buffer.compare(a, b))
    .forEach((entry, index) => {
      if (index > 0) hash.update(';');
      hash.update(entry);
    });
  return hash.digest('hex');
}

/** Literal env values of one container of a pod template. */
export function envOf(template: unknown, container: string): Record<string, string> {
  const found = arrayAt(template, ['spec', 'containers']).find(
    (candidate) => stringAt(candidate, ['name']) === container,
  );
  return Object.fromEntries(
    arrayAt(found, ['env']).flatMap((variable) => {
      const name = stringAt(variable, ['name']);
      const value = stringAt(variable, ['value']);
      return name === undefined || value === undefined ? [] : [[name, value]];
    }),
  );
}

export function templateAnnotationsOf(template: unknown): Record<string, string> {
  return stringMapAt(template, ['metadata', 'annotations']);
}

export function annotationsOf(object: unknown): Record<string, string> {
  return stringMapAt(object, ['metadata', 'annotations']);
}

/** How each strategy writes a roll into a pod template (§6.1, §6.2). */
export interface StrategyRow {
  readonly strategy: ReloadStrategy;
  /** The hash the template says its pods were rolled for (§5.1 A), or undefined. */
  appliedHash(template: unknown, source: RolledSource): string | undefined;
  /**
   * Asserts the template carries this strategy's record of a roll for `source` in `app`. With
   * `appliedState: 'W'` (a Job created from a CronJob, §7.3) the state map lives in metadata, so
   * the template needs only the strategy's change (env var or last-reloaded-from).
   */
  expectRolled(template: unknown, source: RolledSource, appliedState?: 'PT' | 'W'): void;
}

interface LastReloadedFrom {
  readonly type?: unknown;
  readonly name?: unknown;
  readonly namespace?: unknown;
  readonly hash?: unknown;
}

function lastReloadedFrom(template: unknown): LastReloadedFrom | undefined {
  const raw = templateAnnotationsOf(template)[LAST_RELOADED_FROM];
  if (raw === undefined) return undefined;
  const parsed: unknown = JSON.parse(raw);
  return isRecord(parsed) ? parsed : undefined;
}

export const STRATEGIES: readonly StrategyRow[] = [
  {
    strategy: 'env-vars',
    appliedHash: (template, source) => envOf(template, APP)[envNameOf(source)],
    expectRolled(template, source) {
      expect(envOf(template, APP)).toMatchObject({ [envNameOf(source)]: source.hash });
      // §3.6: the container that references the source, not every container.
      expect(envOf(template, SIDECAR)).not.toHaveProperty(envNameOf(source));
      expect(templateAnnotationsOf(template)).not.toHaveProperty(LAST_RELOADED_FROM);
    },
  },
  {
    strategy: 'annotations',
    appliedHash(template, source) {
      const record = lastReloadedFrom(template);
      const named =
        record?.type === source.type &&
        record.name === source.name &&
        record.namespace === source.namespace;
      return named && typeof record.hash === 'string' ? record.hash : undefined;
    },
    expectRolled(template, source, appliedState = 'PT') {
      const annotations = templateAnnotationsOf(template);
      const raw = annotations[LAST_RELOADED_FROM] ?? '';
      // §6.2 item 1: exactly these fields, in this order.
      expect(raw).toMatch(
        new RegExp(
          `^\\{"type":"${source.type}","name":"${source.name}","namespace":"${source.namespace}",` +
            `"hash":"${source.hash}","containerRefs":\\["${APP}"\\],"observedAt":\\d+\\}$`,
        ),
      );
      if (appliedState === 'PT') {
        expect(annotations[SOURCE_HASHES]).toBe(stateJson({ [keyOf(source)]: source.hash }));
      }
      expect(envOf(template, APP)).not.toHaveProperty(envNameOf(source));
    },
  },
];

export function strategyRow(strategy: ReloadStrategy): StrategyRow {
  const row = STRATEGIES.find((candidate) => candidate.strategy === strategy);
  if (row === undefined) throw new Error(`no strategy row for ${strategy}`);
  return row;
}

/** A pod template whose `app` container reads `configMap` through envFrom; `sidecar` reads nothing. */
export function podTemplate(options: {
  readonly app: string;
  readonly configMap: string;
  readonly restartPolicy?: 'Always' | 'Never';
}): JsonRecord {
  return {
    metadata: { labels: { app: options.app } },
    spec: {
      ...(options.restartPolicy === undefined ? {} : { restartPolicy: options.restartPolicy }),
      containers: [
        { name: APP, image: IMAGE, envFrom: [{ configMapRef: { name: options.configMap } }] },
        { name: SIDECAR, image: IMAGE },
      ],
    },
  };
}

/** Built-in kinds addressed like custom ones, for KubeJson. */
export const BUILT_IN_APIS = {
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment' },
  replicasets: { group: 'apps', version: 'v1', plural: 'replicasets', kind: 'ReplicaSet' },
  cronjobs: { group: 'batch', version: 'v1', plural: 'cronjobs', kind: 'CronJob' },
  jobs: { group: 'batch', version: 'v1', plural: 'jobs', kind: 'Job' },
} as const satisfies Record<string, CustomApi>;

export interface ObjectRef {
  readonly api: CustomApi;
  readonly namespace: string;
  readonly name: string;
}

export function readObject(client: KubeJson, ref: ObjectRef): Promise<unknown> {
  return client.get(customObjectPath(ref.api, ref));
}

export async function createObject(
  client: KubeJson,
  ref: Omit<ObjectRef, 'name'>,
  body: JsonRecord,
): Promise<unknown> {
  const apiVersion = `${ref.api.group}/${ref.api.version}`;
  return client.request({
    method: 'POST',
    path: customObjectPath(ref.api, { namespace: ref.namespace }),
    body: { apiVersion, kind: ref.api.kind, ...body },
  });
}

export async function mergePatchObject(
  client: KubeJson,
  ref: ObjectRef,
  body: JsonRecord,
): Promise<unknown> {
  return client.request({
    method: 'PATCH',
    path: customObjectPath(ref.api, ref),
    body,
    contentType: MERGE_PATCH,
  });
}

export async function listObjects(
  client: KubeJson,
  ref: Omit<ObjectRef, 'name'>,
): Promise<unknown[]> {
  return arrayAt(await client.get(customObjectPath(ref.api, { namespace: ref.namespace })), [
    'items',
  ]);
}

export function uidOf(object: unknown): string {
  return stringAt(object, ['metadata', 'uid']) ?? '';
}

/** Objects whose controller ownerReference points at `ownerUid`. */
export function controlledBy(objects: readonly unknown[], ownerUid: string): unknown[] {
  return objects.filter((object) =>
    arrayAt(object, ['metadata', 'ownerReferences']).some(
      (owner) => stringAt(owner, ['uid']) === ownerUid && valueAt(owner, ['controller']) === true,
    ),
  );
}

/**
 * Waits for the first-start baseline (§5.7): kreload has seen the workload and recorded `map`
 * wherever the planner reads it (W `kreload.io/baseline`, else the baseline store's record).
 */
export function awaitBaseline(
  client: KubeJson,
  ref: ObjectRef,
  map: Readonly<Record<string, string>>,
  timeoutMs = 30_000,
  store = new BaselineStoreReader({ kc: client.kubeConfig }),
): Promise<unknown> {
  const expected = stateJson(map);
  return pollUntil(
    async () => {
      const object = await readObject(client, ref);
      const annotations = annotationsOf(object);
      const baseline = await store.baselineOf(
        { kind: ref.api.kind, namespace: ref.namespace },
        { uid: uidOf(object), annotations },
      );
      return baseline === expected ? object : undefined;
    },
    {
      timeoutMs,
      describe: `${ref.api.kind} ${ref.namespace}/${ref.name} to carry baseline ${expected}`,
    },
  );
}

/**
 * After a roll of a workload whose baseline the store held (docs/adr/0046): W owns B from then on
 * (`kreload.io/baseline: {}` once the rolled source left it), and the store's record of
 * `recordedUid` (the object kreload first saw) is removed.
 */
export async function expectBaselineMovedToW(
  client: KubeJson,
  ref: ObjectRef,
  rolled: unknown,
  recordedUid: string = uidOf(rolled),
  store = new BaselineStoreReader({ kc: client.kubeConfig }),
): Promise<void> {
  expect(annotationsOf(rolled)[BASELINE]).toBe('{}');
  await pollUntil(
    async () =>
      (await store.recordOf({ kind: ref.api.kind, namespace: ref.namespace }, recordedUid)) ===
      undefined,
    {
      timeoutMs: 30_000,
      describe: `${ref.api.kind} ${ref.namespace}/${ref.name}: its store record removed`,
    },
  );
}
