/**
 * Writes helm/kreload/templates/_kind-rules.tpl from the kind table (src/rollout/kinds.ts), so the
 * chart grants RBAC for every kind kreload watches without a hand edit. Run
 * `npm run chart:kinds`; gen-chart-kinds.test.ts fails when the file is stale.
 */
import { writeFileSync } from 'node:fs';
import {
  IGNORABLE_WORKLOAD_TYPES,
  OPTION_SPECS,
  type OptionSpec,
  helmValuePaths,
} from '../src/config/options.ts';
import type { RbacGrant, WorkloadKindRow } from '../src/rollout/kinds.ts';
import { WORKLOAD_KINDS } from '../src/rollout/kinds.ts';

export const KIND_RULES_URL = new URL('../helm/kreload/templates/_kind-rules.tpl', import.meta.url);

/**
 * When a rule is rendered: every `when` value under `reloader.` is set and no `unless` value is.
 * Values that switch a kind on or off are the chart values of its option.
 */
export interface RuleSwitch {
  readonly when: readonly string[];
  readonly unless: readonly string[];
}

export interface ChartKindRule extends RuleSwitch {
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}

function optionSpec(name: string): OptionSpec {
  const spec = OPTION_SPECS.find((candidate) => candidate.name === name);
  if (spec === undefined) throw new TypeError(`no option ${name}`);
  return spec;
}

/** The chart value under `reloader.` that sets `option`, at `index` when it feeds a list. */
function chartValue(option: string, index = 0): string {
  const path = helmValuePaths(optionSpec(option))[index];
  if (path === undefined) throw new TypeError(`option ${option} has no chart value ${index}`);
  return path.replace(/^reloader\./, '');
}

/** The values that turn the kind's watch, and so its RBAC, on and off. */
export function kindSwitch(row: WorkloadKindRow): RuleSwitch {
  const ignorable = IGNORABLE_WORKLOAD_TYPES.findIndex((plural) => plural === row.plural);
  return {
    when: row.enabledByOption === undefined ? [] : [chartValue(row.enabledByOption)],
    unless: ignorable < 0 ? [] : [chartValue('ignoredWorkloadTypes', ignorable)],
  };
}

/** The row whose own rule already grants `grant`, so the grant is needed only when it is off. */
function coveringRow(grant: RbacGrant): WorkloadKindRow | undefined {
  return WORKLOAD_KINDS.find(
    (row) =>
      row.group === grant.group &&
      row.plural === grant.resource &&
      grant.verbs.every((verb) => row.rbac.verbs.includes(verb)),
  );
}

/** `own` and the opposite of `covering`: a switch of one value can be negated, no other. */
function andNot(own: RuleSwitch, covering: RuleSwitch): RuleSwitch {
  const [when, ...moreWhen] = covering.when;
  const [unless, ...moreUnless] = covering.unless;
  if (
    moreWhen.length > 0 ||
    moreUnless.length > 0 ||
    (when !== undefined) === (unless !== undefined)
  ) {
    throw new TypeError('only a switch of exactly one value can be negated');
  }
  return when === undefined
    ? { when: [...own.when, unless ?? ''], unless: own.unless }
    : { when: own.when, unless: [...own.unless, when] };
}

/** The chart value that turns on what a roll action a workload opts into needs. */
const ROLL_ACTION_VALUES: Readonly<Record<NonNullable<RbacGrant['onlyFor']>, string>> = {
  'evict-pods': 'enableEvictStrategy',
};

/** A grant only one roll action needs is rendered only when that action's value is on too. */
function forAction(rule: RuleSwitch, grant: RbacGrant): RuleSwitch {
  if (grant.onlyFor === undefined) return rule;
  return { when: [...rule.when, ROLL_ACTION_VALUES[grant.onlyFor]], unless: rule.unless };
}

function grantRules(row: WorkloadKindRow): ChartKindRule[] {
  const own = kindSwitch(row);
  const ownRule = { apiGroup: row.group, resources: [row.plural], verbs: row.rbac.verbs, ...own };
  return [
    ownRule,
    ...row.rbac.also.map((grant) => {
      const covering = coveringRow(grant);
      return {
        apiGroup: grant.group,
        resources: [grant.resource],
        verbs: grant.verbs,
        ...forAction(covering === undefined ? own : andNot(own, kindSwitch(covering)), grant),
      };
    }),
  ];
}

/** `rule` is granted whenever `other` is: same grant, and `other` asks for no more values. */
function subsumedBy(rule: ChartKindRule, other: ChartKindRule): boolean {
  const grant = (r: ChartKindRule): string => JSON.stringify([r.apiGroup, r.resources, r.verbs]);
  return (
    grant(rule) === grant(other) &&
    other.when.every((value) => rule.when.includes(value)) &&
    other.unless.every((value) => rule.unless.includes(value))
  );
}

function sameGrant(a: ChartKindRule, b: ChartKindRule): boolean {
  const key = (rule: ChartKindRule): string =>
    JSON.stringify([rule.apiGroup, rule.verbs, rule.when, rule.unless]);
  return key(a) === key(b);
}

/**
 * One rule per kind and per further grant, duplicates dropped, neighbours that differ only in
 * resource merged.
 */
export function chartKindRules(): ChartKindRule[] {
  const rules: ChartKindRule[] = [];
  const always = new Set<string>();
  const seen = new Set<string>();
  // Kinds share some grants (the pods an eviction reads): each rule once, where it first appears,
  // and never again under a switch once it is granted without one.
  const kept: ChartKindRule[] = [];
  const unique = WORKLOAD_KINDS.flatMap(grantRules).filter((rule) => {
    const grant = JSON.stringify([rule.apiGroup, rule.resources, rule.verbs]);
    const key = JSON.stringify(rule);
    if (always.has(grant) || seen.has(key)) return false;
    if (kept.some((other) => subsumedBy(rule, other))) return false;
    seen.add(key);
    kept.push(rule);
    if (rule.when.length === 0 && rule.unless.length === 0) always.add(grant);
    return true;
  });
  for (const rule of unique) {
    const last = rules.at(-1);
    if (last !== undefined && sameGrant(last, rule)) {
      rules[rules.length - 1] = { ...last, resources: [...last.resources, ...rule.resources] };
    } else {
      rules.push(rule);
    }
  }
  return rules;
}

function flowList(items: readonly string[]): string {
  return `[${items.map((item) => JSON.stringify(item)).join(', ')}]`;
}

function ruleLine(rule: ChartKindRule): string {
  const fields = [
    `apiGroup: ${JSON.stringify(rule.apiGroup)}`,
    `resources: ${flowList(rule.resources)}`,
    `verbs: ${flowList(rule.verbs)}`,
    ...(rule.when.length > 0 ? [`when: ${flowList(rule.when)}`] : []),
    ...(rule.unless.length > 0 ? [`unless: ${flowList(rule.unless)}`] : []),
  ];
  return `- { ${fields.join(', ')} }`;
}

export function renderKindRules(): string {
  return [
    '{{/*',
    'Generated by scripts/gen-chart-kinds.ts from the kind table in src/rollout/kinds.ts. Do not edit',
    'by hand. The RBAC of each workload kind: a rule is granted when every `when` value under',
    '`reloader.` is true and no `unless` value is (see kreload.watchRules).',
    '*/}}',
    '{{- define "kreload.kindRules" -}}',
    ...chartKindRules().map(ruleLine),
    '{{- end -}}',
    '',
  ].join('\n');
}

if (import.meta.main) {
  writeFileSync(KIND_RULES_URL, renderKindRules());
  process.stdout.write(`wrote ${KIND_RULES_URL.pathname}\n`);
}
