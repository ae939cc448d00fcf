/**
 * Pause period (§7.2), Deployments only: the rules as pure functions of the view and the time. The
 * state lives on the object (`spec.paused` and the paused-at W annotation), so a resume can always be
 * rebuilt from a view, after a restart or a leader change alike (rule 5).
 */
import { parseGoDuration } from '../core/go-duration.ts';
import { ownValue } from '../core/records.ts';
import type { AnnotationKeys, AnnotationProblem, WorkloadView } from '../core/types.ts';
import type { WorkloadKindRow } from './kinds.ts';
import { findKindRow } from './kinds.ts';
import type { PauseWrite } from './patch.ts';
import { rfc3339Seconds } from './patch.ts';

export type PauseKeys = Pick<AnnotationKeys, 'pausePeriod' | 'pausedAt'>;

/** The pause-period annotation P: absent, not a Go duration, or a duration (which may be ≤ 0). */
export type PausePeriod =
  | { readonly state: 'absent' }
  | { readonly state: 'invalid'; readonly value: string }
  | { readonly state: 'valid'; readonly ms: number };

export function readPausePeriod(view: Pick<WorkloadView, 'annotations'>, key: string): PausePeriod {
  const value = ownValue(view.annotations, key);
  if (value === undefined) return { state: 'absent' };
  const ms = parseGoDuration(value);
  return ms === undefined ? { state: 'invalid', value } : { state: 'valid', ms };
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** Go `time.Parse(time.RFC3339, …)` for the values Reloader and kreload write; ms since the epoch. */
export function parseRfc3339(value: string): number | undefined {
  if (!RFC_3339.test(value)) return undefined;
  const ms = Date.parse(value.toUpperCase());
  return Number.isNaN(ms) ? undefined : ms;
}

function isPausedByKreload(view: WorkloadView, keys: PauseKeys): boolean {
  return view.paused && ownValue(view.annotations, keys.pausedAt) !== undefined;
}

interface ResumeTime {
  readonly due: number | 'now';
  readonly problems: readonly AnnotationProblem[];
}

function pausedAtProblem(key: string, value: string): AnnotationProblem {
  return {
    on: 'workload',
    key,
    value,
    problem: `invalid time "${value}" (RFC 3339 expected)`,
    consequence: 'resumed at once',
  };
}

/** Rule 5: paused-at + P; at once when paused-at is unparsable or P is gone or invalid. */
function resumeTime(view: WorkloadView, now: number, keys: PauseKeys): ResumeTime {
  const raw = ownValue(view.annotations, keys.pausedAt) ?? '';
  const pausedAt = parseRfc3339(raw);
  if (pausedAt === undefined)
    return { due: 'now', problems: [pausedAtProblem(keys.pausedAt, raw)] };
  const period = readPausePeriod(view, keys.pausePeriod);
  if (period.state !== 'valid') return { due: 'now', problems: [] };
  const due = pausedAt + period.ms;
  return { due: due <= now ? 'now' : due, problems: [] };
}

/**
 * When the resume of a Deployment paused by kreload (or Reloader) falls due: a time in ms since the
 * epoch, `now` when it is overdue or cannot be timed, or undefined when there is nothing to resume
 * (not a pause-period kind, not paused, or paused by someone else).
 */
export function pauseResumeDue(
  view: WorkloadView,
  now: number,
  keys: PauseKeys,
): number | 'now' | undefined {
  // A built-in fact: no configured kind supports a pause period.
  if (findKindRow(view.ref.kind)?.supportsPausePeriod !== true) return undefined;
  if (!isPausedByKreload(view, keys)) return undefined;
  return resumeTime(view, now, keys).due;
}

/** Rule 3, and §3.1: P on a kind without pause-period support. Logged, never an Event. */
export type PauseNotice = 'paused-by-other' | 'pause-period-ignored';

export interface PauseInput {
  readonly view: WorkloadView;
  readonly row: WorkloadKindRow;
  readonly keys: PauseKeys;
  /** The write changes the pod template (a roll). */
  readonly rolls: boolean;
  /** ms since the epoch. */
  readonly now: number;
}

export interface PausePlan {
  /** Added to this reconcile's write: a pause with the roll (rule 1), or a resume (rule 4). */
  readonly write: PauseWrite | undefined;
  /** When a resume falls due after this write, ms since the epoch; undefined: none pending. */
  readonly resumeAt: number | undefined;
  readonly notice: PauseNotice | undefined;
  readonly problems: readonly AnnotationProblem[];
}

const NO_PAUSE: PausePlan = {
  write: undefined,
  resumeAt: undefined,
  notice: undefined,
  problems: [],
};

function invalidPeriodProblems(key: string, period: PausePeriod): AnnotationProblem[] {
  if (period.state !== 'invalid') return [];
  return [
    {
      on: 'workload',
      key,
      value: period.value,
      problem: `invalid duration "${period.value}"`,
      consequence: 'the roll proceeds without a pause',
    },
  ];
}

/** Rules 2 and 4: a pause of kreload's own is never extended; it ends at paused-at + P. */
function ownPause(input: PauseInput, problems: readonly AnnotationProblem[]): PausePlan {
  const { view, keys, now } = input;
  const resume = resumeTime(view, now, keys);
  const all = [...problems, ...resume.problems];
  if (resume.due !== 'now') return { ...NO_PAUSE, resumeAt: resume.due, problems: all };
  return { ...NO_PAUSE, write: { action: 'resume', pausedAtKey: keys.pausedAt }, problems: all };
}

/** Rule 1: a roll of an unpaused Deployment pauses it in the same patch (P > 0 only, rule 7). */
function pauseWithRoll(input: PauseInput, periodMs: number): PausePlan {
  const pausedAt = rfc3339Seconds(input.now);
  return {
    ...NO_PAUSE,
    write: { action: 'pause', pausedAtKey: input.keys.pausedAt, pausedAt },
    resumeAt: (parseRfc3339(pausedAt) ?? input.now) + periodMs,
  };
}

/** What the pause period adds to one reconcile of `view` (§7.2 rules 1–7). */
export function planPause(input: PauseInput): PausePlan {
  const { view, row, keys } = input;
  if (!row.supportsPausePeriod) {
    const ignored = ownValue(view.annotations, keys.pausePeriod) !== undefined;
    return ignored ? { ...NO_PAUSE, notice: 'pause-period-ignored' } : NO_PAUSE;
  }
  const period = readPausePeriod(view, keys.pausePeriod);
  const problems = invalidPeriodProblems(keys.pausePeriod, period);
  if (isPausedByKreload(view, keys)) return ownPause(input, problems);
  if (view.paused) {
    return { ...NO_PAUSE, notice: input.rolls ? 'paused-by-other' : undefined, problems };
  }
  if (input.rolls && period.state === 'valid' && period.ms > 0) {
    return pauseWithRoll(input, period.ms);
  }
  return { ...NO_PAUSE, problems };
}
