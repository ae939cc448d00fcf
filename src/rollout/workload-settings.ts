/**
 * The rollout and breaker settings of one workload (docs/safe-rollouts.md,
 * docs/windows-and-breaker.md), resolved in one place: the workload's own annotation, else the
 * value its oldest binding policy sets (the binding already applied that rule and left the policy's
 * values on the view as the annotations they stand for), else kreload's flag. Pure; a bad
 * annotation value is a problem to report on that workload (InvalidAnnotation) and reads as the
 * flag's value, so the rest keeps working.
 */
import type { FlapLimits } from '../core/flap-breaker.ts';
import { parseGoDuration } from '../core/go-duration.ts';
import type { PolicyBinding, PolicyRef } from '../core/reload-policy.ts';
import type { AnnotationProblem, WorkloadView } from '../core/types.ts';
import {
  FLAP_COOL_DOWN,
  FLAP_MAX_CHANGES,
  FLAP_PERIOD,
  HALT_ON_FAILED_ROLLOUT,
  UNDO_FAILED_ROLLOUT,
} from '../core/types.ts';
import type { CountOrPercent, GroupSize, RolloutSettings } from './waves.ts';

/** Bounds shared by the flags, the annotations and the ReloadPolicy fields. */
export const SETTING_LIMITS = {
  maxCanaryCount: 100_000,
  maxConcurrent: 100_000,
  maxFlapChanges: 10_000,
  minFlapMs: 1000,
  /** 24h: far below 2^31 ms, the longest delay a Node.js timer takes. */
  maxFlapMs: 24 * 3_600_000,
} as const;

type Parsed<T> = { readonly value: T } | { readonly problem: string };

/** `"true"` or `"false"`, as Kubernetes writes booleans in annotations. */
export function parseBooleanSetting(raw: string): Parsed<boolean> {
  const trimmed = raw.trim();
  if (trimmed === 'true' || trimmed === 'false') return { value: trimmed === 'true' };
  return { problem: `invalid value "${raw.slice(0, 64)}": expected "true" or "false"` };
}

/** A count (`3`) or a percentage (`25%`) of 1–100 %; refused, not capped, when out of range. */
export function parseCanarySetting(raw: string): Parsed<CountOrPercent> {
  const trimmed = raw.trim();
  const percent = /^(\d{1,4})%$/.exec(trimmed);
  if (percent !== null) {
    const value = Number(percent[1]);
    if (value < 1 || value > 100) return { problem: `canary ${trimmed} is out of range 1%–100%` };
    return { value: { percent: value } };
  }
  if (!/^\d{1,7}$/.test(trimmed)) {
    return {
      problem: `invalid canary "${raw.slice(0, 64)}": expected a count such as 1 or a percentage such as 10%`,
    };
  }
  const count = Number(trimmed);
  if (count < 1 || count > SETTING_LIMITS.maxCanaryCount) {
    return {
      problem: `canary ${trimmed} is out of range 1–${String(SETTING_LIMITS.maxCanaryCount)}`,
    };
  }
  return { value: { count } };
}

/** An integer within `min`…`max` (digits only: no sign, no exponent, no fraction). */
export function parseCountSetting(raw: string, min: number, max: number): Parsed<number> {
  const trimmed = raw.trim();
  if (!/^\d{1,9}$/.test(trimmed)) {
    return { problem: `invalid value "${raw.slice(0, 64)}": expected an integer` };
  }
  const value = Number(trimmed);
  if (value < min || value > max) {
    return { problem: `${trimmed} is out of range ${String(min)}–${String(max)}` };
  }
  return { value };
}

/** A Go duration within the breaker's bounds (1s–24h); a longer one is refused, never wrapped. */
export function parseFlapDuration(raw: string): Parsed<number> {
  const ms = parseGoDuration(raw.trim());
  if (ms === undefined) {
    return {
      problem: `invalid duration "${raw.slice(0, 64)}": expected a Go duration such as 10m`,
    };
  }
  if (ms < SETTING_LIMITS.minFlapMs || ms > SETTING_LIMITS.maxFlapMs) {
    return { problem: `duration ${raw.trim()} is out of range 1s–24h` };
  }
  return { value: ms };
}

/** What roll admission reads of one member of a change. */
export interface WorkloadRollout {
  readonly haltOnFailure: boolean;
  readonly undoOnFailure: boolean;
  /** The policy's canary share of its targets; undefined: the change's `--canary`. */
  readonly canary: GroupSize<CountOrPercent> | undefined;
  /** The most of the policy's targets in flight for one change; undefined: no such budget. */
  readonly maxConcurrent: GroupSize<number> | undefined;
}

export interface Resolved<T> {
  readonly settings: T;
  readonly problems: readonly AnnotationProblem[];
}

function groupOf(policy: PolicyRef): string {
  return `${policy.namespace}/${policy.name}`;
}

/**
 * Reads one annotation of `view` with its parser; absent or bad: the fallback (bad is a problem
 * in `problems`, `consequence` saying what it reads as).
 */
const reader =
  (view: WorkloadView, problems: AnnotationProblem[]) =>
  <T>(key: string, parse: (raw: string) => Parsed<T>, fallback: T, consequence: string): T =>
    readAnnotation({ view, key, parse, fallback, consequence }, problems);

function readAnnotation<T>(
  {
    view,
    key,
    parse,
    fallback,
    consequence,
  }: {
    readonly view: WorkloadView;
    readonly key: string;
    readonly parse: (raw: string) => Parsed<T>;
    readonly fallback: T;
    readonly consequence: string;
  },
  problems: AnnotationProblem[],
): T {
  const raw = view.annotations[key];
  if (raw === undefined) return fallback;
  const parsed = parse(raw);
  if ('value' in parsed) return parsed.value;
  problems.push({
    on: 'workload',
    key,
    value: raw.slice(0, 256),
    problem: parsed.problem,
    consequence,
  });
  return fallback;
}

/**
 * The rollout settings of the workload `view` (the view under its binding: a policy's
 * haltOnFailure and undoOnFailure are its annotations there) and of its `binding` (canary and
 * maxConcurrent, which size the group of a policy's targets).
 */
export function workloadRollout(
  view: WorkloadView,
  binding: PolicyBinding,
  flags: RolloutSettings,
): Resolved<WorkloadRollout> {
  const problems: AnnotationProblem[] = [];
  const read = reader(view, problems);
  const haltOnFailure = read(
    HALT_ON_FAILED_ROLLOUT,
    parseBooleanSetting,
    flags.haltOnFailure,
    `read as ${String(flags.haltOnFailure)} (--halt-on-failed-rollout)`,
  );
  const undoOnFailure = read(
    UNDO_FAILED_ROLLOUT,
    parseBooleanSetting,
    flags.undoOnFailure,
    `read as ${String(flags.undoOnFailure)} (--undo-failed-rollouts)`,
  );
  const { rolloutCanary, rolloutMaxConcurrent } = binding.policySettings;
  const canary = rolloutCanary && parseCanarySetting(rolloutCanary.value);
  return {
    settings: {
      haltOnFailure,
      undoOnFailure,
      // The projection validated the policy's canary: a value that does not parse is not there.
      canary:
        rolloutCanary && canary && 'value' in canary
          ? { group: groupOf(rolloutCanary.policy), size: canary.value }
          : undefined,
      maxConcurrent: rolloutMaxConcurrent && {
        group: groupOf(rolloutMaxConcurrent.policy),
        size: rolloutMaxConcurrent.value,
      },
    },
    problems,
  };
}

/** The breaker limits of the workload `view` (under its binding); the flags' where unset. */
export function workloadFlapLimits(view: WorkloadView, flags: FlapLimits): Resolved<FlapLimits> {
  const problems: AnnotationProblem[] = [];
  const read = reader(view, problems);
  const maxChanges = read(
    FLAP_MAX_CHANGES,
    (raw) => parseCountSetting(raw, 0, SETTING_LIMITS.maxFlapChanges),
    flags.maxChanges,
    `read as ${String(flags.maxChanges)} (--flap-max-changes)`,
  );
  const periodMs = read(FLAP_PERIOD, parseFlapDuration, flags.periodMs, 'read as --flap-period');
  const coolDownMs = read(
    FLAP_COOL_DOWN,
    parseFlapDuration,
    flags.coolDownMs,
    'read as --flap-cool-down',
  );
  return { settings: { maxChanges, periodMs, coolDownMs }, problems };
}
