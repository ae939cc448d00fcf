/**
 * Source-side projections (§9.2 items 1–2): wire object → view. Data is hashed here and dropped;
 * every view is built from new objects, so none holds a reference into the wire object (a Secret's
 * `data`, or `last-applied-configuration` among its annotations). Malformed objects (no name,
 * namespace or uid) project to undefined and are dropped by the caller.
 */
import { hashConfigMap, hashSecret, hashSecretProviderClassPodStatus } from '../core/hash.ts';
import { keptSourceKeys, type SourceAnnotationName } from '../core/annotations.ts';
import type { AnnotationKeys, Annotations, Labels, SourceType, SourceView } from '../core/types.ts';
import type { PodStatusView, ProviderClassView } from '../watch/ports.ts';
import { objectAt, objectsAt, stringAt, stringMapAt } from '../core/json.ts';

/**
 * What every projection of a workload or source keeps, whichever path read the object (a watch, a
 * GET after a conflict, `kreload explain`): one value per configuration, so the paths cannot differ.
 * Labels are required, not optional: a projection that drops them unbinds ReloadPolicy selectors.
 */
export interface ProjectionSettings {
  readonly keys: AnnotationKeys;
  /** Keep `metadata.labels` (`--enable-reload-policies`: policy selectors read them). */
  readonly keepLabels: boolean;
}

/** The settings of one configuration (the fields of `Options` that decide them). */
export function projectionSettings(options: {
  readonly annotationKeys: AnnotationKeys;
  readonly enableReloadPolicies: boolean;
}): ProjectionSettings {
  return { keys: options.annotationKeys, keepLabels: options.enableReloadPolicies };
}

/** The S keys a source view keeps (§3.1): `ignore` and `match`, with their override flags. */
export type SourceAnnotationKeys = Pick<AnnotationKeys, SourceAnnotationName> & {
  /** Keep `metadata.labels` too (`--enable-reload-policies`: policy selectors read them). */
  readonly keepLabels: boolean;
};

/** The source-side part of the settings. */
export function sourceKeysOf(settings: ProjectionSettings): SourceAnnotationKeys {
  return {
    ignore: settings.keys.ignore,
    match: settings.keys.match,
    keepLabels: settings.keepLabels,
  };
}

export interface ObjectIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly creationTimestamp: string | undefined;
}

export function objectIdentity(obj: unknown): ObjectIdentity | undefined {
  const namespace = stringAt(obj, ['metadata', 'namespace']);
  const name = stringAt(obj, ['metadata', 'name']);
  const uid = stringAt(obj, ['metadata', 'uid']);
  if (!namespace || !name || !uid) return undefined;
  return {
    namespace,
    name,
    uid,
    resourceVersion: stringAt(obj, ['metadata', 'resourceVersion']) ?? '',
    creationTimestamp: stringAt(obj, ['metadata', 'creationTimestamp']),
  };
}

/**
 * The map of an object that keeps none of its annotations: one frozen value shared by all, since most
 * sources carry none of the kept keys and an empty object per cached source costs 28 bytes each.
 */
export const NO_ANNOTATIONS: Annotations = Object.freeze({});

/**
 * A new map holding only `keys` (in the given order) that are present with a string value;
 * `NO_ANNOTATIONS` when none is.
 */
export function keptAnnotations(obj: unknown, keys: readonly string[]): Annotations {
  // Read in place: a copy of every annotation (`last-applied-configuration` among them) per event
  // would be thrown away at once.
  const all = objectAt(obj, ['metadata', 'annotations']);
  if (all === undefined) return NO_ANNOTATIONS;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    if (!Object.hasOwn(all, key)) continue;
    const value = all[key];
    if (typeof value === 'string') (kept ??= {})[key] = value;
  }
  return kept ?? NO_ANNOTATIONS;
}

/** A new map of `metadata.labels` when `keep`; undefined otherwise, so nothing is held. */
export function keptLabels(obj: unknown, keep: boolean): Labels | undefined {
  return keep ? (stringMapAt(obj, ['metadata', 'labels']) ?? {}) : undefined;
}

function sourceView(
  obj: unknown,
  type: SourceType,
  keys: SourceAnnotationKeys,
  hash: (obj: unknown) => string,
): SourceView | undefined {
  const id = objectIdentity(obj);
  if (!id) return undefined;
  return {
    ref: { type, namespace: id.namespace, name: id.name },
    uid: id.uid,
    resourceVersion: id.resourceVersion,
    creationTimestamp: id.creationTimestamp,
    hash: hash(obj),
    annotations: keptAnnotations(obj, keptSourceKeys(keys)),
    ...(keys.keepLabels ? { labels: keptLabels(obj, true) } : {}),
  };
}

export function projectConfigMap(obj: unknown, keys: SourceAnnotationKeys): SourceView | undefined {
  return sourceView(obj, 'CONFIGMAP', keys, (o) =>
    hashConfigMap(stringMapAt(o, ['data']), stringMapAt(o, ['binaryData'])),
  );
}

/** `stringData` never comes back from the API server and `type` is not hashed (§4.1). */
export function projectSecret(obj: unknown, keys: SourceAnnotationKeys): SourceView | undefined {
  return sourceView(obj, 'SECRET', keys, (o) => hashSecret(stringMapAt(o, ['data'])));
}

/** Undefined without `status.secretProviderClassName`: such an SPCPS cannot be attributed (§14). */
export function projectSecretProviderClassPodStatus(obj: unknown): PodStatusView | undefined {
  const id = objectIdentity(obj);
  const className = stringAt(obj, ['status', 'secretProviderClassName']);
  if (!id || !className) return undefined;
  const objects = objectsAt(obj, ['status', 'objects']).map((entry) => ({
    id: stringAt(entry, ['id']) ?? '',
    version: stringAt(entry, ['version']) ?? '',
  }));
  return { ...id, className, hash: hashSecretProviderClassPodStatus(className, objects) };
}

/**
 * Metadata only: a SecretProviderClass supplies the S annotations of its SPCPS (§9.2 item 2), and
 * its labels for policy selectors when kept.
 */
export function projectSecretProviderClass(
  obj: unknown,
  keys: SourceAnnotationKeys,
): ProviderClassView | undefined {
  const id = objectIdentity(obj);
  if (!id) return undefined;
  return {
    namespace: id.namespace,
    name: id.name,
    annotations: keptAnnotations(obj, keptSourceKeys(keys)),
    ...(keys.keepLabels ? { labels: keptLabels(obj, true) } : {}),
  };
}

/** Namespaces (for `--namespace-selector`) are kept by name only. */
export function projectNamespaceName(obj: unknown): string | undefined {
  const name = stringAt(obj, ['metadata', 'name']);
  return name === '' ? undefined : name;
}
