/**
 * ReloadPolicy wire object → view (docs/reload-policy.md). The CRD's schema and CEL rules reject bad
 * policies at the API server; what still arrives malformed (a CRD older than this kreload, or objects
 * written before it was installed) is kept out entry by entry and named in `problems`, so the rest
 * of the policy still works.
 */
import { checkDnsSubdomain, checkLabelValue, checkQualifiedName } from '../config/k8s-names.ts';
import { parseGoDuration } from '../core/go-duration.ts';
import {
  booleanAt,
  isJsonObject,
  numberAt,
  objectAt,
  objectsAt,
  stringAt,
  stringMapAt,
  type JsonObject,
} from '../core/json.ts';
import type {
  PolicyCondition,
  PolicyConfigRevisions,
  PolicyConditionType,
  PolicyMember,
  PolicySelector,
  PolicySettingValues,
  PolicyStatusView,
  PolicyStrategy,
  PolicyTargetStatus,
  ReloadPolicyView,
  SelectorRequirement,
} from '../core/reload-policy.ts';
import type { SourceType, WorkloadKindName } from '../core/types.ts';
import { parseRestartWindow } from '../core/restart-window.ts';
import { WORKLOAD_KINDS } from '../rollout/kinds.ts';
import {
  SETTING_LIMITS,
  parseCanarySetting,
  parseCountSetting,
  parseFlapDuration,
} from '../rollout/workload-settings.ts';
import { objectIdentity } from './projections.ts';

/** `spec.sources[].kind` → the source type it names. */
const POLICY_SOURCE_KINDS: Readonly<Record<string, SourceType>> = {
  ConfigMap: 'CONFIGMAP',
  Secret: 'SECRET',
  SecretProviderClass: 'SECRETPROVIDERCLASS',
};

const STRATEGIES: readonly PolicyStrategy[] = ['env-vars', 'annotations', 'restart', 'evict'];
const OPERATORS: readonly SelectorRequirement['operator'][] = [
  'In',
  'NotIn',
  'Exists',
  'DoesNotExist',
];
const CONDITION_TYPES: readonly PolicyConditionType[] = [
  'Ready',
  'SourcesFound',
  'TargetsFound',
  'Conflict',
];
const CONDITION_STATUSES: readonly PolicyCondition['status'][] = ['True', 'False', 'Unknown'];

function includes<T extends string>(values: readonly T[], value: string | undefined): value is T {
  return value !== undefined && (values as readonly string[]).includes(value);
}

function selectorOf(entry: JsonObject): PolicySelector | undefined {
  const selector = objectAt(entry, ['selector']);
  if (selector === undefined) return undefined;
  const matchExpressions: SelectorRequirement[] = [];
  for (const term of objectsAt(selector, ['matchExpressions'])) {
    const key = stringAt(term, ['key']);
    const operator = stringAt(term, ['operator']);
    if (key === undefined || !includes(OPERATORS, operator)) return undefined;
    const values = Array.isArray(term.values)
      ? term.values.filter((value): value is string => typeof value === 'string')
      : [];
    matchExpressions.push({ key, operator, values });
  }
  const matchLabels = stringMapAt(selector, ['matchLabels']) ?? {};
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) return undefined;
  return { matchLabels, matchExpressions };
}

function memberOf<K extends string>(
  entry: JsonObject,
  kind: K | undefined,
): PolicyMember<K> | undefined {
  if (kind === undefined) return undefined;
  const name = stringAt(entry, ['name']);
  const hasSelector = objectAt(entry, ['selector']) !== undefined;
  if (name !== undefined && name !== '' && !hasSelector) return { kind, name };
  const selector = name === undefined ? selectorOf(entry) : undefined;
  return selector === undefined ? undefined : { kind, selector };
}

/**
 * Why a member's name or selector can never match an object (the API server accepts no such name
 * or label), or undefined. The CRD rejects these; a policy stored before it did still arrives.
 */
function impossibility(entry: JsonObject): string | undefined {
  const name = stringAt(entry, ['name']);
  const nameProblem = name === undefined || name === '' ? undefined : checkDnsSubdomain(name);
  if (nameProblem !== undefined) {
    return `.name ${JSON.stringify(name)} can never match: an object name ${nameProblem}`;
  }
  const selector = objectAt(entry, ['selector']);
  const keys = [
    ...Object.entries(stringMapAt(selector, ['matchLabels']) ?? {}).map(([key, value]) => ({
      key,
      values: [value],
    })),
    ...objectsAt(selector, ['matchExpressions']).map((term) => ({
      key: stringAt(term, ['key']) ?? '',
      values: Array.isArray(term.values)
        ? term.values.filter((value): value is string => typeof value === 'string')
        : [],
    })),
  ];
  for (const { key, values } of keys) {
    const keyProblem = checkQualifiedName(key);
    if (keyProblem !== undefined) {
      return `.selector key ${JSON.stringify(key)} can never match: a label key ${keyProblem}`;
    }
    for (const value of values) {
      const valueProblem = checkLabelValue(value);
      if (valueProblem !== undefined) {
        return `.selector value ${JSON.stringify(value)} can never match: a label value ${valueProblem}`;
      }
    }
  }
  return undefined;
}

function membersOf<K extends string>(
  spec: JsonObject | undefined,
  field: 'sources' | 'targets',
  kindOf: (kind: string | undefined) => K | undefined,
  problems: string[],
): PolicyMember<K>[] {
  const members: PolicyMember<K>[] = [];
  objectsAt(spec, [field]).forEach((entry, index) => {
    const member = memberOf(entry, kindOf(stringAt(entry, ['kind'])));
    const impossible = member === undefined ? undefined : impossibility(entry);
    if (impossible !== undefined) {
      problems.push(`spec.${field}[${String(index)}]${impossible}; ignored`);
    } else if (member === undefined) {
      problems.push(
        `spec.${field}[${String(index)}] needs a known kind and one of name or selector; ignored`,
      );
    } else members.push(member);
  });
  return members;
}

function workloadKindOf(kind: string | undefined): WorkloadKindName | undefined {
  return WORKLOAD_KINDS.find((row) => row.kind === kind)?.kind;
}

function sourceTypeOf(kind: string | undefined): SourceType | undefined {
  return kind === undefined ? undefined : POLICY_SOURCE_KINDS[kind];
}

function durationOf(
  spec: JsonObject | undefined,
  field: 'syncDelay' | 'pausePeriod',
  maxMs: number,
  problems: string[],
): { text: string; ms: number } | undefined {
  const text = stringAt(spec, [field]);
  if (text === undefined) return undefined;
  const ms = parseGoDuration(text);
  if (ms === undefined || ms < 0 || ms > maxMs) {
    problems.push(
      `spec.${field} ${JSON.stringify(text)} is not a Go duration within bounds; ignored`,
    );
    return undefined;
  }
  return { text, ms };
}

function conditionOf(entry: JsonObject): PolicyCondition | undefined {
  const type = stringAt(entry, ['type']);
  const status = stringAt(entry, ['status']);
  if (!includes(CONDITION_TYPES, type) || !includes(CONDITION_STATUSES, status)) return undefined;
  return {
    type,
    status,
    reason: stringAt(entry, ['reason']) ?? '',
    message: stringAt(entry, ['message']) ?? '',
    lastTransitionTime: stringAt(entry, ['lastTransitionTime']) ?? '',
    observedGeneration: numberAt(entry, ['observedGeneration']),
  };
}

function targetStatusOf(entry: JsonObject): PolicyTargetStatus | undefined {
  const kind = stringAt(entry, ['kind']);
  const name = stringAt(entry, ['name']);
  if (kind === undefined || name === undefined) return undefined;
  const sourceHashes = objectsAt(entry, ['sourceHashes']).flatMap((hash) => {
    const hashKind = stringAt(hash, ['kind']);
    const hashName = stringAt(hash, ['name']);
    const value = stringAt(hash, ['hash']);
    return hashKind === undefined || hashName === undefined || value === undefined
      ? []
      : [{ kind: hashKind, name: hashName, hash: value }];
  });
  const unlisted = numberAt(entry, ['unlistedSourceHashes']);
  return {
    kind,
    name,
    lastReloadTime: stringAt(entry, ['lastReloadTime']),
    sourceHashes,
    ...(unlisted === undefined ? {} : { unlistedSourceHashes: unlisted }),
  };
}

function statusOf(obj: unknown): PolicyStatusView {
  const status = objectAt(obj, ['status']);
  return {
    observedGeneration: numberAt(status, ['observedGeneration']),
    conditions: objectsAt(status, ['conditions']).flatMap((entry) => conditionOf(entry) ?? []),
    targets: objectsAt(status, ['targets']).flatMap((entry) => targetStatusOf(entry) ?? []),
    lastReloadTime: stringAt(status, ['lastReloadTime']),
    foundSources: stringAt(status, ['foundSources']),
    foundTargets: stringAt(status, ['foundTargets']),
    boundTargets: numberAt(status, ['boundTargets']),
    unlistedTargets: numberAt(status, ['unlistedTargets']),
  };
}

/** `spec.configRevisions`; an absent flag is false, as the CRD's defaults say. */
function configRevisionsOf(spec: JsonObject | undefined): PolicyConfigRevisions | undefined {
  const value = objectAt(spec, ['configRevisions']);
  if (value === undefined) return undefined;
  return { configMaps: booleanAt(value, ['configMaps']), secrets: booleanAt(value, ['secrets']) };
}

const HOUR_MS = 3_600_000;

/** `spec.rollout.priority`: an integer of at most 9 digits, as the annotation it stands for. */
function rolloutPriorityOf(spec: JsonObject | undefined, problems: string[]): number | undefined {
  const value = objectAt(spec, ['rollout'])?.priority;
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 999_999_999) {
    return value;
  }
  problems.push(
    `spec.rollout.priority ${JSON.stringify(value).slice(0, 64)} is not an integer of at most 9 digits; ignored`,
  );
  return undefined;
}

/** A field's value as text (numbers and booleans as written), or a problem when of another type. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Reads `spec.<path>.<field>` with `parse`; a bad value is named in `problems` and ignored. */
const checker =
  (problems: string[]) =>
  <T>(
    object: JsonObject | undefined,
    path: string,
    field: string,
    parse: (raw: string) => { readonly value: T } | { readonly problem: string },
  ): T | undefined =>
    checked(object?.[field], `spec.${path}.${field}`, parse, problems);

function checked<T>(
  value: unknown,
  where: string,
  parse: (raw: string) => { readonly value: T } | { readonly problem: string },
  problems: string[],
): T | undefined {
  if (value === undefined) return undefined;
  const raw = textOf(value);
  const parsed = raw === undefined ? { problem: 'not a scalar' } : parse(raw);
  if ('value' in parsed) return parsed.value;
  problems.push(`${where} ${JSON.stringify(value).slice(0, 64)}: ${parsed.problem}; ignored`);
  return undefined;
}

function booleanSetting(raw: string): { value: boolean } | { problem: string } {
  return raw === 'true' || raw === 'false'
    ? { value: raw === 'true' }
    : { problem: 'not a boolean' };
}

/** `spec.windows`: the restart-window JSON, checked by the annotation's parser. */
function windowsOf(spec: JsonObject | undefined, problems: string[]): string | undefined {
  const value = spec?.windows;
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  const parsed = parseRestartWindow(text);
  if ('problem' in parsed) {
    problems.push(`spec.windows: ${parsed.problem}; ignored`);
    return undefined;
  }
  return text;
}

function settingsOf(spec: JsonObject | undefined, problems: string[]): PolicySettingValues {
  const rollout = objectAt(spec, ['rollout']);
  const breaker = objectAt(spec, ['breaker']);
  const check = checker(problems);
  const canary = check(rollout, 'rollout', 'canary', parseCanarySetting);
  const period = check(breaker, 'breaker', 'period', parseFlapDuration);
  const coolDown = check(breaker, 'breaker', 'coolDown', parseFlapDuration);
  return {
    rolloutMaxConcurrent: check(rollout, 'rollout', 'maxConcurrent', (raw) =>
      parseCountSetting(raw, 1, SETTING_LIMITS.maxConcurrent),
    ),
    rolloutCanary:
      canary === undefined
        ? undefined
        : 'count' in canary
          ? String(canary.count)
          : `${String(canary.percent)}%`,
    rolloutHaltOnFailure: check(rollout, 'rollout', 'haltOnFailure', booleanSetting),
    rolloutUndoOnFailure: check(rollout, 'rollout', 'undoOnFailure', booleanSetting),
    windows: windowsOf(spec, problems),
    breakerMaxChanges: check(breaker, 'breaker', 'maxChanges', (raw) =>
      parseCountSetting(raw, 0, SETTING_LIMITS.maxFlapChanges),
    ),
    // As written when valid: the annotation it stands for takes the same text.
    breakerPeriod: period === undefined ? undefined : textOf(breaker?.period),
    breakerCoolDown: coolDown === undefined ? undefined : textOf(breaker?.coolDown),
  };
}

/** Undefined for an object without name, namespace or uid. */
export function projectReloadPolicy(obj: unknown): ReloadPolicyView | undefined {
  const id = objectIdentity(obj);
  if (!id || !isJsonObject(obj)) return undefined;
  const spec = objectAt(obj, ['spec']);
  const problems: string[] = [];
  const strategyText = stringAt(spec, ['strategy']);
  const strategy = includes(STRATEGIES, strategyText) ? strategyText : undefined;
  if (strategyText !== undefined && strategy === undefined) {
    problems.push(`spec.strategy ${JSON.stringify(strategyText)} is unknown; ignored`);
  }
  return {
    namespace: id.namespace,
    name: id.name,
    uid: id.uid,
    generation: numberAt(obj, ['metadata', 'generation']) ?? 0,
    creationTimestamp: id.creationTimestamp,
    sources: membersOf(spec, 'sources', sourceTypeOf, problems),
    targets: membersOf(spec, 'targets', workloadKindOf, problems),
    strategy,
    syncDelayMs: durationOf(spec, 'syncDelay', HOUR_MS, problems)?.ms,
    pausePeriod: durationOf(spec, 'pausePeriod', 24 * HOUR_MS, problems)?.text,
    configRevisions: configRevisionsOf(spec),
    rolloutPriority: rolloutPriorityOf(spec, problems),
    ...settingsOf(spec, problems),
    suspend: booleanAt(spec, ['suspend']),
    status: statusOf(obj),
    problems,
  };
}
