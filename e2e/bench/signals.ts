/**
 * What a pod template says about the sources it was rolled for: the "signal" the latency probe and
 * the correctness check read, for both strategies and any Reloader-compatible controller.
 */
import { isRecord } from './list-watch.ts';

export const LAST_RELOADED_FROM = 'reloader.stakater.com/last-reloaded-from';
export const SOURCE_HASHES = 'kreload.io/source-hashes';

/** `configmap/name` → hash. */
export type Signals = ReadonlyMap<string, string>;

export interface SignalLookup {
  /** STAKATER_* env var name → `configmap/name`, for the sources the workload references. */
  readonly envNames: ReadonlyMap<string, string>;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function annotationsOf(template: Record<string, unknown>): Record<string, unknown> {
  const metadata = template.metadata;
  if (!isRecord(metadata) || !isRecord(metadata.annotations)) return {};
  return metadata.annotations;
}

function stringAt(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

/** Reloader's annotations strategy: names one source, the one that rolled last. */
function lastReloadedFrom(
  annotations: Record<string, unknown>,
  tracked: ReadonlySet<string>,
): [string, string] | undefined {
  const document = parseJson(stringAt(annotations, LAST_RELOADED_FROM));
  if (!isRecord(document)) return undefined;
  const type = document.type;
  const name = document.name;
  const hash = document.hash;
  if (typeof type !== 'string' || typeof name !== 'string' || typeof hash !== 'string') {
    return undefined;
  }
  const key = `${type.toLowerCase()}/${name}`;
  return tracked.has(key) ? [key, hash] : undefined;
}

function sourceHashes(
  annotations: Record<string, unknown>,
  tracked: ReadonlySet<string>,
): [string, string][] {
  const document = parseJson(stringAt(annotations, SOURCE_HASHES));
  if (!isRecord(document)) return [];
  return Object.entries(document).filter(
    (entry): entry is [string, string] => tracked.has(entry[0]) && typeof entry[1] === 'string',
  );
}

function containersOf(spec: unknown): Record<string, unknown>[] {
  if (!isRecord(spec)) return [];
  const lists = [spec.initContainers, spec.containers].filter(Array.isArray);
  return lists.flat().filter(isRecord);
}

function envSignals(template: Record<string, unknown>, lookup: SignalLookup): [string, string][] {
  const found: [string, string][] = [];
  for (const container of containersOf(template.spec)) {
    const env = Array.isArray(container.env) ? container.env.filter(isRecord) : [];
    for (const variable of env) {
      const name = stringAt(variable, 'name');
      const value = stringAt(variable, 'value');
      const key = name === undefined ? undefined : lookup.envNames.get(name);
      if (key !== undefined && value !== undefined) found.push([key, value]);
    }
  }
  return found;
}

/**
 * Signals after this template. `previous` carries over what the template no longer names: Reloader's
 * `last-reloaded-from` names only the latest source, so the others keep their last known hash.
 * Precedence (last wins): previous, last-reloaded-from, kreload.io/source-hashes, env vars.
 */
export function templateSignals(
  template: unknown,
  lookup: SignalLookup,
  previous: Signals = new Map(),
): Map<string, string> {
  const signals = new Map(previous);
  if (!isRecord(template)) return signals;
  const tracked = new Set(lookup.envNames.values());
  const annotations = annotationsOf(template);
  const named = lastReloadedFrom(annotations, tracked);
  if (named !== undefined) signals.set(...named);
  for (const [key, hash] of sourceHashes(annotations, tracked)) signals.set(key, hash);
  for (const [key, hash] of envSignals(template, lookup)) signals.set(key, hash);
  return signals;
}

/**
 * Every hash the template names for `key`, in any form. A workload that changed strategy carries
 * both an env var and annotations; the canary, shared by all runs, must accept either.
 */
export function hashesNamed(template: unknown, lookup: SignalLookup, key: string): Set<string> {
  const hashes = new Set<string>();
  if (!isRecord(template)) return hashes;
  const tracked = new Set(lookup.envNames.values());
  const annotations = annotationsOf(template);
  const named = lastReloadedFrom(annotations, tracked);
  const found = [
    ...(named === undefined ? [] : [named]),
    ...sourceHashes(annotations, tracked),
    ...envSignals(template, lookup),
  ];
  for (const [source, hash] of found) if (source === key) hashes.add(hash);
  return hashes;
}

/** A key-order-independent rendering of a template, to tell real changes from re-serialisations. */
export function fingerprint(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(fingerprint).join(',')}]`;
  if (isRecord(value)) {
    const entries = Object.keys(value)
      .filter((key) => value[key] !== undefined && value[key] !== null)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${fingerprint(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}
