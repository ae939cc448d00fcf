import { describe, expect, it } from 'vitest';
import { ReloadListCache } from '../core/annotation-values.ts';
import type { WorkloadKey } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS as KEYS } from '../core/types.ts';
import { aWorkload } from '../testing/builders.ts';
import { MarkStore } from '../watch/marks.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import { WorkloadStore } from '../watch/workload-store.ts';
import { ChangeRouter } from './change-router.ts';

/** The router as the watch server's subscriber: what each watch-level event enqueues. */
function setup(leading: boolean) {
  const log: string[] = [];
  const store = new WorkloadStore({
    clock: { now: () => 0 },
    timers: SYSTEM_TIMERS,
    keys: KEYS,
    notify: () => undefined,
    writeBasis: () => undefined,
  });
  store.replace('Deployment', [
    aWorkload('Deployment', 'a', 'api').build(),
    aWorkload('Deployment', 'b', 'web').build(),
  ]);
  store.replace('StatefulSet', [aWorkload('StatefulSet', 'a', 'db').build()]);
  const router = new ChangeRouter({
    store,
    marks: new MarkStore(),
    queue: {
      trigger: (key: WorkloadKey, options) =>
        log.push(`${options.debounced ? 'debounced' : 'now'} ${key}`),
      drop: (key) => log.push(`drop ${key}`),
      dropNamespace: (namespace) => log.push(`drop namespace ${namespace}`),
    },
    keys: KEYS,
    autoReloadAll: false,
    reloadOnDelete: false,
    reloadLists: new ReloadListCache(),
    acceptsNamespace: () => true,
    isLeading: () => leading,
    onSkip: () => undefined,
    onFanout: () => undefined,
  });
  return { router, log };
}

describe('ChangeRouter as the watch server subscriber', () => {
  it('a namespace entering reconciles its workloads at once; leaving drops its work', () => {
    const { router, log } = setup(true);
    router.onNamespaceEntered('a');
    router.onNamespaceLeft('b');
    expect(log).toEqual(['now Deployment/a/api', 'now StatefulSet/a/db', 'drop namespace b']);
  });

  it('a scope joined late reconciles that namespace, or every workload when cluster-wide', () => {
    const { router, log } = setup(true);
    router.onScopeJoined('configmaps', 'b');
    expect(log).toEqual(['now Deployment/b/web']);
    log.length = 0;
    router.onScopeJoined('secrets', undefined);
    expect(log).toHaveLength(3);
  });

  it('a kind watched late reconciles that kind only; the CSI API every workload', () => {
    const { router, log } = setup(true);
    router.onKindWatched('StatefulSet');
    expect(log).toEqual(['now StatefulSet/a/db']);
    log.length = 0;
    router.onKindWatched(undefined);
    expect(log).toHaveLength(3);
  });

  it('a follower enqueues nothing, but still drops a namespace that left', () => {
    const { router, log } = setup(false);
    router.onNamespaceEntered('a');
    router.onScopeJoined('configmaps', undefined);
    router.onKindWatched('Deployment');
    router.onNamespaceLeft('a');
    expect(log).toEqual(['drop namespace a']);
  });
});
