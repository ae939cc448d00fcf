// The policy binding at scale, through the real caches and their subscribers: one policy binding
// 5,000 Deployments to 5,000 ConfigMaps. Each event may rebuild a namespace's source or workload
// list a bounded number of times, never once per target or per source.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ReloadListCache } from '../core/annotation-values.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import type { WorkloadKey } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { ChangeRouter } from '../controller/change-router.ts';
import { PolicyStatusWriter } from '../controller/policy-status.ts';
import { aConfigMap, aWorkload } from '../testing/builders.ts';
import { aPolicy } from '../testing/policies.ts';
import { RecordingLogger } from '../testing/recording-logger.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { MarkStore } from './marks.ts';
import { PolicyRelevance } from './policy-relevance.ts';
import { SourceCache } from './source-cache.ts';
import { createWatchCaches, WatchSubscribers } from './watch-caches.ts';
import { WorkloadStore } from './workload-store.ts';

const NS = 'scale';
const COUNT = 5000;
/** List rebuilds allowed per event, whatever the number of targets and sources. */
const BUDGET = 8;
const H1 = 'dc30e0faa89a70dec1033016a2309bbeb9efcbd0';

const POLICY: ReloadPolicyView = aPolicy(NS, 'web', {
  sources: [{ kind: 'CONFIGMAP', selector: { matchLabels: { app: 'web' }, matchExpressions: [] } }],
  targets: [
    { kind: 'Deployment', selector: { matchLabels: { tier: 'web' }, matchExpressions: [] } },
  ],
  syncDelayMs: 0,
});

function bound(name: string, hash?: string) {
  const builder = aConfigMap(NS, name);
  return {
    ...(hash === undefined ? builder : builder.withHash(hash)).build(),
    labels: { app: 'web' },
  };
}

/** Counts every rebuild of a namespace's name list; fails fast once far over the budget. */
function countRebuilds() {
  const counter = { rebuilds: 0 };
  const guard = (): void => {
    counter.rebuilds += 1;
    if (counter.rebuilds > 100 * BUDGET) throw new Error('list rebuild budget exceeded');
  };
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the spied `this`
  const names = SourceCache.prototype.namesInNamespace;
  vi.spyOn(SourceCache.prototype, 'namesInNamespace').mockImplementation(function (
    this: SourceCache,
    namespace: string,
  ) {
    guard();
    return names.call(this, namespace);
  });
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the spied `this`
  const keys = WorkloadStore.prototype.keysInNamespace;
  vi.spyOn(WorkloadStore.prototype, 'keysInNamespace').mockImplementation(function (
    this: WorkloadStore,
    namespace: string,
  ) {
    guard();
    return keys.call(this, namespace);
  });
  return counter;
}

function setup() {
  const triggered: WorkloadKey[] = [];
  const patches: string[] = [];
  const subscribers = new WatchSubscribers();
  const caches = createWatchCaches(
    {
      sourceTypes: ['CONFIGMAP', 'SECRET'],
      keys: KEYS,
      scope: { mode: 'global', ignored: [], selectorEnabled: false },
      clock: { now: () => 0 },
      timers: SYSTEM_TIMERS,
      writeBasis: () => undefined,
      isTypeHealthy: () => true,
      reloadPolicies: true,
    },
    subscribers,
  );
  const policies = caches.policies;
  if (policies === undefined) throw new Error('no policy store');
  const writer = new PolicyStatusWriter({
    policies,
    client: {
      patchStatus: (_namespace, name) => {
        patches.push(name);
        return Promise.resolve();
      },
    },
    isLeading: () => true,
    now: () => 0,
    logger: new RecordingLogger(),
    onWriteFailed: () => undefined,
    applied: () => new Map(),
    events: { record: () => undefined },
  });
  subscribers.add(new PolicyRelevance({ policies, store: caches.store }));
  subscribers.add(
    new ChangeRouter({
      store: caches.store,
      policies,
      marks: new MarkStore(),
      queue: {
        trigger: (key) => triggered.push(key),
        drop: () => undefined,
        dropNamespace: () => undefined,
      },
      keys: KEYS,
      autoReloadAll: false,
      reloadOnDelete: false,
      reloadLists: new ReloadListCache(),
      acceptsNamespace: () => true,
      isLeading: () => true,
      onSkip: () => undefined,
      onFanout: () => undefined,
    }),
  );
  subscribers.add(writer);
  const deployments = Array.from({ length: COUNT }, (_, i) => ({
    ...aWorkload('Deployment', NS, `web-${String(i)}`).build(),
    labels: { tier: 'web' },
  }));
  caches.store.replace('Deployment', deployments);
  caches.byType.CONFIGMAP?.replace(
    Array.from({ length: COUNT }, (_, i) => bound(`config-${String(i)}`)),
  );
  caches.byType.SECRET?.replace([]);
  policies.replace([POLICY]);
  return { caches, policies, writer, triggered, patches, deployments };
}

describe('policy binding at 1 policy × 5,000 Deployments × 5,000 ConfigMaps', () => {
  let counter: { rebuilds: number };
  beforeEach(() => {
    counter = countRebuilds();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('a bound ConfigMap change fans out to every target within the budget', () => {
    const { caches, triggered } = setup();
    counter.rebuilds = 0;
    caches.byType.CONFIGMAP?.upsert(bound('config-7', H1));
    expect(triggered).toHaveLength(COUNT);
    expect(counter.rebuilds).toBeLessThanOrEqual(BUDGET);
  });

  it("every target's binding, as the planner reads it, within the budget", () => {
    const { policies, deployments } = setup();
    counter.rebuilds = 0;
    for (const view of deployments) expect(policies.bindingOf(view).sources.size).toBe(COUNT);
    expect(counter.rebuilds).toBeLessThanOrEqual(BUDGET);
  });

  it("the echo of kreload's own status write re-plans nothing and stays within the budget", async () => {
    const { policies, writer, triggered, patches } = setup();
    counter.rebuilds = 0;
    policies.upsert({
      ...POLICY,
      status: { ...POLICY.status, foundSources: '1/1', foundTargets: '1/1' },
    });
    await writer.idle();
    expect(triggered).toEqual([]);
    expect(patches.length).toBeLessThanOrEqual(1);
    expect(counter.rebuilds).toBeLessThanOrEqual(BUDGET);
  });

  it('a ConfigMap created (bound or not) and the status write it causes stay within the budget', async () => {
    const { caches, writer, triggered } = setup();
    counter.rebuilds = 0;
    caches.byType.CONFIGMAP?.upsert(aConfigMap(NS, 'unrelated').build());
    await writer.idle();
    expect(triggered).toEqual([]);
    expect(counter.rebuilds).toBeLessThanOrEqual(BUDGET);
    counter.rebuilds = 0;
    caches.byType.CONFIGMAP?.upsert(bound('config-new'));
    await writer.idle();
    expect(triggered).toHaveLength(COUNT);
    expect(counter.rebuilds).toBeLessThanOrEqual(BUDGET);
  });
});
