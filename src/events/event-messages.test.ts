import { describe, expect, it } from 'vitest';
import type { SourceKey, WorkloadRef } from '../core/types.ts';
import {
  EVENT_TYPES,
  dryRunReloadEvent,
  envVarCollisionEvent,
  evictionCompleteEvent,
  evictionHeldEvent,
  podEvictedEvent,
  invalidAnnotationEvent,
  reloadFailEvent,
  rolloutFailedEvent,
  reloadedEvent,
  workloadsReloadedEvent,
} from './event-messages.ts';
import type { ChangedSource } from './event-messages.ts';

const API: WorkloadRef = { kind: 'Deployment', namespace: 'team-a', name: 'api' };
const HASH = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';

const deployments = (n: number): WorkloadRef[] =>
  Array.from({ length: n }, (_, i) => ({
    kind: 'Deployment',
    namespace: 'team-a',
    name: `d${String(i).padStart(2, '0')}`,
  }));

describe('EVENT_TYPES', () => {
  it('gives every reason its §13.3 type', () => {
    expect(EVENT_TYPES).toEqual({
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
    });
  });
});

describe('reloadedEvent', () => {
  it.each<[string, ChangedSource[], string]>([
    [
      'one source (Reloader text)',
      [{ type: 'CONFIGMAP', name: 'app-config' }],
      "Changes detected in 'app-config' of type 'CONFIGMAP' in namespace 'team-a', Updated 'api' of type 'Deployment' in namespace 'team-a'",
    ],
    [
      'several sources, listed in source-key order',
      [
        { type: 'SECRET', name: 'db-creds' },
        { type: 'CONFIGMAP', name: 'app-config' },
      ],
      "Changes detected in 'app-config' of type 'CONFIGMAP', 'db-creds' of type 'SECRET' in namespace 'team-a', Updated 'api' of type 'Deployment' in namespace 'team-a'",
    ],
  ])('%s', (_case, sources, message) => {
    expect(reloadedEvent({ sources, workload: API })).toEqual({
      reason: 'Reloaded',
      type: 'Normal',
      message,
    });
  });
});

describe('reloadFailEvent', () => {
  it('uses Reloader text', () => {
    expect(
      reloadFailEvent({ workload: API, error: 'admission webhook denied the request' }),
    ).toEqual({
      reason: 'ReloadFail',
      type: 'Warning',
      message:
        "Update for 'api' of type 'Deployment' in namespace 'team-a' failed with error admission webhook denied the request",
    });
  });
});

describe('rolloutFailedEvent', () => {
  it('names the workload, the generation and the reason as the workload reported it', () => {
    expect(
      rolloutFailedEvent({
        workload: { kind: 'Deployment', namespace: 'team-a', name: 'web' },
        generation: 7,
        reason: 'ProgressDeadlineExceeded',
        detail: '1 of 3 replicas updated, 3 available',
      }),
    ).toEqual({
      reason: 'RolloutFailed',
      type: 'Warning',
      message:
        "Rollout of 'web' of type 'Deployment' in namespace 'team-a' started by kreload " +
        '(generation 7) failed: ProgressDeadlineExceeded (1 of 3 replicas updated, 3 available)',
    });
  });
});

describe('workloadsReloadedEvent', () => {
  it.each<[string, WorkloadRef[], number, string]>([
    [
      'two rolled, sorted',
      [{ kind: 'StatefulSet', namespace: 'team-a', name: 'db' }, API],
      0,
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 2 workload(s): Deployment/api, StatefulSet/db",
    ],
    [
      'one rolled, one failed',
      [API],
      1,
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 1 workload(s): Deployment/api; 1 failed",
    ],
    [
      'none rolled, two failed',
      [],
      2,
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 0 workload(s); 2 failed",
    ],
    [
      'exactly ten names',
      deployments(10),
      0,
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 10 workload(s): " +
        'Deployment/d00, Deployment/d01, Deployment/d02, Deployment/d03, Deployment/d04, Deployment/d05, ' +
        'Deployment/d06, Deployment/d07, Deployment/d08, Deployment/d09',
    ],
    [
      'twelve rolled and three failed: ten names, +2 more',
      deployments(12),
      3,
      "Change to ConfigMap 'app-config' (hash dc30e0faa89a) rolled 12 workload(s): " +
        'Deployment/d00, Deployment/d01, Deployment/d02, Deployment/d03, Deployment/d04, Deployment/d05, ' +
        'Deployment/d06, Deployment/d07, Deployment/d08, Deployment/d09, … +2 more; 3 failed',
    ],
  ])('%s', (_case, rolled, failed, message) => {
    expect(
      workloadsReloadedEvent({
        source: { type: 'CONFIGMAP', namespace: 'team-a', name: 'app-config' },
        hash: HASH,
        rolled,
        failed,
      }),
    ).toEqual({ reason: 'WorkloadsReloaded', type: 'Normal', message });
  });

  it.each([
    ['SECRET', 'Secret'],
    ['SECRETPROVIDERCLASS', 'SecretProviderClass'],
  ] as const)('names a %s source as %s', (type, kind) => {
    const { message } = workloadsReloadedEvent({
      source: { type, namespace: 'n', name: 's' },
      hash: HASH,
      rolled: [API],
      failed: 0,
    });
    expect(message).toBe(
      `Change to ${kind} 's' (hash dc30e0faa89a) rolled 1 workload(s): Deployment/api`,
    );
  });
});

describe('invalidAnnotationEvent', () => {
  it('joins key, problem and consequence', () => {
    expect(
      invalidAnnotationEvent({
        on: 'workload',
        key: 'configmap.reloader.stakater.com/reload',
        value: 'app-(',
        problem: 'invalid pattern "app-(" (missing closing )',
        consequence: 'ignored, other entries still apply',
      }),
    ).toEqual({
      reason: 'InvalidAnnotation',
      type: 'Warning',
      message:
        'configmap.reloader.stakater.com/reload: invalid pattern "app-(" (missing closing ); ignored, other entries still apply',
    });
  });
});

describe('envVarCollisionEvent', () => {
  it('lists the sharing sources in key order', () => {
    expect(
      envVarCollisionEvent({
        envVar: 'STAKATER_MY_CONFIG_CONFIGMAP',
        sources: ['configmap/my.config', 'configmap/my-config'],
      }),
    ).toEqual({
      reason: 'EnvVarCollision',
      type: 'Warning',
      message:
        'STAKATER_MY_CONFIG_CONFIGMAP is shared by configmap/my-config, configmap/my.config; tracking them separately',
    });
  });
});

describe('dryRunReloadEvent', () => {
  it.each<[string, [SourceKey, string][], string]>([
    [
      'one source',
      [['configmap/app', HASH]],
      "Dry run: would roll 'api' of type 'Deployment' for configmap/app=dc30e0faa89a",
    ],
    [
      'several sources in key order',
      [
        ['secret/db', 'f83e99e3e1a1b6b1e0d5d3a5e1a8a5c7b6d8646a'],
        ['configmap/app', HASH],
      ],
      "Dry run: would roll 'api' of type 'Deployment' for configmap/app=dc30e0faa89a, secret/db=f83e99e3e1a1",
    ],
  ])('%s', (_case, entries, message) => {
    expect(dryRunReloadEvent({ workload: API, hashes: new Map(entries) })).toEqual({
      reason: 'DryRunReload',
      type: 'Normal',
      message,
    });
  });
});

describe('the strategy that ran', () => {
  const workload = { kind: 'Deployment', namespace: 'team-a', name: 'api' } as const;

  it("goes in the action of Reloaded, leaving Reloader's message as it is", () => {
    const event = reloadedEvent({
      sources: [{ type: 'SECRET', name: 'db' }],
      workload,
      strategy: 'evict',
    });
    expect(event.action).toBe('evict');
    expect(event.message).toBe(
      "Changes detected in 'db' of type 'SECRET' in namespace 'team-a', Updated 'api' of type 'Deployment' in namespace 'team-a'",
    );
  });

  it('is named by every eviction Event', () => {
    const progress = { old: 2, current: 1, desired: 3 };
    expect(podEvictedEvent({ workload, pod: 'api-1', progress })).toEqual({
      reason: 'PodEvicted',
      type: 'Normal',
      action: 'evict',
      message:
        "Evicted pod 'api-1' of 'api' to reload its config (strategy 'evict'); 2 pod(s) with an older config left, 1 of 3 run the new one",
    });
    expect(
      evictionHeldEvent({ workload, pod: 'api-1', reason: 'violates the disruption budget' }),
    ).toEqual({
      reason: 'EvictionHeld',
      type: 'Warning',
      action: 'evict',
      message:
        "Eviction of pod 'api-1' of 'api' held (strategy 'evict'): violates the disruption budget; retried with backoff",
    });
    expect(
      evictionCompleteEvent({ workload, progress: { old: 0, current: 3, desired: 3 } }),
    ).toMatchObject({
      reason: 'EvictionComplete',
      action: 'evict',
    });
  });
});
