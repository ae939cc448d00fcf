import { describe, expect, it } from 'vitest';
import { desiredStatus, sameStatus, statusBody } from '../core/reload-policy-status.ts';
import { aPolicy, EMPTY_STATUS } from '../testing/policies.ts';
import { projectReloadPolicy } from './policy-projection.ts';

const METADATA = {
  namespace: 'team-a',
  name: 'web',
  uid: 'u1',
  resourceVersion: '7',
  generation: 2,
  creationTimestamp: '2026-12-01T00:00:00Z',
};

describe('projectReloadPolicy', () => {
  it('projects every spec field and the status it reads back', () => {
    const view = projectReloadPolicy({
      metadata: METADATA,
      spec: {
        sources: [
          { kind: 'ConfigMap', name: 'app-config' },
          {
            kind: 'Secret',
            selector: {
              matchLabels: { team: 'web' },
              matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
            },
          },
          { kind: 'SecretProviderClass', name: 'vault' },
        ],
        targets: [{ kind: 'Deployment', name: 'web' }],
        strategy: 'annotations',
        syncDelay: '1m30s',
        pausePeriod: '5m',
        configRevisions: { configMaps: true, secrets: true },
        rollout: { priority: -5 },
        suspend: true,
      },
      status: {
        observedGeneration: 1,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Bound',
            message: 'm',
            lastTransitionTime: '2026-12-01T00:00:01Z',
            observedGeneration: 1,
          },
          { type: 'Unknown-type', status: 'True' },
        ],
        targets: [
          {
            kind: 'Deployment',
            name: 'web',
            lastReloadTime: '2026-12-01T00:00:02Z',
            sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: 'h' }],
          },
        ],
        lastReloadTime: '2026-12-01T00:00:02Z',
        foundSources: '3/3',
        foundTargets: '1/1',
      },
    });
    expect(view).toEqual({
      namespace: 'team-a',
      name: 'web',
      uid: 'u1',
      generation: 2,
      creationTimestamp: '2026-12-01T00:00:00Z',
      sources: [
        { kind: 'CONFIGMAP', name: 'app-config' },
        {
          kind: 'SECRET',
          selector: {
            matchLabels: { team: 'web' },
            matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }],
          },
        },
        { kind: 'SECRETPROVIDERCLASS', name: 'vault' },
      ],
      targets: [{ kind: 'Deployment', name: 'web' }],
      strategy: 'annotations',
      syncDelayMs: 90_000,
      pausePeriod: '5m',
      configRevisions: { configMaps: true, secrets: true },
      rolloutPriority: -5,
      suspend: true,
      status: {
        observedGeneration: 1,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Bound',
            message: 'm',
            lastTransitionTime: '2026-12-01T00:00:01Z',
            observedGeneration: 1,
          },
        ],
        targets: [
          {
            kind: 'Deployment',
            name: 'web',
            lastReloadTime: '2026-12-01T00:00:02Z',
            sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: 'h' }],
          },
        ],
        lastReloadTime: '2026-12-01T00:00:02Z',
        foundSources: '3/3',
        foundTargets: '1/1',
      },
      problems: [],
    });
  });

  it.each(['env-vars', 'annotations', 'restart', 'evict'] as const)(
    'keeps strategy %s',
    (strategy) => {
      const view = projectReloadPolicy({
        metadata: METADATA,
        spec: {
          sources: [{ kind: 'ConfigMap', name: 'ok' }],
          targets: [{ kind: 'Deployment', name: 'web' }],
          strategy,
        },
      });
      expect(view?.strategy).toBe(strategy);
      expect(view?.problems).toEqual([]);
    },
  );

  it('drops entries the CRD would have rejected, names each, keeps the rest', () => {
    const view = projectReloadPolicy({
      metadata: METADATA,
      spec: {
        sources: [
          { kind: 'Pod', name: 'x' },
          { kind: 'ConfigMap', name: 'a', selector: { matchLabels: { a: 'b' } } },
          { kind: 'ConfigMap', selector: {} },
          { kind: 'ConfigMap', name: 'ok' },
        ],
        targets: [
          { kind: 'ReplicaSet', name: 'web' },
          { kind: 'StatefulSet', name: 'db' },
        ],
        strategy: 'rolling',
        syncDelay: '2h',
        pausePeriod: 'soon',
        rollout: { priority: 1.5 },
      },
    });
    expect(view?.sources).toEqual([{ kind: 'CONFIGMAP', name: 'ok' }]);
    expect(view?.targets).toEqual([{ kind: 'StatefulSet', name: 'db' }]);
    expect(view?.strategy).toBeUndefined();
    expect(view?.syncDelayMs).toBeUndefined();
    expect(view?.pausePeriod).toBeUndefined();
    expect(view?.suspend).toBe(false);
    expect(view?.problems).toEqual([
      'spec.strategy "rolling" is unknown; ignored',
      'spec.sources[0] needs a known kind and one of name or selector; ignored',
      'spec.sources[1] needs a known kind and one of name or selector; ignored',
      'spec.sources[2] needs a known kind and one of name or selector; ignored',
      'spec.targets[0] needs a known kind and one of name or selector; ignored',
      'spec.syncDelay "2h" is not a Go duration within bounds; ignored',
      'spec.pausePeriod "soon" is not a Go duration within bounds; ignored',
      'spec.rollout.priority 1.5 is not an integer of at most 9 digits; ignored',
    ]);
  });

  it('names and selector keys no object can have are named and ignored', () => {
    const view = projectReloadPolicy({
      metadata: METADATA,
      spec: {
        sources: [
          { kind: 'ConfigMap', name: 'App_Config' },
          { kind: 'ConfigMap', selector: { matchLabels: { 'app in (web)': 'x' } } },
          {
            kind: 'Secret',
            selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a b'] }] },
          },
          { kind: 'ConfigMap', name: 'app-config' },
        ],
        targets: [
          {
            kind: 'Deployment',
            selector: { matchExpressions: [{ key: '-x', operator: 'Exists' }] },
          },
          { kind: 'Deployment', name: 'web' },
        ],
      },
    });
    expect(view?.sources).toEqual([{ kind: 'CONFIGMAP', name: 'app-config' }]);
    expect(view?.targets).toEqual([{ kind: 'Deployment', name: 'web' }]);
    expect(view?.problems.map((problem) => problem.split(' can never match')[0])).toEqual([
      'spec.sources[0].name "App_Config"',
      'spec.sources[1].selector key "app in (web)"',
      'spec.sources[2].selector value "a b"',
      'spec.targets[0].selector key "-x"',
    ]);
    expect(view?.problems.every((problem) => problem.endsWith('; ignored'))).toBe(true);
  });

  it('an object without name, namespace or uid is dropped', () => {
    expect(projectReloadPolicy({ metadata: { name: 'x' }, spec: {} })).toBeUndefined();
  });
});

describe('a bounded status written and read back', () => {
  it('is the same status: no second write', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `Deployment/web-${String(i)}`);
    const hashes = Array.from({ length: 50 }, (_, i) => ({
      kind: 'ConfigMap',
      name: `c-${String(i)}`,
      hash: 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0',
    }));
    const policy = aPolicy('team-a', 'web', {
      sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
      targets: [{ kind: 'Deployment', name: 'web' }],
    });
    const status = desiredStatus({
      policy,
      sources: { listed: 1, missing: [] },
      targets: { listed: 1, missing: [] },
      conflicts: [],
      currentTargets: new Set(ids),
      reloads: new Map(
        ids.map((id) => [
          id,
          {
            kind: 'Deployment',
            name: id.slice('Deployment/'.length),
            lastReloadTime: '2026-12-02T03:00:00Z',
            sourceHashes: hashes,
          },
        ]),
      ),
      now: '2026-12-02T03:00:00Z',
    });
    expect(status.unlistedTargets).toBe(200);
    const reread = projectReloadPolicy({
      metadata: METADATA,
      spec: {},
      status: statusBody(status),
    })?.status;
    expect(reread?.unlistedTargets).toBe(200);
    expect(reread?.targets[0]?.unlistedSourceHashes).toBe(30);
    expect(sameStatus(reread ?? EMPTY_STATUS, status)).toBe(true);
  });
});
