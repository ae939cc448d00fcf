// A policy that starts to bind a workload moves its relevantSince, as adding the annotation would
// (§5.4): each way a binding can start (policy, source labels, workload labels), and the ways
// that start none.
import { describe, expect, it } from 'vitest';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import type { SourceView, WorkloadView } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { aConfigMap, aWorkload } from '../testing/builders.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { PolicyRelevance } from './policy-relevance.ts';
import { WorkloadStore } from './workload-store.ts';

const NS = 'team-a';
const WEB_KEY = 'Deployment/team-a/web';
const SELECTING = aPolicy(NS, 'sel', {
  sources: [
    { kind: 'CONFIGMAP', selector: { matchLabels: { team: 'web' }, matchExpressions: [] } },
  ],
  targets: [
    { kind: 'Deployment', selector: { matchLabels: { app: 'web' }, matchExpressions: [] } },
  ],
});

function setup(options: {
  readonly policies: readonly ReloadPolicyView[];
  readonly workloadLabels?: Record<string, string>;
  readonly sourceLabels?: Record<string, string>;
}) {
  let now = 1000;
  const store = new WorkloadStore({
    clock: { now: () => now },
    timers: SYSTEM_TIMERS,
    keys: KEYS,
    notify: () => undefined,
    writeBasis: () => undefined,
  });
  const web: WorkloadView = {
    ...aWorkload('Deployment', NS, 'web').build(),
    labels: options.workloadLabels ?? { app: 'web' },
  };
  store.replace('Deployment', [web]);
  const sources: SourceView[] = [
    { ...aConfigMap(NS, 'app-config').build(), labels: options.sourceLabels ?? { team: 'web' } },
  ];
  const policies = policyStoreOver({
    sources: () => sources,
    workloads: () => store.keys().flatMap((key) => store.get(key) ?? []),
  });
  policies.replace(options.policies);
  const relevance = new PolicyRelevance({ policies, store });
  const later = (): void => {
    now = 5000;
  };
  return { store, policies, relevance, web, sources, later };
}

describe('PolicyRelevance', () => {
  it('a new policy binding the workload moves relevantSince to now', () => {
    const world = setup({ policies: [] });
    world.later();
    world.policies.upsert(SELECTING);
    world.relevance.onPolicyEvent({ kind: 'upserted', view: SELECTING, previous: undefined });
    expect(world.store.relevantSince(WEB_KEY)).toBe(5000);
  });

  it('a policy edit that binds no new source leaves it', () => {
    const world = setup({ policies: [SELECTING] });
    world.later();
    const edited = { ...SELECTING, syncDelayMs: 3000, generation: 2 };
    world.policies.upsert(edited);
    world.relevance.onPolicyEvent({ kind: 'upserted', view: edited, previous: SELECTING });
    expect(world.store.relevantSince(WEB_KEY)).toBe(1000);
  });

  it('resuming a suspended policy binds again: moved', () => {
    const suspended = { ...SELECTING, suspend: true };
    const world = setup({ policies: [suspended] });
    world.later();
    world.policies.upsert(SELECTING);
    world.relevance.onPolicyEvent({ kind: 'upserted', view: SELECTING, previous: suspended });
    expect(world.store.relevantSince(WEB_KEY)).toBe(5000);
  });

  it.each<[string, Record<string, string>, Record<string, string>, number]>([
    ['a source now selected: moved', { team: 'web' }, {}, 5000],
    ['a source no longer selected: left', {}, { team: 'web' }, 1000],
    ['a source selected before and after: left', { team: 'web', x: 'y' }, { team: 'web' }, 1000],
  ])('%s', (_title, labels, prevLabels, expected) => {
    const world = setup({ policies: [SELECTING], sourceLabels: labels });
    world.later();
    world.relevance.onSourceEvent({
      kind: 'labels',
      ref: { type: 'CONFIGMAP', namespace: NS, name: 'app-config' },
      uid: 'u',
      observedAt: 5000,
      labels,
      prevLabels,
    });
    expect(world.store.relevantSince(WEB_KEY)).toBe(expected);
  });

  it.each<[string, Record<string, string>, Record<string, string>, number]>([
    ['a workload now selected: moved', { app: 'web' }, {}, 5000],
    ['a workload no longer selected: left', {}, { app: 'web' }, 1000],
  ])('%s', (_title, labels, prevLabels, expected) => {
    const world = setup({ policies: [SELECTING], workloadLabels: labels });
    world.later();
    world.relevance.onWorkloadEvent({
      kind: 'changed',
      key: WEB_KEY,
      view: { ...world.web, labels },
      prev: { ...world.web, labels: prevLabels },
    });
    expect(world.store.relevantSince(WEB_KEY)).toBe(expected);
  });
});
