/**
 * Source content as a pure function of (source, key, version): the bench never keeps source data
 * in memory (K1 has 20 000 × 10 KiB), yet knows the exact hash every write produces.
 */
import { hashConfigMap, hashSecret } from '../../src/core/hash.ts';
import { sourceKey, type SourceType } from './resources.ts';

export interface DataKey {
  readonly key: string;
  /** Size of the value in bytes (at least the length of its version prefix). */
  readonly bytes: number;
}

export interface SourceSpec {
  readonly type: SourceType;
  readonly namespace: string;
  readonly name: string;
  readonly keys: readonly DataKey[];
}

/** Current version of each data key; a key missing from the map is at version 0. */
export type KeyVersions = ReadonlyMap<string, number>;

const FILLER = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.';

export function keyOfSource(spec: SourceSpec): string {
  return sourceKey(spec.type, spec.namespace, spec.name);
}

/** `<name>.<key>.v<version>.` followed by filler up to `bytes`: unique per version, fixed size. */
export function valueOf(spec: SourceSpec, dataKey: DataKey, version: number): string {
  const prefix = `${spec.name}.${dataKey.key}.v${version}.`;
  if (prefix.length >= dataKey.bytes) return prefix;
  const fill = FILLER.repeat(Math.ceil((dataKey.bytes - prefix.length) / FILLER.length));
  return prefix + fill.slice(0, dataKey.bytes - prefix.length);
}

function encodeValue(type: SourceType, value: string): string {
  return type === 'secret' ? Buffer.from(value, 'utf8').toString('base64') : value;
}

/** The `data` map as the API carries it (Secret values base64-encoded). */
export function wireData(spec: SourceSpec, versions: KeyVersions): Record<string, string> {
  return Object.fromEntries(
    spec.keys.map((dataKey) => [
      dataKey.key,
      encodeValue(spec.type, valueOf(spec, dataKey, versions.get(dataKey.key) ?? 0)),
    ]),
  );
}

/** The hash a Reloader-compatible controller writes for this content (spec §4.1). */
export function sourceHash(spec: SourceSpec, versions: KeyVersions): string {
  const data = wireData(spec, versions);
  return spec.type === 'secret' ? hashSecret(data) : hashConfigMap(data, undefined);
}

export function sourceManifest(
  spec: SourceSpec,
  details: { versions: KeyVersions; labels: Readonly<Record<string, string>> },
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: spec.type === 'secret' ? 'Secret' : 'ConfigMap',
    metadata: { name: spec.name, namespace: spec.namespace, labels: { ...details.labels } },
    ...(spec.type === 'secret' ? { type: 'Opaque' } : {}),
    data: wireData(spec, details.versions),
  };
}

/** A JSON merge patch that sets one key to a version. */
export function dataPatch(spec: SourceSpec, key: string, version: number): Record<string, unknown> {
  const dataKey = spec.keys.find((candidate) => candidate.key === key);
  if (dataKey === undefined) throw new Error(`${keyOfSource(spec)} has no data key ${key}`);
  return { data: { [key]: encodeValue(spec.type, valueOf(spec, dataKey, version)) } };
}

/** A JSON merge patch that changes only an annotation: the hash stays the same (S4). */
export function noisePatch(counter: number): Record<string, unknown> {
  return { metadata: { annotations: { 'bench.kreload.io/noise': String(counter) } } };
}
