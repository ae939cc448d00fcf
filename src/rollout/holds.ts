/**
 * Why a planned roll waits (docs/windows-and-breaker.md): the restart window of the workload, and
 * the breakers of the sources it rolls for. One row per gate; each answers with a hold that says
 * why and until when, or nothing. Pure: the caller passes the time, the parsed window policy and
 * each source's breaker status.
 */
import type { FlapStatus } from '../core/flap-breaker.ts';
import type { PolicyParse, WindowVerdict } from '../core/restart-window.ts';
import { evaluateWindow } from '../core/restart-window.ts';
import type { SourceKey } from '../core/types.ts';

/**
 * - `window`: outside the workload's allowed windows, or inside a deny window;
 * - `window_invalid`: the window annotation cannot be read (fails closed, as upstream);
 * - `windows_off`: the annotation is there but `--enable-restart-windows` is not (fails closed);
 * - `flapping`: a source the roll is for changes faster than the breaker allows.
 */
export type GateReason = 'window' | 'window_invalid' | 'windows_off' | 'flapping';

export interface Hold {
  readonly reason: GateReason;
  /** When the hold ends by itself (ms since the epoch); undefined: only a change of the workload ends it. */
  readonly until: number | undefined;
  /** For people: explain, the Event and the log. */
  readonly detail: string;
  /** `flapping`: the source. */
  readonly source?: SourceKey | undefined;
}

export interface HoldInput {
  /** The raw window annotation on W, if any. */
  readonly windowValue: string | undefined;
  /** Its parse (the caller caches parses by value); undefined without the annotation. */
  readonly window: PolicyParse | undefined;
  readonly windowsEnabled: boolean;
  /** The keys the plan rolls for. */
  readonly rolling: readonly SourceKey[];
  readonly flapping: (key: SourceKey) => FlapStatus;
  /** ms since the epoch. */
  readonly now: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
}

function windowHold(input: HoldInput): Hold | undefined {
  const { window } = input;
  if (input.windowValue === undefined || window === undefined) return undefined;
  if (!input.windowsEnabled) {
    return {
      reason: 'windows_off',
      until: undefined,
      detail: 'the workload has a restart window but kreload runs without --enable-restart-windows',
    };
  }
  if ('problem' in window) {
    return {
      reason: 'window_invalid',
      until: undefined,
      detail: `the restart window is invalid (${window.problem}); fix or remove it`,
    };
  }
  const verdict: WindowVerdict = evaluateWindow(window.policy, input.now);
  if (verdict.open) return undefined;
  const opens =
    verdict.opensAt === undefined
      ? 'no allowed window opens within 400 days'
      : `the next window opens at ${iso(verdict.opensAt)}`;
  const denied =
    verdict.deniedBy === undefined
      ? 'outside the restart windows'
      : `inside the deny window "${verdict.deniedBy.cron}" (${verdict.deniedBy.duration})`;
  return { reason: 'window', until: verdict.opensAt, detail: `${denied}; ${opens}` };
}

function flappingHolds(input: HoldInput): Hold[] {
  return input.rolling.flatMap((source) => {
    const status = input.flapping(source);
    if (!status.open) return [];
    return [
      {
        reason: 'flapping' as const,
        until: status.closesAt,
        source,
        detail:
          `${source} is flapping (${String(status.changesInPeriod)} changes in the period, ` +
          `${String(status.episodeChanges)} since ${iso(status.openedAt)}); its breaker closes ` +
          `at ${iso(status.closesAt)} if it stays quiet`,
      },
    ];
  });
}

/** Every hold on the roll; empty: the roll may start now. */
export function holdsOf(input: HoldInput): readonly Hold[] {
  const window = windowHold(input);
  return [...(window ? [window] : []), ...flappingHolds(input)];
}

/**
 * When to look again: the latest of the holds' ends, since the roll waits for all of them (each
 * is evaluated again then). Undefined when a hold has no end of its own.
 */
export function holdsEnd(holds: readonly Hold[]): number | undefined {
  let end = 0;
  for (const hold of holds) {
    if (hold.until === undefined) return undefined;
    end = Math.max(end, hold.until);
  }
  return holds.length === 0 ? undefined : end;
}
