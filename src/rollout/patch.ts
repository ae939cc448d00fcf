/**
 * Patch bodies (§6, §7, §10): one patch per write, carrying the resourceVersion precondition, the W
 * state and, for a roll, the strategy's template change.
 */
import type { WorkloadView } from '../core/types.ts';
import {
  BASELINE,
  EVICT_BEFORE,
  INSTANTIATE_PENDING,
  PENDING_ROLL,
  ROLLOUT_FAILED,
  REVISION_DIGEST,
  ROLLOUT_HALTED,
  SOURCE_HASHES,
} from '../core/types.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { setAt } from '../core/json.ts';
import type { PatchType, WorkloadKindRow } from './kinds.ts';
import type { ReferenceLists } from './snapshots.ts';
import type { EnvWrite, TemplateChange } from './template-change.ts';
import {
  compareStrings,
  containersWithEnv,
  envWritesByContainer,
  TEMPLATE_ANNOTATIONS,
} from './template-change.ts';

export type { EnvWrite, TemplateChange } from './template-change.ts';

/**
 * `spec.paused` and the paused-at W annotation of a Deployment (§7.2): pause with the roll (rule 1),
 * or resume (rule 4).
 */
export type PauseWrite =
  | { readonly action: 'pause'; readonly pausedAtKey: string; readonly pausedAt: string }
  | { readonly action: 'resume'; readonly pausedAtKey: string };

/**
 * Everything one write changes on a workload. For the annotation values, `undefined` leaves the
 * annotation untouched and `null` removes it (§6.1 item 3).
 */
export interface WorkloadChanges extends TemplateChange {
  /** W `kreload.io/source-hashes` (kinds whose applied state lives in W). */
  readonly workloadSourceHashes?: string | null | undefined;
  /** W `kreload.io/baseline`. */
  readonly baseline?: string | null | undefined;
  /** W `kreload.io/instantiate-pending` (a DeploymentConfig without a ConfigChange trigger). */
  readonly instantiatePending?: string | null | undefined;
  /** W `kreload.io/evict-before` (a workload rolled by eviction, docs/adr/0044). */
  readonly evictBefore?: string | null | undefined;
  /** W `kreload.io/pending-roll`: removed by the roll that covers the held changes. */
  readonly pendingRoll?: string | null | undefined;
  /** W `kreload.io/rollout-failed`: removed by the next roll (docs/adr/0043). */
  readonly rolloutFailed?: null | undefined;
  /** W label `kreload.io/revision-digest` (config revisions, docs/adr/0036). */
  readonly revisionDigest?: string | null | undefined;
  /** Deployments with a pause period only. */
  readonly pause?: PauseWrite | undefined;
  /**
   * Config revisions (docs/adr/0036): the pod spec's reference lists, rewritten from the live
   * object. Sent whole, with the env writes applied to the containers.
   */
  readonly references?: ReferenceLists | undefined;
}

export interface Patch {
  readonly type: PatchType;
  readonly body: JsonObject;
}

/**
 * The live `containers` list of the pod template, from a GET at write time. A merge patch replaces
 * lists whole, so env-var changes on custom resources carry the full list (§10).
 */
export interface LiveTemplate {
  readonly containers: readonly JsonValue[];
}

/** Raised for a patch that cannot be built from the given input (a caller bug, not bad input). */
export class UnsupportedPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedPatchError';
  }
}

type WorkloadField =
  | 'workloadSourceHashes'
  | 'baseline'
  | 'instantiatePending'
  | 'evictBefore'
  | 'pendingRoll'
  | 'rolloutFailed';

/** Annotation order inside each map is fixed so the same input always gives the same bytes. */
const WORKLOAD_ANNOTATIONS: readonly (readonly [string, WorkloadField])[] = [
  [BASELINE, 'baseline'],
  [SOURCE_HASHES, 'workloadSourceHashes'],
  [INSTANTIATE_PENDING, 'instantiatePending'],
  [EVICT_BEFORE, 'evictBefore'],
  [PENDING_ROLL, 'pendingRoll'],
  [ROLLOUT_FAILED, 'rolloutFailed'],
];

function collect<F extends string>(
  changes: Readonly<Partial<Record<F, string | null | undefined>>>,
  fields: readonly (readonly [string, F])[],
): JsonObject {
  const out: JsonObject = {};
  for (const [annotation, field] of fields) {
    const value = changes[field];
    if (value !== undefined) out[annotation] = value;
  }
  return out;
}

function nonEmpty(object: JsonObject): JsonObject | undefined {
  return Object.keys(object).length > 0 ? object : undefined;
}

/** W annotations of one write: state maps first, then paused-at (set by a pause, removed on resume). */
function workloadAnnotations(changes: WorkloadChanges): JsonObject | undefined {
  const out = collect(changes, WORKLOAD_ANNOTATIONS);
  const pause = changes.pause;
  if (pause) out[pause.pausedAtKey] = pause.action === 'pause' ? pause.pausedAt : null;
  return nonEmpty(out);
}

/** Strategic merge: only the containers written, in pod-spec order, env entries merged by name. */
function strategicContainers(
  writes: readonly EnvWrite[],
  containerOrder: readonly string[],
): JsonObject[] {
  const byContainer = envWritesByContainer(writes);
  const rank = (name: string): number => {
    const index = containerOrder.indexOf(name);
    return index < 0 ? containerOrder.length : index;
  };
  const names = [...byContainer.keys()].sort((a, b) => rank(a) - rank(b) || compareStrings(a, b));
  return names.map((name) => ({
    name,
    env: (byContainer.get(name) ?? []).map((write) => ({ name: write.name, value: write.value })),
  }));
}

function containersPatch(
  type: PatchType,
  view: Pick<WorkloadView, 'podSpec'>,
  changes: WorkloadChanges,
  live: LiveTemplate | undefined,
): JsonValue[] {
  if (type === 'strategic') {
    return strategicContainers(
      changes.envWrites,
      view.podSpec.containers.map((c) => c.name),
    );
  }
  if (!live) {
    throw new UnsupportedPatchError('env-var changes in a merge patch need the live containers');
  }
  return containersWithEnv(live.containers, changes.envWrites);
}

function templateBody(
  type: PatchType,
  view: Pick<WorkloadView, 'podSpec'>,
  changes: WorkloadChanges,
  live: LiveTemplate | undefined,
): JsonObject | undefined {
  const template: JsonObject = {};
  const annotations = nonEmpty(collect(changes, TEMPLATE_ANNOTATIONS));
  if (annotations) template.metadata = { annotations };
  const references = changes.references;
  if (references) {
    // Strategic merge keys containers and volumes by name: the full lists set every reference.
    template.spec = {
      ...references,
      containers: containersWithEnv(references.containers, changes.envWrites),
    };
  } else if (changes.envWrites.length > 0) {
    template.spec = { containers: containersPatch(type, view, changes, live) };
  }
  return nonEmpty(template);
}

/** Whether a roll of this kind needs the live containers list first (env vars in a merge patch). */
export function needsLiveContainers(row: WorkloadKindRow, changes: TemplateChange): boolean {
  return row.templatePatchType === 'merge' && changes.envWrites.length > 0;
}

function metadataOf(
  resourceVersion: string,
  annotations: JsonObject | undefined,
  changes?: WorkloadChanges,
): JsonObject {
  const metadata: JsonObject = { resourceVersion };
  if (changes?.revisionDigest !== undefined) {
    metadata.labels = { [REVISION_DIGEST]: changes.revisionDigest };
  }
  if (annotations) metadata.annotations = annotations;
  return metadata;
}

/**
 * The single patch of §6/§7.1/§7.2 for a template-patching kind: W state (and paused-at) under
 * `metadata` with the resourceVersion precondition (§10), `spec.paused` for a pause or resume, and
 * the strategy's template change under the kind's pod template path. Without a template change it
 * is a metadata-only patch (plus `spec.paused` for a resume). Undefined: nothing to write.
 *
 * A merge-patch kind (Rollout) needs `live` for env-var changes; annotation changes do not.
 */
export function buildPatch(
  row: WorkloadKindRow,
  view: Pick<WorkloadView, 'resourceVersion' | 'podSpec'>,
  changes: WorkloadChanges,
  live?: LiveTemplate,
): Patch | undefined {
  const template = templateBody(row.templatePatchType, view, changes, live);
  const annotations = workloadAnnotations(changes);
  const labels = changes.revisionDigest !== undefined;
  if (!template && !annotations && !labels && !changes.pause) return undefined;
  const body: JsonObject = { metadata: metadataOf(view.resourceVersion, annotations, changes) };
  if (changes.pause) body.spec = { paused: changes.pause.action === 'pause' };
  if (template) {
    if (row.templatePath === undefined) {
      throw new UnsupportedPatchError(`a ${row.kind} has no pod template to change`);
    }
    setAt(body, row.templatePath, template);
  }
  return { type: template ? row.templatePatchType : row.metadataPatchType, body };
}

/**
 * Argo Rollout `restart` (§7.5): W state and `spec.restartAt`; the template is never touched.
 * `restartAt` is RFC 3339 UTC with seconds precision.
 */
export function buildRestartPatch(
  row: WorkloadKindRow,
  view: Pick<WorkloadView, 'resourceVersion'>,
  changes: WorkloadChanges,
  restartAt: string,
): Patch {
  return {
    type: row.templatePatchType,
    body: {
      metadata: metadataOf(view.resourceVersion, workloadAnnotations(changes)),
      spec: { restartAt },
    },
  };
}

/**
 * Removes `kreload.io/instantiate-pending` once instantiate succeeded. Without a resourceVersion:
 * the marker is kreload's own, removing it is idempotent, and the template patch that set it has
 * already moved the object past the version the reconcile read.
 */
export function instantiateDonePatch(row: WorkloadKindRow): Patch {
  return {
    type: row.metadataPatchType,
    body: { metadata: { annotations: { [INSTANTIATE_PENDING]: null } } },
  };
}

/**
 * The W-only write that starts a roll by eviction (docs/adr/0044): the applied state and the
 * `kreload.io/evict-before` marker, with the resourceVersion precondition. The template is never
 * part of it.
 */
export function buildEvictStartPatch(
  row: WorkloadKindRow,
  view: Pick<WorkloadView, 'resourceVersion'>,
  changes: WorkloadChanges,
  evictBefore: string,
): Patch {
  const annotations = workloadAnnotations({
    envWrites: [],
    workloadSourceHashes: changes.workloadSourceHashes,
    baseline: changes.baseline,
    evictBefore,
  });
  return {
    type: row.metadataPatchType,
    body: { metadata: metadataOf(view.resourceVersion, annotations) },
  };
}

/**
 * Removes `kreload.io/evict-before` once no pod older than it is left. With the marker's value as
 * a JSON-merge-like guard is not possible in a strategic patch, so the resourceVersion the
 * reconcile read is the precondition: a newer roll's marker is never removed by an older round.
 */
export function evictDonePatch(
  row: WorkloadKindRow,
  view: Pick<WorkloadView, 'resourceVersion'>,
): Patch {
  return {
    type: row.metadataPatchType,
    body: {
      metadata: { resourceVersion: view.resourceVersion, annotations: { [EVICT_BEFORE]: null } },
    },
  };
}

/** Body of `deploymentconfigs/<name>/instantiate` (§7.6), exactly as the contract gives it. */
export function deploymentRequest(name: string): JsonObject {
  return {
    kind: 'DeploymentRequest',
    apiVersion: 'apps.openshift.io/v1',
    name,
    latest: true,
    force: true,
  };
}

/** RFC 3339 UTC with seconds precision (`2026-01-02T03:04:05Z`), the form of paused-at and restartAt. */
export function rfc3339Seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The halt marker (docs/adr/0043) on a workload's metadata, never its template: it rolls nothing.
 * `kreload.io/rollout-failed` goes with it and stays when a user removes the marker, so the resume
 * is in the cluster from that moment on, not only in the memory of the process that saw it.
 */
export function haltMarkerAnnotations(marker: string): Record<string, string> {
  return { [ROLLOUT_HALTED]: marker, [ROLLOUT_FAILED]: marker };
}

export function haltMarkerPatch(row: WorkloadKindRow, marker: string): Patch {
  return {
    type: row.metadataPatchType,
    body: { metadata: { annotations: haltMarkerAnnotations(marker) } },
  };
}
