import { describe, expect, it } from 'vitest';
import {
  type BindingInput,
  annotatedSettings,
  bindingOf,
  type NamedObject,
  type PolicySelector,
  selectorMatches,
  strategyUnder,
  withPolicySettings,
} from './reload-policy.ts';
import type { SourceType } from './types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from './types.ts';
import { aPolicy } from '../testing/policies.ts';
import { aWorkload } from '../testing/builders.ts';

const selector = (parts: Partial<PolicySelector>): PolicySelector => ({
  matchLabels: {},
  matchExpressions: [],
  ...parts,
});

describe('selectorMatches', () => {
  it.each<[string, PolicySelector, Record<string, string> | undefined, boolean]>([
    ['matchLabels equal', selector({ matchLabels: { app: 'web' } }), { app: 'web', x: '1' }, true],
    ['matchLabels differ', selector({ matchLabels: { app: 'web' } }), { app: 'api' }, false],
    ['matchLabels missing', selector({ matchLabels: { app: 'web' } }), {}, false],
    ['no labels kept', selector({ matchLabels: { app: 'web' } }), undefined, false],
    [
      'In',
      selector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }),
      { tier: 'b' },
      true,
    ],
    [
      'In, key absent',
      selector({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] }),
      {},
      false,
    ],
    [
      'NotIn, key absent',
      selector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }),
      {},
      true,
    ],
    [
      'NotIn, listed value',
      selector({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }),
      { tier: 'a' },
      false,
    ],
    [
      'Exists',
      selector({ matchExpressions: [{ key: 'tier', operator: 'Exists', values: [] }] }),
      { tier: '' },
      true,
    ],
    [
      'DoesNotExist',
      selector({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist', values: [] }] }),
      { tier: 'x' },
      false,
    ],
    [
      'every term must hold',
      selector({
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'tier', operator: 'Exists', values: [] }],
      }),
      { app: 'web' },
      false,
    ],
  ])('%s', (_title, sel, labels, expected) => {
    expect(selectorMatches(sel, labels)).toBe(expected);
  });
});

const NS = 'team-a';
const WEB: NamedObject<'Deployment'> = { kind: 'Deployment', name: 'web', labels: { app: 'web' } };
const SOURCES: Readonly<Record<SourceType, readonly NamedObject<SourceType>[]>> = {
  CONFIGMAP: [
    { kind: 'CONFIGMAP', name: 'a', labels: { team: 'web' } },
    { kind: 'CONFIGMAP', name: 'b', labels: { team: 'api' } },
  ],
  SECRET: [{ kind: 'SECRET', name: 's', labels: { team: 'web' } }],
  SECRETPROVIDERCLASS: [],
};
const byName = { kind: 'Deployment' as const, name: 'web' };

function input(
  policies: BindingInput['policies'],
  annotated: BindingInput['annotated'] = { strategy: false, pausePeriod: false },
): BindingInput {
  return { workload: WEB, policies, catalog: (type) => SOURCES[type], annotated };
}

const older = { creationTimestamp: '2026-12-01T00:00:00Z' };
const newer = { creationTimestamp: '2026-12-01T00:00:05Z' };

describe('bindingOf (ADR 0034 combination rules)', () => {
  it('unions the sources of every active policy: names (present or not) and selections', () => {
    const binding = bindingOf(
      input([
        aPolicy(NS, 'p1', { sources: [{ kind: 'CONFIGMAP', name: 'not-yet' }], targets: [byName] }),
        aPolicy(NS, 'p2', {
          sources: [{ kind: 'CONFIGMAP', selector: selector({ matchLabels: { team: 'web' } }) }],
          targets: [{ kind: 'Deployment', selector: selector({ matchLabels: { app: 'web' } }) }],
        }),
        aPolicy(NS, 'p3', {
          sources: [{ kind: 'SECRET', name: 's' }],
          targets: [byName],
          suspend: true,
        }),
        aPolicy(NS, 'p4', {
          sources: [{ kind: 'SECRET', name: 's' }],
          targets: [{ kind: 'StatefulSet', name: 'web' }],
        }),
      ]),
    );
    expect([...binding.sources].sort()).toEqual(['configmap/a', 'configmap/not-yet']);
    expect(binding.policies.map((policy) => policy.name)).toEqual(['p1', 'p2']);
    expect(binding.conflicts).toEqual([]);
  });

  it('no active policy: no binding', () => {
    const binding = bindingOf(
      input([
        aPolicy(NS, 'p', {
          sources: [{ kind: 'SECRET', name: 's' }],
          targets: [byName],
          suspend: true,
        }),
      ]),
    );
    expect(binding.sources.size).toBe(0);
    expect(binding.strategyFrom).toEqual({ from: 'default' });
  });

  it('the oldest policy setting a value wins; a younger different one conflicts, an equal one not', () => {
    const sources = [{ kind: 'SECRET' as const, name: 's' }];
    const binding = bindingOf(
      input([
        aPolicy(NS, 'young', {
          ...newer,
          sources,
          targets: [byName],
          strategy: 'annotations',
          syncDelayMs: 1000,
        }),
        aPolicy(NS, 'old', {
          ...older,
          sources,
          targets: [byName],
          strategy: 'env-vars',
          syncDelayMs: 1000,
        }),
        aPolicy(NS, 'silent', { ...older, sources, targets: [byName] }),
      ]),
    );
    expect(binding.strategy).toBe('env-vars');
    expect(binding.strategyFrom).toEqual({
      from: 'policy',
      policy: { namespace: NS, name: 'old' },
    });
    expect(binding.syncDelayMs).toBe(1000);
    expect(binding.conflicts).toEqual([
      {
        policy: { namespace: NS, name: 'young' },
        field: 'strategy',
        message: 'strategy annotations is not applied to Deployment web: policy old sets it',
      },
    ]);
  });

  it('same creation time: the name decides', () => {
    const sources = [{ kind: 'SECRET' as const, name: 's' }];
    const binding = bindingOf(
      input([
        aPolicy(NS, 'b', { ...older, sources, targets: [byName], pausePeriod: '5m' }),
        aPolicy(NS, 'a', { ...older, sources, targets: [byName], pausePeriod: '10m' }),
      ]),
    );
    expect(binding.pausePeriod).toBe('10m');
    expect(binding.conflicts.map((conflict) => [conflict.policy.name, conflict.field])).toEqual([
      ['b', 'pausePeriod'],
    ]);
  });

  it("the workload's own annotation beats every policy, each of which is then in conflict", () => {
    const sources = [{ kind: 'SECRET' as const, name: 's' }];
    const binding = bindingOf(
      input([aPolicy(NS, 'p', { sources, targets: [byName], pausePeriod: '5m' })], {
        strategy: false,
        pausePeriod: true,
      }),
    );
    expect(binding.pausePeriod).toBeUndefined();
    expect(binding.conflicts).toEqual([
      {
        policy: { namespace: NS, name: 'p' },
        field: 'pausePeriod',
        message:
          "pausePeriod 5m is not applied to Deployment web: the workload's annotation sets it",
      },
    ]);
  });
});

describe('bindingOf: rollout.priority', () => {
  const sources = [{ kind: 'SECRET' as const, name: 's' }];

  it('the oldest policy that sets it wins; another value is a conflict', () => {
    const binding = bindingOf(
      input([
        aPolicy(NS, 'new', { ...newer, sources, targets: [byName], rolloutPriority: 9 }),
        aPolicy(NS, 'old', { ...older, sources, targets: [byName], rolloutPriority: 2 }),
      ]),
    );
    expect(binding.rolloutPriority).toBe(2);
    expect(binding.conflicts).toEqual([
      {
        policy: { namespace: NS, name: 'new' },
        field: 'rolloutPriority',
        message: 'rolloutPriority 9 is not applied to Deployment web: policy old sets it',
      },
    ]);
  });

  it("the workload's own kreload.io/rollout-priority wins over the policy", () => {
    const binding = bindingOf(
      input([aPolicy(NS, 'p', { sources, targets: [byName], rolloutPriority: 1 })], {
        strategy: false,
        pausePeriod: false,
        rolloutPriority: true,
      }),
    );
    expect(binding.rolloutPriority).toBeUndefined();
    expect(binding.conflicts.map((conflict) => conflict.field)).toEqual(['rolloutPriority']);
  });
});

describe('bindingOf: configRevisions (one value, ADR 0034 and 0038)', () => {
  const sources = [{ kind: 'CONFIGMAP' as const, name: 'a' }];
  const ON = { configMaps: true, secrets: false };
  const WITH_SECRETS = { configMaps: true, secrets: true };

  it('the oldest policy that sets it wins; a different value is a conflict', () => {
    const binding = bindingOf(
      input([
        aPolicy(NS, 'new', { ...newer, sources, targets: [byName], configRevisions: WITH_SECRETS }),
        aPolicy(NS, 'old', { ...older, sources, targets: [byName], configRevisions: ON }),
        aPolicy(NS, 'same', { ...newer, sources, targets: [byName], configRevisions: ON }),
        aPolicy(NS, 'unset', { ...newer, sources, targets: [byName] }),
      ]),
    );
    expect(binding.configRevisions).toEqual(ON);
    expect(binding.conflicts).toEqual([
      {
        policy: { namespace: NS, name: 'new' },
        field: 'configRevisions',
        message:
          'configRevisions configMaps+secrets is not applied to Deployment web: policy old sets it',
      },
    ]);
  });

  it("the workload's config-revisions annotation wins over every policy", () => {
    const binding = bindingOf(
      input([aPolicy(NS, 'p', { sources, targets: [byName], configRevisions: ON })], {
        strategy: false,
        pausePeriod: false,
        configRevisions: true,
      }),
    );
    expect(binding.configRevisions).toBeUndefined();
    expect(binding.conflicts.map((conflict) => conflict.message)).toEqual([
      "configRevisions configMaps is not applied to Deployment web: the workload's annotation sets it",
    ]);
  });

  it.each([
    [{}, false],
    [{ 'kreload.io/config-revisions': 'false' }, true],
    [{ 'kreload.io/config-revisions-secrets': 'true' }, true],
  ])('annotatedSettings(%j).configRevisions → %s', (annotations, expected) => {
    const view = { ...aWorkload('Deployment', NS, 'web').build(), annotations };
    expect(annotatedSettings(view, KEYS).configRevisions).toBe(expected);
  });

  it.each([
    [{}, false],
    [{ 'reloader.stakater.com/rollout-strategy': 'restart' }, true],
    [{ 'kreload.io/rollout-strategy': 'evict' }, true],
  ])('annotatedSettings(%j).strategy → %s', (annotations, expected) => {
    const view = { ...aWorkload('Deployment', NS, 'web').build(), annotations };
    expect(annotatedSettings(view, KEYS).strategy).toBe(expected);
  });
});

describe('withPolicySettings and strategyUnder', () => {
  const view = aWorkload('Rollout', NS, 'web').build();
  const base = bindingOf(input([]));

  it.each([
    ['nothing set: the same view', base, {}],
    [
      'restart: the rollout-strategy annotation',
      { ...base, strategy: 'restart' as const },
      { [KEYS.rolloutStrategy]: 'restart' },
    ],
    [
      'evict: the kreload.io/rollout-strategy annotation',
      { ...base, strategy: 'evict' as const },
      { 'kreload.io/rollout-strategy': 'evict' },
    ],
    [
      'pausePeriod: the pause-period annotation',
      { ...base, pausePeriod: '5m' },
      { [KEYS.pausePeriod]: '5m' },
    ],
    [
      'rollout.priority: the rollout-priority annotation',
      { ...base, rolloutPriority: -3 },
      { 'kreload.io/rollout-priority': '-3' },
    ],
    [
      'configRevisions: both config-revisions annotations',
      { ...base, configRevisions: { configMaps: true, secrets: false } },
      { 'kreload.io/config-revisions': 'true', 'kreload.io/config-revisions-secrets': 'false' },
    ],
  ])('%s', (_title, binding, added) => {
    expect(withPolicySettings(view, binding, KEYS).annotations).toEqual({
      ...view.annotations,
      ...added,
    });
  });

  it.each([
    [undefined, 'env-vars'],
    ['annotations', 'annotations'],
    ['restart', 'env-vars'],
    ['evict', 'env-vars'],
  ] as const)('strategy %s under --reload-strategy=env-vars → %s', (strategy, expected) => {
    expect(strategyUnder({ ...base, strategy }, 'env-vars')).toBe(expected);
  });
});

describe('bindingOf: rollout, windows and breaker settings', () => {
  const sources = [{ kind: 'SECRET' as const, name: 's' }];
  const DENY = '{"timezone":"UTC","deny":[{"cron":"0 9 * * 1-5","duration":"8h"}]}';

  it.each([
    ['rolloutMaxConcurrent', { rolloutMaxConcurrent: 2 }, { rolloutMaxConcurrent: 5 }, '5'],
    ['rolloutCanary', { rolloutCanary: '1' }, { rolloutCanary: '10%' }, '10%'],
    [
      'rolloutHaltOnFailure',
      { rolloutHaltOnFailure: true },
      { rolloutHaltOnFailure: false },
      'false',
    ],
    [
      'rolloutUndoOnFailure',
      { rolloutUndoOnFailure: false },
      { rolloutUndoOnFailure: true },
      'true',
    ],
    [
      'windows',
      { windows: DENY },
      { windows: '{"timezone":"UTC","deny":[]}' },
      '{"timezone":"UTC","deny":[]}',
    ],
    ['breakerMaxChanges', { breakerMaxChanges: 3 }, { breakerMaxChanges: 0 }, '0'],
    ['breakerPeriod', { breakerPeriod: '1m' }, { breakerPeriod: '2m' }, '2m'],
    ['breakerCoolDown', { breakerCoolDown: '1m' }, { breakerCoolDown: '24h' }, '24h'],
  ] as const)('%s: the oldest policy wins, the other is in conflict', (field, old, young, lost) => {
    const binding = bindingOf(
      input([
        aPolicy(NS, 'new', { ...newer, sources, targets: [byName], ...young }),
        aPolicy(NS, 'old', { ...older, sources, targets: [byName], ...old }),
      ]),
    );
    const won: unknown = binding.policySettings[field];
    const expected: unknown = Object.values(old)[0];
    expect(typeof won === 'object' && won !== null ? won : { value: won }).toEqual(
      field === 'rolloutMaxConcurrent' || field === 'rolloutCanary'
        ? { value: expected, policy: { namespace: NS, name: 'old' } }
        : { value: expected },
    );
    expect(binding.conflicts).toEqual([
      {
        policy: { namespace: NS, name: 'new' },
        field,
        message: `${field} ${lost} is not applied to Deployment web: policy old sets it`,
      },
    ]);
  });

  it("the workload's own annotations win; the policy's values become its annotations otherwise", () => {
    const policy = aPolicy(NS, 'p', {
      sources,
      targets: [byName],
      rolloutHaltOnFailure: false,
      windows: DENY,
      breakerMaxChanges: 4,
      breakerPeriod: '5m',
    });
    const annotated = bindingOf(
      input([policy], {
        strategy: false,
        pausePeriod: false,
        others: new Set(['windows', 'breakerPeriod']),
      }),
    );
    expect(annotated.policySettings.windows).toBeUndefined();
    expect(annotated.policySettings.breakerPeriod).toBeUndefined();
    expect(annotated.conflicts.map((conflict) => conflict.field)).toEqual([
      'windows',
      'breakerPeriod',
    ]);
    const view = aWorkload('Deployment', NS, 'web').build();
    const under = withPolicySettings(view, annotated, KEYS);
    expect(under.annotations).toMatchObject({
      'kreload.io/halt-on-failed-rollout': 'false',
      'kreload.io/flap-max-changes': '4',
    });
    expect(under.annotations).not.toHaveProperty('reloader.stakater.com/restart-window');
    const plain = withPolicySettings(view, bindingOf(input([policy])), KEYS);
    expect(plain.annotations['reloader.stakater.com/restart-window']).toBe(DENY);
    expect(plain.annotations['kreload.io/flap-period']).toBe('5m');
  });
});
