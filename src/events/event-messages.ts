import { sourceKey } from '../core/keys.ts';
import type {
  AnnotationProblem,
  SourceKey,
  SourceRef,
  SourceType,
  WorkloadRef,
} from '../core/types.ts';
import { sourceTypeRow } from '../core/source-types.ts';
import type { EventType } from './ports.ts';
import { byCodeUnit } from '../core/order.ts';

/** Every Event reason kreload writes, with its type (§13.3). */
export const EVENT_TYPES = {
  Reloaded: 'Normal',
  ReloadFail: 'Warning',
  WorkloadsReloaded: 'Normal',
  InvalidAnnotation: 'Warning',
  EnvVarCollision: 'Warning',
  DryRunReload: 'Normal',
  ReloadPolicyConflict: 'Warning',
  RolloutFailed: 'Warning',
  TooManySources: 'Warning',
  ConfigRolloutHalted: 'Warning',
  ConfigRolloutUndone: 'Warning',
  PodEvicted: 'Normal',
  EvictionHeld: 'Warning',
  EvictionComplete: 'Normal',
  SourceFlapping: 'Warning',
} as const satisfies Record<string, EventType>;

export type EventReason = keyof typeof EVENT_TYPES;

/** Reason, type and message of one Event; the object it is about is added by the caller. */
export interface EventContent {
  readonly reason: EventReason;
  readonly type: EventType;
  readonly message: string;
  /** The Event's `action`: for a roll, the strategy that ran (`env-vars`, … `evict`). */
  readonly action?: string | undefined;
}

/** A source named in a message. Its namespace is the workload's. */
export interface ChangedSource {
  readonly type: SourceType;
  readonly name: string;
}

/** At most this many workload names in a `WorkloadsReloaded` message. */
export const MAX_LISTED_WORKLOADS = 10;

const HASH_PREFIX_LENGTH = 12;

function content(reason: EventReason, message: string): EventContent {
  return { reason, type: EVENT_TYPES[reason], message };
}

function sortedSources(sources: readonly ChangedSource[]): ChangedSource[] {
  return [...sources].sort((a, b) =>
    byCodeUnit(sourceKey(a.type, a.name), sourceKey(b.type, b.name)),
  );
}

/**
 * Reloader's text; several sources are listed in one message (D38). The strategy that ran goes in
 * the Event's `action`, so the message stays the one tools written for Reloader match.
 */
export function reloadedEvent(input: {
  readonly sources: readonly ChangedSource[];
  readonly workload: WorkloadRef;
  readonly strategy?: string | undefined;
}): EventContent {
  const { sources, workload } = input;
  const listed = sortedSources(sources)
    .map((s) => `'${s.name}' of type '${s.type}'`)
    .join(', ');
  const reloaded = content(
    'Reloaded',
    `Changes detected in ${listed} in namespace '${workload.namespace}', ` +
      `Updated '${workload.name}' of type '${workload.kind}' in namespace '${workload.namespace}'`,
  );
  return input.strategy === undefined ? reloaded : { ...reloaded, action: input.strategy };
}

/** Reloader's text. */
export function reloadFailEvent(input: {
  readonly workload: WorkloadRef;
  readonly error: string;
}): EventContent {
  const { workload, error } = input;
  return content(
    'ReloadFail',
    `Update for '${workload.name}' of type '${workload.kind}' in namespace '${workload.namespace}' ` +
      `failed with error ${error}`,
  );
}

/**
 * On the workload, when a rollout kreload started ends `failed` (rollout/health.ts): the write was
 * acknowledged, but the new pods never became available. Not Reloader's `ReloadFail`, which means
 * the write itself failed.
 */
export function rolloutFailedEvent(input: {
  readonly workload: WorkloadRef;
  readonly generation: number;
  readonly reason: string;
  readonly detail: string;
}): EventContent {
  const { workload, generation, reason, detail } = input;
  return content(
    'RolloutFailed',
    `Rollout of '${workload.name}' of type '${workload.kind}' in namespace '${workload.namespace}' ` +
      `started by kreload (generation ${String(generation)}) failed: ${reason} (${detail})`,
  );
}

/** On the source, once every workload its change fanned out to has finished. */
export function workloadsReloadedEvent(input: {
  readonly source: SourceRef;
  readonly hash: string;
  readonly rolled: readonly WorkloadRef[];
  readonly failed: number;
}): EventContent {
  const { source, hash, rolled, failed } = input;
  const names = rolled.map((w) => `${w.kind}/${w.name}`).sort(byCodeUnit);
  const shown = names.slice(0, MAX_LISTED_WORKLOADS);
  const more = names.length - shown.length;
  const list =
    shown.length === 0 ? '' : `: ${shown.join(', ')}${more > 0 ? `, … +${more} more` : ''}`;
  const failures = failed > 0 ? `; ${failed} failed` : '';
  const kind = sourceTypeRow(source.type).kind;
  return content(
    'WorkloadsReloaded',
    `Change to ${kind} '${source.name}' (hash ${hash.slice(0, HASH_PREFIX_LENGTH)}) ` +
      `rolled ${rolled.length} workload(s)${list}${failures}`,
  );
}

/** On the object that carries the bad value. */
export function invalidAnnotationEvent(problem: AnnotationProblem): EventContent {
  return content(
    problem.reason ?? 'InvalidAnnotation',
    `${problem.key}: ${problem.problem}; ${problem.consequence}`,
  );
}

export function envVarCollisionEvent(input: {
  readonly envVar: string;
  readonly sources: readonly SourceKey[];
}): EventContent {
  const shared = [...input.sources].sort(byCodeUnit).join(', ');
  return content(
    'EnvVarCollision',
    `${input.envVar} is shared by ${shared}; tracking them separately`,
  );
}

/** Written on the workload and on each source, with the same text. */
export function dryRunReloadEvent(input: {
  readonly workload: WorkloadRef;
  readonly hashes: ReadonlyMap<SourceKey, string>;
}): EventContent {
  const { workload, hashes } = input;
  const desired = [...hashes]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([key, hash]) => `${key}=${hash.slice(0, HASH_PREFIX_LENGTH)}`)
    .join(', ');
  return content(
    'DryRunReload',
    `Dry run: would roll '${workload.name}' of type '${workload.kind}' for ${desired}`,
  );
}

/** On the ReloadPolicy whose setting lost (docs/reload-policy.md): its `Conflict` message. */
export function reloadPolicyConflictEvent(conflictMessage: string): EventContent {
  return content('ReloadPolicyConflict', conflictMessage);
}

/**
 * On the source and on each failed workload: a workload of a wave failed, and the rest of the
 * change's fan-out is held until the source changes again or the halt marker is removed.
 */
export function configRolloutHaltedEvent(input: {
  readonly source: SourceRef;
  readonly hash: string;
  readonly failed: readonly { readonly ref: WorkloadRef; readonly reason: string }[];
  readonly held: number;
  readonly resume: string;
}): EventContent {
  const { source, hash, failed, held, resume } = input;
  const names = failed.map((f) => `${f.ref.kind}/${f.ref.name} (${f.reason})`).sort(byCodeUnit);
  const shown = names.slice(0, MAX_LISTED_WORKLOADS);
  const more = names.length - shown.length;
  const list = more > 0 ? `${shown.join(', ')} and ${String(more)} more` : shown.join(', ');
  return content(
    'ConfigRolloutHalted',
    `Rollout of the change of ${sourceTypeRow(source.type).kind} '${source.name}' in namespace ` +
      `'${source.namespace}' (hash ${hash.slice(0, HASH_PREFIX_LENGTH)}) halted: ${list} failed; ` +
      `${String(held)} workload(s) held. Resume with: ${resume}, or change the source again`,
  );
}

/** A failed wave member was rolled back to the revision before the failed roll (--undo-failed-rollouts). */
export function configRolloutUndoneEvent(input: {
  readonly source: SourceRef;
  readonly hash: string;
  readonly revision: { readonly object: string; readonly number: number };
  /** The config snapshots the restored template runs, by name. */
  readonly snapshots: readonly string[];
}): EventContent {
  const { source, hash, revision, snapshots } = input;
  const pinned =
    snapshots.length === 0
      ? 'no config snapshot'
      : `snapshot(s) ${[...snapshots].sort(byCodeUnit).join(', ')}`;
  return content(
    'ConfigRolloutUndone',
    `Rolled back to revision ${String(revision.number)} (${revision.object}, ${pinned}) after the ` +
      `change of ${sourceTypeRow(source.type).kind} '${source.name}' (hash ` +
      `${hash.slice(0, HASH_PREFIX_LENGTH)}) failed; not rolled forward until the source changes again`,
  );
}

/** A workload's position in a roll by eviction, for its Events (docs/adr/0044). */
export interface EvictionProgressWords {
  readonly old: number;
  readonly current: number;
  readonly desired: number;
}

const EVICT_ACTION = { action: 'evict' } as const;

function progressWords(progress: EvictionProgressWords): string {
  return (
    `${String(progress.old)} pod(s) with an older config left, ` +
    `${String(progress.current)} of ${String(progress.desired)} run the new one`
  );
}

/** On the workload, for each pod kreload evicted to roll it (strategy `evict`). */
export function podEvictedEvent(input: {
  readonly workload: WorkloadRef;
  readonly pod: string;
  readonly progress: EvictionProgressWords;
}): EventContent {
  return {
    ...content(
      'PodEvicted',
      `Evicted pod '${input.pod}' of '${input.workload.name}' to reload its config ` +
        `(strategy 'evict'); ${progressWords(input.progress)}`,
    ),
    ...EVICT_ACTION,
  };
}

/** On the workload, when a PodDisruptionBudget (or the workload's spec) holds a roll by eviction. */
export function evictionHeldEvent(input: {
  readonly workload: WorkloadRef;
  readonly pod: string | undefined;
  readonly reason: string;
}): EventContent {
  const what = input.pod === undefined ? 'Roll by eviction' : `Eviction of pod '${input.pod}'`;
  return {
    ...content(
      'EvictionHeld',
      `${what} of '${input.workload.name}' held (strategy 'evict'): ${input.reason}; retried with backoff`,
    ),
    ...EVICT_ACTION,
  };
}

/** On the workload, once no pod with an older config is left. */
export function evictionCompleteEvent(input: {
  readonly workload: WorkloadRef;
  readonly progress: EvictionProgressWords;
}): EventContent {
  return {
    ...content(
      'EvictionComplete',
      `Every pod of '${input.workload.name}' with an older config was evicted (strategy 'evict'); ` +
        `${String(input.progress.current)} of ${String(input.progress.desired)} run the new config`,
    ),
    ...EVICT_ACTION,
  };
}

/** On a source whose breaker opened (docs/windows-and-breaker.md): once per episode. */
export function sourceFlappingEvent(input: {
  readonly source: SourceRef;
  readonly changes: number;
  readonly periodMs: number;
  readonly coolDownMs: number;
}): EventContent {
  const { source, changes, periodMs, coolDownMs } = input;
  return content(
    'SourceFlapping',
    `${sourceTypeRow(source.type).kind} '${source.name}' changed ${String(changes)} times within ` +
      `${String(periodMs / 1000)}s: rolls of the workloads that use it are held until it has been ` +
      `quiet for ${String(coolDownMs / 1000)}s, then they roll once with its latest content`,
  );
}
