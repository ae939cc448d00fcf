/**
 * Restart windows (docs/windows-and-breaker.md): when a roll may start. The annotation value is the
 * JSON of stakater/Reloader's proposed `reloader.stakater.com/restart-window` — an explicit IANA
 * time zone and five-field cron starts with a duration each — plus kreload's `deny` list, windows
 * in which no roll starts even when an allowed window is open. Pure: the caller passes the time.
 *
 * A window is half-open, [start, start + duration): a roll may start at its opening instant and not
 * at its end. Durations are elapsed time, so a window that spans a DST change lasts as long as it
 * says. Cron matching, day-of-month/day-of-week OR semantics and the time zones (the IANA database
 * Node.js ships) come from croner.
 */
import { Cron } from 'croner';

import { parseGoDuration } from './go-duration.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Bounds of one policy; the allow-window bounds are those of the upstream proposal. */
export const WINDOW_LIMITS = {
  maxWindowsPerList: 16,
  minDurationMs: MINUTE_MS,
  maxAllowDurationMs: 24 * HOUR_MS,
  /** A deny window may cover a holiday week: up to 31 days. */
  maxDenyDurationMs: 31 * 24 * HOUR_MS,
  /** The longest raw annotation value read; a longer one is invalid without parsing. */
  maxValueLength: 8192,
} as const;

/** How far ahead the next opening is looked for; a policy with none that soon says so. */
const SEARCH_HORIZON_MS = 400 * 24 * HOUR_MS;
/** Steps of the search for the next opening: each moves past one window boundary. */
const SEARCH_STEPS = 10_000;

export type WindowKind = 'allow' | 'deny';

export interface WindowSpan {
  readonly kind: WindowKind;
  /** As written, for explain. */
  readonly cron: string;
  readonly duration: string;
  readonly durationMs: number;
  readonly schedule: Cron;
}

export interface RestartWindowPolicy {
  readonly timeZone: string;
  /** Empty: every time not denied is allowed. */
  readonly allow: readonly WindowSpan[];
  readonly deny: readonly WindowSpan[];
}

export type PolicyParse = { readonly policy: RestartWindowPolicy } | { readonly problem: string };

/**
 * - open: a roll may start now; `closesAt`: when the allowed window in force ends, or a deny window
 *   begins (undefined: never, for a deny-only policy with no deny window ahead);
 * - closed: `opensAt` is the next instant a roll may start, undefined when none is found within the
 *   search horizon; `deniedBy` names the deny window in force, if one is.
 */
export type WindowVerdict =
  | { readonly open: true; readonly closesAt: number | undefined }
  | {
      readonly open: false;
      readonly opensAt: number | undefined;
      readonly deniedBy: WindowSpan | undefined;
    };

const ALLOWED_FIELDS: ReadonlySet<string> = new Set(['timezone', 'windows', 'deny']);
const WINDOW_FIELDS: ReadonlySet<string> = new Set(['cron', 'duration']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class PolicyProblem extends Error {}

function timeZoneOf(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value === 'Local') {
    throw new PolicyProblem('an explicit IANA "timezone" is required (e.g. "Europe/Berlin")');
  }
  try {
    // Throws a RangeError for a name the IANA database Node.js ships does not have.
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch (error) {
    throw new PolicyProblem(`unknown time zone ${JSON.stringify(value)}`, { cause: error });
  }
  return value;
}

function scheduleOf(cron: unknown, timeZone: string, where: string): Cron {
  if (typeof cron !== 'string') throw new PolicyProblem(`${where}: "cron" must be a string`);
  if (cron.includes('TZ=')) {
    throw new PolicyProblem(
      `${where}: set the time zone in "timezone", not in the cron expression`,
    );
  }
  if (cron.trim().split(/\s+/).length !== 5) {
    throw new PolicyProblem(`${where}: "cron" must have five fields (minute hour dom month dow)`);
  }
  try {
    return new Cron(cron.trim(), { timezone: timeZone, mode: '5-part' });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new PolicyProblem(`${where}: invalid cron ${JSON.stringify(cron)}: ${reason}`, {
      cause: error,
    });
  }
}

function spanOf(value: unknown, kind: WindowKind, index: number, timeZone: string): WindowSpan {
  const where = `${kind === 'allow' ? 'windows' : 'deny'}[${String(index)}]`;
  if (!isRecord(value)) throw new PolicyProblem(`${where} must be an object`);
  const unknown = Object.keys(value).filter((field) => !WINDOW_FIELDS.has(field));
  if (unknown.length > 0) throw new PolicyProblem(`${where}: unknown field "${unknown[0]}"`);
  const { cron, duration } = value;
  const schedule = scheduleOf(cron, timeZone, where);
  const durationMs = durationOf(duration, kind, where);
  if (kind === 'allow' && schedule.nextRun() === null) {
    throw new PolicyProblem(`${where}: cron ${JSON.stringify(cron)} never matches`);
  }
  return { kind, cron: String(cron), duration: String(duration), durationMs, schedule };
}

function durationOf(duration: unknown, kind: WindowKind, where: string): number {
  const durationMs = typeof duration === 'string' ? parseGoDuration(duration) : undefined;
  const max = kind === 'allow' ? WINDOW_LIMITS.maxAllowDurationMs : WINDOW_LIMITS.maxDenyDurationMs;
  if (durationMs === undefined || durationMs < WINDOW_LIMITS.minDurationMs || durationMs > max) {
    throw new PolicyProblem(
      `${where}: "duration" must be a duration from 1m to ${kind === 'allow' ? '24h' : '744h'}`,
    );
  }
  return durationMs;
}

function spansOf(value: unknown, kind: WindowKind, timeZone: string): WindowSpan[] {
  if (value === undefined) return [];
  const field = kind === 'allow' ? 'windows' : 'deny';
  if (!Array.isArray(value)) throw new PolicyProblem(`"${field}" must be a list`);
  if (value.length > WINDOW_LIMITS.maxWindowsPerList) {
    throw new PolicyProblem(
      `"${field}" has ${String(value.length)} windows; at most ${String(WINDOW_LIMITS.maxWindowsPerList)}`,
    );
  }
  return value.map((span: unknown, index) => spanOf(span, kind, index, timeZone));
}

/** Reads an annotation value; a problem names the first thing wrong with it. */
export function parseRestartWindow(raw: string): PolicyParse {
  if (raw.length > WINDOW_LIMITS.maxValueLength) {
    return { problem: `longer than ${String(WINDOW_LIMITS.maxValueLength)} characters` };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { problem: 'not JSON' };
  }
  try {
    if (!isRecord(value)) throw new PolicyProblem('must be a JSON object');
    const unknown = Object.keys(value).filter((field) => !ALLOWED_FIELDS.has(field));
    if (unknown.length > 0) throw new PolicyProblem(`unknown field "${unknown[0]}"`);
    const timeZone = timeZoneOf(value.timezone);
    const allow = spansOf(value.windows, 'allow', timeZone);
    const deny = spansOf(value.deny, 'deny', timeZone);
    if (allow.length === 0 && deny.length === 0) {
      throw new PolicyProblem('needs at least one window in "windows" or "deny"');
    }
    return { policy: { timeZone, allow, deny } };
  } catch (error) {
    if (error instanceof PolicyProblem) return { problem: error.message };
    throw error;
  }
}

/** The start of the occurrence of `span` in force at `at`, if one is. */
function activeStart(span: WindowSpan, at: number): number | undefined {
  const start = span.schedule.nextRun(new Date(at - span.durationMs));
  if (start === null) return undefined;
  const startMs = start.getTime();
  return startMs <= at ? startMs : undefined;
}

function activeEnds(spans: readonly WindowSpan[], at: number): number[] {
  return spans.flatMap((span) => {
    const start = activeStart(span, at);
    return start === undefined ? [] : [start + span.durationMs];
  });
}

function nextStart(spans: readonly WindowSpan[], at: number): number | undefined {
  let next: number | undefined;
  for (const span of spans) {
    const start = span.schedule.nextRun(new Date(at))?.getTime();
    if (start !== undefined && (next === undefined || start < next)) next = start;
  }
  return next;
}

/** Whether a roll may start at `at`, and if not, when it next may. */
export function evaluateWindow(policy: RestartWindowPolicy, at: number): WindowVerdict {
  const deniedBy = policy.deny.find((span) => activeStart(span, at) !== undefined);
  const here = allowedAt(policy, at);
  if (here.allowed) {
    const allowEnd = policy.allow.length === 0 ? undefined : Math.max(...here.allowEnds);
    const denyStart = nextStart(policy.deny, at);
    const ends = [allowEnd, denyStart].filter((end) => end !== undefined);
    return { open: true, closesAt: ends.length === 0 ? undefined : Math.min(...ends) };
  }
  return { open: false, opensAt: nextOpening(policy, at), deniedBy };
}

function allowedAt(
  policy: RestartWindowPolicy,
  at: number,
): { allowed: boolean; allowEnds: number[]; denyEnds: number[] } {
  const denyEnds = activeEnds(policy.deny, at);
  const allowEnds = activeEnds(policy.allow, at);
  const allowed = denyEnds.length === 0 && (policy.allow.length === 0 || allowEnds.length > 0);
  return { allowed, allowEnds, denyEnds };
}

/**
 * The first instant after `from` at which a roll may start. The deny windows in force at t all
 * contain t, so every instant before the last of their ends is denied; with no allowed window in
 * force, nothing before the next allowed start is allowed. Each step jumps to the later of the
 * two, so no allowed instant is skipped, and each step moves forward by at least a minute.
 */
function nextOpening(policy: RestartWindowPolicy, from: number): number | undefined {
  let at = from;
  for (let step = 0; step < SEARCH_STEPS && at - from <= SEARCH_HORIZON_MS; step += 1) {
    const here = allowedAt(policy, at);
    if (here.allowed) return at;
    let next = here.denyEnds.length === 0 ? at : Math.max(...here.denyEnds);
    if (policy.allow.length > 0 && here.allowEnds.length === 0) {
      const start = nextStart(policy.allow, at);
      if (start === undefined) return undefined;
      next = Math.max(next, start);
    }
    at = next;
  }
  return undefined;
}
