/**
 * Workload projection (§9.2 item 3): wire object → WorkloadView. Keeps only what reconciliation
 * reads: the annotation keys kreload reads or writes, the references and `STAKATER_*` values per
 * container, the volume references, a few spec flags and the handful of status numbers the kind's
 * health model reads. `managedFields`, the rest of status and the rest never pass. Undefined for an
 * object without name, namespace or uid.
 */
import type {
  ContainerView,
  OwnerView,
  PodSpecView,
  VolumeView,
  WorkloadView,
} from '../core/types.ts';
import { REVISION_DIGEST, SNAPSHOTS } from '../core/types.ts';
import { keptWorkloadKeys } from '../core/annotations.ts';
import type { JsonObject } from '../core/json.ts';
import { booleanAt, numberAt, objectAt, objectsAt, stringAt } from '../core/json.ts';
import type { ReplicaStatusPaths, WorkloadKindRow, WorkloadSpecFlag } from '../rollout/kinds.ts';
import type { ConditionView, HealthModel, RolloutStatusView } from '../rollout/rollout-status.ts';
import type { ReferenceRename } from '../rollout/snapshots.ts';
import { liveNameOf, parseSnapshotMap } from '../rollout/snapshots.ts';
import type { ProjectionSettings } from './projections.ts';
import { keptAnnotations, keptLabels, objectIdentity } from './projections.ts';

/** How each spec flag a kind's row lists is read from the object (§9.2 item 3). */
const SPEC_FLAG_READERS: Readonly<Record<WorkloadSpecFlag, (obj: unknown) => boolean>> = {
  paused: (obj) => booleanAt(obj, ['spec', 'paused']),
  suspended: (obj) => booleanAt(obj, ['spec', 'suspend']),
  manualSelector: (obj) => booleanAt(obj, ['spec', 'manualSelector']),
  hasWorkloadRef: (obj) => objectAt(obj, ['spec', 'workloadRef']) !== undefined,
  hasConfigChangeTrigger: (obj) =>
    objectsAt(obj, ['spec', 'triggers']).some((t) => stringAt(t, ['type']) === 'ConfigChange'),
};

function specFlags(
  row: WorkloadKindRow,
  obj: unknown,
): Readonly<Record<WorkloadSpecFlag, boolean>> {
  const read = (flag: WorkloadSpecFlag): boolean =>
    row.specFlags.includes(flag) && SPEC_FLAG_READERS[flag](obj);
  return {
    paused: read('paused'),
    suspended: read('suspended'),
    manualSelector: read('manualSelector'),
    hasWorkloadRef: read('hasWorkloadRef'),
    hasConfigChangeTrigger: read('hasConfigChangeTrigger'),
  };
}

const count = (obj: unknown, path: readonly string[]): number => numberAt(obj, path) ?? 0;

/**
 * Status texts other controllers write (a condition's reason, an Argo Rollout's message) are kept
 * for explain and the `RolloutFailed` Event: at most this many characters each, so a huge value
 * never stays in memory or reaches an Event.
 */
const MAX_STATUS_TEXT = 256;

function statusText(obj: unknown, path: readonly string[]): string | undefined {
  const text = stringAt(obj, path);
  return text === undefined || text.length <= MAX_STATUS_TEXT
    ? text
    : `${text.slice(0, MAX_STATUS_TEXT)}…`;
}

function progressingCondition(obj: unknown): ConditionView | undefined {
  const condition = objectsAt(obj, ['status', 'conditions']).find(
    (c) => stringAt(c, ['type']) === 'Progressing',
  );
  if (!condition) return undefined;
  return {
    status: stringAt(condition, ['status']) ?? '',
    reason: statusText(condition, ['reason']),
  };
}

const onDelete = (obj: unknown): boolean =>
  stringAt(obj, ['spec', 'updateStrategy', 'type']) === 'OnDelete';

/** How each health model's status is read from the object (rollout/rollout-status.ts). */
const STATUS_READERS: Readonly<Record<HealthModel, (obj: unknown) => RolloutStatusView>> = {
  'replica-set': (obj) => ({
    model: 'replica-set',
    observedGeneration: numberAt(obj, ['status', 'observedGeneration']),
    desired: numberAt(obj, ['spec', 'replicas']) ?? 1,
    replicas: count(obj, ['status', 'replicas']),
    updated: count(obj, ['status', 'updatedReplicas']),
    available: count(obj, ['status', 'availableReplicas']),
    unavailable: count(obj, ['status', 'unavailableReplicas']),
    progressing: progressingCondition(obj),
    progressDeadlineSeconds: numberAt(obj, ['spec', 'progressDeadlineSeconds']),
  }),
  'stateful-set': (obj) => ({
    model: 'stateful-set',
    observedGeneration: numberAt(obj, ['status', 'observedGeneration']),
    desired: numberAt(obj, ['spec', 'replicas']) ?? 1,
    updated: count(obj, ['status', 'updatedReplicas']),
    ready: count(obj, ['status', 'readyReplicas']),
    currentRevision: stringAt(obj, ['status', 'currentRevision']),
    updateRevision: stringAt(obj, ['status', 'updateRevision']),
    partition: count(obj, ['spec', 'updateStrategy', 'rollingUpdate', 'partition']),
    onDelete: onDelete(obj),
  }),
  'daemon-set': (obj) => ({
    model: 'daemon-set',
    observedGeneration: numberAt(obj, ['status', 'observedGeneration']),
    desired: count(obj, ['status', 'desiredNumberScheduled']),
    updated: count(obj, ['status', 'updatedNumberScheduled']),
    available: count(obj, ['status', 'numberAvailable']),
    unavailable: count(obj, ['status', 'numberUnavailable']),
    onDelete: onDelete(obj),
  }),
  'rollout-phase': (obj) => {
    const observed = stringAt(obj, ['status', 'observedGeneration']);
    return {
      model: 'rollout-phase',
      observedGeneration:
        observed !== undefined && /^\d{1,15}$/.test(observed)
          ? Number(observed)
          : numberAt(obj, ['status', 'observedGeneration']),
      phase: statusText(obj, ['status', 'phase']),
      message: statusText(obj, ['status', 'message']),
      progressDeadlineSeconds: numberAt(obj, ['spec', 'progressDeadlineSeconds']),
    };
  },
};

/** The `replica-set` model read where a configured kind's row says its numbers are. */
function configuredStatus(obj: unknown, paths: ReplicaStatusPaths): RolloutStatusView {
  const updated = count(obj, paths.updated);
  const available = count(obj, paths.available);
  const desired = numberAt(obj, paths.desired) ?? 1;
  return {
    model: 'replica-set',
    observedGeneration: paths.observedGeneration && numberAt(obj, paths.observedGeneration),
    desired,
    replicas: paths.replicas ? count(obj, paths.replicas) : updated,
    updated,
    available,
    unavailable: Math.max(0, desired - available),
    progressing: undefined,
  };
}

function uniqueStrings(values: readonly (string | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== undefined && v !== ''))];
}

/**
 * `live` maps a referenced snapshot back to its source (PT `kreload.io/snapshots`, ADR 0036): the
 * view names the live sources, so tracking and the index never follow the copies.
 */
function projectContainer(container: JsonObject, live: ReferenceRename): ContainerView {
  // One pass over env, then envFrom: every watch event of a workload projects every container.
  const stakaterEnv: Record<string, string> = {};
  const configMaps: (string | undefined)[] = [];
  const secrets: (string | undefined)[] = [];
  for (const entry of objectsAt(container, ['env'])) {
    const name = stringAt(entry, ['name']);
    const value = stringAt(entry, ['value']);
    if (name?.startsWith('STAKATER_') && value !== undefined) stakaterEnv[name] = value;
    const valueFrom = objectAt(entry, ['valueFrom']);
    if (valueFrom === undefined) continue;
    configMaps.push(stringAt(valueFrom, ['configMapKeyRef', 'name']));
    secrets.push(stringAt(valueFrom, ['secretKeyRef', 'name']));
  }
  for (const entry of objectsAt(container, ['envFrom'])) {
    configMaps.push(stringAt(entry, ['configMapRef', 'name']));
    secrets.push(stringAt(entry, ['secretRef', 'name']));
  }
  return {
    name: stringAt(container, ['name']) ?? '',
    stakaterEnv,
    envConfigMaps: liveNames(live, 'CONFIGMAP', configMaps),
    envSecrets: liveNames(live, 'SECRET', secrets),
    volumeMounts: uniqueStrings(
      objectsAt(container, ['volumeMounts']).map((m) => stringAt(m, ['name'])),
    ),
  };
}

function liveNames(
  live: ReferenceRename,
  type: 'CONFIGMAP' | 'SECRET',
  names: readonly (string | undefined)[],
): string[] {
  return uniqueStrings(names.map((name) => (name === undefined ? name : live(type, name))));
}

function projectVolume(volume: JsonObject, live: ReferenceRename): VolumeView {
  const projected = objectsAt(volume, ['projected', 'sources']);
  return {
    name: stringAt(volume, ['name']) ?? '',
    configMaps: liveNames(live, 'CONFIGMAP', [
      stringAt(volume, ['configMap', 'name']),
      ...projected.map((s) => stringAt(s, ['configMap', 'name'])),
    ]),
    secrets: liveNames(live, 'SECRET', [
      stringAt(volume, ['secret', 'secretName']),
      ...projected.map((s) => stringAt(s, ['secret', 'name'])),
    ]),
    secretProviderClass: stringAt(volume, ['csi', 'volumeAttributes', 'secretProviderClass']),
  };
}

function projectPodSpec(template: JsonObject | undefined): PodSpecView {
  const live = liveNameOf(
    parseSnapshotMap(stringAt(template, ['metadata', 'annotations', SNAPSHOTS])),
  );
  const container = (c: JsonObject): ContainerView => projectContainer(c, live);
  return {
    containers: objectsAt(template, ['spec', 'containers']).map(container),
    initContainers: objectsAt(template, ['spec', 'initContainers']).map(container),
    volumes: objectsAt(template, ['spec', 'volumes']).map((v) => projectVolume(v, live)),
  };
}

function controllerOf(obj: unknown): OwnerView | undefined {
  const owner = objectsAt(obj, ['metadata', 'ownerReferences']).find((o) => o.controller === true);
  if (!owner) return undefined;
  return {
    apiVersion: stringAt(owner, ['apiVersion']) ?? '',
    kind: stringAt(owner, ['kind']) ?? '',
    name: stringAt(owner, ['name']) ?? '',
    uid: stringAt(owner, ['uid']) ?? '',
  };
}

export function projectWorkload(
  row: WorkloadKindRow,
  obj: unknown,
  settings: ProjectionSettings,
): WorkloadView | undefined {
  return workloadProjector(settings)(row, obj);
}

/** `projectWorkload` for one configuration, its kept keys worked out once (a watch's every event). */
export function workloadProjector(
  settings: ProjectionSettings,
): (row: WorkloadKindRow, obj: unknown) => WorkloadView | undefined {
  const kept = keptWorkloadKeys(settings.keys);
  return (row, obj) => project(row, obj, kept, settings.keepLabels);
}

function project(
  row: WorkloadKindRow,
  obj: unknown,
  kept: readonly string[],
  keepLabels: boolean,
): WorkloadView | undefined {
  const id = objectIdentity(obj);
  if (!id) return undefined;
  const { kind } = row;
  const template = row.templatePath && objectAt(obj, row.templatePath);
  const revisionDigest = stringAt(obj, ['metadata', 'labels', REVISION_DIGEST]);
  return {
    ref: { kind, namespace: id.namespace, name: id.name },
    uid: id.uid,
    resourceVersion: id.resourceVersion,
    generation: numberAt(obj, ['metadata', 'generation']),
    creationTimestamp: id.creationTimestamp,
    annotations: keptAnnotations(obj, kept),
    templateAnnotations: keptAnnotations(template, kept),
    podSpec: projectPodSpec(template),
    controller: controllerOf(obj),
    ...specFlags(row, obj),
    ...(keepLabels ? { labels: keptLabels(obj, true) } : {}),
    ...(revisionDigest !== undefined && { revisionDigest }),
    ...(row.health !== undefined && {
      rolloutStatus: row.statusPaths
        ? configuredStatus(obj, row.statusPaths)
        : STATUS_READERS[row.health](obj),
    }),
  };
}
