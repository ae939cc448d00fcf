// The ReloadPolicy status writer against an in-memory port: the exact status patches.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../core/json.ts';
import { ApiError } from '../core/api-error.ts';
import type { SourceView, WorkloadView } from '../core/types.ts';
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

function setup(options: { fail?: ApiError; leading?: boolean } = {}) {
  const patches: { namespace: string; name: string; status: JsonObject }[] = [];
  const sources: SourceView[] = [aConfigMap(NS, 'app-config').withHash(H1).build()];
  const workloads: WorkloadView[] = [WEB];
  const policies = policyStoreOver({ sources: () => sources, workloads: () => workloads });
  policies.replace([POLICY]);
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
  });
  return { writer, patches, policies, logger, failures: () => failures };
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

/** What the watch would bring back after the patch, as a view's status. */
function statusView(status: JsonObject | undefined) {
  const body = status ?? {};
  return {
    observedGeneration: body.observedGeneration as number,
    conditions: body.conditions as never,
    targets: body.targets as never,
    foundSources: body.foundSources as string,
    foundTargets: body.foundTargets as string,
    lastReloadTime: (body.lastReloadTime ?? undefined) as string | undefined,
  };
}
