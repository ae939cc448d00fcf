// The router's policy fan-out (docs/reload-policy.md): source → policies → targets, and a policy
// event → the targets before and after it.
import { describe, expect, it } from 'vitest';
import { ReloadListCache } from '../core/annotation-values.ts';
import type { ReloadPolicyView } from '../core/reload-policy.ts';
import type { SourceView, WorkloadKey } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { aConfigMap, aWorkload } from '../testing/builders.ts';
import { aPolicy, policyStoreOver } from '../testing/policies.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { MarkStore } from '../watch/marks.ts';
import type { SourceChange, SourceRelabelled } from '../watch/source-cache.ts';
import { WorkloadStore } from '../watch/workload-store.ts';
import { ChangeRouter } from './change-router.ts';

const NS = 'team-a';
const BY_NAME = aPolicy(NS, 'web', {
  sources: [{ kind: 'CONFIGMAP', name: 'app-config' }],
  targets: [{ kind: 'Deployment', name: 'web' }],
});
const BY_LABELS = aPolicy(NS, 'labels', {
  sources: [
    { kind: 'CONFIGMAP', selector: { matchLabels: { team: 'web' }, matchExpressions: [] } },
  ],
  targets: [
    { kind: 'StatefulSet', selector: { matchLabels: { app: 'db' }, matchExpressions: [] } },
  ],
  syncDelayMs: 4000,
});

function setup(policies: readonly ReloadPolicyView[]) {
  const log: string[] = [];
  const store = new WorkloadStore({
    clock: { now: () => 0 },
    timers: SYSTEM_TIMERS,
    keys: KEYS,
    notify: () => undefined,
    writeBasis: () => undefined,
  });
  store.replace('Deployment', [
    aWorkload('Deployment', NS, 'web').build(),
    aWorkload('Deployment', NS, 'other').build(),
  ]);
  store.replace('StatefulSet', [
    { ...aWorkload('StatefulSet', NS, 'db').build(), labels: { app: 'db' } },
  ]);
  const sources: SourceView[] = [];
  const policyStore = policyStoreOver({
    sources: () => sources,
    workloads: () => store.keys().flatMap((key) => store.get(key) ?? []),
  });
  policyStore.replace(policies);
  const router = new ChangeRouter({
    store,
    policies: policyStore,
    marks: new MarkStore(),
    queue: {
      trigger: (key: WorkloadKey, options) =>
        log.push(
          `${options.debounced ? 'debounced' : 'now'} ${key}` +
            (options.syncDelayMs === undefined ? '' : ` delay=${String(options.syncDelayMs)}`),
        ),
      drop: (key) => log.push(`drop ${key}`),
      dropNamespace: (namespace) => log.push(`drop namespace ${namespace}`),
    },
    keys: KEYS,
    autoReloadAll: false,
    reloadOnDelete: false,
    reloadLists: new ReloadListCache(),
    acceptsNamespace: () => true,
    isLeading: () => true,
    onSkip: () => undefined,
    onFanout: () => undefined,
  });
  return { router, log, policyStore };
}

function updated(name: string, labels?: Record<string, string>): SourceChange {
  const view = aConfigMap(NS, name).build();
  return {
    kind: 'updated',
    ref: view.ref,
    uid: view.uid,
    hash: view.hash,
    observedAt: 1,
    annotations: {},
    prevAnnotations: {},
    ...(labels === undefined ? {} : { labels }),
  };
}

describe('ChangeRouter with ReloadPolicies', () => {
  it.each<[string, SourceChange, string[]]>([
    [
      'a named source reaches the named target',
      updated('app-config'),
      ['debounced Deployment/team-a/web'],
    ],
    [
      'a selected source reaches the selected target, with its syncDelay',
      updated('any', { team: 'web' }),
      ['debounced StatefulSet/team-a/db delay=4000'],
    ],
    ['an unbound source reaches nothing', updated('unrelated', { team: 'api' }), []],
  ])('%s', (_title, change, expected) => {
    const { router, log } = setup([BY_NAME, BY_LABELS]);
    router.onSourceEvent(change);
    expect(log).toEqual(expected);
  });

  it('a suspended policy fans out nothing', () => {
    const { router, log } = setup([{ ...BY_NAME, suspend: true }]);
    router.onSourceEvent(updated('app-config'));
    expect(log).toEqual([]);
  });

  it('a policy edit re-plans its old and new targets; a deletion its targets', () => {
    const { router, log } = setup([BY_NAME]);
    const moved = { ...BY_NAME, targets: [{ kind: 'Deployment' as const, name: 'other' }] };
    router.onPolicyEvent({ kind: 'upserted', view: moved, previous: BY_NAME });
    expect(log.sort()).toEqual([
      'debounced Deployment/team-a/other',
      'debounced Deployment/team-a/web',
    ]);
    log.length = 0;
    router.onPolicyEvent({ kind: 'removed', view: moved });
    expect(log).toEqual(['debounced Deployment/team-a/other']);
  });

  it("the namespace's last policy deleted from the store: its targets are re-planned", () => {
    const { router, log, policyStore } = setup([BY_NAME]);
    policyStore.remove(BY_NAME);
    router.onPolicyEvent({ kind: 'removed', view: BY_NAME });
    expect(log).toEqual(['debounced Deployment/team-a/web']);
  });

  it('the echo of a status write re-plans nothing', () => {
    const { router, log } = setup([BY_NAME]);
    const echoed = { ...BY_NAME, status: { ...BY_NAME.status, foundSources: '1/1' } };
    router.onPolicyEvent({ kind: 'upserted', view: echoed, previous: BY_NAME });
    expect(log).toEqual([]);
  });
});

function relabelled(
  name: string,
  labels: Record<string, string>,
  prevLabels: Record<string, string>,
): SourceRelabelled {
  const view = aConfigMap(NS, name).build();
  return { kind: 'labels', ref: view.ref, uid: view.uid, observedAt: 1, labels, prevLabels };
}

describe('ChangeRouter: a source whose labels alone changed', () => {
  it.each<[string, SourceRelabelled, string[]]>([
    [
      'now selected: the target is planned (a baseline), with its syncDelay',
      relabelled('any', { team: 'web' }, {}),
      ['debounced StatefulSet/team-a/db delay=4000'],
    ],
    [
      'no longer selected: the former target is planned (its baseline pruned)',
      relabelled('any', {}, { team: 'web' }),
      ['debounced StatefulSet/team-a/db delay=4000'],
    ],
    ['selected by no policy before or after: nothing', relabelled('any', { a: 'b' }, {}), []],
  ])('%s', (_title, event, expected) => {
    const { router, log } = setup([BY_NAME, BY_LABELS]);
    router.onSourceEvent(event);
    expect(log).toEqual(expected);
  });
});
