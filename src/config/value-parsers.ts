/**
 * Parsers of one raw flag or env value per option type (§12.3, §12.4). Each returns the typed value or a
 * problem text without the subject; the caller prefixes the flag or env var.
 */
import { parseBool, parseGoDuration } from '../core/annotation-values.ts';
import type { CountOrPercent } from '../rollout/waves.ts';
import { checkDnsLabel, checkDnsSubdomain, checkQualifiedName } from './k8s-names.ts';

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

const valid = <T>(value: T): Parsed<T> => ({ ok: true, value });
const invalid = <T>(problem: string): Parsed<T> => ({ ok: false, problem });

export function parseBoolValue(raw: string): Parsed<boolean> {
  const value = parseBool(raw);
  return value === undefined
    ? invalid(`invalid value "${raw}": expected a bool (true, false, 1, 0, t, f)`)
    : valid(value);
}

/** D31: only the exact strings; Reloader read anything but `true` as false without a word. */
export function parseStringBoolValue(raw: string): Parsed<boolean> {
  if (raw === 'true') return valid(true);
  if (raw === 'false') return valid(false);
  return invalid(`invalid value "${raw}": expected true or false`);
}

const MS_PER_SECOND = 1000;

/** Shortest Go-style rendering of whole milliseconds, for messages: 30000 → `30s`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % MS_PER_SECOND !== 0) return `${ms}ms`;
  const totalSeconds = ms / MS_PER_SECOND;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return `${hours > 0 ? `${hours}h` : ''}${minutes > 0 ? `${minutes}m` : ''}${seconds > 0 ? `${seconds}s` : ''}`;
}

/**
 * Milliseconds within `min`…`max`; flags never take negative durations (only pause-period annotations
 * do), and every duration flag has an upper bound (ADR 0018).
 */
export function parseDurationValue(
  raw: string,
  bounds: { readonly min: number; readonly max: number },
): Parsed<number> {
  const ms = parseGoDuration(raw);
  if (ms === undefined) {
    return invalid(
      `invalid duration "${raw}": expected Go syntax such as 300ms, 2s, 1m30s or 1.5h`,
    );
  }
  if (ms < 0) return invalid(`${raw} must not be negative`);
  if (ms < bounds.min)
    return invalid(`${raw} is below the minimum of ${formatDuration(bounds.min)}`);
  if (ms > bounds.max)
    return invalid(`${raw} is above the maximum of ${formatDuration(bounds.max)}`);
  return valid(ms);
}

export function parseIntValue(raw: string, bounds: { min: number; max: number }): Parsed<number> {
  if (!/^[+-]?\d+$/.test(raw)) return invalid(`invalid value "${raw}": expected an integer`);
  const value = Number(raw);
  if (value < bounds.min || value > bounds.max) {
    return invalid(`${raw} is out of range ${bounds.min}–${bounds.max}`);
  }
  return valid(value);
}

export function parsePortValue(raw: string): Parsed<number> {
  return parseIntValue(raw, { min: 1, max: 65535 });
}

export function isChoice<C extends string>(choices: readonly C[], value: string): value is C {
  return choices.some((choice) => choice === value);
}

export function parseChoiceValue<C extends string>(
  raw: string,
  spec: { readonly choices: readonly C[]; readonly caseInsensitive?: boolean },
): Parsed<C> {
  const candidate = spec.caseInsensitive === true ? raw.toLowerCase() : raw;
  if (isChoice(spec.choices, candidate)) return valid(candidate);
  const allowed = spec.choices.map((choice) => (choice === '' ? '""' : choice)).join(', ');
  return invalid(`invalid value "${raw}": expected one of ${allowed}`);
}

export function parseAnnotationKeyValue(raw: string): Parsed<string> {
  const problem = checkQualifiedName(raw);
  return problem === undefined
    ? valid(raw)
    : invalid(`invalid annotation key "${raw}": ${problem}`);
}

/** Empty means unset. Otherwise an absolute `http`/`https` URL with a host. */
export function parseUrlValue(raw: string): Parsed<string | undefined> {
  if (raw === '') return valid(undefined);
  if (!URL.canParse(raw)) return invalid('invalid URL: expected an absolute http(s) URL');
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return invalid(`invalid URL: scheme must be http or https, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.hostname === '') return invalid('invalid URL: host is missing');
  return valid(raw);
}

export function parsePathValue(raw: string): Parsed<string | undefined> {
  return valid(raw === '' ? undefined : raw);
}

export interface ListenAddress {
  /** Undefined listens on every interface (`:6060`). */
  readonly host: string | undefined;
  readonly port: number;
}

/** `[host]:port`, with IPv6 hosts in brackets: `:6060`, `localhost:6060`, `[::1]:6060`. */
export function parseAddressValue(raw: string): Parsed<ListenAddress> {
  const match = /^(?:\[([^\]]*)\]|([^:[\]]*)):([^:]*)$/.exec(raw);
  if (match === null) return invalid(`invalid address "${raw}": expected [host]:port`);
  const host = match[1] ?? match[2] ?? '';
  const port = parsePortValue(match[3] ?? '');
  if (!port.ok) return invalid(`invalid address "${raw}": port ${port.problem}`);
  return valid({ host: host === '' ? undefined : host, port: port.value });
}

/** `[host]:port`, or empty for unset. */
export function parseOptionalAddressValue(raw: string): Parsed<ListenAddress | undefined> {
  return raw === '' ? valid(undefined) : parseAddressValue(raw);
}

/** Empty means unset. */
export function parseNamespaceValue(raw: string): Parsed<string | undefined> {
  if (raw === '') return valid(undefined);
  const problem = checkDnsLabel(raw);
  return problem === undefined ? valid(raw) : invalid(`invalid namespace "${raw}": ${problem}`);
}

export function parseObjectNameValue(raw: string): Parsed<string> {
  const problem = checkDnsSubdomain(raw);
  return problem === undefined ? valid(raw) : invalid(`invalid name "${raw}": ${problem}`);
}

/**
 * A count (`3`) or a percentage (`10%`): the count within `min`…`max`, the percentage within
 * 1–100 (a share of more than every workload means nothing, and is refused rather than capped).
 */
export function parseCountOrPercentValue(
  raw: string,
  bounds: { readonly min: number; readonly max: number },
): Parsed<CountOrPercent> {
  const percent = /^(\d+)%$/.exec(raw);
  if (percent !== null) {
    const value = Number(percent[1]);
    if (value < 1 || value > 100) return invalid(`${raw} is out of range 1%–100%`);
    return valid({ percent: value });
  }
  if (!/^\d+$/.test(raw)) {
    return invalid(
      `invalid value "${raw}": expected a count such as 1 or a percentage such as 10%`,
    );
  }
  const count = Number(raw);
  if (count < bounds.min || count > bounds.max) {
    return invalid(`${raw} is out of range ${bounds.min}–${bounds.max}`);
  }
  return valid({ count });
}
