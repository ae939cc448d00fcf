import { describe, expect, it } from 'vitest';
import {
  keyedSourceHashes,
  desiredStatus,
  recoveredRecord,
  rfc3339,
  sameStatus,
  sourceHashesOf,
  STATUS_LIMITS,
  statusBody,
  statusPatch,
  type StatusFacts,
} from './reload-policy-status.ts';
import type { PolicyCondition, PolicyTargetStatus } from './reload-policy.ts';
import { aPolicy, EMPTY_STATUS } from '../testing/policies.ts';
import { compareUtf8, formatLastReloadedFrom } from './state.ts';
import type { SourceKey } from './types.ts';

const NOW = '2026-12-02T03:00:00Z';
const EARLIER = '2026-12-02T02:00:00Z';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const POLICY = aPolicy('team-a', 'web', {
  sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
  targets: [{ kind: 'Deployment', name: 'web' }],
  generation: 3,
});
const RELOAD: PolicyTargetStatus = {
  kind: 'Deployment',
  name: 'web',
  lastReloadTime: NOW,
  sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H1 }],
};

function facts(parts: Partial<StatusFacts> = {}): StatusFacts {
  return {
    policy: POLICY,
    sources: { listed: 1, missing: [] },
    targets: { listed: 1, missing: [] },
    conflicts: [],
    currentTargets: new Set(['Deployment/web']),
    reloads: new Map(),
    now: NOW,
    ...parts,
  };
}

type Brief = Pick<PolicyCondition, 'type' | 'status' | 'reason'>;
const brief = (conditions: readonly PolicyCondition[]): Brief[] =>
  conditions.map(({ type, status, reason }) => ({ type, status, reason }));

describe('desiredStatus', () => {
  it.each<[string, Partial<StatusFacts>, Brief[]]>([
    [
      'everything found',
      {},
      [
        { type: 'Ready', status: 'True', reason: 'Bound' },
        { type: 'SourcesFound', status: 'True', reason: 'AllFound' },
        { type: 'TargetsFound', status: 'True', reason: 'AllFound' },
        { type: 'Conflict', status: 'False', reason: 'NoConflict' },
      ],
    ],
    [
      'a source missing',
      { sources: { listed: 1, missing: ['ConfigMap app-config'] } },
      [
        { type: 'Ready', status: 'False', reason: 'SourceNotFound' },
        { type: 'SourcesFound', status: 'False', reason: 'SourceNotFound' },
        { type: 'TargetsFound', status: 'True', reason: 'AllFound' },
        { type: 'Conflict', status: 'False', reason: 'NoConflict' },
      ],
    ],
    [
      'a target missing',
      { targets: { listed: 1, missing: ['Deployment web'] } },
      [
        { type: 'Ready', status: 'False', reason: 'TargetNotFound' },
        { type: 'SourcesFound', status: 'True', reason: 'AllFound' },
        { type: 'TargetsFound', status: 'False', reason: 'TargetNotFound' },
        { type: 'Conflict', status: 'False', reason: 'NoConflict' },
      ],
    ],
    [
      'entries no object can match: Ready says which, the rest applies',
      {
        policy: {
          ...POLICY,
          problems: ['spec.sources[1].name "App_Config" can never match: …; ignored'],
        },
      },
      [
        { type: 'Ready', status: 'False', reason: 'InvalidEntries' },
        { type: 'SourcesFound', status: 'True', reason: 'AllFound' },
        { type: 'TargetsFound', status: 'True', reason: 'AllFound' },
        { type: 'Conflict', status: 'False', reason: 'NoConflict' },
      ],
    ],
    [
      'suspended',
      { policy: { ...POLICY, suspend: true } },
      [
        { type: 'Ready', status: 'False', reason: 'Suspended' },
        { type: 'SourcesFound', status: 'True', reason: 'AllFound' },
        { type: 'TargetsFound', status: 'True', reason: 'AllFound' },
        { type: 'Conflict', status: 'False', reason: 'NoConflict' },
      ],
    ],
    [
      'a setting overridden: Ready stays true, Conflict says why',
      {
        conflicts: [
          {
            policy: { namespace: 'team-a', name: 'web' },
            field: 'strategy',
            message: 'strategy annotations is not applied to Deployment web: policy old sets it',
          },
        ],
      },
      [
        { type: 'Ready', status: 'True', reason: 'Bound' },
        { type: 'SourcesFound', status: 'True', reason: 'AllFound' },
        { type: 'TargetsFound', status: 'True', reason: 'AllFound' },
        { type: 'Conflict', status: 'True', reason: 'SettingOverridden' },
      ],
    ],
  ])('%s', (_title, parts, expected) => {
    const status = desiredStatus(facts(parts));
    expect(brief(status.conditions)).toEqual(expected);
    expect(status.conditions.every((condition) => condition.observedGeneration === 3)).toBe(true);
    expect(status.observedGeneration).toBe(3);
  });

  it('counts found members for the printer columns and names the missing ones', () => {
    const status = desiredStatus(
      facts({ sources: { listed: 3, missing: ['Secret db', 'ConfigMap selector team=web'] } }),
    );
    expect(status.foundSources).toBe('1/3');
    expect(status.foundTargets).toBe('1/1');
    expect(status.conditions[1]?.message).toBe(
      'not found: Secret db, ConfigMap selector team=web; bound as soon as they exist',
    );
  });

  it('keeps lastTransitionTime while a condition keeps its status, and sets it on a change', () => {
    const first = desiredStatus(facts({ now: EARLIER }));
    const again = desiredStatus(facts({ policy: { ...POLICY, status: first } }));
    expect(again.conditions.map((condition) => condition.lastTransitionTime)).toEqual([
      EARLIER,
      EARLIER,
      EARLIER,
      EARLIER,
    ]);
    const changed = desiredStatus(
      facts({
        policy: { ...POLICY, status: first },
        targets: { listed: 1, missing: ['Deployment web'] },
      }),
    );
    expect(changed.conditions.map((condition) => condition.lastTransitionTime)).toEqual([
      NOW,
      EARLIER,
      NOW,
      EARLIER,
    ]);
  });

  it('merges new reloads, drops targets the policy no longer names, takes the latest time', () => {
    const stale: PolicyTargetStatus = { ...RELOAD, name: 'gone', lastReloadTime: EARLIER };
    const older: PolicyTargetStatus = { ...RELOAD, name: 'api', lastReloadTime: EARLIER };
    const status = desiredStatus(
      facts({
        policy: { ...POLICY, status: { ...EMPTY_STATUS, targets: [stale, older] } },
        currentTargets: new Set(['Deployment/web', 'Deployment/api']),
        reloads: new Map([['Deployment/web', RELOAD]]),
      }),
    );
    expect(status.targets).toEqual([older, RELOAD]);
    expect(status.lastReloadTime).toBe(NOW);
  });

  it('the status it computed is the same as itself re-read: no second write', () => {
    const status = desiredStatus(facts({ reloads: new Map([['Deployment/web', RELOAD]]) }));
    const reread = desiredStatus(facts({ policy: { ...POLICY, status } }));
    expect(sameStatus(status, reread)).toBe(true);
    expect(sameStatus(EMPTY_STATUS, status)).toBe(false);
  });
});

describe('statusBody, sourceHashesOf, rfc3339', () => {
  it('writes every list whole and nulls for unset scalars (merge patch)', () => {
    expect(statusBody(EMPTY_STATUS)).toEqual({
      observedGeneration: null,
      conditions: [],
      targets: [],
      lastReloadTime: null,
      foundSources: null,
      foundTargets: null,
      boundTargets: null,
      unlistedTargets: null,
    });
  });

  it("keeps only the policy's own sources, sorted, with their kind names", () => {
    expect(
      sourceHashesOf(new Set(['secret/db', 'configmap/app-config']), [
        { key: 'secret/db', hash: 'b' },
        { key: 'configmap/other', hash: 'x' },
        { key: 'configmap/app-config', hash: 'a' },
        { key: 'secret/unknown-yet', hash: undefined },
      ]),
    ).toEqual([
      { kind: 'ConfigMap', name: 'app-config', hash: 'a' },
      { kind: 'Secret', name: 'db', hash: 'b' },
    ]);
  });

  it('whole seconds in UTC', () => {
    expect(rfc3339(Date.UTC(2026, 11, 2, 3, 4, 5, 999))).toBe('2026-12-02T03:04:05Z');
  });
});

describe('recoveredRecord (a status write lost to a crash)', () => {
  const H0 = '0000000000000000000000000000000000000000';
  const H2 = '2222222222222222222222222222222222222222';
  const OWN = new Set<SourceKey>(['configmap/app-config', 'secret/db']);
  const TARGET = { kind: 'Deployment', name: 'web' };
  const OBSERVED = 1_796_180_400; // 2026-12-02T03:00:00Z
  const lastReloadedFrom = (name: string, hash: string): string =>
    formatLastReloadedFrom({
      type: 'CONFIGMAP',
      name,
      namespace: 'team-a',
      hash,
      containerRefs: ['app'],
      observedAt: OBSERVED,
    });
  const stored = (hash: string): PolicyTargetStatus => ({
    ...TARGET,
    lastReloadTime: EARLIER,
    sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash }],
  });

  it.each<
    [
      string,
      ReadonlyMap<SourceKey, string>,
      string | undefined,
      PolicyTargetStatus | undefined,
      PolicyTargetStatus | undefined,
    ]
  >([
    [
      'no record, the workload carries a hash (env-vars): hashes only, no time',
      new Map([['configmap/app-config', H1]]),
      undefined,
      undefined,
      { ...TARGET, lastReloadTime: undefined, sourceHashes: stored(H1).sourceHashes },
    ],
    [
      'an older record: the carried hash replaces it, and its old time is not kept',
      new Map([['configmap/app-config', H1]]),
      undefined,
      stored(H0),
      { ...TARGET, lastReloadTime: undefined, sourceHashes: stored(H1).sourceHashes },
    ],
    [
      'annotations strategy: last-reloaded-from names the source with that hash → its time',
      new Map([['configmap/app-config', H1]]),
      lastReloadedFrom('app-config', H1),
      stored(H0),
      { ...TARGET, lastReloadTime: NOW, sourceHashes: stored(H1).sourceHashes },
    ],
    [
      'last-reloaded-from of another source or hash dates nothing',
      new Map([['configmap/app-config', H1]]),
      lastReloadedFrom('app-config', H2),
      undefined,
      { ...TARGET, lastReloadTime: undefined, sourceHashes: stored(H1).sourceHashes },
    ],
    [
      'the record already says what the workload carries: nothing to recover',
      new Map([['configmap/app-config', H1]]),
      undefined,
      stored(H1),
      undefined,
    ],
    [
      'a source of another policy or an annotation is not this policy’s',
      new Map([['configmap/other', H1]]),
      undefined,
      undefined,
      undefined,
    ],
    ['never rolled (baselines only): nothing', new Map(), undefined, undefined, undefined],
  ])('%s', (_title, applied, lrf, before, expected) => {
    expect(
      recoveredRecord(OWN, { target: TARGET, applied, lastReloadedFrom: lrf }, before),
    ).toEqual(expected);
  });

  it('keeps the stored hashes the workload carries no applied hash for', () => {
    const before: PolicyTargetStatus = {
      ...TARGET,
      lastReloadTime: EARLIER,
      sourceHashes: [
        { kind: 'ConfigMap', name: 'app-config', hash: H0 },
        { kind: 'Secret', name: 'db', hash: H2 },
      ],
    };
    const applied = new Map<SourceKey, string>([['configmap/app-config', H1]]);
    expect(
      recoveredRecord(OWN, { target: TARGET, applied, lastReloadedFrom: undefined }, before)
        ?.sourceHashes,
    ).toEqual([
      { kind: 'ConfigMap', name: 'app-config', hash: H1 },
      { kind: 'Secret', name: 'db', hash: H2 },
    ]);
  });
});

describe('the status stays within the API limits however many targets and sources', () => {
  const TARGETS = 600;
  const SOURCES = 600;
  const hashes = Array.from({ length: SOURCES }, (_, i) => ({
    kind: 'ConfigMap',
    name: `config-${String(i).padStart(4, '0')}`,
    hash: H1,
  }));
  const ids = Array.from({ length: TARGETS }, (_, i) => `Deployment/web-${String(i)}`);
  const reloads = new Map(
    ids.map((id, i): [string, PolicyTargetStatus] => [
      id,
      {
        kind: 'Deployment',
        name: id.slice('Deployment/'.length),
        lastReloadTime: `2026-12-02T03:${String(Math.floor(i / 60)).padStart(2, '0')}:00Z`,
        sourceHashes: hashes,
      },
    ]),
  );
  const conflicts = ids.map((id) => ({
    policy: { namespace: 'team-a', name: 'web' },
    field: 'strategy' as const,
    message: `strategy annotations is not applied to ${id.replace('/', ' ')}: policy old sets it`,
  }));
  const status = desiredStatus(
    facts({
      currentTargets: new Set(ids),
      reloads,
      conflicts,
      sources: {
        listed: 32,
        missing: Array.from({ length: 32 }, (_, i) => `ConfigMap ${'x'.repeat(250)}${String(i)}`),
      },
    }),
  );

  it('lists the most recently rolled targets, each with capped hashes, and counts the rest', () => {
    expect(status.targets).toHaveLength(STATUS_LIMITS.targets);
    expect(status.boundTargets).toBe(TARGETS);
    expect(status.unlistedTargets).toBe(TARGETS - STATUS_LIMITS.targets);
    expect(status.lastReloadTime).toBe('2026-12-02T03:09:00Z');
    expect(status.targets.every((record) => record.lastReloadTime === '2026-12-02T03:09:00Z')).toBe(
      false,
    );
    expect(status.targets.at(-1)?.lastReloadTime).toBe('2026-12-02T03:09:00Z');
    for (const record of status.targets) {
      expect(record.sourceHashes).toHaveLength(STATUS_LIMITS.sourceHashes);
      expect(record.unlistedSourceHashes).toBe(SOURCES - STATUS_LIMITS.sourceHashes);
    }
  });

  it('names a few conflicts and missing members, and counts the rest', () => {
    const message = (type: string): string =>
      status.conditions.find((condition) => condition.type === type)?.message ?? '';
    expect(message('Conflict')).toMatch(/; and 590 more$/);
    expect(message('SourcesFound')).toContain('and 16 more');
    for (const condition of status.conditions) {
      expect(condition.message.length).toBeLessThanOrEqual(STATUS_LIMITS.messageChars);
    }
  });

  it('the whole status is far below the 1.5 MiB object limit', () => {
    expect(JSON.stringify(statusBody(status)).length).toBeLessThan(256 * 1024);
  });
});

describe('statusPatch', () => {
  it('sends only the fields that change', () => {
    const before = desiredStatus(facts());
    const after = desiredStatus(
      facts({
        policy: { ...POLICY, status: before },
        reloads: new Map([['Deployment/web', RELOAD]]),
      }),
    );
    expect(statusPatch(before, after)).toEqual({
      targets: [
        {
          kind: 'Deployment',
          name: 'web',
          lastReloadTime: NOW,
          sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H1 }],
        },
      ],
      lastReloadTime: NOW,
    });
    expect(statusPatch(after, after)).toEqual({});
  });

  it('sends every field to a status kreload never wrote, so empty lists show', () => {
    const first = desiredStatus(facts());
    expect(statusPatch(EMPTY_STATUS, first)).toEqual(statusBody(first));
  });
});

describe('keyedSourceHashes', () => {
  it('orders records as source keys sort (the status writer relies on it)', () => {
    const keys: SourceKey[] = [
      'secretproviderclass/a',
      'secret/z',
      'configmap/b-1',
      'secret/a.b',
      'configmap/b',
      'configmap/a',
      'secretproviderclass/0',
      'secret/a',
    ];
    const sorted = [...keys].sort(compareUtf8);
    const carried = keys.map((key) => ({ key, hash: 'a'.repeat(40) }));
    expect(keyedSourceHashes(carried).map((entry) => entry.key)).toEqual(sorted);
  });
});
