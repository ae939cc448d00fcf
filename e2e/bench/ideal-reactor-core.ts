/**
 * The pure part of the ideal reactor: flags, what a workload references, and the patch for a roll.
 * It does the least a Reloader-compatible controller must do, so its latency is this machine's floor.
 */
import { envVarName } from '../../src/core/env-name.ts';
import { hashConfigMap, hashSecret } from '../../src/core/hash.ts';
import { isRecord, type KubeObject } from './list-watch.ts';
import { localSourceKey, type SourceType, type WorkloadKind } from './resources.ts';
import { LAST_RELOADED_FROM } from './signals.ts';
import { AUTO_ANNOTATION } from './workloads.ts';

export type ReloadStrategy = 'env-vars' | 'annotations';

export interface ReactorOptions {
  /** Empty: cluster-wide. */
  readonly namespaces: readonly string[];
  readonly strategy: ReloadStrategy;
  /** Concurrent patches, like kreload's --worker-threads (default 3). */
  readonly workers: number;
}

/** Accepts `--flag=value` and `--flag value`; flags it does not know are ignored (Reloader's). */
export function parseReactorArgs(argv: readonly string[]): ReactorOptions {
  const values = new Map<string, string>();
  for (let index = 0; index < argv.length; index += 1) {
    const word = argv[index] ?? '';
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(word);
    if (match?.[1] === undefined) continue;
    const next = argv[index + 1];
    if (match[2] !== undefined) values.set(match[1], match[2]);
    else if (next !== undefined && !next.startsWith('--')) {
      values.set(match[1], next);
      index += 1;
    } else values.set(match[1], 'true');
  }
  const namespaces = (values.get('namespaces') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const workers = Number(values.get('worker-threads') ?? '3');
  return {
    namespaces,
    strategy: values.get('reload-strategy') === 'annotations' ? 'annotations' : 'env-vars',
    workers: Number.isInteger(workers) && workers > 0 ? workers : 3,
  };
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

/** The hash of a ConfigMap or Secret as received (spec §4.1, byte-identical to Reloader's). */
export function hashOfSource(type: SourceType, object: KubeObject): string {
  if (type === 'secret') return hashSecret(stringMap(object.data));
  return hashConfigMap(stringMap(object.data), stringMap(object.binaryData));
}

export interface WorkloadProjection {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly auto: boolean;
  /** `configmap/name` → the regular container its env var goes into. */
  readonly targets: ReadonlyMap<string, string>;
  /** STAKATER_* env values the template carries now (for the level check at startup). */
  readonly stakaterEnv: ReadonlyMap<string, string>;
}

type Refs = Set<string>;

function recordsOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function nameAt(value: unknown, field = 'name'): string | undefined {
  if (!isRecord(value)) return undefined;
  const name = value[field];
  return typeof name === 'string' && name !== '' ? name : undefined;
}

function addRef(refs: Refs, type: SourceType, name: string | undefined): void {
  if (name !== undefined) refs.add(localSourceKey(type, name));
}

function volumeRefs(volume: Record<string, unknown>): Refs {
  const refs: Refs = new Set();
  addRef(refs, 'configmap', nameAt(volume.configMap));
  addRef(refs, 'secret', nameAt(volume.secret, 'secretName'));
  const projected = isRecord(volume.projected) ? recordsOf(volume.projected.sources) : [];
  for (const source of projected) {
    addRef(refs, 'configmap', nameAt(source.configMap));
    addRef(refs, 'secret', nameAt(source.secret));
  }
  return refs;
}

function containerRefs(
  container: Record<string, unknown>,
  volumes: ReadonlyMap<string, Refs>,
): Refs {
  const refs: Refs = new Set();
  for (const from of recordsOf(container.envFrom)) {
    addRef(refs, 'configmap', nameAt(from.configMapRef));
    addRef(refs, 'secret', nameAt(from.secretRef));
  }
  for (const variable of recordsOf(container.env)) {
    const valueFrom = variable.valueFrom;
    if (!isRecord(valueFrom)) continue;
    addRef(refs, 'configmap', nameAt(valueFrom.configMapKeyRef));
    addRef(refs, 'secret', nameAt(valueFrom.secretKeyRef));
  }
  for (const mount of recordsOf(container.volumeMounts)) {
    const name = nameAt(mount);
    for (const ref of (name === undefined ? undefined : volumes.get(name)) ?? []) refs.add(ref);
  }
  return refs;
}

function stakaterEnvOf(containers: readonly Record<string, unknown>[]): Map<string, string> {
  const env = new Map<string, string>();
  for (const container of containers) {
    for (const variable of recordsOf(container.env)) {
      const name = nameAt(variable);
      const value = variable.value;
      if (name?.startsWith('STAKATER_') === true && typeof value === 'string') env.set(name, value);
    }
  }
  return env;
}

/**
 * What the reactor keeps of a workload. Each referenced source's env var goes into the first
 * regular container that references it, else into the first regular container (as Reloader does
 * for init-container-only references).
 */
export function projectWorkload(kind: WorkloadKind, object: KubeObject): WorkloadProjection {
  const spec = isRecord(object.spec) ? object.spec : {};
  const template = isRecord(spec.template) ? spec.template : {};
  const podSpec = isRecord(template.spec) ? template.spec : {};
  const volumes = new Map<string, Refs>();
  for (const volume of recordsOf(podSpec.volumes)) {
    const name = nameAt(volume);
    if (name !== undefined) volumes.set(name, volumeRefs(volume));
  }
  const containers = recordsOf(podSpec.containers);
  const initContainers = recordsOf(podSpec.initContainers);
  const first = nameAt(containers[0]);
  const targets = new Map<string, string>();
  for (const container of containers) {
    const name = nameAt(container);
    for (const ref of containerRefs(container, volumes)) {
      if (name !== undefined && !targets.has(ref)) targets.set(ref, name);
    }
  }
  const elsewhere = [...initContainers.map((c) => containerRefs(c, volumes)), ...volumes.values()];
  for (const ref of elsewhere.flatMap((refs) => [...refs])) {
    if (first !== undefined && !targets.has(ref)) targets.set(ref, first);
  }
  return {
    kind,
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name,
    auto: object.metadata.annotations?.[AUTO_ANNOTATION] === 'true',
    targets,
    stakaterEnv: stakaterEnvOf([...initContainers, ...containers]),
  };
}

export interface SourceChange {
  readonly type: SourceType;
  readonly name: string;
  readonly hash: string;
}

export function envNameOf(change: { type: SourceType; name: string }): string {
  return envVarName(change.type === 'secret' ? 'SECRET' : 'CONFIGMAP', change.name);
}

/** One strategic merge patch carrying every change (env-vars), or naming the latest (annotations). */
export function rollPatch(details: {
  strategy: ReloadStrategy;
  workload: WorkloadProjection;
  changes: readonly SourceChange[];
  nowSeconds: number;
}): Record<string, unknown> {
  const { workload, changes } = details;
  if (details.strategy === 'annotations') {
    const latest = changes.at(-1);
    if (latest === undefined) return {};
    const container = workload.targets.get(localSourceKey(latest.type, latest.name));
    const document = {
      type: latest.type === 'secret' ? 'SECRET' : 'CONFIGMAP',
      name: latest.name,
      namespace: workload.namespace,
      hash: latest.hash,
      containerRefs: container === undefined ? [] : [container],
      observedAt: details.nowSeconds,
    };
    const annotations = { [LAST_RELOADED_FROM]: JSON.stringify(document) };
    return { spec: { template: { metadata: { annotations } } } };
  }
  const byContainer = new Map<string, { name: string; value: string }[]>();
  for (const change of changes) {
    const container = workload.targets.get(localSourceKey(change.type, change.name));
    if (container === undefined) continue;
    const env = byContainer.get(container) ?? [];
    env.push({ name: envNameOf(change), value: change.hash });
    byContainer.set(container, env);
  }
  const containers = [...byContainer].map(([name, env]) => ({ name, env }));
  return { spec: { template: { spec: { containers } } } };
}
