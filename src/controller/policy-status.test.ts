// The ReloadPolicy status writer against an in-memory port: the exact status patches.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import { ApiError } from '../core/api-error.ts';
import type { PolicyStatusView, ReloadPolicyView } from '../core/reload-policy.ts';
import type { SourceKey, SourceView, WorkloadView } from '../core/types.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import type { ReconcilePlan } from '../reconcile/plan/model.ts';
import { aConfigMap, aWorkload } from '../testing/builders.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { PolicyStatusWriter } from './policy-status.ts';

const NS = 'team-a';
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';
const NOW = Date.UTC(2026, 11, 2, 3, 0, 0);
const WEB = aWorkload('Deployment', NS, 'web').build();
const POLICY = aPolicy(NS, 'web', {
  sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
  targets: [{ kind: 'Deployment', name: 'web' }],
});

function setup(
  options: {
    fail?: ApiError;
    leading?: boolean;
    policies?: readonly ReloadPolicyView[];
    /** A(K) each workload carries, by workload name. */
    applied?: ReadonlyMap<string, ReadonlyMap<SourceKey, string>>;
    workloads?: readonly WorkloadView[];
  } = {},
) {
  const applied = options.applied ?? new Map<string, ReadonlyMap<SourceKey, string>>();
  const patches: { namespace: string; name: string; status: JsonObject }[] = [];
  const events: EventRequest[] = [];
  const sources: SourceView[] = [aConfigMap(NS, 'app-config').withHash(H1).build()];
  const workloads: readonly WorkloadView[] = options.workloads ?? [WEB];
  const policies = policyStoreOver({ sources: () => sources, workloads: () => workloads });
  policies.replace(options.policies ?? [POLICY]);
  let failures = 0;
  const logger = new RecordingLogger();
  const writer = new PolicyStatusWriter({
    policies,
    client: {
      patchStatus: (namespace, name, status) => {
        if (options.fail) return Promise.reject(options.fail);
        patches.push({ namespace, name, status });
        return Promise.resolve();
      },
    },
    isLeading: () => options.leading ?? true,
    now: () => NOW,
    logger,
    onWriteFailed: () => {
      failures += 1;
    },
    events: {
      record: (request) => {
        events.push(request);
      },
    },
    applied: (view) => applied.get(view.ref.name) ?? new Map(),
  });
  return { writer, patches, events, policies, logger, failures: () => failures };
}

const ROLL = {
  keys: [{ key: 'configmap/app-config', desired: H1, applied: undefined }],
} as unknown as ReconcilePlan;

const CONDITIONS = [
  ['Ready', 'True', 'Bound', 'every source is bound to every target'],
  ['SourcesFound', 'True', 'AllFound', '1/1 sources found'],
  ['TargetsFound', 'True', 'AllFound', '1/1 targets found'],
  ['Conflict', 'False', 'NoConflict', 'no other policy or annotation overrides a setting'],
].map(([type, status, reason, message]) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-12-02T03:00:00Z',
  observedGeneration: 1,
}));

describe('PolicyStatusWriter', () => {
  it('after a roll: one merge patch with the time, the hash and the conditions', async () => {
    const { writer, patches } = setup();
    writer.recordRoll(WEB, ROLL);
    await writer.idle();
    expect(patches).toEqual([
      {
        namespace: NS,
        name: 'web',
        status: {
          observedGeneration: 1,
          conditions: CONDITIONS,
          targets: [
            {
              kind: 'Deployment',
              name: 'web',
              lastReloadTime: '2026-12-02T03:00:00Z',
              sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H1 }],
            },
          ],
          lastReloadTime: '2026-12-02T03:00:00Z',
          foundSources: '1/1',
          foundTargets: '1/1',
          boundTargets: 1,
          unlistedTargets: 0,
        },
      },
    ]);
  });

  it('the echo of its own write changes nothing, so nothing more is written', async () => {
    const { writer, patches, policies } = setup();
    writer.refreshAll();
    await writer.idle();
    expect(patches).toHaveLength(1);
    const [first] = patches;
    const echoed = { ...POLICY, status: { ...POLICY.status, ...statusView(first?.status) } };
    policies.upsert(echoed);
    writer.onPolicyEvent({ kind: 'upserted', view: echoed, previous: POLICY });
    await writer.idle();
    expect(patches).toHaveLength(1);
  });

  it('a patch the API server refused as invalid is not sent again unchanged', async () => {
    const invalid = new ApiError('Invalid', { status: 422, retryable: false });
    const world = setup({ fail: invalid });
    world.writer.refreshAll();
    await world.writer.idle();
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.failures()).toBe(1);
    // Something changes: the new patch is tried.
    world.writer.recordRoll(WEB, ROLL);
    await world.writer.idle();
    expect(world.failures()).toBe(2);
  });

  it('a refused write is counted and logged; a follower writes nothing', async () => {
    const refused = setup({ fail: new ApiError('forbidden', { status: 403, retryable: false }) });
    refused.writer.recordRoll(WEB, ROLL);
    await refused.writer.idle();
    expect(refused.failures()).toBe(1);
    expect(refused.logger.written.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'cannot write ReloadPolicy status'],
    ]);
    const follower = setup({ leading: false });
    follower.writer.recordRoll(WEB, ROLL);
    follower.writer.refreshAll();
    await follower.writer.idle();
    expect(follower.patches).toEqual([]);
  });

  it('a policy with unusable entries is named once per generation', () => {
    const { writer, logger } = setup({ leading: false });
    const bad = { ...POLICY, problems: ['spec.targets[0] needs a known kind; ignored'] };
    writer.onPolicyEvent({ kind: 'upserted', view: bad, previous: undefined });
    writer.onPolicyEvent({ kind: 'upserted', view: bad, previous: bad });
    expect(logger.written).toEqual([
      {
        level: 'warn',
        message: 'ReloadPolicy has entries kreload cannot use; the rest applies',
        fields: { policy: 'team-a/web', problems: 'spec.targets[0] needs a known kind; ignored' },
      },
    ]);
  });
});

describe('PolicyStatusWriter: the ReloadPolicyConflict Event', () => {
  const FIRST = aPolicy(NS, 'first', {
    sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
    targets: [{ kind: 'Deployment', name: 'web' }],
    strategy: 'env-vars',
    creationTimestamp: '2026-12-01T00:00:00Z',
  });
  const SECOND = aPolicy(NS, 'second', {
    sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
    targets: [{ kind: 'Deployment', name: 'web' }],
    strategy: 'annotations',
    creationTimestamp: '2026-12-01T01:00:00Z',
  });
  const MESSAGE = 'strategy annotations is not applied to Deployment web: policy first sets it';
  const EVENT: EventRequest = {
    object: {
      apiVersion: 'kreload.io/v1alpha1',
      kind: 'ReloadPolicy',
      namespace: NS,
      name: 'second',
      uid: 'uid-second',
    },
    reason: 'ReloadPolicyConflict',
    type: 'Warning',
    message: MESSAGE,
  };

  /** The watch brings the written status back into the store. */
  function echo(world: ReturnType<typeof setup>, name: string): void {
    const written = world.patches.filter((patch) => patch.name === name).at(-1);
    const known = world.policies.get(NS, name);
    if (written === undefined || known === undefined) throw new Error(`no write of ${name}`);
    const view = { ...known, status: { ...known.status, ...statusView(written.status) } };
    world.policies.upsert(view);
  }

  it('one Warning Event on the losing policy per transition into conflict', async () => {
    const world = setup({ policies: [FIRST, SECOND] });
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.events).toEqual([EVENT]);
    // The echo of the write, and later triggers while the conflict holds: no second Event.
    echo(world, 'second');
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.events).toEqual([EVENT]);
    // The conflict ends (both policies agree), then starts again: a second Event.
    world.policies.upsert({ ...world.policies.get(NS, 'second')!, strategy: 'env-vars' });
    world.writer.refreshAll();
    await world.writer.idle();
    echo(world, 'second');
    expect(world.policies.get(NS, 'second')?.status.conditions.at(-1)?.status).toBe('False');
    world.policies.upsert({ ...world.policies.get(NS, 'second')!, strategy: 'annotations' });
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.events).toEqual([EVENT, EVENT]);
  });

  it('a failed status write tried again does not repeat the Event', async () => {
    const refused = new ApiError('unavailable', { status: 503, retryable: true });
    const world = setup({ policies: [FIRST, SECOND], fail: refused });
    world.writer.refreshAll();
    await world.writer.idle();
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.failures()).toBe(4);
    expect(world.events).toEqual([EVENT]);
  });

  it('a conflict the stored status already records (a restart) is not announced', async () => {
    const recorded = {
      ...SECOND.status,
      conditions: [
        {
          type: 'Conflict' as const,
          status: 'True' as const,
          reason: 'SettingOverridden',
          message: MESSAGE,
          lastTransitionTime: '2026-12-01T02:00:00Z',
          observedGeneration: 1,
        },
      ],
    };
    const world = setup({ policies: [FIRST, { ...SECOND, status: recorded }] });
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.events).toEqual([]);
  });
});

describe('PolicyStatusWriter: a record lost to a crash is recovered from the workload', () => {
  const H0 = '0000000000000000000000000000000000000000';
  const H2 = '2222222222222222222222222222222222222222';
  const STORED = {
    ...POLICY,
    status: {
      ...POLICY.status,
      targets: [
        {
          kind: 'Deployment',
          name: 'web',
          lastReloadTime: '2026-12-01T00:00:00Z',
          sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H0 }],
        },
      ],
    },
  };
  const carrying = (hash: string) =>
    new Map([['web', new Map<SourceKey, string>([['configmap/app-config', hash]])]]);

  it('the first write puts the carried hash in place of the stale record, without a time', async () => {
    const world = setup({ policies: [STORED], applied: carrying(H1) });
    world.writer.refreshAll();
    await world.writer.idle();
    expect(world.patches.map((patch) => patch.status.targets)).toEqual([
      [
        {
          kind: 'Deployment',
          name: 'web',
          sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H1 }],
        },
      ],
    ]);
  });

  it('only at the first write: later the cache may lag behind this process’s own roll', async () => {
    const applied = new Map([['web', new Map<SourceKey, string>()]]);
    const world = setup({ policies: [STORED], applied });
    world.writer.refreshAll();
    await world.writer.idle();
    applied.set('web', new Map([['configmap/app-config', H2]]));
    world.writer.refreshAll();
    await world.writer.idle();
    // Two writes (the conditions were never echoed back), neither with H2.
    const stored = [
      {
        kind: 'Deployment',
        name: 'web',
        lastReloadTime: '2026-12-01T00:00:00Z',
        sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H0 }],
      },
    ];
    expect(world.patches.map((patch) => patch.status.targets)).toEqual([stored, stored]);
  });

  it("a roll of this process wins over what the cache's workload carries", async () => {
    const world = setup({ policies: [STORED], applied: carrying(H2) });
    world.writer.recordRoll(WEB, ROLL);
    await world.writer.idle();
    expect(world.patches.map((patch) => patch.status.targets)).toEqual([
      [
        {
          kind: 'Deployment',
          name: 'web',
          lastReloadTime: '2026-12-02T03:00:00Z',
          sourceHashes: [{ kind: 'ConfigMap', name: 'app-config', hash: H1 }],
        },
      ],
    ]);
  });
});

describe('PolicyStatusWriter: label-only changes', () => {
  it('a workload whose labels changed refreshes its namespace policies', async () => {
    const world = setup();
    const relabelled = { ...WEB, labels: { app: 'web' } };
    world.writer.onWorkloadEvent({
      kind: 'changed',
      key: 'Deployment/team-a/web',
      view: relabelled,
      prev: WEB,
    });
    await world.writer.idle();
    expect(world.patches.map((patch) => patch.name)).toEqual(['web']);
  });

  it('a source whose labels changed refreshes its namespace policies', async () => {
    const world = setup();
    world.writer.onSourceEvent({
      kind: 'labels',
      ref: { type: 'CONFIGMAP', namespace: NS, name: 'app-config' },
      uid: 'u1',
      observedAt: NOW,
      labels: { team: 'a' },
      prevLabels: {},
    });
    await world.writer.idle();
    expect(world.patches.map((patch) => patch.name)).toEqual(['web']);
  });

  it('a workload change that keeps its labels writes nothing', async () => {
    const world = setup();
    world.writer.onWorkloadEvent({
      kind: 'changed',
      key: 'Deployment/team-a/web',
      view: { ...WEB, generation: 2 },
      prev: WEB,
    });
    await world.writer.idle();
    expect(world.patches).toEqual([]);
  });
});

/** What the watch would bring back after the patch, as a view's status. */
/** A merge patch applied to a status view: absent fields are kept, nulls unset. */
function statusView(status: JsonObject | undefined): Partial<PolicyStatusView> {
  const view: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(status ?? {})) view[field] = value ?? undefined;
  return view;
}
