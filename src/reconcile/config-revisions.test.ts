/**
 * Config revisions through the reconciler (docs/adr/0036): the exact API writes against in-memory
 * ports — snapshots before the rolling patch, reuse, refusals with no half state, adoption, sweep.
 */
import { kindRow } from '../rollout/kinds.ts';
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../core/api-error.ts';
import { hashConfigMap, hashSecret, sha1Hex } from '../core/hash.ts';
import type { JsonObject } from '../core/json.ts';
import { objectAt, objectsAt, stringAt } from '../core/json.ts';
import { workloadKey } from '../core/keys.ts';
import type { WorkloadView } from '../core/types.ts';
import {
  BASELINE,
  CONFIG_REVISIONS,
  CONFIG_REVISIONS_SECRETS,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  REVISION_DIGEST,
  SNAPSHOTS,
} from '../core/types.ts';
import { projectWorkload } from '../kube/workload-projection.ts';
import { driven } from '../testing/attempt-driver.ts';
import { aConfigMap, aSecret } from '../testing/builders.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { InMemorySnapshots } from '../testing/in-memory-snapshots.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { RecordingObserver } from '../testing/recording-observer.ts';
import { RecordingWriter } from '../testing/recording-writer.ts';
import { MarkStore } from '../watch/marks.ts';
import { Reconciler } from './reconciler.ts';
import { ADOPTION_DELAY_MS, ADOPTION_RETRY_MS } from './stages/snapshot-adoption.ts';

const NS = 'team-a';
const NOW = 1_767_225_600_000;
const CM_DATA = { 'app.yaml': 'level: debug' };
const CM_HASH = hashConfigMap(CM_DATA, undefined);
const CM_SNAPSHOT = `app-config-${CM_HASH.slice(0, 10)}`;
const SECRET_DATA = { password: 'c2VjcmV0' };
const SECRET_HASH = hashSecret(SECRET_DATA);
const SECRET_SNAPSHOT = `db-${SECRET_HASH.slice(0, 10)}`;
const OLD = '0000000000000000000000000000000000000001';
const CM_ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const UID = 'uid-api';
/** The digest label of the roll to CM_HASH and SECRET_HASH. */
const PINNED = sha1Hex(`{"configmap/app-config":"${CM_HASH}","secret/db":"${SECRET_HASH}"}`);

interface WireSetup {
  readonly w?: Record<string, string>;
  readonly labels?: Record<string, string>;
  readonly pt?: Record<string, string>;
  readonly cmName?: string;
  readonly cmRef?: string;
}

function wire(setup: WireSetup = {}): JsonObject {
  const cm = setup.cmRef ?? setup.cmName ?? 'app-config';
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'api',
      namespace: NS,
      uid: UID,
      resourceVersion: '10',
      labels: { ...setup.labels },
      annotations: {
        [KEYS.auto]: 'true',
        [CONFIG_REVISIONS]: 'true',
        [BASELINE]: `{"secret/db":"${SECRET_HASH}"}`,
        ...setup.w,
      },
    },
    spec: {
      template: {
        metadata: { annotations: { ...setup.pt } },
        spec: {
          initContainers: [{ name: 'init', envFrom: [{ configMapRef: { name: cm } }] }],
          containers: [
            {
              name: 'app',
              image: 'app:1',
              env: [
                { name: CM_ENV, value: OLD },
                { name: 'DB', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
              ],
              envFrom: [{ configMapRef: { name: cm } }],
              volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: cm } }],
        },
      },
    },
  };
}

let workloads: InMemoryWorkloads;
let sources: InMemorySources;
let writer: RecordingWriter;
let snapshots: InMemorySnapshots;
let observer: RecordingObserver;
let log: string[];

function given(object: JsonObject): WorkloadView {
  const view = projectWorkload(kindRow('Deployment'), object, { keys: KEYS, keepLabels: false });
  if (!view) throw new Error('bad fixture');
  workloads.put(view);
  writer.put(view);
  writer.putObject(view.ref, object);
  return view;
}

function source(type: 'CONFIGMAP' | 'SECRET', name: string, data: Record<string, string>): void {
  snapshots.put(type, NS, { metadata: { name }, data });
  const hash = type === 'CONFIGMAP' ? hashConfigMap(data, undefined) : hashSecret(data);
  sources.put(
    (type === 'CONFIGMAP' ? aConfigMap(NS, name) : aSecret(NS, name)).withHash(hash).build(),
  );
}

function reconciler(configRevisions = true) {
  return driven(
    new Reconciler({
      workloads,
      sources,
      marks: new MarkStore(),
      writer,
      observer,
      options: { ...DEFAULT_RECONCILE_OPTIONS, configRevisions },
      now: () => NOW,
      random: () => 0.5,
      snapshots,
    }),
  );
}

const KEY = workloadKey({ kind: 'Deployment', namespace: NS, name: 'api' });

beforeEach(() => {
  workloads = new InMemoryWorkloads();
  sources = new InMemorySources();
  writer = new RecordingWriter();
  snapshots = new InMemorySnapshots();
  observer = new RecordingObserver();
  log = [];
  const patch = writer.patch.bind(writer);
  writer.patch = (ref, body) => {
    log.push('patch');
    return patch(ref, body);
  };
  const create = snapshots.create.bind(snapshots);
  snapshots.create = (type, namespace, body) => {
    log.push(`create ${type}/${stringAt(body, ['metadata', 'name']) ?? ''}`);
    return create(type, namespace, body);
  };
  source('CONFIGMAP', 'app-config', CM_DATA);
  source('SECRET', 'db', SECRET_DATA);
});

function patchBody(): JsonObject {
  const patches = writer.writes.filter((w) => w.verb === 'patch');
  expect(patches).toHaveLength(1);
  const only = patches[0];
  if (only?.verb !== 'patch') throw new Error('no patch');
  return only.patch.body;
}

describe('config revisions: the roll', () => {
  it('creates the ConfigMap snapshot, then patches references, env var and state in one patch', async () => {
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled', resumeAt: NOW + ADOPTION_DELAY_MS });
    expect(log).toEqual([`create CONFIGMAP/${CM_SNAPSHOT}`, 'patch']);
    const created = snapshots.object('CONFIGMAP', NS, CM_SNAPSHOT);
    expect(created).toMatchObject({
      immutable: true,
      data: CM_DATA,
      metadata: {
        labels: {
          'kreload.io/snapshot-of': 'app-config',
          'kreload.io/snapshot-hash': CM_HASH.slice(0, 10),
          'kreload.io/snapshot-workload-uid': UID,
        },
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name: 'api',
            uid: UID,
            blockOwnerDeletion: false,
          },
        ],
      },
    });
    expect(patchBody()).toEqual({
      metadata: {
        resourceVersion: '10',
        labels: { [REVISION_DIGEST]: PINNED },
      },
      spec: {
        template: {
          metadata: {
            annotations: { [SNAPSHOTS]: `{"configmap/app-config":"${CM_SNAPSHOT}"}` },
          },
          spec: {
            initContainers: [{ name: 'init', envFrom: [{ configMapRef: { name: CM_SNAPSHOT } }] }],
            containers: [
              {
                name: 'app',
                image: 'app:1',
                env: [
                  { name: CM_ENV, value: CM_HASH },
                  { name: 'DB', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } },
                ],
                envFrom: [{ configMapRef: { name: CM_SNAPSHOT } }],
                volumeMounts: [{ name: 'config', mountPath: '/etc/app' }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: CM_SNAPSHOT } }],
          },
        },
      },
    });
  });

  it('copies Secrets too when they are opted in, ConfigMap first', async () => {
    given(wire({ w: { [CONFIG_REVISIONS_SECRETS]: 'true' } }));
    await reconciler().reconcile(KEY);
    expect(log).toEqual([
      `create CONFIGMAP/${CM_SNAPSHOT}`,
      `create SECRET/${SECRET_SNAPSHOT}`,
      'patch',
    ]);
    expect(snapshots.object('SECRET', NS, SECRET_SNAPSHOT)).toMatchObject({
      kind: 'Secret',
      immutable: true,
      data: SECRET_DATA,
    });
    expect(JSON.stringify(patchBody())).toContain(
      `"secretKeyRef":{"name":"${SECRET_SNAPSHOT}","key":"password"}`,
    );
  });

  it('reads the template through its snapshots: a rolled workload is stable', async () => {
    given(wire());
    await reconciler().reconcile(KEY);
    const rolled = writer.server({ kind: 'Deployment', namespace: NS, name: 'api' });
    if (!rolled) throw new Error('gone');
    workloads.put(rolled);
    expect(rolled.podSpec.volumes[0]?.configMaps).toEqual(['app-config']);
    const again = await reconciler().reconcile(KEY);
    expect(again.outcome).toBe('unchanged');
    expect(writer.writes.filter((w) => w.verb === 'patch')).toHaveLength(1);
  });

  it('reuses an identical snapshot and makes the workload its owner again', async () => {
    snapshots.put('CONFIGMAP', NS, {
      metadata: {
        name: CM_SNAPSHOT,
        labels: { 'kreload.io/snapshot-workload-uid': UID },
        annotations: {
          'kreload.io/snapshot-source': 'app-config',
          'kreload.io/snapshot-source-hash': CM_HASH,
        },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-1', uid: 'rs-1' },
        ],
      },
      data: CM_DATA,
      immutable: true,
    });
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('rolled');
    expect(snapshots.calls.map((c) => `${c.verb} ${c.what}`)).toEqual([
      'get CONFIGMAP/app-config',
      `create CONFIGMAP/${CM_SNAPSHOT}`,
      `get CONFIGMAP/${CM_SNAPSHOT}`,
      `addOwner CONFIGMAP/${CM_SNAPSHOT}`,
    ]);
    expect(snapshots.calls.at(-1)).toMatchObject({ owners: ['Deployment/api'] });
    const reused = snapshots.object('CONFIGMAP', NS, CM_SNAPSHOT);
    expect(objectsAt(reused, ['metadata', 'ownerReferences']).map((o) => o.name)).toEqual([
      'api-1',
      'api',
    ]);
    // The label the workload's adoption finds the snapshot by.
    expect(objectAt(reused, ['metadata', 'labels'])).toMatchObject({
      [`snapshot-owner.kreload.io/${UID}`]: 'true',
    });
    expect(snapshots.names('CONFIGMAP', NS)).toEqual(['app-config', CM_SNAPSHOT]);
  });

  /** An object under the snapshot's name with kreload's annotations for this content. */
  function claimed(fields: JsonObject): JsonObject {
    return {
      metadata: {
        name: CM_SNAPSHOT,
        labels: { 'kreload.io/snapshot-workload-uid': 'uid-other' },
        annotations: {
          'kreload.io/snapshot-source': 'app-config',
          'kreload.io/snapshot-source-hash': CM_HASH,
        },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: 'uid-x' }],
      },
      ...fields,
    };
  }

  it.each([
    ['other data', { data: { 'app.yaml': 'level: forged' }, immutable: true }, /does not match/],
    ['the right data, mutable', { data: CM_DATA }, /not immutable/],
  ])(
    'refuses a forged snapshot (%s): no owner added, no patch, the reason',
    async (_case, fields, reason) => {
      snapshots.put('CONFIGMAP', NS, claimed(fields));
      given(wire());
      const result = await reconciler().reconcile(KEY);
      expect(result.outcome).toBe('failed');
      expect(result.error?.message).toMatch(reason);
      expect(result.error?.message).toContain(`ConfigMap ${CM_SNAPSHOT} exists`);
      expect(log).toEqual([`create CONFIGMAP/${CM_SNAPSHOT}`]);
      expect(snapshots.calls.map((c) => c.verb)).not.toContain('addOwner');
    },
  );

  it('an owner append that finds the snapshot replaced reads it again, without planning again', async () => {
    snapshots.put('CONFIGMAP', NS, claimed({ data: CM_DATA, immutable: true }));
    const addOwner = snapshots.addOwner.bind(snapshots);
    let replaced = false;
    snapshots.addOwner = (type, current, owner, label) => {
      if (!replaced) {
        // Deleted and made again under the same name between the read and the append.
        replaced = true;
        snapshots.put('CONFIGMAP', NS, {
          ...claimed({ data: CM_DATA, immutable: true }),
          metadata: { ...(claimed({}).metadata as JsonObject), uid: 'uid-again' },
        });
      }
      return addOwner(type, current, owner, label);
    };
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(snapshots.calls.map((c) => `${c.verb} ${c.what}`)).toEqual([
      'get CONFIGMAP/app-config',
      `create CONFIGMAP/${CM_SNAPSHOT}`,
      `get CONFIGMAP/${CM_SNAPSHOT}`,
      `addOwner CONFIGMAP/${CM_SNAPSHOT}`,
      `get CONFIGMAP/${CM_SNAPSHOT}`,
      `addOwner CONFIGMAP/${CM_SNAPSHOT}`,
    ]);
    expect(log.filter((entry) => entry === 'patch')).toHaveLength(1);
  });

  it('a snapshot deleted between the read and the owner append plans the roll again (not gone)', async () => {
    snapshots.put('CONFIGMAP', NS, claimed({ data: CM_DATA, immutable: true }));
    const addOwner = snapshots.addOwner.bind(snapshots);
    snapshots.addOwner = async (type, current, owner, label) => {
      const uid = stringAt(current, ['metadata', 'uid']) ?? '';
      const resourceVersion = stringAt(current, ['metadata', 'resourceVersion']) ?? '';
      await snapshots.delete(type, { namespace: NS, name: CM_SNAPSHOT, uid, resourceVersion });
      return addOwner(type, current, owner, label);
    };
    given(wire());
    const result = await reconciler().reconcile(KEY);
    // The second attempt makes the snapshot again and rolls onto it.
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(log).toEqual([
      `create CONFIGMAP/${CM_SNAPSHOT}`,
      `create CONFIGMAP/${CM_SNAPSHOT}`,
      'patch',
    ]);
  });

  it('fails without a patch when the name is taken by something else', async () => {
    snapshots.put('CONFIGMAP', NS, { metadata: { name: CM_SNAPSHOT }, data: { other: 'x' } });
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('failed');
    expect(result.error?.message).toContain("is not kreload's snapshot of app-config");
    expect(log).toEqual([`create CONFIGMAP/${CM_SNAPSHOT}`]);
  });

  it('a refused create (quota) fails the roll with the reason and patches nothing', async () => {
    snapshots.failNextCreate(
      new ApiError(
        'configmaps "x" is forbidden: exceeded quota: cm-quota, requested: count/configmaps=1',
        {
          status: 403,
          reason: 'Forbidden',
          retryable: false,
        },
      ),
    );
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('failed');
    expect(log).toEqual([`create CONFIGMAP/${CM_SNAPSHOT}`]);
    const failed = observer.calls.find((c) => c.hook === 'onFailed');
    expect(failed?.hook === 'onFailed' && failed.event.error.message).toContain('exceeded quota');
  });

  it('a source name too long for the suffix fails before any write', async () => {
    const long = 'c'.repeat(243);
    source('CONFIGMAP', long, CM_DATA);
    given(
      wire({
        cmName: long,
        w: { [BASELINE]: `{"configmap/${long}":"${OLD}","secret/db":"${SECRET_HASH}"}` },
      }),
    );
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('failed');
    expect(result.error?.message).toContain('over 253');
    expect(log).toEqual([]);
    expect(snapshots.calls).toEqual([]);
  });

  it('a source that changed since the plan is planned again, nothing written', async () => {
    snapshots.put('CONFIGMAP', NS, { metadata: { name: 'app-config' }, data: { newer: '1' } });
    given(wire());
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).not.toBe('rolled');
    expect(log).toEqual([]);
  });

  it('opting out restores the live references in one roll', async () => {
    given(
      wire({
        w: { [CONFIG_REVISIONS]: 'false' },
        labels: { [REVISION_DIGEST]: PINNED },
        pt: { [SNAPSHOTS]: `{"configmap/app-config":"${CM_SNAPSHOT}"}` },
        cmRef: CM_SNAPSHOT,
      }),
    );
    const result = await reconciler().reconcile(KEY);
    expect(result.outcome).toBe('rolled');
    expect(snapshots.calls.filter((c) => c.verb === 'create')).toEqual([]);
    const body = JSON.stringify(patchBody());
    expect(body).not.toContain(CM_SNAPSHOT);
    expect(body).toContain(`"${SNAPSHOTS}":null`);
    expect(body).toContain(`"labels":{"${REVISION_DIGEST}":null}`);
    expect(body).toContain('"volumes":[{"name":"config","configMap":{"name":"app-config"}}]');
  });

  it('without --enable-config-revisions an opted-in workload rolls as before', async () => {
    given(wire());
    await reconciler(false).reconcile(KEY);
    expect(snapshots.calls).toEqual([]);
    expect(JSON.stringify(patchBody())).not.toContain(SNAPSHOTS);
  });
});

function replicaSet(name: string, uid: string, map: string): JsonObject {
  return {
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: NS,
      uid,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: UID, controller: true },
      ],
    },
    spec: { template: { metadata: { annotations: { [SNAPSHOTS]: map } } } },
  };
}

function snapshotObject(name: string, owners: JsonObject[]): JsonObject {
  return {
    metadata: {
      name,
      labels: { 'kreload.io/snapshot-workload-uid': UID },
      ownerReferences: owners,
    },
    data: CM_DATA,
    immutable: true,
  };
}

const DEPLOYMENT_OWNER = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api', uid: UID };

describe('config revisions: adoption and sweep', () => {
  /** The workload after its roll: the template names CM_SNAPSHOT, nothing else to write. */
  function rolledWorkload(): void {
    given(
      wire({
        labels: { [REVISION_DIGEST]: PINNED },
        pt: { [SNAPSHOTS]: `{"configmap/app-config":"${CM_SNAPSHOT}"}` },
        cmRef: CM_SNAPSHOT,
      }),
    );
  }

  it('waits while the snapshot the template names has no revision yet', async () => {
    rolledWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged', resumeAt: NOW + ADOPTION_RETRY_MS });
    expect(snapshots.calls.filter((c) => c.verb === 'setOwners' || c.verb === 'delete')).toEqual(
      [],
    );
  });

  it('adds the revision as owner and keeps the workload while the template names it', async () => {
    rolledWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    const result = await reconciler().reconcile(KEY);
    expect(result.resumeAt).toBeUndefined();
    expect(snapshots.calls.filter((c) => c.verb === 'setOwners')).toEqual([
      {
        verb: 'setOwners',
        what: `CONFIGMAP/${CM_SNAPSHOT}`,
        owners: ['ReplicaSet/api-2', 'Deployment/api'],
      },
    ]);
  });

  it('hands an older snapshot to its revisions only, and sweeps one nothing names', async () => {
    rolledWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    snapshots.put('CONFIGMAP', NS, snapshotObject('app-config-1111111111', [DEPLOYMENT_OWNER]));
    snapshots.put('CONFIGMAP', NS, snapshotObject('app-config-2222222222', [DEPLOYMENT_OWNER]));
    snapshots.addRevision(
      replicaSet('api-1', 'rs-1', '{"configmap/app-config":"app-config-1111111111"}'),
    );
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    // Another Deployment's ReplicaSet naming the orphan does not count.
    snapshots.addRevision({
      ...replicaSet('other-1', 'rs-x', '{"configmap/app-config":"app-config-2222222222"}'),
      metadata: { name: 'other-1', namespace: NS, uid: 'rs-x', ownerReferences: [] },
    });
    await reconciler().reconcile(KEY);
    const writes = snapshots.calls.filter((c) => c.verb === 'setOwners' || c.verb === 'delete');
    expect(writes).toEqual([
      {
        verb: 'setOwners',
        what: `CONFIGMAP/${CM_SNAPSHOT}`,
        owners: ['ReplicaSet/api-2', 'Deployment/api'],
      },
      { verb: 'setOwners', what: 'CONFIGMAP/app-config-1111111111', owners: ['ReplicaSet/api-1'] },
      { verb: 'delete', what: 'CONFIGMAP/app-config-2222222222' },
    ]);
    expect(snapshots.names('CONFIGMAP', NS)).toEqual([
      'app-config',
      'app-config-1111111111',
      CM_SNAPSHOT,
    ]);
    const adopted = observer.calls.find((c) => c.hook === 'onSnapshots');
    expect(adopted?.event).toMatchObject({ swept: ['configmap/app-config-2222222222'] });
  });

  /** A snapshot another Deployment made and this one reused (its owner label and reference). */
  function reusedSnapshot(name: string, owners: JsonObject[]): JsonObject {
    const object = snapshotObject(name, owners);
    return {
      ...object,
      metadata: {
        ...(object.metadata as JsonObject),
        labels: {
          'kreload.io/snapshot-workload-uid': 'uid-web',
          [`snapshot-owner.kreload.io/${UID}`]: 'true',
        },
      },
    };
  }

  const WEB_OWNER = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'uid-web' };

  it('a reused snapshot nothing of the workload names more: it lets go, the other owner keeps it', async () => {
    rolledWorkload();
    snapshots.put(
      'CONFIGMAP',
      NS,
      reusedSnapshot('app-config-1111111111', [WEB_OWNER, DEPLOYMENT_OWNER]),
    );
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    await reconciler().reconcile(KEY);
    expect(snapshots.calls.filter((c) => c.verb === 'setOwners' || c.verb === 'delete')).toEqual([
      { verb: 'setOwners', what: 'CONFIGMAP/app-config-1111111111', owners: ['Deployment/web'] },
    ]);
    const kept = snapshots.object('CONFIGMAP', NS, 'app-config-1111111111');
    expect(objectAt(kept, ['metadata', 'labels'])).toEqual({
      'kreload.io/snapshot-workload-uid': 'uid-web',
    });
  });

  it('a reused snapshot handed to the revision that names it, the label dropped with the workload', async () => {
    rolledWorkload();
    snapshots.put(
      'CONFIGMAP',
      NS,
      reusedSnapshot('app-config-1111111111', [WEB_OWNER, DEPLOYMENT_OWNER]),
    );
    snapshots.addRevision(
      replicaSet('api-1', 'rs-1', '{"configmap/app-config":"app-config-1111111111"}'),
    );
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    await reconciler().reconcile(KEY);
    expect(snapshots.calls.filter((c) => c.verb === 'setOwners')).toEqual([
      {
        verb: 'setOwners',
        what: 'CONFIGMAP/app-config-1111111111',
        owners: ['Deployment/web', 'ReplicaSet/api-1'],
      },
    ]);
    const kept = snapshots.object('CONFIGMAP', NS, 'app-config-1111111111');
    expect(objectAt(kept, ['metadata', 'labels'])).not.toHaveProperty(
      `snapshot-owner.kreload.io/${UID}`,
    );
  });

  it('the sweep deletes a snapshot only when the workload is its sole owner', async () => {
    rolledWorkload();
    snapshots.put('CONFIGMAP', NS, reusedSnapshot('app-config-1111111111', [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    await reconciler().reconcile(KEY);
    expect(snapshots.calls.filter((c) => c.verb === 'delete')).toEqual([
      { verb: 'delete', what: 'CONFIGMAP/app-config-1111111111' },
    ]);
    expect(snapshots.names('CONFIGMAP', NS)).toEqual(['app-config']);
  });

  it('an owner appended between the read and the delete keeps the snapshot', async () => {
    rolledWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject('app-config-1111111111', [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    const list = snapshots.list.bind(snapshots);
    snapshots.list = async (type, namespace, selector) => {
      const items = await list(type, namespace, selector);
      const read = items.find((o) => stringAt(o, ['metadata', 'name']) === 'app-config-1111111111');
      // Another workload reuses it right after this workload's list.
      if (read)
        await snapshots.addOwner(type, read, WEB_OWNER, 'snapshot-owner.kreload.io/uid-web');
      return items;
    };
    await reconciler().reconcile(KEY);
    expect(snapshots.names('CONFIGMAP', NS)).toContain('app-config-1111111111');
  });

  it('leaves snapshots no longer owned by the workload alone', async () => {
    rolledWorkload();
    snapshots.put(
      'CONFIGMAP',
      NS,
      snapshotObject('app-config-1111111111', [{ kind: 'ReplicaSet', name: 'api-1', uid: 'rs-1' }]),
    );
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    await reconciler().reconcile(KEY);
    // Made by it, reused by it: per type.
    expect(snapshots.calls.map((c) => c.verb)).toEqual(['list', 'list', 'list', 'list']);
  });
});

describe('config revisions opted in by a ReloadPolicy (spec.configRevisions, ADR 0038)', () => {
  const POLICY = aPolicy(NS, 'pin', {
    sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
    targets: [{ kind: 'Deployment', name: 'api' }],
    configRevisions: { configMaps: true, secrets: false },
  });

  /** The fixture without its own opt-in annotation (or with the one `w` gives). */
  function unannotated(w: Record<string, string> = {}): JsonObject {
    const object = wire({ w });
    const metadata = object.metadata as JsonObject;
    const annotations = Object.entries(metadata.annotations as Record<string, string>).filter(
      ([key]) => key !== CONFIG_REVISIONS || CONFIG_REVISIONS in w,
    );
    return { ...object, metadata: { ...metadata, annotations: Object.fromEntries(annotations) } };
  }

  function boundReconciler(configRevisions: boolean) {
    const policies = policyStoreOver({
      sources: () => [aConfigMap(NS, 'app-config').withHash(CM_HASH).build()],
      workloads: () => [workloads.get(KEY)].flatMap((view) => view ?? []),
    });
    policies.replace([POLICY]);
    return driven(
      new Reconciler({
        workloads,
        sources,
        policies,
        marks: new MarkStore(),
        writer,
        observer,
        options: { ...DEFAULT_RECONCILE_OPTIONS, configRevisions },
        now: () => NOW,
        random: () => 0.5,
        snapshots,
      }),
    );
  }

  it('the roll creates the ConfigMap snapshot and points the template at it', async () => {
    given(unannotated());
    const result = await boundReconciler(true).reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled' });
    expect(log).toEqual([`create CONFIGMAP/${CM_SNAPSHOT}`, 'patch']);
    const body = patchBody();
    expect(stringAt(body, ['spec', 'template', 'metadata', 'annotations', SNAPSHOTS])).toBe(
      `{"configmap/app-config":"${CM_SNAPSHOT}"}`,
    );
    // The policy's value is not written onto the workload: it stays the policy's.
    expect(stringAt(body, ['metadata', 'annotations', CONFIG_REVISIONS])).toBeUndefined();
  });

  it('without --enable-config-revisions the policy pins nothing', async () => {
    given(unannotated());
    const result = await boundReconciler(false).reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'rolled' });
    expect(log).toEqual(['patch']);
    expect(stringAt(patchBody(), ['spec', 'template', 'metadata', 'annotations', SNAPSHOTS])).toBe(
      undefined,
    );
  });

  it('the workload\'s own config-revisions: "false" wins over the policy', async () => {
    given(unannotated({ [CONFIG_REVISIONS]: 'false' }));
    await boundReconciler(true).reconcile(KEY);
    expect(log).toEqual(['patch']);
  });
});

describe('config revisions: adoption owed across a restart (ADR 0037)', () => {
  /** Opted out and restored: the template names no snapshot, nothing left to roll. */
  function optedOutWorkload(): void {
    const object = wire({ w: { [KEYS.auto]: 'false', [CONFIG_REVISIONS]: 'false' } });
    const annotations = (object.metadata as { annotations: Record<string, string> }).annotations;
    Reflect.deleteProperty(annotations, BASELINE);
    given(object);
  }

  const ownerWrites = () =>
    snapshots.calls.filter((c) => c.verb === 'setOwners' || c.verb === 'delete');

  it('a fresh reconciler finds the snapshots the workload still owns and hands them over', async () => {
    optedOutWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    snapshots.put('CONFIGMAP', NS, snapshotObject('app-config-1111111111', [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    const restarted = reconciler();
    const result = await restarted.reconcile(KEY);
    expect(result.resumeAt).toBeUndefined();
    expect(ownerWrites()).toEqual([
      { verb: 'setOwners', what: `CONFIGMAP/${CM_SNAPSHOT}`, owners: ['ReplicaSet/api-2'] },
      { verb: 'delete', what: 'CONFIGMAP/app-config-1111111111' },
    ]);
    // Done: the next reconcile lists nothing again and writes nothing.
    const calls = snapshots.calls.length;
    await restarted.reconcile(KEY);
    expect(snapshots.calls.length).toBe(calls);
  });

  it('lists each namespace once, by the label alone, and leaves workloads without snapshots be', async () => {
    optedOutWorkload();
    const restarted = reconciler();
    await restarted.reconcile(KEY);
    await restarted.reconcile(KEY);
    expect(snapshots.calls).toEqual([
      { verb: 'list', what: 'CONFIGMAP?kreload.io/snapshot-workload-uid' },
      { verb: 'list', what: 'SECRET?kreload.io/snapshot-workload-uid' },
    ]);
    expect(ownerWrites()).toEqual([]);
  });

  it('a snapshot owned by its revision only is not owed anything', async () => {
    optedOutWorkload();
    snapshots.put(
      'CONFIGMAP',
      NS,
      snapshotObject(CM_SNAPSHOT, [{ kind: 'ReplicaSet', name: 'api-2', uid: 'rs-2' }]),
    );
    await reconciler().reconcile(KEY);
    expect(snapshots.calls.map((c) => c.verb)).toEqual(['list', 'list']);
  });

  it('a failed list is asked again at the next reconcile, after a retry delay', async () => {
    optedOutWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    const list = snapshots.list.bind(snapshots);
    let failures = 1;
    snapshots.list = (type, namespace, selector) => {
      if (failures-- > 0)
        return Promise.reject(new ApiError('down', { status: 503, retryable: true }));
      return list(type, namespace, selector);
    };
    const restarted = reconciler();
    expect((await restarted.reconcile(KEY)).resumeAt).toBe(NOW + ADOPTION_RETRY_MS);
    expect(ownerWrites()).toEqual([]);
    await restarted.reconcile(KEY);
    expect(ownerWrites()).toEqual([
      { verb: 'setOwners', what: `CONFIGMAP/${CM_SNAPSHOT}`, owners: ['ReplicaSet/api-2'] },
    ]);
  });

  it('Secrets that may not be listed count as none', async () => {
    optedOutWorkload();
    snapshots.put('CONFIGMAP', NS, snapshotObject(CM_SNAPSHOT, [DEPLOYMENT_OWNER]));
    snapshots.addRevision(replicaSet('api-2', 'rs-2', `{"configmap/app-config":"${CM_SNAPSHOT}"}`));
    const list = snapshots.list.bind(snapshots);
    snapshots.list = (type, namespace, selector) =>
      type === 'SECRET' && selector === 'kreload.io/snapshot-workload-uid'
        ? Promise.reject(new ApiError('forbidden', { status: 403, retryable: false }))
        : list(type, namespace, selector);
    await reconciler().reconcile(KEY);
    expect(ownerWrites()).toEqual([
      { verb: 'setOwners', what: `CONFIGMAP/${CM_SNAPSHOT}`, owners: ['ReplicaSet/api-2'] },
    ]);
  });
});
