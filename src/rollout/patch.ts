import type { WorkloadView } from '../core/types.ts';
import { BASELINE, LAST_RELOADED_FROM, SOURCE_HASHES } from '../core/types.ts';
import type { PatchType, WorkloadKindRow } from './kinds.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;
// An interface, because a recursive alias through Record<> is rejected by tsc.
export interface JsonObject {
  [key: string]: JsonValue;
}

/** One `STAKATER_*` env var to set on one regular container (§6.1). */
export interface EnvWrite {
  readonly container: string;
  readonly name: string;
  readonly value: string;
}

/**
 * Everything one write changes on a workload. For the annotation values, `undefined` leaves the
 * annotation untouched and `null` removes it (§6.1 item 3).
 */
export interface WorkloadChanges {
  readonly envWrites: readonly EnvWrite[];
  /** PT `reloader.stakater.com/last-reloaded-from` (annotations strategy, §6.2). */
  readonly lastReloadedFrom?: string | undefined;
  /** PT `kreload.io/source-hashes`. */
  readonly templateSourceHashes?: string | null | undefined;
  /** W `kreload.io/source-hashes` (kinds whose applied state lives in W). */
  readonly workloadSourceHashes?: string | null | undefined;
  /** W `kreload.io/baseline`. */
  readonly baseline?: string | null | undefined;
}

export interface Patch {
  readonly type: PatchType;
  readonly body: JsonObject;
}

/** Raised for a kind × change combination whose patch form is not implemented (e.g. CRD env vars). */
export class UnsupportedPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedPatchError';
  }
}

type ChangeField =
  'lastReloadedFrom' | 'templateSourceHashes' | 'workloadSourceHashes' | 'baseline';

/** Annotation order inside each map is fixed so the same input always gives the same bytes. */
const TEMPLATE_ANNOTATIONS: readonly (readonly [string, ChangeField])[] = [
  [LAST_RELOADED_FROM, 'lastReloadedFrom'],
  [SOURCE_HASHES, 'templateSourceHashes'],
];
const WORKLOAD_ANNOTATIONS: readonly (readonly [string, ChangeField])[] = [
  [BASELINE, 'baseline'],
  [SOURCE_HASHES, 'workloadSourceHashes'],
];

function annotationChanges(
  changes: WorkloadChanges,
  fields: readonly (readonly [string, ChangeField])[],
): JsonObject | undefined {
  const out: JsonObject = {};
  for (const [annotation, field] of fields) {
    const value = changes[field];
    if (value !== undefined) out[annotation] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Containers in pod-spec order, each with its env entries sorted by name. */
function containerEnvPatch(
  writes: readonly EnvWrite[],
  containerOrder: readonly string[],
): JsonObject[] {
  const byContainer = new Map<string, EnvWrite[]>();
  for (const write of writes) {
    const list = byContainer.get(write.container) ?? [];
    list.push(write);
    byContainer.set(write.container, list);
  }
  const rank = (name: string): number => {
    const index = containerOrder.indexOf(name);
    return index < 0 ? containerOrder.length : index;
  };
  const names = [...byContainer.keys()].sort((a, b) => rank(a) - rank(b) || compareStrings(a, b));
  return names.map((name) => ({
    name,
    env: (byContainer.get(name) ?? [])
      .slice()
      .sort((a, b) => compareStrings(a.name, b.name))
      .map((write) => ({ name: write.name, value: write.value })),
  }));
}

function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

function templateBody(
  changes: WorkloadChanges,
  containerOrder: readonly string[],
): JsonObject | undefined {
  const template: JsonObject = {};
  const annotations = annotationChanges(changes, TEMPLATE_ANNOTATIONS);
  if (annotations) template.metadata = { annotations };
  if (changes.envWrites.length > 0) {
    template.spec = { containers: containerEnvPatch(changes.envWrites, containerOrder) };
  }
  return Object.keys(template).length > 0 ? template : undefined;
}

function nest(path: readonly string[], leaf: JsonObject): JsonObject {
  return path.reduceRight<JsonObject>((inner, segment) => ({ [segment]: inner }), leaf);
}

function checkSupported(type: PatchType, changes: WorkloadChanges): void {
  // Merge patches replace lists and JSON patches need index guards (§10): not built yet.
  if (type === 'json' || (type === 'merge' && changes.envWrites.length > 0)) {
    throw new UnsupportedPatchError(`env-var changes as a ${type} patch are not supported yet`);
  }
}

/**
 * The single patch of §6/§7.1 for a template-patching kind: W state under `metadata` with the
 * resourceVersion precondition (§10), and the strategy's template change under the kind's pod
 * template path. Without a template change it is a metadata-only patch. Undefined: nothing to write.
 */
export function buildPatch(
  row: WorkloadKindRow,
  view: Pick<WorkloadView, 'resourceVersion' | 'podSpec'>,
  changes: WorkloadChanges,
): Patch | undefined {
  const containerOrder = view.podSpec.containers.map((c) => c.name);
  const template = templateBody(changes, containerOrder);
  const workloadAnnotations = annotationChanges(changes, WORKLOAD_ANNOTATIONS);
  if (!template && !workloadAnnotations) return undefined;
  const type = template ? row.templatePatchType : row.metadataPatchType;
  checkSupported(type, changes);
  const metadata: JsonObject = { resourceVersion: view.resourceVersion };
  if (workloadAnnotations) metadata.annotations = workloadAnnotations;
  const body: JsonObject = { metadata };
  if (template) Object.assign(body, nest(row.templatePath, template));
  return { type, body };
}
