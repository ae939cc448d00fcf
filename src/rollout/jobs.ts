/**
 * The Job manifests of the batch rolls: the Job a CronJob roll creates (§7.3 item 2) and the Job a
 * Job roll creates again under the same name (§7.4 item 1). Pure: the caller GETs the full object.
 */
import { sha1Hex } from '../core/hash.ts';
import { BASELINE, CRONJOB_INSTANTIATE, SOURCE_HASHES } from '../core/types.ts';
import type { JsonObject } from '../core/json.ts';
import { cloneJson, ensureObjectAt, isJsonObject, objectAt, stringAt } from '../core/json.ts';
import type { WorkloadChanges } from './patch.ts';
import type { TemplateChange } from './template-change.ts';
import { applyTemplateChange } from './template-change.ts';

/** The API served an object without a field every object of its kind has. */
export class MalformedObjectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedObjectError';
  }
}

function requiredString(object: JsonObject, path: readonly string[]): string {
  const value = stringAt(object, path);
  if (value === undefined) throw new MalformedObjectError(`object without ${path.join('.')}`);
  return value;
}

function withTemplateChange(spec: JsonObject | undefined, change: TemplateChange): JsonObject {
  const next = cloneJson(spec ?? {});
  next.template = applyTemplateChange(objectAt(next, ['template']) ?? {}, change);
  return next;
}

/**
 * A Job's name becomes the `job-name` label of its pods, and a label value has at most 63
 * characters: a longer Job name would be accepted and then never get a pod.
 */
export const JOB_NAME_MAX_LENGTH = 63;
/** Hex digits of the run name's suffix: 40 bits, so two change windows of one CronJob never meet. */
const RUN_SUFFIX_LENGTH = 10;

/** What identifies one change window of a CronJob (docs/adr/0020-deterministic-cronjob-job-names.md). */
export interface CronJobRunIdentity {
  readonly cronJobName: string;
  readonly cronJobUid: string;
  /** The CronJob's W `kreload.io/source-hashes` before this roll; undefined when it has none. */
  readonly previousHashes: string | undefined;
  /** The W `kreload.io/source-hashes` this roll writes. */
  readonly sourceHashes: string;
}

/**
 * The name of the one Job a change window creates: `<cronjob>-<10 hex digits>`, the prefix cut so
 * that the name stays a valid label value. The same window always gives the same name, so a POST
 * repeated after a lost answer, a crash or a failover meets AlreadyExists instead of a second run.
 * The CronJob's UID keeps a CronJob deleted and created again under its name from meeting old runs;
 * the previous hashes keep a change back to an earlier state from meeting that state's run.
 */
export function cronJobRunName(identity: CronJobRunIdentity): string {
  const digest = sha1Hex(
    JSON.stringify([identity.cronJobUid, identity.previousHashes ?? null, identity.sourceHashes]),
  ).slice(0, RUN_SUFFIX_LENGTH);
  const room = JOB_NAME_MAX_LENGTH - RUN_SUFFIX_LENGTH - 1;
  // A cut may end in `-` or `.`, which neither a DNS subdomain nor a label value may have there.
  const prefix = identity.cronJobName.slice(0, room).replace(/[-.]+$/, '');
  return `${prefix}-${digest}`;
}

export interface CronJobRun {
  /** The Job's name, from `cronJobRunName`. */
  readonly name: string;
  /** The CronJob's W `kreload.io/source-hashes` after this roll: the idempotency guard's key. */
  readonly sourceHashes: string;
  /** The strategy's change (env var or last-reloaded-from), applied to the job template. */
  readonly change: TemplateChange;
}

/**
 * §7.3 item 2, with the run's deterministic name instead of `generateName` (ADR 0020), in the
 * CronJob's namespace; labels of the job template;
 * annotations `instantiate: manual`, overlaid with the job template's, plus `source-hashes`; one
 * controller ownerReference to the CronJob; spec = the job template's spec with the change applied.
 */
export function buildJobFromCronJob(cronJob: JsonObject, run: CronJobRun): JsonObject {
  const name = requiredString(cronJob, ['metadata', 'name']);
  const jobTemplate = objectAt(cronJob, ['spec', 'jobTemplate']);
  const templateMetadata = objectAt(jobTemplate, ['metadata']);
  const metadata: JsonObject = {
    name: run.name,
    namespace: requiredString(cronJob, ['metadata', 'namespace']),
  };
  const labels = objectAt(templateMetadata, ['labels']);
  if (labels) metadata.labels = cloneJson(labels);
  metadata.annotations = {
    [CRONJOB_INSTANTIATE]: 'manual',
    ...cloneJson(objectAt(templateMetadata, ['annotations']) ?? {}),
    [SOURCE_HASHES]: run.sourceHashes,
  };
  metadata.ownerReferences = [
    {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      name,
      uid: requiredString(cronJob, ['metadata', 'uid']),
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata,
    spec: withTemplateChange(objectAt(jobTemplate, ['spec']), run.change),
  };
}

/** Server-set metadata that a create must not carry (§7.4 item 1). */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
] as const;

/** Pod-template labels the Job controller sets from the old Job's UID and name. */
const CONTROLLER_LABELS = [
  'controller-uid',
  'batch.kubernetes.io/controller-uid',
  'job-name',
  'batch.kubernetes.io/job-name',
] as const;

/** W state updates on the Job's own annotations; null removes. */
function applyWorkloadState(metadata: JsonObject, changes: WorkloadChanges): void {
  const updates: readonly (readonly [string, string | null | undefined])[] = [
    [BASELINE, changes.baseline],
    [SOURCE_HASHES, changes.workloadSourceHashes],
  ];
  for (const [key, value] of updates) {
    if (value === undefined) continue;
    const annotations = ensureObjectAt(metadata, ['annotations']);
    if (value === null) Reflect.deleteProperty(annotations, key);
    else annotations[key] = value;
  }
}

/** Without `manualSelector`, the selector and its labels are generated again for the new UID. */
function dropGeneratedSelector(spec: JsonObject): void {
  if (spec.manualSelector === true) return;
  Reflect.deleteProperty(spec, 'selector');
  const labels = objectAt(spec, ['template', 'metadata', 'labels']);
  if (labels) for (const label of CONTROLLER_LABELS) Reflect.deleteProperty(labels, label);
}

/**
 * §7.4 item 1: the Job to create after deleting `job`: server-set fields and status dropped; name,
 * labels, annotations (with the state updates) and ownerReferences kept; the template change
 * applied; controller labels and selector removed unless `spec.manualSelector` is true (D20).
 */
export function buildRecreatedJob(job: JsonObject, changes: WorkloadChanges): JsonObject {
  const next = cloneJson(job);
  Reflect.deleteProperty(next, 'status');
  const metadata = objectAt(next, ['metadata']);
  if (!metadata || !isJsonObject(next.spec)) {
    throw new MalformedObjectError('Job without metadata or spec');
  }
  for (const field of SERVER_METADATA) Reflect.deleteProperty(metadata, field);
  applyWorkloadState(metadata, changes);
  next.spec = withTemplateChange(next.spec, changes);
  dropGeneratedSelector(next.spec);
  return next;
}
