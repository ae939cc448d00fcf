// ReloadPolicy views for tests, and a PolicyStore over in-memory sources and workloads.
import type { PolicyMember, PolicyStatusView, ReloadPolicyView } from '../core/reload-policy.ts';
import type { SourceType, SourceView, WorkloadKindName, WorkloadView } from '../core/types.ts';
import { DEFAULT_ANNOTATION_KEYS } from '../core/types.ts';
import { workloadKey } from '../core/keys.ts';
import { PolicyStore, type PolicyEvent } from '../watch/policy-store.ts';

export const EMPTY_STATUS: PolicyStatusView = {
  observedGeneration: undefined,
  conditions: [],
  targets: [],
  lastReloadTime: undefined,
  foundSources: undefined,
  foundTargets: undefined,
};

export function aPolicy(
  namespace: string,
  name: string,
  spec: {
    readonly sources: readonly PolicyMember<SourceType>[];
    readonly targets: readonly PolicyMember<WorkloadKindName>[];
  } & Partial<ReloadPolicyView>,
): ReloadPolicyView {
  return {
    namespace,
    name,
    uid: `uid-${name}`,
    generation: 1,
    creationTimestamp: '2026-12-01T00:00:00Z',
    strategy: undefined,
    syncDelayMs: undefined,
    pausePeriod: undefined,
    suspend: false,
    status: EMPTY_STATUS,
    problems: [],
    ...spec,
  };
}

/** A store whose catalogs are the given lists, read at each call; events go to `events`. */
export function policyStoreOver(world: {
  readonly sources: () => readonly SourceView[];
  readonly workloads: () => readonly WorkloadView[];
  readonly events?: PolicyEvent[];
}): PolicyStore {
  return new PolicyStore({
    keys: DEFAULT_ANNOTATION_KEYS,
    sourcesIn: (namespace, type) =>
      world
        .sources()
        .filter((view) => view.ref.namespace === namespace && view.ref.type === type)
        .map((view) => ({ kind: type, name: view.ref.name, labels: view.labels })),
    workloadsIn: (namespace) =>
      world.workloads().filter((view) => view.ref.namespace === namespace),
    workloadOf: (key) => world.workloads().find((view) => workloadKey(view.ref) === key),
    // The lists change behind the store's back: their whole content is the version.
    membershipVersion: (namespace) =>
      JSON.stringify([
        world
          .sources()
          .filter((view) => view.ref.namespace === namespace)
          .map((view) => [view.ref.type, view.ref.name, view.labels]),
        world
          .workloads()
          .filter((view) => view.ref.namespace === namespace)
          .map((view) => [workloadKey(view.ref), view.labels]),
      ]),
    notify: (event) => world.events?.push(event),
  });
}
