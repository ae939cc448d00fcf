import type { SourceKey, SourceRef, SourceType, WorkloadKey, WorkloadRef } from './types.ts';
import { sourceTypeOfPrefix, sourceTypeRow } from './source-types.ts';

export function sourceKey(type: SourceType, name: string): SourceKey {
  return `${sourceTypeRow(type).keyPrefix}/${name}`;
}

export function sourceKeyOf(ref: SourceRef): SourceKey {
  return sourceKey(ref.type, ref.name);
}

/** Parses a source key; undefined when it is not one (malformed persisted state). */
export function parseSourceKey(key: string): { type: SourceType; name: string } | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) return undefined;
  const type = sourceTypeOfPrefix(key.slice(0, slash));
  if (type === undefined) return undefined;
  return { type, name: key.slice(slash + 1) };
}

export function workloadKey(ref: WorkloadRef): WorkloadKey {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/**
 * The ref of a key; undefined when it has not three non-empty parts. The kind is not checked here:
 * kinds configured at run time are keys too, and the effective kind table answers for them.
 */
export function parseWorkloadKey(key: string): WorkloadRef | undefined {
  const [kind, namespace, name, ...rest] = key.split('/');
  if (rest.length > 0 || !kind || !namespace || !name) return undefined;
  return { kind, namespace, name };
}
