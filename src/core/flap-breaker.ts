/**
 * The flapping-source breaker (docs/windows-and-breaker.md): a source whose content changes more
 * than `maxChanges` times within `periodMs` opens its breaker, and the breaker closes once the
 * source has been quiet for `coolDownMs`. One episode runs from the opening to the close. Pure:
 * the caller keeps one state per source and passes the time; a state holds at most
 * `maxChanges + 1` times, so a source rewritten every millisecond costs no more than one that
 * changes once an hour.
 */

export interface FlapLimits {
  /** More changes than this within the period open the breaker; 0 turns the breaker off. */
  readonly maxChanges: number;
  readonly periodMs: number;
  /** Quiet time after the last change that closes an open breaker. */
  readonly coolDownMs: number;
}

export interface FlapState {
  /** The latest changes within the period, oldest first; at most `maxChanges + 1`. */
  readonly changes: readonly number[];
  /** Set while an episode runs: when the breaker opened. */
  readonly openedAt: number | undefined;
  /** Changes seen since the breaker opened, the one that opened it included. */
  readonly episodeChanges: number;
  readonly lastChangeAt: number;
}

export type FlapStatus =
  | { readonly open: false }
  | {
      readonly open: true;
      readonly openedAt: number;
      /** When the breaker closes if the source stays quiet. */
      readonly closesAt: number;
      /** Changes within the period that opened it. */
      readonly changesInPeriod: number;
      readonly episodeChanges: number;
    };

export function breakerEnabled(limits: FlapLimits): boolean {
  return limits.maxChanges > 0;
}

/** The status at `now`: an open breaker whose cool-down has passed is closed. */
export function flapStatus(
  state: FlapState | undefined,
  now: number,
  limits: FlapLimits,
): FlapStatus {
  if (state?.openedAt === undefined) return { open: false };
  const closesAt = state.lastChangeAt + limits.coolDownMs;
  if (now >= closesAt) return { open: false };
  return {
    open: true,
    openedAt: state.openedAt,
    closesAt,
    changesInPeriod: state.changes.length,
    episodeChanges: state.episodeChanges,
  };
}

/**
 * Records one change of the source's content at `at`. `opened` is true for the change that opens
 * the breaker (once per episode: the Event and the metric follow it).
 */
export function recordChange(
  state: FlapState | undefined,
  at: number,
  limits: FlapLimits,
): { readonly state: FlapState; readonly opened: boolean } {
  const episode = state !== undefined && flapStatus(state, at, limits).open;
  // After an episode the count starts again: the change that follows the cool-down rolls.
  const endedEpisode = state?.openedAt !== undefined && !episode;
  const earlier = endedEpisode ? [] : (state?.changes ?? []);
  const recent = earlier.filter((time) => time > at - limits.periodMs);
  const changes = [...recent, at].slice(-(limits.maxChanges + 1));
  if (episode) {
    const next = { ...state, changes, lastChangeAt: at, episodeChanges: state.episodeChanges + 1 };
    return { state: next, opened: false };
  }
  const opened = breakerEnabled(limits) && changes.length > limits.maxChanges;
  return {
    state: {
      changes,
      openedAt: opened ? at : undefined,
      episodeChanges: opened ? 1 : 0,
      lastChangeAt: at,
    },
    opened,
  };
}

/** Whether the state says nothing any more at `now` and can be dropped. */
export function flapStateIdle(state: FlapState, now: number, limits: FlapLimits): boolean {
  return !flapStatus(state, now, limits).open && state.lastChangeAt <= now - limits.periodMs;
}
