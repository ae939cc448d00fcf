/**
 * Explain's only I/O: read-only GETs and LISTs with the user's credentials. Sources are hashed by
 * the controller's own projections on arrival and their data dropped (§9.2); the server-side filters
 * of the controller's watch (watch-plan.ts) are asked of the API server for the one object, so
 * explain and the controller agree on what the watch delivers.
 */
import type { SourceType } from '../../core/types.ts';
import type { WorkloadKindRow } from '../../rollout/kinds.ts';
import { kindRow } from '../../rollout/kinds.ts';
import type { Options } from '../../config/parse-options.ts';
import { ApiError } from '../../core/api-error.ts';
import type { JsonObject } from '../../core/json.ts';
import { isJsonObject, objectsAt, stringAt } from '../../core/json.ts';
import {
  projectConfigMap,
  projectSecret,
  projectSecretProviderClass,
  projectSecretProviderClassPodStatus,
  projectionSettings,
  sourceKeysOf,
} from '../../kube/projections.ts';
import { KubePodClient } from '../../kube/pod-client.ts';
import type { StoreObject } from '../../kube/baseline-records.ts';
import { BASELINE_STORE_SELECTOR, projectStoreObject } from '../../kube/baseline-store.ts';
import type { ApiResource } from '../../kube/resources.ts';
import { OTHER_RESOURCES, resourcePath, workloadResource } from '../../kube/resources.ts';
import type { KubeTransport } from '../../kube/transport.ts';
import { HttpMethod } from '../../kube/transport.ts';
import { desiredPodStatus, providerClassSourceView } from '../../watch/spc-desired-state.ts';
import type { SourceResource } from '../../watch/watch-plan.ts';
import { sourceWatchTargets } from '../../watch/watch-plan.ts';
import type { SourceRead } from '../../explain/explain-workload.ts';
import type { NamedObject, ReloadPolicyView } from '../../core/reload-policy.ts';
import { projectReloadPolicy } from '../../kube/policy-projection.ts';
import { keptLabels } from '../../kube/projections.ts';

export type ObjectRead =
  | { readonly state: 'found'; readonly object: JsonObject }
  | { readonly state: 'not-found' }
  | { readonly state: 'forbidden'; readonly message: string };

const RESOURCE_OF_TYPE: Readonly<
  Record<Exclude<SourceType, 'SECRETPROVIDERCLASS'>, SourceResource>
> = { CONFIGMAP: 'configmaps', SECRET: 'secrets' };

const API_RESOURCE: Readonly<Record<SourceResource, ApiResource>> = {
  configmaps: OTHER_RESOURCES.configMaps,
  secrets: OTHER_RESOURCES.secrets,
};

export type PolicyList =
  | { readonly state: 'listed'; readonly policies: readonly ReloadPolicyView[] }
  | { readonly state: 'unlisted'; readonly why: string };

export type BaselineStoreList =
  | { readonly state: 'listed'; readonly objects: readonly StoreObject[] }
  | { readonly state: 'forbidden'; readonly message: string };

export interface ExplainReaderDeps {
  readonly transport: KubeTransport;
}

function isStatus(error: unknown, status: number): error is ApiError {
  return error instanceof ApiError && error.status === status;
}

export class ExplainReader {
  readonly #transport: KubeTransport;

  constructor(deps: ExplainReaderDeps) {
    this.#transport = deps.transport;
  }

  async #get(
    path: string,
    query: Readonly<Record<string, string | undefined>> = {},
  ): Promise<ObjectRead> {
    try {
      const answer = await this.#transport.request({ method: HttpMethod.GET, path, query });
      if (!isJsonObject(answer))
        throw new ApiError(`unexpected answer to GET ${path}`, { retryable: false });
      return { state: 'found', object: answer };
    } catch (error) {
      if (isStatus(error, 404)) return { state: 'not-found' };
      if (isStatus(error, 403)) return { state: 'forbidden', message: error.message };
      throw error;
    }
  }

  /**
   * The pods of a roll by eviction and, for a Deployment or Rollout, their ReplicaSets, by label
   * selector; undefined when explain may not list them (403).
   */
  async listPodsOf(
    namespace: string,
    selector: string,
    withReplicaSets: boolean,
  ): Promise<
    | { readonly pods: readonly JsonObject[]; readonly replicaSets: readonly JsonObject[] }
    | undefined
  > {
    const pods = new KubePodClient({ transport: this.#transport });
    try {
      return {
        replicaSets: withReplicaSets ? await pods.listReplicaSets(namespace, selector) : [],
        pods: await pods.listPods(namespace, selector),
      };
    } catch (error) {
      if (isStatus(error, 403)) return undefined;
      throw error;
    }
  }

  readWorkload(row: WorkloadKindRow, namespace: string, name: string): Promise<ObjectRead> {
    return this.#get(resourcePath(workloadResource(row), { namespace, name }));
  }

  /** Items of a namespace's list; `not-found` when the API is not served (an absent CRD). */
  async listWorkloads(row: WorkloadKindRow, namespace: string): Promise<readonly JsonObject[]> {
    const read = await this.#get(resourcePath(workloadResource(row), { namespace }));
    return read.state === 'found' ? objectsAt(read.object, ['items']) : [];
  }

  readDeployment(namespace: string, name: string): Promise<ObjectRead> {
    return this.readWorkload(kindRow('Deployment'), namespace, name);
  }

  /** Whether --namespace-selector selects the namespace, as the controller's Namespace watch sees it. */
  async namespaceSelected(namespace: string, selector: string): Promise<boolean | 'forbidden'> {
    const read = await this.#get(resourcePath(OTHER_RESOURCES.namespaces), {
      labelSelector: selector,
      fieldSelector: `metadata.name=${namespace}`,
    });
    if (read.state === 'forbidden') return 'forbidden';
    return read.state === 'found' && objectsAt(read.object, ['items']).length > 0;
  }

  async readSource(
    namespace: string,
    type: SourceType,
    name: string,
    options: Options,
  ): Promise<SourceRead> {
    try {
      if (type === 'SECRETPROVIDERCLASS')
        return await this.#readProviderClass(namespace, name, options);
      return await this.#readObjectSource(namespace, RESOURCE_OF_TYPE[type], name, options);
    } catch (error) {
      if (error instanceof ApiError) return { state: 'unreadable' };
      throw error;
    }
  }

  /**
   * The baseline store's ConfigMaps in kreload's namespace (docs/adr/0046), projected as the
   * controller keeps them: names, watched namespaces and records (hashes only).
   */
  async baselineStore(namespace: string): Promise<BaselineStoreList> {
    const read = await this.#get(resourcePath(OTHER_RESOURCES.configMaps, { namespace }), {
      labelSelector: BASELINE_STORE_SELECTOR,
    });
    if (read.state === 'forbidden') return { state: 'forbidden', message: read.message };
    const items = read.state === 'found' ? objectsAt(read.object, ['items']) : [];
    return { state: 'listed', objects: items.map(projectStoreObject) };
  }

  /** The namespace's ReloadPolicies, or why explain cannot list them (RBAC, CRD absent). */
  async reloadPolicies(namespace: string): Promise<PolicyList> {
    const read = await this.#get(resourcePath(OTHER_RESOURCES.reloadPolicies, { namespace }));
    if (read.state === 'forbidden')
      return { state: 'unlisted', why: `forbidden (${read.message})` };
    if (read.state === 'not-found') {
      return { state: 'unlisted', why: 'the ReloadPolicy API (kreload.io/v1alpha1) is not served' };
    }
    const policies = objectsAt(read.object, ['items']).flatMap(
      (item) => projectReloadPolicy(item) ?? [],
    );
    return { state: 'listed', policies };
  }

  /** Names and labels of the sources the controller's watch delivers (policy selectors). */
  async sourceCatalog(
    namespace: string,
    type: SourceType,
    options: Options,
  ): Promise<readonly NamedObject<SourceType>[] | 'forbidden'> {
    const read =
      type === 'SECRETPROVIDERCLASS'
        ? await this.#get(resourcePath(OTHER_RESOURCES.secretProviderClasses, { namespace }))
        : await this.#filteredList(namespace, RESOURCE_OF_TYPE[type], options);
    if (read.state === 'forbidden') return 'forbidden';
    if (read.state === 'not-found') return [];
    return objectsAt(read.object, ['items']).flatMap((item) => {
      const name = stringAt(item, ['metadata', 'name']);
      return name === undefined ? [] : [{ kind: type, name, labels: keptLabels(item, true) }];
    });
  }

  #filteredList(namespace: string, resource: SourceResource, options: Options) {
    const target = sourceWatchTargets(options, resource)[0];
    return this.#get(resourcePath(API_RESOURCE[resource], { namespace }), {
      labelSelector: target?.labelSelector,
      fieldSelector: target?.fieldSelector,
    });
  }

  /** Names the controller's watch delivers in the namespace (reload-list candidates, §9.2 (b)). */
  async sourceNames(
    namespace: string,
    type: SourceType,
    options: Options,
  ): Promise<readonly string[] | 'forbidden'> {
    if (type === 'SECRETPROVIDERCLASS') {
      const read = await this.#get(
        resourcePath(OTHER_RESOURCES.secretProviderClasses, { namespace }),
      );
      if (read.state === 'forbidden') return 'forbidden';
      return read.state === 'found' ? namesOf(read.object) : [];
    }
    const resource = RESOURCE_OF_TYPE[type];
    const target = sourceWatchTargets(options, resource)[0];
    const read = await this.#get(resourcePath(API_RESOURCE[resource], { namespace }), {
      labelSelector: target?.labelSelector,
      fieldSelector: target?.fieldSelector,
    });
    if (read.state === 'forbidden') return 'forbidden';
    return read.state === 'found' ? namesOf(read.object) : [];
  }

  async #readObjectSource(
    namespace: string,
    resource: SourceResource,
    name: string,
    options: Options,
  ): Promise<SourceRead> {
    const api = API_RESOURCE[resource];
    const read = await this.#get(resourcePath(api, { namespace, name }));
    if (read.state === 'not-found') return { state: 'absent' };
    if (read.state === 'forbidden') return { state: 'forbidden' };
    // The controller's own settings: policy source selectors read the labels it keeps.
    const keys = sourceKeysOf(projectionSettings(options));
    const view =
      resource === 'configmaps'
        ? projectConfigMap(read.object, keys)
        : projectSecret(read.object, keys);
    if (view === undefined) return { state: 'unreadable' };
    const unwatched = await this.#unwatched(namespace, resource, name, options);
    return unwatched === undefined
      ? { state: 'present', view }
      : { state: 'present', view, unwatched };
  }

  /** Asks the API server whether the controller's filtered list would hold the object. */
  async #unwatched(
    namespace: string,
    resource: SourceResource,
    name: string,
    options: Options,
  ): Promise<'resource-label-selector' | 'secret-type-not-watched' | undefined> {
    const target = sourceWatchTargets(options, resource)[0];
    if (target?.labelSelector === undefined && target?.fieldSelector === undefined)
      return undefined;
    const path = resourcePath(API_RESOURCE[resource], { namespace });
    const byName = `metadata.name=${name}`;
    const held = async (labelSelector: string | undefined, fieldSelector: string | undefined) => {
      const read = await this.#get(path, {
        labelSelector,
        fieldSelector: fieldSelector === undefined ? byName : `${fieldSelector},${byName}`,
      });
      return read.state === 'found' && objectsAt(read.object, ['items']).length > 0;
    };
    if (await held(target.labelSelector, target.fieldSelector)) return undefined;
    if (target.labelSelector !== undefined && !(await held(target.labelSelector, undefined))) {
      return 'resource-label-selector';
    }
    return 'secret-type-not-watched';
  }

  /** §4.4: the SPC supplies S; the SPCPS the controller would choose supplies the hash. */
  async #readProviderClass(namespace: string, name: string, options: Options): Promise<SourceRead> {
    const keys = sourceKeysOf(projectionSettings(options));
    const spc = await this.#get(
      resourcePath(OTHER_RESOURCES.secretProviderClasses, { namespace, name }),
    );
    if (spc.state === 'forbidden') return { state: 'forbidden' };
    const metadata =
      spc.state === 'found' ? projectSecretProviderClass(spc.object, keys) : undefined;
    const statuses = await this.#get(
      resourcePath(OTHER_RESOURCES.secretProviderClassPodStatuses, { namespace }),
    );
    if (statuses.state === 'forbidden') return { state: 'forbidden' };
    if (statuses.state === 'not-found') return { state: 'absent' };
    const entries = objectsAt(statuses.object, ['items'])
      .map((item) => projectSecretProviderClassPodStatus(item))
      .filter((view) => view?.className === name)
      .flatMap((view) => (view === undefined ? [] : [{ view, seenAt: 0 }]));
    const chosen = desiredPodStatus(entries);
    if (chosen === undefined) return { state: 'absent' };
    return {
      state: 'present',
      view: providerClassSourceView(chosen, metadata?.annotations ?? {}, metadata?.labels),
    };
  }
}

function namesOf(list: JsonObject): string[] {
  return objectsAt(list, ['items']).flatMap((item) => stringAt(item, ['metadata', 'name']) ?? []);
}
