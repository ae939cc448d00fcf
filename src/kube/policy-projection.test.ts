import { describe, expect, it } from 'vitest';
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
    ]);
  });

  it('an object without name, namespace or uid is dropped', () => {
    expect(projectReloadPolicy({ metadata: { name: 'x' }, spec: {} })).toBeUndefined();
  });
});
