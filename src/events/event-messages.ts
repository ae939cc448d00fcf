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
  SourceFlapping: 'Warning',
} as const satisfies Record<string, EventType>;

export type EventReason = keyof typeof EVENT_TYPES;

/** Reason, type and message of one Event; the object it is about is added by the caller. */
export interface EventContent {
  readonly reason: EventReason;
  readonly type: EventType;
  readonly message: string;
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

/** Byte-wise for the ASCII names Kubernetes allows, so messages (and their folding) are stable. */
function byCodeUnit(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

function sortedSources(sources: readonly ChangedSource[]): ChangedSource[] {
  return [...sources].sort((a, b) =>
    byCodeUnit(sourceKey(a.type, a.name), sourceKey(b.type, b.name)),
  );
}

/** Reloader's text; several sources are listed in one message (D38). */
export function reloadedEvent(input: {
  readonly sources: readonly ChangedSource[];
  readonly workload: WorkloadRef;
}): EventContent {
  const { sources, workload } = input;
  const listed = sortedSources(sources)
    .map((s) => `'${s.name}' of type '${s.type}'`)
    .join(', ');
  return content(
    'Reloaded',
    `Changes detected in ${listed} in namespace '${workload.namespace}', ` +
      `Updated '${workload.name}' of type '${workload.kind}' in namespace '${workload.namespace}'`,
  );
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
