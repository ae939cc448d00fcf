// ConfigMaps and Secrets for e2e specs, and the hashes kreload must write for them, computed here
// from spec §4.1 and §4.3 with node:crypto alone: the specs never trust src/ to grade itself.
import { createHash } from 'node:crypto';
import {
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1ConfigMap,
  type V1Secret,
} from '@kubernetes/client-node';

export type SourceType = 'CONFIGMAP' | 'SECRET';

interface SourceMetadata {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface ConfigMapSpec extends SourceMetadata {
  readonly type: 'CONFIGMAP';
  readonly data?: Readonly<Record<string, string>>;
  readonly binaryData?: Readonly<Record<string, Uint8Array>>;
}

export interface SecretSpec extends SourceMetadata {
  readonly type: 'SECRET';
  /** Raw bytes; a string stands for its UTF-8 encoding. */
  readonly data: Readonly<Record<string, Uint8Array | string>>;
}

export type SourceSpec = ConfigMapSpec | SecretSpec;

export interface SourceRef {
  readonly type: SourceType;
  readonly name: string;
}

/** SHA-1 of `__RELOADER_EMPTY_DELETE_MARKER__`: the hash that stands for "source deleted". */
export const DELETE_MARKER_HASH = 'aae45badef99284e4dae01d6046154ea9d99532f';

const KEY_PREFIX: Readonly<Record<SourceType, string>> = {
  CONFIGMAP: 'configmap',
  SECRET: 'secret',
};

/** `configmap/<name>` or `secret/<name>`: the keys of kreload's state maps. */
export function sourceKey(source: SourceRef): string {
  return `${KEY_PREFIX[source.type]}/${source.name}`;
}

function bytesOf(value: Uint8Array | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
}

function sha1OfEntries(entries: readonly Buffer[]): string {
  const sorted = [...entries].sort((a, b) => Buffer.compare(a, b));
  const hash = createHash('sha1');
  sorted.forEach((entry, index) => {
    if (index > 0) hash.update(';');
    hash.update(entry);
  });
  return hash.digest('hex');
}

/** §4.1: `key=value` per data key, `key=<padded base64>` per binaryData key; byte-wise sorted. */
export function configMapHash(spec: Pick<ConfigMapSpec, 'data' | 'binaryData'>): string {
  const text = Object.entries(spec.data ?? {}).map(([key, value]) =>
    Buffer.from(`${key}=${value}`, 'utf8'),
  );
  const binary = Object.entries(spec.binaryData ?? {}).map(([key, value]) =>
    Buffer.from(`${key}=${Buffer.from(value).toString('base64')}`, 'utf8'),
  );
  return sha1OfEntries([...text, ...binary]);
}

/** §4.1: `key=` followed by the raw bytes of each value; byte-wise sorted. */
export function secretHash(spec: Pick<SecretSpec, 'data'>): string {
  return sha1OfEntries(
    Object.entries(spec.data).map(([key, value]) =>
      Buffer.concat([Buffer.from(`${key}=`, 'utf8'), bytesOf(value)]),
    ),
  );
}

export function sourceHash(spec: SourceSpec): string {
  return spec.type === 'CONFIGMAP' ? configMapHash(spec) : secretHash(spec);
}

/** §4.3: `STAKATER_` + sanitised name + `_` + TYPE. */
export function envVarName(source: SourceRef): string {
  let sanitised = '';
  let previousKept = false;
  for (const char of source.name.replace(/[a-z]/g, (letter) => letter.toUpperCase())) {
    const kept = /^[A-Z0-9]$/.test(char);
    if (kept) sanitised += char;
    else if (previousKept) sanitised += '_';
    previousKept = kept;
  }
  return `STAKATER_${sanitised}_${source.type}`;
}

const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

function base64Record(
  record: Readonly<Record<string, Uint8Array | string>> | undefined,
): Record<string, string> | undefined {
  if (record === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, bytesOf(value).toString('base64')]),
  );
}

function metadataOf(spec: SourceSpec, resourceVersion?: string) {
  return {
    name: spec.name,
    labels: { ...spec.labels },
    annotations: { ...spec.annotations },
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
  };
}

function configMapBody(spec: ConfigMapSpec, resourceVersion?: string): V1ConfigMap {
  return {
    metadata: metadataOf(spec, resourceVersion),
    data: { ...spec.data },
    binaryData: base64Record(spec.binaryData) ?? {},
  };
}

function secretBody(spec: SecretSpec, resourceVersion?: string): V1Secret {
  return {
    metadata: metadataOf(spec, resourceVersion),
    type: 'Opaque',
    data: base64Record(spec.data) ?? {},
  };
}

/** Admin-side writes of sources, in the shapes the scenario tables describe. */
export class SourceClient {
  readonly #core: CoreV1Api;

  constructor(deps: { kc: KubeConfig }) {
    this.#core = deps.kc.makeApiClient(CoreV1Api);
  }

  async create(namespace: string, spec: SourceSpec): Promise<void> {
    if (spec.type === 'CONFIGMAP') {
      await this.#core.createNamespacedConfigMap({ namespace, body: configMapBody(spec) });
    } else {
      await this.#core.createNamespacedSecret({ namespace, body: secretBody(spec) });
    }
  }

  /** Replaces the content (and labels/annotations) with `spec`'s: one update, one watch event. */
  async replace(namespace: string, spec: SourceSpec): Promise<void> {
    const { name } = spec;
    if (spec.type === 'CONFIGMAP') {
      const current = await this.#core.readNamespacedConfigMap({ name, namespace });
      const body = configMapBody(spec, current.metadata?.resourceVersion);
      await this.#core.replaceNamespacedConfigMap({ name, namespace, body });
    } else {
      const current = await this.#core.readNamespacedSecret({ name, namespace });
      const body = secretBody(spec, current.metadata?.resourceVersion);
      await this.#core.replaceNamespacedSecret({ name, namespace, body });
    }
  }

  /** Merges labels and annotations (a null value removes one); the data stays as it is. */
  async patchMetadata(
    namespace: string,
    change: SourceRef & {
      readonly labels?: Readonly<Record<string, string | null>>;
      readonly annotations?: Readonly<Record<string, string | null>>;
    },
  ): Promise<void> {
    const body = { metadata: { labels: change.labels, annotations: change.annotations } };
    const { name } = change;
    if (change.type === 'CONFIGMAP') {
      await this.#core.patchNamespacedConfigMap({ name, namespace, body }, strategicMerge);
    } else {
      await this.#core.patchNamespacedSecret({ name, namespace, body }, strategicMerge);
    }
  }

  async delete(namespace: string, source: SourceRef): Promise<void> {
    const { name } = source;
    if (source.type === 'CONFIGMAP')
      await this.#core.deleteNamespacedConfigMap({ name, namespace });
    else await this.#core.deleteNamespacedSecret({ name, namespace });
  }
}

/** One admin action on a source, as scenario tables list them. */
export type SourceChange =
  | { readonly op: 'replace'; readonly spec: SourceSpec }
  | {
      readonly op: 'metadata';
      readonly source: SourceRef;
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
    }
  | { readonly op: 'create'; readonly spec: SourceSpec }
  | { readonly op: 'delete'; readonly source: SourceRef };

export async function applySourceChange(
  client: SourceClient,
  namespace: string,
  change: SourceChange,
): Promise<void> {
  switch (change.op) {
    case 'replace':
      await client.replace(namespace, change.spec);
      return;
    case 'metadata':
      await client.patchMetadata(namespace, {
        type: change.source.type,
        name: change.source.name,
        labels: change.labels,
        annotations: change.annotations,
      });
      return;
    case 'create':
      await client.create(namespace, change.spec);
      return;
    case 'delete':
      await client.delete(namespace, change.source);
      return;
  }
}

const RESOURCE_OF: Readonly<Record<SourceType, 'configmaps' | 'secrets'>> = {
  CONFIGMAP: 'configmaps',
  SECRET: 'secrets',
};

/** The resource name kreload's metrics use for a source type. */
export function sourceResource(type: SourceType): 'configmaps' | 'secrets' {
  return RESOURCE_OF[type];
}

export type WatchEventType = 'add' | 'update' | 'delete';

/**
 * Creations and updates are counted together: a barrier only needs every event to have arrived,
 * and whether kreload labels a watch ADDED `add` (§13.2) is asserted by the specs on its own.
 */
const WATCH_EVENTS_OF: Readonly<Record<SourceChange['op'], readonly WatchEventType[]>> = {
  replace: ['add', 'update'],
  metadata: ['add', 'update'],
  create: ['add', 'update'],
  delete: ['delete'],
};

export interface WatchEventCount {
  readonly resource: string;
  readonly event: readonly WatchEventType[];
  readonly atLeast: number;
}

/** The watch events the changes cause, per resource (for settle barriers). */
export function watchEventsOf(changes: readonly SourceChange[]): WatchEventCount[] {
  const counts = new Map<string, WatchEventCount>();
  for (const change of changes) {
    const resource = sourceResource('spec' in change ? change.spec.type : change.source.type);
    const event = WATCH_EVENTS_OF[change.op];
    const key = `${resource} ${event.join('|')}`;
    counts.set(key, { resource, event, atLeast: (counts.get(key)?.atLeast ?? 0) + 1 });
  }
  return [...counts.values()];
}
