/**
 * The strategy's template change (§6) applied in memory to a wire object: for the Job built from a
 * CronJob (§7.3), the recreated Job (§7.4) and the full container list of a merge patch (§10).
 */
import { LAST_RELOADED_FROM, SNAPSHOTS, SOURCE_HASHES } from '../core/types.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { cloneJson, ensureObjectAt, isJsonObject } from '../core/json.ts';

/** One `STAKATER_*` env var to set on one regular container (§6.1). */
export interface EnvWrite {
  readonly container: string;
  readonly name: string;
  readonly value: string;
}

/**
 * What a roll changes in a pod template. For the annotations, `undefined` leaves the annotation
 * untouched and `null` removes it (§6.1 item 3).
 */
export interface TemplateChange {
  readonly envWrites: readonly EnvWrite[];
  /** PT `reloader.stakater.com/last-reloaded-from` (annotations strategy, §6.2). */
  readonly lastReloadedFrom?: string | undefined;
  /** PT `kreload.io/source-hashes`. */
  readonly templateSourceHashes?: string | null | undefined;
  /** PT `kreload.io/snapshots` (config revisions, docs/adr/0036). */
  readonly snapshots?: string | null | undefined;
}

type TemplateField = 'lastReloadedFrom' | 'templateSourceHashes' | 'snapshots';

/** Annotation order is fixed so the same input always gives the same bytes. */
export const TEMPLATE_ANNOTATIONS: readonly (readonly [string, TemplateField])[] = [
  [LAST_RELOADED_FROM, 'lastReloadedFrom'],
  [SOURCE_HASHES, 'templateSourceHashes'],
  [SNAPSHOTS, 'snapshots'],
];

export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** Writes grouped by container, each group sorted by variable name. */
export function envWritesByContainer(
  writes: readonly EnvWrite[],
): ReadonlyMap<string, readonly EnvWrite[]> {
  const byContainer = new Map<string, EnvWrite[]>();
  for (const write of writes) {
    const list = byContainer.get(write.container) ?? [];
    list.push(write);
    byContainer.set(write.container, list);
  }
  for (const list of byContainer.values()) list.sort((a, b) => compareStrings(a.name, b.name));
  return byContainer;
}

/** Sets each variable in place (dropping a `valueFrom`), or appends it when the list lacks it. */
function withEnv(env: JsonValue | undefined, writes: readonly EnvWrite[]): JsonValue[] {
  const entries: JsonValue[] = Array.isArray(env) ? [...env] : [];
  for (const write of writes) {
    const entry: JsonObject = { name: write.name, value: write.value };
    const index = entries.findIndex((e) => isJsonObject(e) && e.name === write.name);
    if (index < 0) entries.push(entry);
    else entries[index] = entry;
  }
  return entries;
}

/**
 * A copy of a `containers` list with the env writes applied; containers without writes and every
 * other field are kept as they are.
 */
export function containersWithEnv(
  containers: readonly JsonValue[],
  writes: readonly EnvWrite[],
): JsonValue[] {
  const byContainer = envWritesByContainer(writes);
  return containers.map((container) => {
    if (!isJsonObject(container) || typeof container.name !== 'string') return container;
    const own = byContainer.get(container.name);
    if (!own) return cloneJson(container);
    return { ...cloneJson(container), env: withEnv(container.env, own) };
  });
}

/** A copy of a pod template with the change applied, as the server would after a patch. */
export function applyTemplateChange(template: JsonObject, change: TemplateChange): JsonObject {
  const next = cloneJson(template);
  for (const [annotation, field] of TEMPLATE_ANNOTATIONS) {
    const value = change[field];
    if (value === undefined) continue;
    const annotations = ensureObjectAt(next, ['metadata', 'annotations']);
    if (value === null) Reflect.deleteProperty(annotations, annotation);
    else annotations[annotation] = value;
  }
  if (change.envWrites.length > 0) {
    const spec = ensureObjectAt(next, ['spec']);
    spec.containers = containersWithEnv(
      Array.isArray(spec.containers) ? spec.containers : [],
      change.envWrites,
    );
  }
  return next;
}
