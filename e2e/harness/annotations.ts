// Annotation keys of spec §3.1/§3.2 (defaults) and the encoding of kreload's state maps, written
// out here rather than imported from src/ so the specs check the contract, not the code.

export const AUTO = 'reloader.stakater.com/auto';
export const CONFIGMAP_AUTO = 'configmap.reloader.stakater.com/auto';
export const SECRET_AUTO = 'secret.reloader.stakater.com/auto';
export const CONFIGMAP_RELOAD = 'configmap.reloader.stakater.com/reload';
export const SECRET_RELOAD = 'secret.reloader.stakater.com/reload';
export const SEARCH = 'reloader.stakater.com/search';
export const MATCH = 'reloader.stakater.com/match';
export const IGNORE = 'reloader.stakater.com/ignore';
export const CONFIGMAP_EXCLUDE = 'configmaps.exclude.reloader.stakater.com/reload';
export const PAUSE_PERIOD = 'deployment.reloader.stakater.com/pause-period';
export const PAUSED_AT = 'deployment.reloader.stakater.com/paused-at';
export const LAST_RELOADED_FROM = 'reloader.stakater.com/last-reloaded-from';
export const SOURCE_HASHES = 'kreload.io/source-hashes';
export const BASELINE = 'kreload.io/baseline';

/** §3.2: compact JSON, keys sorted byte-wise, no whitespace. */
export function stateJson(map: Readonly<Record<string, string>>): string {
  const keys = Object.keys(map).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${JSON.stringify(map[key])}`).join(',')}}`;
}

/** `{ [BASELINE]: json }`, or nothing when the map is empty (an empty map is removed, §6.1). */
export function baselineAnnotation(map: Readonly<Record<string, string>>): Record<string, string> {
  return Object.keys(map).length === 0 ? {} : { [BASELINE]: stateJson(map) };
}

/**
 * W `kreload.io/baseline` after a roll under the baseline store (the default, docs/adr/0046): a
 * first sight wrote B to the store, not to W; the roll writes the rest of B into W, the empty map
 * at least when the store held the workload's record (from then on W owns B).
 */
export function baselineAfterRoll(
  rest: Readonly<Record<string, string>>,
  storeHeldRecord: boolean,
): Record<string, string> {
  return storeHeldRecord ? { [BASELINE]: stateJson(rest) } : baselineAnnotation(rest);
}

/** A copy of `record` without `keys`. */
export function omitKeys(
  record: Readonly<Record<string, string>>,
  keys: readonly string[],
): Record<string, string> {
  return Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)));
}
