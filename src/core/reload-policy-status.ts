/**
 * The status kreload writes on a ReloadPolicy (docs/reload-policy.md#status): conditions from what
 * the caches hold, and per target the last reload and the source hashes it carried. Pure: the
 * status writer gathers the facts and sends the result.
 */
import type { JsonObject } from './json.ts';
import { parseSourceKey, sourceKey } from './keys.ts';
import { compareUtf8, parseLastReloadedFrom } from './state.ts';
import {
  type PolicyCondition,
  type PolicyConditionType,
  type PolicyConflict,
  type PolicySourceHash,
  type PolicyStatusView,
  type PolicyTargetStatus,
  type ReloadPolicyView,
} from './reload-policy.ts';
import type { SourceKey } from './types.ts';
import { sourceTypeRow } from './source-types.ts';

/** Named members not found, and how many members there are. */
export interface MemberFacts {
  readonly listed: number;
  /** `ConfigMap app-config`, `Deployment selector app=web`: one per member that finds nothing. */
  readonly missing: readonly string[];
}

export interface StatusFacts {
  readonly policy: ReloadPolicyView;
  readonly sources: MemberFacts;
  readonly targets: MemberFacts;
  /** The settings of this policy that lost on one of its targets. */
  readonly conflicts: readonly PolicyConflict[];
  /** The targets the policy names now, as `Kind/name`: entries of others are dropped. */
  readonly currentTargets: ReadonlySet<string>;
  /** Reloads done since the status was read, by `Kind/name`. */
  readonly reloads: ReadonlyMap<string, PolicyTargetStatus>;
  /** RFC 3339, for a condition whose status changes now. */
  readonly now: string;
}

/**
 * Bounds of the status, so that it stays far below the API server's limits whatever the number of
 * targets and sources (a condition message is at most 32 KiB, an object at most 1.5 MiB): at most
 * this many target records, each with at most this many source hashes, and this many conflicts
 * named in a message of at most this many characters. The rest is counted.
 */
export const STATUS_LIMITS = {
  targets: 100,
  sourceHashes: 20,
  conflicts: 10,
  missing: 16,
  messageChars: 8192,
} as const;

/** `2026-12-02T03:04:05Z`: the seconds precision of metav1.Time. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function targetId(target: { readonly kind: string; readonly name: string }): string {
  return `${target.kind}/${target.name}`;
}

/** A carried hash with its source key. */
export interface KeyedSourceHash {
  readonly key: SourceKey;
  readonly hash: PolicySourceHash;
}

function compareHashes(a: PolicySourceHash, b: PolicySourceHash): number {
  return compareUtf8(targetId(a), targetId(b));
}

/** Every hash a roll left on a workload, with its key, sorted by kind and name. */
export function keyedSourceHashes(
  carried: readonly { readonly key: SourceKey; readonly hash: string | undefined }[],
): KeyedSourceHash[] {
  // Hundreds of hashes under a policy selector: each id is built once, not per comparison.
  const keyed: { readonly id: string; readonly entry: KeyedSourceHash }[] = [];
  for (const { key, hash } of carried) {
    const parsed = parseSourceKey(key);
    if (parsed === undefined || hash === undefined) continue;
    const entry = { key, hash: { kind: sourceTypeRow(parsed.type).kind, name: parsed.name, hash } };
    keyed.push({ id: targetId(entry.hash), entry });
  }
  return keyed.sort((a, b) => compareUtf8(a.id, b.id)).map(({ entry }) => entry);
}

/** The hashes of the policy's sources that a roll left on a workload, sorted by kind and name. */
export function sourceHashesOf(
  policySources: ReadonlySet<SourceKey>,
  carried: readonly { readonly key: SourceKey; readonly hash: string | undefined }[],
): PolicySourceHash[] {
  return keyedSourceHashes(carried.filter(({ key }) => policySources.has(key))).map(
    (entry) => entry.hash,
  );
}

/** What the workload carries now, for `recoveredRecord`. */
export interface CarriedState {
  readonly target: { readonly kind: string; readonly name: string };
  /** A(K) for each key a pass tracks on the workload (§5.3): read from the workload's object. */
  readonly applied: ReadonlyMap<SourceKey, string>;
  /** PT `last-reloaded-from` (annotations strategy): its `observedAt` dates the roll. */
  readonly lastReloadedFrom: string | undefined;
}

/**
 * The record of a target whose status write was lost (a crash between the workload patch and the
 * status write, docs/reload-policy.md#status): the hashes of the policy's sources the workload
 * carries, where they differ from the stored record. The time is the `observedAt` of the workload's
 * `last-reloaded-from` when that document names one of those sources with the hash carried (the
 * annotations strategy); otherwise no roll time is recorded on the workload and it is left out
 * rather than kept from an older roll. Undefined: nothing to recover.
 */
export function recoveredRecord(
  policySources: ReadonlySet<SourceKey>,
  carried: CarriedState,
  stored: PolicyTargetStatus | undefined,
): PolicyTargetStatus | undefined {
  const applied = sourceHashesOf(
    policySources,
    [...carried.applied].map(([key, hash]) => ({ key, hash })),
  );
  const storedHash = (hash: PolicySourceHash): string | undefined =>
    stored?.sourceHashes.find((entry) => targetId(entry) === targetId(hash))?.hash;
  if (!applied.some((hash) => storedHash(hash) !== hash.hash)) return undefined;
  const byId = new Map((stored?.sourceHashes ?? []).map((hash) => [targetId(hash), hash]));
  for (const hash of applied) byId.set(targetId(hash), hash);
  return {
    kind: carried.target.kind,
    name: carried.target.name,
    lastReloadTime: rollTimeOf(policySources, carried),
    sourceHashes: [...byId.values()].sort(compareHashes),
  };
}

function rollTimeOf(
  policySources: ReadonlySet<SourceKey>,
  carried: CarriedState,
): string | undefined {
  const document = parseLastReloadedFrom(carried.lastReloadedFrom).value;
  if (document === undefined || document.observedAt <= 0) return undefined;
  const key = sourceKey(document.type, document.name);
  if (!policySources.has(key) || carried.applied.get(key) !== document.hash) return undefined;
  return rfc3339(document.observedAt * 1000);
}

interface Verdict {
  readonly status: PolicyCondition['status'];
  readonly reason: string;
  readonly message: string;
}

/** The first `limit` items, then how many more: `a, b and 3 more`. */
function listed(items: readonly string[], limit: number, separator: string): string {
  const shown = items.slice(0, limit).join(separator);
  const more = items.length - limit;
  return more > 0 ? `${shown}${separator}and ${String(more)} more` : shown;
}

/** A condition message cut to the status bound, with the cut said. */
function bounded(message: string): string {
  const max = STATUS_LIMITS.messageChars;
  return message.length <= max ? message : `${message.slice(0, max - 20)}… (message cut)`;
}

/** A target record with at most `STATUS_LIMITS.sourceHashes` hashes, the rest counted. */
export function boundedRecord(record: PolicyTargetStatus): PolicyTargetStatus {
  const all = record.sourceHashes.length + (record.unlistedSourceHashes ?? 0);
  const sourceHashes = record.sourceHashes.slice(0, STATUS_LIMITS.sourceHashes);
  const unlisted = all - sourceHashes.length;
  const { kind, name, lastReloadTime } = record;
  return unlisted > 0
    ? { kind, name, lastReloadTime, sourceHashes, unlistedSourceHashes: unlisted }
    : { kind, name, lastReloadTime, sourceHashes };
}

function membersVerdict(facts: MemberFacts, noun: string, missingReason: string): Verdict {
  const found = facts.listed - facts.missing.length;
  if (facts.missing.length === 0) {
    return {
      status: 'True',
      reason: 'AllFound',
      message: `${String(found)}/${String(facts.listed)} ${noun} found`,
    };
  }
  return {
    status: 'False',
    reason: missingReason,
    message: bounded(
      `not found: ${listed(facts.missing, STATUS_LIMITS.missing, ', ')}; bound as soon as they exist`,
    ),
  };
}

function verdicts(facts: StatusFacts): Record<PolicyConditionType, Verdict> {
  const sources = membersVerdict(facts.sources, 'sources', 'SourceNotFound');
  const targets = membersVerdict(facts.targets, 'targets', 'TargetNotFound');
  const conflict: Verdict =
    facts.conflicts.length === 0
      ? {
          status: 'False',
          reason: 'NoConflict',
          message: 'no other policy or annotation overrides a setting',
        }
      : {
          status: 'True',
          reason: 'SettingOverridden',
          message: bounded(
            listed(
              [...new Set(facts.conflicts.map((c) => c.message))].sort(),
              STATUS_LIMITS.conflicts,
              '; ',
            ),
          ),
        };
  const ready: Verdict = facts.policy.suspend
    ? { status: 'False', reason: 'Suspended', message: 'spec.suspend is true: nothing is bound' }
    : facts.policy.problems.length > 0
      ? {
          status: 'False',
          reason: 'InvalidEntries',
          message: bounded(
            `${listed(facts.policy.problems, STATUS_LIMITS.missing, '; ')}; the rest of the policy applies`,
          ),
        }
      : sources.status === 'False'
        ? { status: 'False', reason: 'SourceNotFound', message: sources.message }
        : targets.status === 'False'
          ? { status: 'False', reason: 'TargetNotFound', message: targets.message }
          : { status: 'True', reason: 'Bound', message: 'every source is bound to every target' };
  return { Ready: ready, SourcesFound: sources, TargetsFound: targets, Conflict: conflict };
}

const CONDITION_ORDER: readonly PolicyConditionType[] = [
  'Ready',
  'SourcesFound',
  'TargetsFound',
  'Conflict',
];

function latest(times: readonly (string | undefined)[]): string | undefined {
  return times
    .filter((time): time is string => time !== undefined)
    .sort()
    .at(-1);
}

/** The status to write: conditions keep their transition time while their status holds. */
export function desiredStatus(facts: StatusFacts): PolicyStatusView {
  const { policy } = facts;
  const byType = verdicts(facts);
  const conditions = CONDITION_ORDER.map((type): PolicyCondition => {
    const verdict = byType[type];
    const before = policy.status.conditions.find((condition) => condition.type === type);
    return {
      type,
      ...verdict,
      lastTransitionTime:
        before?.status === verdict.status && before.lastTransitionTime !== ''
          ? before.lastTransitionTime
          : facts.now,
      observedGeneration: policy.generation,
    };
  });
  const targets = new Map<string, PolicyTargetStatus>();
  for (const entry of policy.status.targets) targets.set(targetId(entry), entry);
  for (const [id, entry] of facts.reloads) targets.set(id, entry);
  const kept = [...targets.entries()].filter(([id]) => facts.currentTargets.has(id));
  // The most recently rolled records are listed; the status says how many are left out.
  const newestFirst = kept.sort(
    ([a, x], [b, y]) =>
      compareUtf8(y.lastReloadTime ?? '', x.lastReloadTime ?? '') || compareUtf8(a, b),
  );
  const listedRecords = newestFirst
    .slice(0, STATUS_LIMITS.targets)
    .sort(([a], [b]) => compareUtf8(a, b))
    .map(([, entry]) => boundedRecord(entry));
  const count = (members: MemberFacts): string =>
    `${String(members.listed - members.missing.length)}/${String(members.listed)}`;
  return {
    observedGeneration: policy.generation,
    conditions,
    targets: listedRecords,
    lastReloadTime: latest(kept.map(([, entry]) => entry.lastReloadTime)),
    foundSources: count(facts.sources),
    foundTargets: count(facts.targets),
    boundTargets: facts.currentTargets.size,
    unlistedTargets: kept.length - listedRecords.length,
  };
}

function conditionBody(condition: PolicyCondition): JsonObject {
  return {
    type: condition.type,
    status: condition.status,
    reason: condition.reason,
    message: condition.message,
    lastTransitionTime: condition.lastTransitionTime,
    ...(condition.observedGeneration === undefined
      ? {}
      : { observedGeneration: condition.observedGeneration }),
  };
}

function targetBody(target: PolicyTargetStatus): JsonObject {
  return {
    kind: target.kind,
    name: target.name,
    ...(target.lastReloadTime === undefined ? {} : { lastReloadTime: target.lastReloadTime }),
    sourceHashes: target.sourceHashes.map((hash) => ({ ...hash })),
    ...(target.unlistedSourceHashes === undefined
      ? {}
      : { unlistedSourceHashes: target.unlistedSourceHashes }),
  };
}

/** The `status` object of the merge patch; lists are replaced whole, so each is complete. */
export function statusBody(status: PolicyStatusView): JsonObject {
  return {
    observedGeneration: status.observedGeneration ?? null,
    conditions: status.conditions.map(conditionBody),
    targets: status.targets.map(targetBody),
    lastReloadTime: status.lastReloadTime ?? null,
    foundSources: status.foundSources ?? null,
    foundTargets: status.foundTargets ?? null,
    boundTargets: status.boundTargets ?? null,
    unlistedTargets: status.unlistedTargets ?? null,
  };
}

/** Each field of `statusBody(status)` as JSON: what decides whether writing a field changes it. */
export function statusFields(status: PolicyStatusView): ReadonlyMap<string, string> {
  return new Map(
    Object.entries(statusBody(status)).map(([field, value]) => [field, JSON.stringify(value)]),
  );
}

/**
 * The merge patch from a status whose fields are `current` (`statusFields`) to `next`: only the
 * fields that change, so a roll of one target does not resend every condition, and a condition
 * change does not resend the records. A status kreload never wrote (`written` false) gets every
 * field. Undefined when writing `next` would change nothing the API server holds.
 */
export function statusPatchFrom(
  current: { readonly fields: ReadonlyMap<string, string>; readonly written: boolean },
  next: PolicyStatusView,
): JsonObject | undefined {
  const after = statusBody(next);
  const patch: JsonObject = {};
  let changed = false;
  for (const [field, value] of Object.entries(after)) {
    if (current.fields.get(field) !== JSON.stringify(value)) {
      patch[field] = value;
      changed = true;
    }
  }
  if (!changed) return undefined;
  return current.written ? patch : after;
}

/**
 * The merge patch from `current` to `next` (see `statusPatchFrom`); every field when kreload never
 * wrote `current` (or wrote it with another CRD version), so that empty lists show.
 */
export function statusPatch(current: PolicyStatusView, next: PolicyStatusView): JsonObject {
  if (current.observedGeneration === undefined) return statusBody(next);
  return statusPatchFrom({ fields: statusFields(current), written: true }, next) ?? {};
}

/** Whether writing `next` would change what the API server holds. */
export function sameStatus(current: PolicyStatusView, next: PolicyStatusView): boolean {
  return statusPatchFrom({ fields: statusFields(current), written: true }, next) === undefined;
}
