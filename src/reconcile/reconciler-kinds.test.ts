import { beforeEach, describe, expect, it } from 'vitest';
import { BUILT_IN_KIND_TABLE, configuredKindRow, kindTable } from '../rollout/kinds.ts';
import { DEFAULT_RECONCILE_OPTIONS } from '../testing/reconcile-options.ts';
import { workloadKey } from '../core/keys.ts';
import type {
  Annotations,
  ReloadStrategy,
  WorkloadKey,
  WorkloadKind,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import {
  BASELINE,
  CRONJOB_INSTANTIATE,
  DEFAULT_ANNOTATION_KEYS as KEYS,
  INSTANTIATE_PENDING,
  LAST_RELOADED_FROM,
  SOURCE_HASHES,
} from '../core/types.ts';
import type { JsonObject } from '../core/json.ts';
import { cronJobRunName } from '../rollout/jobs.ts';
import type { RollActionType, WorkloadKindRow } from '../rollout/kinds.ts';
import { WORKLOAD_KINDS, kindRow } from '../rollout/kinds.ts';
import { aConfigMap, aContainer, aWorkload } from '../testing/builders.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { InMemorySources } from '../testing/in-memory-sources.ts';
import { InMemoryWorkloads } from '../testing/in-memory-workloads.ts';
import { aCreateMark, aDeleteMark } from '../testing/marks.ts';
import { MarkStore } from '../watch/marks.ts';
import { RecordingJournal } from '../testing/recording-journal.ts';
import { RecordingObserver } from '../testing/recording-observer.ts';
import type { RecordedWrite } from '../testing/recording-writer.ts';
import { RecordingWriter } from '../testing/recording-writer.ts';
import type { RecreationJournal } from './ports.ts';
import { ApiError } from '../core/api-error.ts';
import type { ReconcileOptions } from './reconciler.ts';
import type { ReconcilerDeps } from './reconciler.ts';
import { Reconciler } from './reconciler.ts';
import type { DrivenReconciler } from '../testing/attempt-driver.ts';
import { driven, reconcileToEnd } from '../testing/attempt-driver.ts';

function drivenWithSleeps(deps: ReconcilerDeps): DrivenReconciler {
  return driven(new Reconciler(deps), {
    onWait: (ms) => {
      sleeps.push(ms);
    },
  });
}

const NS = 'team-a';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const H3 = '3333333333333333333333333333333333333333';
const NOW = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const OBSERVED = NOW - 500;
const ENV = 'STAKATER_APP_CONFIG_CONFIGMAP';
const ENV_FROM = [{ configMapRef: { name: 'app-config' } }];
const NEW_HASHES = `{"configmap/app-config":"${H3}"}`;
const LRF = `{"type":"CONFIGMAP","name":"app-config","namespace":"team-a","hash":"${H3}","containerRefs":["app"],"observedAt":1767225599}`;
const TRIGGER = { observedAt: new Map([['configmap/app-config' as const, OBSERVED]]) };

const OPTIONS: ReconcileOptions = DEFAULT_RECONCILE_OPTIONS;

/** No answer: the request may or may not have taken effect. */
function timeout(): ApiError {
  return new ApiError('request timed out', { retryable: true });
}

function status(code: number): ApiError {
  const retryable = code === 409 || code === 429 || code >= 500;
  return new ApiError(`HTTP ${code}`, { status: code, retryable });
}

let workloads: InMemoryWorkloads;
let sources: InMemorySources;
let marks: MarkStore;
let writer: RecordingWriter;
let observer: RecordingObserver;
let sleeps: number[];
let leading: boolean;

/** Every attempt of one reconcile, as the queue would run them; the waits go to `sleeps`. */
function reconciler(
  options: Partial<ReconcileOptions> = {},
  clock = () => NOW,
  journal?: RecreationJournal,
): DrivenReconciler {
  return drivenWithSleeps(deps(options, clock, journal));
}

/** One attempt per call, for tests that look at the attempts themselves. */
function deps(
  options: Partial<ReconcileOptions> = {},
  clock = () => NOW,
  journal?: RecreationJournal,
): ReconcilerDeps {
  return {
    journal,
    workloads,
    sources,
    marks,
    writer,
    observer,
    options: { ...OPTIONS, ...options },
    now: clock,
    random: () => 0.5,
    mayWrite: () => leading,
  };
}

/** `auto: "true"`, container `app` reading ConfigMap app-config, baselined at H1. */
function tracked(kind: string, name = 'w') {
  return aWorkload(kind, NS, name)
    .withResourceVersion('10')
    .withAnnotation(KEYS.auto, 'true')
    .withAnnotation(BASELINE, `{"configmap/app-config":"${H1}"}`)
    .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'));
}

/** The same view in the cache and on the server, and its wire object where a write GETs it. */
function given(view: WorkloadView, object?: JsonObject): void {
  workloads.put(view);
  writer.put(view);
  if (object) writer.putObject(view.ref, object);
}

function meta(view: WorkloadView): JsonObject {
  return {
    name: view.ref.name,
    namespace: NS,
    uid: view.uid,
    resourceVersion: view.resourceVersion,
  };
}

const POD_SPEC = { containers: [{ name: 'app', image: 'img:1', envFrom: ENV_FROM }] };

/** `value` placed at `path` inside an otherwise empty object. */
function nestedAt(path: readonly string[], value: JsonObject): JsonObject {
  return path.reduceRight<JsonObject>((inner, segment) => ({ [segment]: inner }), value);
}

/** The pod template of the kind's wire object, at the row's template path. */
function wireTemplate(row: WorkloadKindRow, template: JsonObject): JsonObject {
  return nestedAt(row.templatePath ?? [], template);
}

/**
 * The objects a write GETs in full (§9.2 item 3), by the row's roll: a merge-patch template sends
 * the live containers (§10), a CronJob's run is built from it, a Job is re-created from it. The
 * strategic-patch template kinds are patched from their view.
 */
const WIRE_OBJECTS: Record<
  RollActionType,
  (view: WorkloadView, row: WorkloadKindRow) => JsonObject | undefined
> = {
  'template-patch': (view, row) =>
    row.templatePatchType === 'merge'
      ? { metadata: meta(view), ...wireTemplate(row, { spec: POD_SPEC }) }
      : undefined,
  'rollout-restart': () => undefined,
  'evict-pods': () => undefined,
  'create-job-from-cronjob': (view, row) => {
    const { spec } = wireTemplate(row, { spec: POD_SPEC });
    return { metadata: meta(view), spec: { schedule: '@hourly', ...(spec as JsonObject) } };
  },
  'recreate-job': (view, row) => ({
    apiVersion: row.apiVersion,
    kind: row.kind,
    metadata: { ...meta(view), annotations: { ...view.annotations } },
    spec: {
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': view.uid } },
      template: {
        metadata: { labels: { app: 'w', 'batch.kubernetes.io/controller-uid': view.uid } },
        spec: POD_SPEC,
      },
    },
    status: { succeeded: 1 },
  }),
};

function wireObject(view: WorkloadView): JsonObject | undefined {
  const row = BUILT_IN_KIND_TABLE.row(view.ref.kind);
  return WIRE_OBJECTS[row.rollAction](view, row);
}

function givenTracked(kind: WorkloadKind): WorkloadView {
  const view = tracked(kind).build();
  given(view, wireObject(view));
  return view;
}

beforeEach(() => {
  workloads = new InMemoryWorkloads();
  sources = new InMemorySources();
  marks = new MarkStore();
  writer = new RecordingWriter();
  observer = new RecordingObserver();
  sleeps = [];
  leading = true;
  sources.put(aConfigMap(NS, 'app-config').withHash(H3).build());
});

/** The strategy's template change, as a container with the env var or template annotations. */
const CHANGE: Record<ReloadStrategy, { container: JsonObject; template: JsonObject }> = {
  'env-vars': {
    container: { name: 'app', image: 'img:1', envFrom: ENV_FROM, env: [{ name: ENV, value: H3 }] },
    template: {},
  },
  annotations: {
    container: { name: 'app', image: 'img:1', envFrom: ENV_FROM },
    template: { metadata: { annotations: { [LAST_RELOADED_FROM]: LRF } } },
  },
};

/** The strategic/merge template patch of the strategy (PT state included). */
function templatePatch(strategy: ReloadStrategy, containers: 'partial' | 'live'): JsonObject {
  if (strategy === 'annotations') {
    return {
      metadata: { annotations: { [LAST_RELOADED_FROM]: LRF, [SOURCE_HASHES]: NEW_HASHES } },
    };
  }
  const container =
    containers === 'live'
      ? CHANGE['env-vars'].container
      : { name: 'app', env: [{ name: ENV, value: H3 }] };
  return { spec: { containers: [container] } };
}

function templateKindWrites(row: WorkloadKindRow, strategy: ReloadStrategy): RecordedWrite[] {
  const key = workloadKey({ kind: row.kind, namespace: NS, name: 'w' });
  const merge = row.templatePatchType === 'merge';
  // The tracked views have no ConfigChange trigger: a kind that needs one instantiates (§7.6).
  const instantiates = row.instantiatesWithoutConfigChangeTrigger;
  // A DeploymentConfig owes its instantiate from the template patch on (docs/adr/0019).
  const owed: JsonObject = instantiates ? { [INSTANTIATE_PENDING]: '2026-01-01T00:00:00Z' } : {};
  const patch: RecordedWrite = {
    verb: 'patch',
    key,
    patch: {
      type: row.templatePatchType,
      body: {
        metadata: { resourceVersion: '10', annotations: { [BASELINE]: null, ...owed } },
        ...wireTemplate(row, templatePatch(strategy, merge ? 'live' : 'partial')),
      },
    },
  };
  if (!instantiates) return [patch];
  const body = {
    kind: 'DeploymentRequest',
    apiVersion: row.apiVersion,
    name: 'w',
    latest: true,
    force: true,
  };
  return [patch, { verb: 'instantiate', key, body }, instantiateDone(key)];
}

/** The patch that removes the instantiate marker once instantiate succeeded. */
function instantiateDone(key: WorkloadKey): RecordedWrite {
  return {
    verb: 'patch',
    key,
    patch: {
      type: 'strategic',
      body: { metadata: { annotations: { [INSTANTIATE_PENDING]: null } } },
    },
  };
}

/** The Job name of the change window from no CronJob state to NEW_HASHES (ADR 0020). */
function runName(view: WorkloadView): string {
  return cronJobRunName({
    cronJobName: view.ref.name,
    cronJobUid: view.uid,
    previousHashes: view.annotations[SOURCE_HASHES],
    sourceHashes: NEW_HASHES,
  });
}

function cronJobWrites(view: WorkloadView, strategy: ReloadStrategy): RecordedWrite[] {
  const change = CHANGE[strategy];
  return [
    {
      verb: 'create',
      key: `Job/team-a/${runName(view)}`,
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: runName(view),
          namespace: NS,
          annotations: { [CRONJOB_INSTANTIATE]: 'manual', [SOURCE_HASHES]: NEW_HASHES },
          ownerReferences: [
            {
              apiVersion: 'batch/v1',
              kind: 'CronJob',
              name: 'w',
              uid: view.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { template: { ...change.template, spec: { containers: [change.container] } } },
      },
    },
    {
      verb: 'patch',
      key: 'CronJob/team-a/w',
      patch: {
        type: 'strategic',
        body: {
          metadata: {
            resourceVersion: '10',
            annotations: { [BASELINE]: null, [SOURCE_HASHES]: NEW_HASHES },
          },
        },
      },
    },
  ];
}

function jobWrites(view: WorkloadView, strategy: ReloadStrategy): RecordedWrite[] {
  const change = CHANGE[strategy];
  const templateAnnotations: JsonObject =
    strategy === 'annotations'
      ? { annotations: { [LAST_RELOADED_FROM]: LRF, [SOURCE_HASHES]: NEW_HASHES } }
      : {};
  return [
    {
      verb: 'delete',
      key: 'Job/team-a/w',
      preconditions: { uid: view.uid, resourceVersion: '10' },
    },
    {
      verb: 'create',
      key: 'Job/team-a/w',
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'w', namespace: NS, annotations: { [KEYS.auto]: 'true' } },
        spec: {
          template: {
            metadata: { labels: { app: 'w' }, ...templateAnnotations },
            spec: { containers: [change.container] },
          },
        },
      },
    },
  ];
}

/** The writes of each kind's roll, by the row's roll action. */
const ROLL_WRITES: Record<
  RollActionType,
  (view: WorkloadView, row: WorkloadKindRow, strategy: ReloadStrategy) => RecordedWrite[]
> = {
  'template-patch': (_view, row, strategy) => templateKindWrites(row, strategy),
  // Only a Rollout with `rollout-strategy: restart` rolls so: never a kind's own action here.
  'rollout-restart': (_view, row) => {
    throw new Error(`${row.kind}: no expected writes for a kind whose own roll is a restart`);
  },
  'create-job-from-cronjob': (view, _row, strategy) => cronJobWrites(view, strategy),
  'recreate-job': (view, _row, strategy) => jobWrites(view, strategy),
  // Only under `kreload.io/rollout-strategy: evict` (pod-eviction.test.ts).
  'evict-pods': (_view, row) => {
    throw new Error(`${row.kind}: no expected writes for a kind whose own roll is an eviction`);
  },
};

function expectedRollWrites(view: WorkloadView, strategy: ReloadStrategy): RecordedWrite[] {
  const row = BUILT_IN_KIND_TABLE.row(view.ref.kind);
  return ROLL_WRITES[row.rollAction](view, row, strategy);
}

const KIND_STRATEGIES = WORKLOAD_KINDS.flatMap((row) =>
  (['env-vars', 'annotations'] as const).map((strategy) => ({ kind: row.kind, strategy })),
);

describe('a roll of every kind × strategy: the exact API writes', () => {
  it.each(KIND_STRATEGIES)('$kind, $strategy', async ({ kind, strategy }) => {
    const view = givenTracked(kind);
    const result = await reconciler({ strategy }).reconcile(workloadKey(view.ref), TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(writer.writes).toEqual(expectedRollWrites(view, strategy));
    expect(observer.hooks()).toEqual(['onRolled']);
  });

  it.each(WORKLOAD_KINDS.map((row) => row.kind))(
    '%s first sight: one metadata patch',
    async (kind) => {
      const view = aWorkload(kind, NS, 'w')
        .withResourceVersion('10')
        .withAnnotation(KEYS.auto, 'true')
        .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
        .build();
      given(view, wireObject(view));
      const result = await reconciler().reconcile(workloadKey(view.ref));
      expect(result.outcome).toBe('baselined');
      expect(writer.writes).toEqual([
        {
          verb: 'patch',
          key: workloadKey(view.ref),
          patch: {
            type: kindRow(kind).metadataPatchType,
            body: {
              metadata: { resourceVersion: '10', annotations: { [BASELINE]: NEW_HASHES } },
            },
          },
        },
      ]);
    },
  );
});

describe('a kind configured at run time rolls through the same table', () => {
  const WIDGET = configuredKindRow({
    group: 'example.kreload.io',
    version: 'v1',
    kind: 'Widget',
    plural: 'widgets',
    shortNames: [],
    templatePath: ['spec', 'template'],
    strategies: ['rollout'],
    pods: undefined,
    status: undefined,
  });
  const kinds = kindTable([WIDGET]);

  it.each(['env-vars', 'annotations'] as const)(
    'Widget, %s: one merge patch of spec.template, as for a Rollout',
    async (strategy) => {
      const view = tracked('Widget').build();
      given(view, WIRE_OBJECTS['template-patch'](view, WIDGET));
      const result = await reconciler({ strategy, kinds }).reconcile(
        workloadKey(view.ref),
        TRIGGER,
      );
      expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
      expect(writer.writes).toEqual(templateKindWrites(WIDGET, strategy));
      expect(writer.writes[0]).toMatchObject({
        patch: { type: 'merge', body: { spec: { template: {} } } },
      });
    },
  );

  it('a kind missing from the table is a wiring error, never a silent roll', async () => {
    const view = tracked('Widget').build();
    given(view, WIRE_OBJECTS['template-patch'](view, WIDGET));
    await expect(reconciler().reconcile(workloadKey(view.ref), TRIGGER)).rejects.toThrow(
      'workload kind Widget is not supported',
    );
    expect(writer.writes).toEqual([]);
  });
});

describe('Job (§7.4)', () => {
  const KEY = 'Job/team-a/w' as const;
  const ALREADY_EXISTS = (): ApiError => status(409);

  it('deletes, then creates, and reports the created Job', async () => {
    givenTracked('Job');
    await reconciler().reconcile(KEY, TRIGGER);
    expect(writer.writes.map((w) => w.verb)).toEqual(['delete', 'create']);
    expect(observer.calls[0]).toMatchObject({
      hook: 'onRolled',
      event: { createdJob: { name: 'w', uid: 'uid-created-1' } },
    });
    expect(writer.object(KEY)).toMatchObject({ metadata: { name: 'w', uid: 'uid-created-1' } });
  });

  it('retries AlreadyExists with backoff while the old Job is still going', async () => {
    givenTracked('Job');
    writer.failNextCall('create', ALREADY_EXISTS(), ALREADY_EXISTS());
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['delete', 'create', 'create', 'create']);
    expect(sleeps).toEqual([250, 500]);
    expect(observer.hooks()).toEqual(['onRetry', 'onRetry', 'onRolled']);
  });

  it('a deferred creation is kept for the resync at once, in case the queue drops the retry', async () => {
    givenTracked('Job');
    writer.failNextCall('create', ALREADY_EXISTS());
    const r = new Reconciler(deps());
    const first = await r.reconcile(KEY, TRIGGER);
    expect(first).toMatchObject({ outcome: 'retrying', retry: { afterMs: 250 } });
    expect(r.pendingRecreations()).toEqual([KEY]);
    const second = await r.reconcile(KEY, TRIGGER, first.retry?.resume);
    expect(second).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(second.rerun).toBeUndefined();
    expect(r.pendingRecreations()).toEqual([]);
    expect(writer.writes.map((w) => w.verb)).toEqual(['delete', 'create', 'create']);
  });

  it('a follow-up finished while new triggers waited asks for a fresh reconcile', async () => {
    givenTracked('Job');
    writer.failNextCall('create', ALREADY_EXISTS());
    const r = new Reconciler(deps());
    const first = await r.reconcile(KEY, TRIGGER);
    const retriggered = { ...TRIGGER, retriggered: true };
    const second = await r.reconcile(KEY, retriggered, first.retry?.resume);
    expect(second).toMatchObject({ outcome: 'rolled', rerun: true });
  });

  it('gives up after 30 s, keeps the manifest, and creates it at the next resync', async () => {
    givenTracked('Job');
    writer.failNextCall('create', ...Array.from({ length: 8 }, ALREADY_EXISTS));
    const r = reconciler();
    const result = await r.reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'failed', error: { status: 409 } });
    expect(sleeps).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000]);
    expect(writer.writes.map((w) => w.verb)).toEqual([
      'delete',
      ...Array<string>(8).fill('create'),
    ]);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onFailed',
      event: { stage: 'create-job', recreationPending: true, gaveUp: true, attempts: 8 },
    });
    expect(r.pendingRecreations()).toEqual([KEY]);

    // The resync: the Job is gone from the cache, the kept manifest is created once.
    workloads.remove(KEY);
    const creates = writer.writes.filter((w) => w.verb === 'create');
    // As the resync does: every pending key is enqueued and reconciled.
    expect(r.pendingRecreations()).toEqual([KEY]);
    expect(await r.reconcile(KEY)).toEqual({ outcome: 'recreated', attempts: 1 });
    expect(writer.writes.at(-1)).toEqual(creates.at(-1));
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRecreationRetried',
      event: { result: 'created' },
    });
    expect(r.pendingRecreations()).toEqual([]);
  });

  it('a 403 on the CREATE just after an outage is retried, and the Job comes back', async () => {
    givenTracked('Job');
    writer.failNextCall('create', timeout(), status(403));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['delete', 'create', 'create', 'create']);
    expect(observer.hooks()).toEqual(['onRetry', 'onRetry', 'onRolled']);
  });

  it('blocked creation (403): ReloadFail at once, retried at each resync until it works', async () => {
    givenTracked('Job');
    writer.failNextCall('create', status(403), status(403));
    const r = reconciler();
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'failed' });
    expect(sleeps).toEqual([]);
    workloads.remove(KEY);
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(r.pendingRecreations()).toEqual([KEY]);
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'recreated' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['delete', 'create', 'create', 'create']);
    expect(observer.hooks()).toEqual(['onFailed', 'onRecreationRetried', 'onRecreationRetried']);
  });

  it('a pending creation is dropped once the Job appears, which is then reconciled', async () => {
    givenTracked('Job');
    writer.failNextCall('create', status(403));
    const r = reconciler();
    await r.reconcile(KEY, TRIGGER);
    // Someone created the Job again: a new object, seen for the first time.
    given(
      aWorkload('Job', NS, 'w')
        .withUid('someone-elses')
        .withAnnotation(KEYS.auto, 'true')
        .withContainer(aContainer('app').withEnvFrom('configmap', 'app-config'))
        .build(),
    );
    const before = writer.writes.length;
    const result = await r.reconcile(KEY);
    expect(result.outcome).toBe('baselined');
    expect(r.pendingRecreations()).toEqual([]);
    expect(writer.writes.slice(before).map((w) => w.verb)).toEqual(['patch']);
    expect(observer.calls.find((c) => c.hook === 'onRecreationRetried')).toMatchObject({
      event: { result: 'appeared' },
    });
  });

  it('a stale cache: the DELETE precondition fails, the Job is re-read and rolled', async () => {
    const view = givenTracked('Job');
    writer.put({ ...view, resourceVersion: '11' });
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(writer.writes.filter((w) => w.verb === 'delete')).toEqual([
      { verb: 'delete', key: KEY, preconditions: { uid: view.uid, resourceVersion: '10' } },
      { verb: 'delete', key: KEY, preconditions: { uid: view.uid, resourceVersion: '11' } },
    ]);
  });

  it('a Job controlled by a CronJob is never reconciled', async () => {
    const view = tracked('Job')
      .withController({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cj' })
      .build();
    given(view, wireObject(view));
    marks.add([KEY], aCreateMark('configmap/app-config', 'u'));
    expect(await reconciler().reconcile(KEY, TRIGGER)).toEqual({ outcome: 'ignored', attempts: 0 });
    expect(writer.writes).toEqual([]);
    expect(observer.hooks()).toEqual([]);
    expect(marks.marksOf(KEY).filter((mark) => mark.kind === 'create')).toEqual([]);
  });

  it('a deleted source never recreates a Job (D11)', async () => {
    givenTracked('Job');
    sources.remove(NS, 'configmap/app-config');
    marks.add([KEY], aDeleteMark('configmap/app-config', 'u'));
    const result = await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(result.outcome).not.toBe('rolled');
    expect(writer.writes).toEqual([]);
  });
});

describe('Job recreation journal (ADR 0019)', () => {
  const KEY = 'Job/team-a/w' as const;
  let journal: RecordingJournal;

  beforeEach(() => {
    journal = new RecordingJournal(writer);
  });

  function journalled(): DrivenReconciler {
    return reconciler({}, () => NOW, journal);
  }

  function steps(from = 0): string[] {
    return writer.writes.slice(from).map((w) => `${w.verb} ${w.key}`);
  }

  /** The process dies inside a request: not a ApiError, so the reconcile rejects with it. */
  class Killed extends Error {}

  const ROLL = ['journal', 'delete', 'create', 'unjournal'].map((verb) => `${verb} ${KEY}`);

  it('journal, DELETE, CREATE, then the entry removed: in that order', async () => {
    const view = givenTracked('Job');
    const result = await journalled().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(steps()).toEqual(ROLL);
    const [entry, , create] = writer.writes;
    expect(entry).toMatchObject({ entry: { deletedUid: view.uid, since: NOW, ref: view.ref } });
    // The journal holds exactly the Job that is created.
    expect(entry?.verb === 'journal' && entry.entry.manifest).toEqual(
      create?.verb === 'create' && create.body,
    );
    expect(journal.stored()).toEqual([]);
  });

  it('a lost DELETE answer: the retry meets 404 and creates the journalled Job', async () => {
    givenTracked('Job');
    writer.loseNextAnswer('delete', timeout());
    const result = await journalled().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(steps()).toEqual(ROLL);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRolled',
      event: { createdJob: { name: 'w', uid: 'uid-created-1' } },
    });
    expect(writer.object(KEY)).toMatchObject({ metadata: { uid: 'uid-created-1' } });
  });

  it('a crash between DELETE and CREATE: a new process replays the journal', async () => {
    givenTracked('Job');
    const create = writer.create.bind(writer);
    writer.create = () => Promise.reject(new Killed('kill -9'));
    await expect(journalled().reconcile(KEY, TRIGGER)).rejects.toBeInstanceOf(Killed);
    expect(steps()).toEqual([`journal ${KEY}`, `delete ${KEY}`]);
    writer.create = create;
    // The new process: its watch never saw the old Job.
    workloads.remove(KEY);
    const restarted = journalled();
    expect(await restarted.replayRecreations()).toEqual([KEY]);
    const before = writer.writes.length;
    expect(await restarted.reconcile(KEY)).toEqual({ outcome: 'recreated', attempts: 1 });
    expect(steps(before)).toEqual([`create ${KEY}`, `unjournal ${KEY}`]);
    expect(writer.object(KEY)).toMatchObject({
      spec: { template: { spec: { containers: [{ env: [{ name: ENV, value: H3 }] }] } } },
    });
    expect(journal.stored()).toEqual([]);
    expect(await restarted.replayRecreations()).toEqual([]);
  });

  it('a crash after the journal write, before the DELETE: the Job is rolled once', async () => {
    givenTracked('Job');
    const remove = writer.delete.bind(writer);
    writer.delete = () => Promise.reject(new Killed('kill -9'));
    await expect(journalled().reconcile(KEY, TRIGGER)).rejects.toBeInstanceOf(Killed);
    writer.delete = remove;
    const restarted = journalled();
    await restarted.replayRecreations();
    const before = writer.writes.length;
    expect(await restarted.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'rolled' });
    // The DELETE never took effect: the entry goes, then the usual roll.
    expect(steps(before)).toEqual([`unjournal ${KEY}`, ...ROLL]);
    expect(observer.calls.find((c) => c.hook === 'onRecreationRetried')).toMatchObject({
      event: { result: 'not-deleted' },
    });
  });

  it('a follower that gains the lease replays what the old leader left', async () => {
    givenTracked('Job');
    const create = writer.create.bind(writer);
    const remove = writer.delete.bind(writer);
    writer.delete = async (ref, preconditions) => {
      await remove(ref, preconditions);
      leading = false;
    };
    const follower = journalled();
    expect(await journalled().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'not-leader' });
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRecreationRetried',
      event: { result: 'handed-over' },
    });
    expect(steps()).toEqual([`journal ${KEY}`, `delete ${KEY}`]);
    // The old leader exits; the follower's cache saw the deletion, then it gains the lease.
    workloads.remove(KEY);
    leading = true;
    writer.create = create;
    expect(await follower.replayRecreations()).toEqual([KEY]);
    expect(await follower.reconcile(KEY)).toEqual({ outcome: 'recreated', attempts: 1 });
    expect(steps(2)).toEqual([`create ${KEY}`, `unjournal ${KEY}`]);
  });

  /** A Job deleted by a roll whose CREATE is refused: its recreation stays pending. */
  async function pendingAfterRefusedCreate(): Promise<DrivenReconciler> {
    givenTracked('Job');
    writer.failNextCall('create', status(403));
    const r = journalled();
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'failed' });
    workloads.remove(KEY);
    expect(r.pendingRecreations()).toEqual([KEY]);
    return r;
  }

  it('the journal deleted: the next replay drops the recreation, nothing is created', async () => {
    const r = await pendingAfterRefusedCreate();
    journal.withdraw();
    expect(await r.replayRecreations()).toEqual([]);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRecreationRetried',
      event: { key: KEY, result: 'withdrawn' },
    });
    const before = writer.writes.length;
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'gone' });
    expect(steps(before)).toEqual([]);
  });

  it('the entry removed between replays: re-read before the CREATE, nothing is created', async () => {
    const r = await pendingAfterRefusedCreate();
    journal.withdraw(KEY);
    const before = writer.writes.length;
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'gone' });
    expect(steps(before)).toEqual([]);
    expect(r.pendingRecreations()).toEqual([]);
    expect(observer.calls.find((c) => c.hook === 'onRecreationRetried')).toMatchObject({
      event: { key: KEY, result: 'withdrawn' },
    });
  });

  it('a journal that cannot be read before the CREATE: nothing is created, retried later', async () => {
    const r = await pendingAfterRefusedCreate();
    journal.failNext('entries', status(403));
    const before = writer.writes.length;
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'failed', error: { status: 403 } });
    expect(steps(before)).toEqual([]);
    expect(r.pendingRecreations()).toEqual([KEY]);
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'recreated' });
  });

  it('a journal write that fails deletes nothing', async () => {
    const view = givenTracked('Job');
    journal.failNext('record', status(403));
    const result = await journalled().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'failed', error: { status: 403 } });
    expect(steps()).toEqual([`journal ${KEY}`]);
    expect(writer.server(view.ref)).toEqual(view);
    expect(observer.calls.at(-1)).toMatchObject({ hook: 'onFailed', event: { stage: 'write' } });
  });

  it('a Job created by someone else meanwhile: the entry goes, nothing is created', async () => {
    givenTracked('Job');
    writer.create = () => Promise.reject(new Killed('kill -9'));
    await expect(journalled().reconcile(KEY, TRIGGER)).rejects.toBeInstanceOf(Killed);
    const theirs = aWorkload('Job', NS, 'w').withUid('someone-elses').build();
    given(theirs, { metadata: { ...meta(theirs) } });
    const restarted = journalled();
    await restarted.replayRecreations();
    const before = writer.writes.length;
    await restarted.reconcile(KEY);
    expect(steps(before)).toEqual([`unjournal ${KEY}`]);
    expect(observer.calls.find((c) => c.hook === 'onRecreationRetried')).toMatchObject({
      event: { result: 'appeared' },
    });
  });

  it('deleted by someone else just before our DELETE (404): not created again', async () => {
    givenTracked('Job');
    writer.failNextCall('delete', status(404));
    const r = journalled();
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'gone' });
    expect(steps()).toEqual([`journal ${KEY}`, `delete ${KEY}`, `unjournal ${KEY}`]);
    expect(await r.replayRecreations()).toEqual([]);
  });

  it('a lost CREATE answer: AlreadyExists from the new Job means done', async () => {
    givenTracked('Job');
    writer.loseNextAnswer('create', timeout());
    const result = await journalled().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled' });
    expect(steps()).toEqual([
      `journal ${KEY}`,
      `delete ${KEY}`,
      `create ${KEY}`,
      `create ${KEY}`,
      `unjournal ${KEY}`,
    ]);
    expect(sleeps).toEqual([250]);
  });

  it('a failed removal keeps the entry until a later reconcile removes it', async () => {
    givenTracked('Job');
    journal.failNext('remove', timeout());
    const r = journalled();
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'rolled' });
    expect(r.pendingRecreations()).toEqual([KEY]);
    // The watch delivers the new Job; the next reconcile only drops the entry.
    workloads.put(aWorkload('Job', NS, 'w').withUid('uid-created-1').build());
    await r.reconcile(KEY);
    expect(journal.stored()).toEqual([]);
    expect(r.pendingRecreations()).toEqual([]);
  });
});

describe('CronJob (§7.3)', () => {
  const KEY = 'CronJob/team-a/w' as const;

  function ownedJob(hashes: string): WorkloadView {
    return aWorkload('Job', NS, 'w-12345')
      .withAnnotation(SOURCE_HASHES, hashes)
      .withController({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        name: 'w',
        uid: 'uid-cronjob-team-a-w',
      })
      .build();
  }

  it('the guard: a Job already carrying the new source-hashes means no second Job', async () => {
    givenTracked('CronJob');
    workloads.put(ownedJob(NEW_HASHES));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result.outcome).toBe('rolled');
    expect(writer.writes.map((w) => `${w.verb} ${w.key}`)).toEqual(['patch CronJob/team-a/w']);
    expect(observer.calls[0]).toMatchObject({
      hook: 'onRolled',
      event: { jobCreationSkipped: 'already-created' },
    });
  });

  it('the guard ignores Jobs of older hashes', async () => {
    givenTracked('CronJob');
    workloads.put(ownedJob(`{"configmap/app-config":"${H1}"}`));
    await reconciler().reconcile(KEY, TRIGGER);
    expect(writer.writes.map((w) => w.verb)).toEqual(['create', 'patch']);
  });

  it('without a Job watch the guard is skipped', async () => {
    givenTracked('CronJob');
    workloads.put(ownedJob(NEW_HASHES));
    workloads.setJobsWatched(false);
    await reconciler().reconcile(KEY, TRIGGER);
    expect(writer.writes.map((w) => w.verb)).toEqual(['create', 'patch']);
  });

  it('suspended: only the metadata patch, no Job (D19)', async () => {
    const view = tracked('CronJob').suspended().build();
    given(view, wireObject(view));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result.outcome).toBe('rolled');
    expect(writer.writes).toEqual([cronJobWrites(view, 'env-vars')[1]]);
    expect(writer.getObjectCount).toBe(0);
    expect(observer.calls[0]).toMatchObject({ event: { jobCreationSkipped: 'suspended' } });
  });

  it('a 409 on the metadata patch re-reads the CronJob and never creates a second Job', async () => {
    const view = givenTracked('CronJob');
    writer.put({ ...view, resourceVersion: '11' });
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(writer.writes.map((w) => w.verb)).toEqual(['create', 'patch', 'patch']);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRolled',
      event: { createdJob: { name: runName(view) } },
    });
  });

  it('a failed create is retried with the whole write', async () => {
    givenTracked('CronJob');
    writer.failNextCall('create', status(503));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(writer.writes.map((w) => w.verb)).toEqual(['create', 'create', 'patch']);
    expect(sleeps).toEqual([250]);
  });

  it('a lost POST answer: the retry meets AlreadyExists and the roll is done, one Job', async () => {
    const view = givenTracked('CronJob');
    writer.loseNextAnswer('create', timeout());
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    const name = runName(view);
    expect(writer.writes.map((w) => `${w.verb} ${w.key}`)).toEqual([
      `create Job/team-a/${name}`,
      `create Job/team-a/${name}`,
      'patch CronJob/team-a/w',
    ]);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRolled',
      event: { createdJob: { name, uid: 'uid-created-1' } },
    });
  });

  it.each([
    ['with Jobs watched', true],
    ['with `jobs` ignored (no guard over cached Jobs)', false],
  ])('a failing metadata patch never makes a second Job, %s', async (_case, jobsWatched) => {
    const view = givenTracked('CronJob');
    workloads.setJobsWatched(jobsWatched);
    writer.failNext(status(422));
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'failed' });
    // The next trigger, then a resync: the same change window, so the same Job name.
    writer.failNext(status(422));
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'failed' });
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
    const creates = writer.writes.filter((w) => w.verb === 'create');
    expect(new Set(creates.map((w) => w.key))).toEqual(new Set([`Job/team-a/${runName(view)}`]));
    // The cached guard is not needed: the server holds exactly the one Job of the first POST.
    expect(writer.object(`Job/team-a/${runName(view)}`)?.metadata).toMatchObject({
      uid: 'uid-created-1',
    });
    expect(writer.server(view.ref)?.annotations[SOURCE_HASHES]).toBe(NEW_HASHES);
  });

  it("a Job of the run name that is not this CronJob's stays untouched and fails the roll", async () => {
    const view = givenTracked('CronJob');
    writer.putObject(
      { kind: 'Job', namespace: NS, name: runName(view) },
      { metadata: { name: runName(view), namespace: NS, uid: 'someone-else' } },
    );
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'failed', error: { retryable: false } });
    expect(result.error?.message).toContain('is not controlled by CronJob w');
    expect(writer.writes.map((w) => w.verb)).toEqual(['create']);
  });

  it('the lease lost between the GET and the POST: nothing is sent', async () => {
    givenTracked('CronJob');
    const getObject = writer.getObject.bind(writer);
    writer.getObject = (ref) => {
      leading = false;
      return getObject(ref);
    };
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'not-leader' });
    expect(writer.writes).toEqual([]);
  });

  it('the lease lost between the POST and the metadata patch: the patch is not sent', async () => {
    const view = givenTracked('CronJob');
    const create = writer.create.bind(writer);
    writer.create = async (row, namespace, body) => {
      const created = await create(row, namespace, body);
      leading = false;
      return created;
    };
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'not-leader' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['create']);
    // The next leader: the same window's name, AlreadyExists, then the metadata patch.
    leading = true;
    writer.create = create;
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.map((w) => `${w.verb} ${w.key}`)).toEqual([
      `create Job/team-a/${runName(view)}`,
      `create Job/team-a/${runName(view)}`,
      'patch CronJob/team-a/w',
    ]);
  });

  it('a deleted source never creates a Job (D11)', async () => {
    const view = tracked('CronJob')
      .withAnnotations({ [SOURCE_HASHES]: `{"configmap/app-config":"${H1}"}` })
      .build();
    given(view, wireObject(view));
    sources.remove(NS, 'configmap/app-config');
    marks.add([KEY], aDeleteMark('configmap/app-config', 'u'));
    await reconciler({ reloadOnDelete: true }).reconcile(KEY);
    expect(writer.writes.filter((w) => w.verb === 'create')).toEqual([]);
  });
});

describe('Argo Rollout (§7.5)', () => {
  const KEY = 'Rollout/team-a/w' as const;

  it.each(['env-vars', 'annotations'] as const)(
    'restart strategy (%s): W state and restartAt in one merge patch',
    async (strategy) => {
      const view = tracked('Rollout').withAnnotation(KEYS.rolloutStrategy, 'restart').build();
      given(view, wireObject(view));
      const result = await reconciler({ strategy }, () => NOW + 1_234).reconcile(KEY, TRIGGER);
      expect(result.outcome).toBe('rolled');
      expect(writer.writes).toEqual([
        {
          verb: 'patch',
          key: KEY,
          patch: {
            type: 'merge',
            body: {
              metadata: {
                resourceVersion: '10',
                annotations: { [BASELINE]: null, [SOURCE_HASHES]: NEW_HASHES },
              },
              spec: { restartAt: '2026-01-01T00:00:01Z' },
            },
          },
        },
      ]);
      expect(writer.getObjectCount).toBe(0);
    },
  );

  it('restart strategy is idempotent: A in W source-hashes', async () => {
    const view = tracked('Rollout')
      .withAnnotations({ [KEYS.rolloutStrategy]: 'restart', [SOURCE_HASHES]: NEW_HASHES })
      .build();
    given(view);
    expect((await reconciler().reconcile(KEY, TRIGGER)).outcome).toBe('skipped');
    expect(writer.writes).toEqual([]);
  });

  it('workloadRef: skipped with no_container', async () => {
    const view = aWorkload('Rollout', NS, 'w')
      .withAnnotation(KEYS.configmapReload, 'app-config')
      .withWorkloadRef()
      .build();
    given(view);
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'skipped', skip: 'no_container' });
    expect(writer.writes).toEqual([]);
  });

  it('env vars: the live containers are fetched again after a 409', async () => {
    const view = givenTracked('Rollout');
    writer.put({ ...view, resourceVersion: '11' });
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 2 });
    expect(writer.getObjectCount).toBe(2);
    expect(writer.writes.map((w) => (w.verb === 'patch' ? w.patch.type : w.verb))).toEqual([
      'merge',
      'merge',
    ]);
  });

  it('env vars: a Rollout gone at the GET is gone', async () => {
    const view = tracked('Rollout').build();
    given(view);
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'gone' });
    expect(writer.writes).toEqual([]);
  });
});

describe('DeploymentConfig (§7.6)', () => {
  const KEY = 'DeploymentConfig/team-a/w' as const;

  it('with a ConfigChange trigger: the template patch alone', async () => {
    given(tracked('DeploymentConfig').withConfigChangeTrigger().build());
    await reconciler().reconcile(KEY, TRIGGER);
    expect(writer.writes.map((w) => w.verb)).toEqual(['patch']);
    expect(observer.calls[0]).toMatchObject({ event: { instantiated: undefined } });
  });

  it('instantiate is retried on its own, never repeating the patch', async () => {
    givenTracked('DeploymentConfig');
    writer.failNextCall('instantiate', status(503), status(409));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(writer.writes.map((w) => w.verb)).toEqual([
      'patch',
      'instantiate',
      'instantiate',
      'instantiate',
      'patch',
    ]);
    expect(sleeps).toEqual([250, 500]);
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onRolled',
      event: { instantiated: true },
    });
  });

  it('an instantiate that gave up is owed: the next reconcile (a resync) instantiates', async () => {
    const view = givenTracked('DeploymentConfig');
    writer.failNextCall('instantiate', ...Array.from({ length: 5 }, () => status(503)));
    const first = await reconciler().reconcile(KEY, TRIGGER);
    expect(first).toMatchObject({ outcome: 'failed', error: { status: 503 } });
    expect(writer.server(view.ref)?.annotations[INSTANTIATE_PENDING]).toBe('2026-01-01T00:00:00Z');
    // The watch delivers the patched DeploymentConfig: its template is up to date.
    workloads.put(writer.server(view.ref) ?? view);
    const before = writer.writes.length;
    const resync = await reconciler().reconcile(KEY);
    expect(resync).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.slice(before)).toEqual([
      { verb: 'instantiate', key: KEY, body: expect.objectContaining({ name: 'w' }) as unknown },
      instantiateDone(KEY),
    ]);
    expect(writer.server(view.ref)?.annotations).not.toHaveProperty(INSTANTIATE_PENDING);
    // Nothing is owed any more: the next resync writes nothing.
    workloads.put(writer.server(view.ref) ?? view);
    const after = writer.writes.length;
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'unchanged' });
    expect(writer.writes.length).toBe(after);
  });

  it('a cached view that still shows the removed marker neither instantiates nor removes again', async () => {
    const view = givenTracked('DeploymentConfig');
    const r = reconciler();
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'rolled' });
    const after = writer.writes.length;
    // The watch delivers the roll patch (marker on) before the marker's removal.
    const patched = writer.server(view.ref) ?? view;
    workloads.put({
      ...patched,
      annotations: { ...patched.annotations, [INSTANTIATE_PENDING]: 'x' },
    });
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'unchanged' });
    expect(writer.writes.length).toBe(after);
  });

  it('an instantiate whose marker removal failed: only the removal is retried', async () => {
    const view = givenTracked('DeploymentConfig');
    const r = reconciler();
    const patch = writer.patch.bind(writer);
    let calls = 0;
    writer.patch = async (ref, body) => {
      calls += 1;
      if (calls === 2) throw new ApiError('unavailable', { status: 503, retryable: true });
      return patch(ref, body);
    };
    expect(await r.reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'rolled' });
    writer.patch = patch;
    workloads.put(writer.server(view.ref) ?? view);
    const before = writer.writes.length;
    expect(await r.reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.slice(before)).toEqual([instantiateDone(KEY)]);
  });

  it('a lease lost after the template patch: the next leader instantiates', async () => {
    const view = givenTracked('DeploymentConfig');
    const patch = writer.patch.bind(writer);
    writer.patch = async (ref, body) => {
      const result = await patch(ref, body);
      leading = false;
      return result;
    };
    expect(await reconciler().reconcile(KEY, TRIGGER)).toMatchObject({ outcome: 'not-leader' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['patch']);
    writer.patch = patch;
    leading = true;
    workloads.put(writer.server(view.ref) ?? view);
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes.map((w) => w.verb)).toEqual(['patch', 'instantiate', 'patch']);
  });

  it('a ConfigChange trigger added meanwhile: only the marker is removed', async () => {
    const view = tracked('DeploymentConfig')
      .withConfigChangeTrigger()
      .withAnnotation(INSTANTIATE_PENDING, '2026-01-01T00:00:00Z')
      .withAnnotation(BASELINE, `{"configmap/app-config":"${H3}"}`)
      .build();
    given(view);
    expect(await reconciler().reconcile(KEY)).toMatchObject({ outcome: 'rolled' });
    expect(writer.writes).toEqual([instantiateDone(KEY)]);
  });

  it('dry-run never instantiates an owed DeploymentConfig', async () => {
    const view = tracked('DeploymentConfig')
      .withAnnotation(INSTANTIATE_PENDING, '2026-01-01T00:00:00Z')
      .withAnnotation(BASELINE, `{"configmap/app-config":"${H3}"}`)
      .build();
    given(view);
    await reconciler({ dryRun: true }).reconcile(KEY);
    expect(writer.writes).toEqual([]);
  });

  it('a forbidden instantiate fails the roll', async () => {
    givenTracked('DeploymentConfig');
    writer.failNextCall('instantiate', status(403));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'failed', error: { status: 403 } });
    expect(observer.calls.at(-1)).toMatchObject({
      hook: 'onFailed',
      event: { stage: 'instantiate', gaveUp: false, recreationPending: false },
    });
  });
});

describe('writes only while the lease allows (§13.4 item 4)', () => {
  it.each(WORKLOAD_KINDS.map((row) => row.kind))('%s: no write, marks kept', async (kind) => {
    const view = givenTracked(kind);
    const key = workloadKey(view.ref);
    marks.add([key], aCreateMark('configmap/app-config', 'u'));
    leading = false;
    expect(await reconciler().reconcile(key, TRIGGER)).toEqual({
      outcome: 'not-leader',
      attempts: 0,
    });
    expect(writer.writes).toEqual([]);
    expect(writer.getObjectCount + writer.getCount).toBe(0);
    expect(marks.marksOf(key).filter((mark) => mark.kind === 'create')).toHaveLength(1);
  });

  it('a lease lost between attempts stops the retries', async () => {
    givenTracked('Deployment');
    writer.failNext(status(503));
    const r = new Reconciler({
      workloads,
      sources,
      marks,
      writer,
      observer,
      options: OPTIONS,
      now: () => NOW,
      random: () => 0.5,
      mayWrite: () => leading,
    });
    const loseLease = {
      onWait: () => {
        leading = false;
      },
    };
    const result = await reconcileToEnd(r, 'Deployment/team-a/w', TRIGGER, loseLease);
    expect(result).toEqual({ outcome: 'not-leader', attempts: 1 });
    expect(writer.writes).toHaveLength(1);
  });

  it('a lease lost after deleting a Job keeps its manifest', async () => {
    givenTracked('Job');
    writer.failNextCall('create', status(409));
    const r = new Reconciler({
      workloads,
      sources,
      marks,
      writer,
      observer,
      options: OPTIONS,
      now: () => NOW,
      random: () => 0.5,
      mayWrite: () => leading,
    });
    const loseLease = {
      onWait: () => {
        leading = false;
      },
    };
    expect(await reconcileToEnd(r, 'Job/team-a/w', TRIGGER, loseLease)).toMatchObject({
      outcome: 'not-leader',
    });
    expect(r.pendingRecreations()).toEqual(['Job/team-a/w']);
  });
});

describe('pause period (§7.2)', () => {
  const KEY = 'Deployment/team-a/w' as const;
  const PAUSED_AT = KEYS.pausedAt;

  function deployment(annotations: Record<string, string>, paused = false): WorkloadView {
    return tracked('Deployment').withAnnotations(annotations).paused(paused).build();
  }

  const ref: WorkloadRef = { kind: 'Deployment', namespace: NS, name: 'w' };

  it('a roll pauses in the same patch and asks for the resume', async () => {
    given(deployment({ [KEYS.pausePeriod]: '5m' }));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', resumeAt: NOW + 300_000, resumed: false });
    expect(writer.writes).toEqual([
      {
        verb: 'patch',
        key: KEY,
        patch: {
          type: 'strategic',
          body: {
            metadata: {
              resourceVersion: '10',
              annotations: { [BASELINE]: null, [PAUSED_AT]: '2026-01-01T00:00:00Z' },
            },
            spec: {
              paused: true,
              template: {
                spec: { containers: [{ name: 'app', env: [{ name: ENV, value: H3 }] }] },
              },
            },
          },
        },
      },
    ]);
    expect(writer.server(ref)?.paused).toBe(true);
  });

  it('the resume is an ordinary reconcile once due: the exact resume patch', async () => {
    const paused = deployment(
      { [KEYS.pausePeriod]: '5m', [PAUSED_AT]: '2025-12-31T23:50:00Z', [BASELINE]: NEW_HASHES },
      true,
    );
    given(paused);
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'resumed', attempts: 1, resumed: true });
    expect(result.resumeAt).toBeUndefined();
    expect(writer.writes).toEqual([
      {
        verb: 'patch',
        key: KEY,
        patch: {
          type: 'strategic',
          body: {
            metadata: { resourceVersion: '10', annotations: { [PAUSED_AT]: null } },
            spec: { paused: false },
          },
        },
      },
    ]);
    expect(observer.hooks()).toEqual(['onResumed']);
    expect(writer.server(ref)?.paused).toBe(false);
  });

  it('before it is due, nothing is written and the due time comes back', async () => {
    given(
      deployment(
        { [KEYS.pausePeriod]: '5m', [PAUSED_AT]: '2025-12-31T23:58:00Z', [BASELINE]: NEW_HASHES },
        true,
      ),
    );
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged', resumeAt: NOW + 180_000 });
    expect(writer.writes).toEqual([]);
  });

  it('a roll during its own pause accumulates and keeps the resume time', async () => {
    given(deployment({ [KEYS.pausePeriod]: '5m', [PAUSED_AT]: '2025-12-31T23:58:00Z' }, true));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', resumeAt: NOW + 180_000 });
    const [write] = writer.writes;
    expect(write?.verb === 'patch' && write.patch.body.spec).toEqual({
      template: { spec: { containers: [{ name: 'app', env: [{ name: ENV, value: H3 }] }] } },
    });
  });

  it('a 409 on the resume: someone resumed already, nothing is left', async () => {
    given(
      deployment(
        { [KEYS.pausePeriod]: '5m', [PAUSED_AT]: '2025-12-31T23:50:00Z', [BASELINE]: NEW_HASHES },
        true,
      ),
    );
    // Someone else resumed it meanwhile: the server has moved on.
    writer.put({
      ...deployment({ [KEYS.pausePeriod]: '5m', [BASELINE]: NEW_HASHES }),
      resourceVersion: '11',
    });
    const result = await reconciler().reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged', attempts: 1 });
    expect(writer.writes).toHaveLength(1);
  });

  it('invalid pause-period: the roll goes through unpaused, with a problem', async () => {
    given(deployment({ [KEYS.pausePeriod]: '5 minutes' }));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', resumeAt: undefined });
    expect(observer.hooks()).toEqual(['onProblems', 'onRolled']);
    const [write] = writer.writes;
    expect(write?.verb === 'patch' && write.patch.body.spec).not.toHaveProperty('paused');
  });

  it('paused by someone else: the roll is applied and noticed', async () => {
    given(deployment({ [KEYS.pausePeriod]: '5m' }, true));
    const result = await reconciler().reconcile(KEY, TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', resumeAt: undefined });
    expect(observer.calls.map((c) => c.hook)).toEqual(['onRolled', 'onPauseNotice']);
    expect(observer.calls[1]).toMatchObject({ event: { notice: 'paused-by-other' } });
  });

  it('pause-period on a DaemonSet: one notice per workload, however many reconciles', async () => {
    const view = tracked('DaemonSet').withAnnotation(KEYS.pausePeriod, '5m').build();
    given(view);
    const r = reconciler();
    await r.reconcile('DaemonSet/team-a/w', TRIGGER);
    workloads.put(writer.server(view.ref) ?? view);
    await r.reconcile('DaemonSet/team-a/w');
    expect(observer.hooks()).toEqual(['onPauseNotice', 'onRolled']);
  });

  it('dry run: a due resume is neither sent nor timed', async () => {
    given(
      deployment(
        { [KEYS.pausePeriod]: '5m', [PAUSED_AT]: '2025-12-31T23:50:00Z', [BASELINE]: NEW_HASHES },
        true,
      ),
    );
    const result = await reconciler({ dryRun: true }).reconcile(KEY);
    expect(result).toMatchObject({ outcome: 'unchanged', resumeAt: undefined });
    expect(writer.writes).toEqual([]);
  });
});

/** A copy without the `auto` annotation anywhere: the Job a roll re-creates copies W's annotations. */
function withoutAuto(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAuto);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== KEYS.auto)
      .map(([key, entry]) => [key, withoutAuto(entry)]),
  );
}

describe('the same roll through a ReloadPolicy (docs/reload-policy.md)', () => {
  it.each(KIND_STRATEGIES)('$kind, $strategy: the writes of the annotated roll', async (c) => {
    const annotated = givenTracked(c.kind);
    await reconciler({ strategy: c.strategy }).reconcile(workloadKey(annotated.ref), TRIGGER);
    const expected = withoutAuto(writer.writes);

    workloads = new InMemoryWorkloads();
    writer = new RecordingWriter();
    const bound = { ...annotated, annotations: withoutAuto(annotated.annotations) as Annotations };
    given(bound, wireObject(bound));
    const policies = policyStoreOver({ sources: () => [], workloads: () => [bound] });
    policies.replace([
      aPolicy(NS, 'p', {
        sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
        targets: [{ kind: c.kind, name: 'w' }],
      }),
    ]);
    const result = await drivenWithSleeps({
      ...deps({ strategy: c.strategy }),
      policies,
    }).reconcile(workloadKey(bound.ref), TRIGGER);
    expect(result).toMatchObject({ outcome: 'rolled', attempts: 1 });
    expect(writer.writes).toEqual(expected);
  });
});
