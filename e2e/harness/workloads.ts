// One row per workload kind kreload rolls by patching the pod template (spec §7.1). Specs run
// `describe.each(WORKLOAD_KINDS)` and read every kind through the same view, so a new kind is a
// new row, not a new spec. Pods never start unless a spec makes them runnable (pod-lifecycle.ts):
// the evidence of a roll is the object itself plus what kube-controller-manager derives from a
// template change.
import {
  AppsV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Container,
  type V1ControllerRevision,
  type V1ObjectMeta,
  type V1PodSpec,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { BaselineStoreReader } from './baseline-store.ts';
import { pollUntil, PollTimeoutError } from './poll.ts';

/** Never pulled: kwok plays the kubelet of the test cluster's fake nodes. */
export const TEST_IMAGE = 'registry.invalid/pause:3.10';

export type WorkloadKindName = 'Deployment' | 'StatefulSet' | 'DaemonSet';

export interface WorkloadRef {
  readonly kind: WorkloadKindName;
  readonly namespace: string;
  readonly name: string;
}

export interface WorkloadSpec {
  readonly namespace: string;
  readonly name: string;
  readonly podSpec: V1PodSpec;
  /** W: the workload's metadata.annotations. */
  readonly annotations?: Readonly<Record<string, string>>;
  /** PT: spec.template.metadata.annotations. */
  readonly templateAnnotations?: Readonly<Record<string, string>>;
  /** Deployment only: spec.paused. */
  readonly paused?: boolean;
  /** metadata.labels (ReloadPolicy target selectors read them). */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Deployment and StatefulSet spec.replicas; 0 unless set (a template change still makes a new
   * revision, and no Pods load the API). Pods run only with a runnable pod spec (pod-lifecycle.ts).
   */
  readonly replicas?: number;
  /** Deployment spec.progressDeadlineSeconds (Kubernetes' default, 600, unless set). */
  readonly progressDeadlineSeconds?: number;
}

export interface ContainerView {
  readonly name: string;
  /** Variables with a literal value (valueFrom entries are references, not state). */
  readonly env: Readonly<Record<string, string>>;
}

/** What a spec asserts on: the parts of a workload kreload reads or writes. */
export interface WorkloadView {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number;
  readonly annotations: Readonly<Record<string, string>>;
  readonly templateAnnotations: Readonly<Record<string, string>>;
  readonly containers: readonly ContainerView[];
  readonly initContainers: readonly ContainerView[];
  /** Deployment spec.paused; false for the other kinds. */
  readonly paused: boolean;
}

/** What kube-controller-manager made of the template history. */
export interface RevisionEvidence {
  /** ReplicaSets (Deployment) or ControllerRevisions (StatefulSet, DaemonSet) the workload owns. */
  readonly revisions: number;
  readonly generation: number;
  readonly observedGeneration: number;
  /** StatefulSet status.updateRevision. */
  readonly updateRevision?: string;
}

interface WorkloadObject {
  readonly metadata?: V1ObjectMeta;
  readonly spec?: { readonly template: V1PodTemplateSpec; readonly paused?: boolean };
  readonly status?: { readonly observedGeneration?: number; readonly updateRevision?: string };
}

export interface WorkloadKindRow {
  readonly kind: WorkloadKindName;
  /** Resource name in API paths, audit events and kreload's metric labels. */
  readonly resource: 'deployments' | 'statefulsets' | 'daemonsets';
  /** Short, for object names: `dep`, `sts`, `ds`. */
  readonly short: string;
  /**
   * kube-apiserver bumps a Deployment's generation on every change of its annotations too (a
   * legacy of rollback annotations), so kreload's metadata-only baseline patch moves it; the other
   * kinds bump it for spec changes only.
   */
  readonly annotationChangeBumpsGeneration: boolean;
  create(apps: AppsV1Api, spec: WorkloadSpec): Promise<void>;
  read(apps: AppsV1Api, ref: WorkloadRef): Promise<WorkloadObject>;
  /** Strategic merge patch as the admin, e.g. a GitOps tool reverting kreload's change. */
  patch(apps: AppsV1Api, ref: WorkloadRef, body: object): Promise<void>;
  /** ReplicaSets or ControllerRevisions whose controller is the workload with `uid`. */
  countRevisions(apps: AppsV1Api, ref: WorkloadRef, uid: string): Promise<number>;
}

const strategicMerge = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

function templateOf(spec: WorkloadSpec): V1PodTemplateSpec {
  return {
    metadata: { labels: { app: spec.name }, annotations: { ...spec.templateAnnotations } },
    spec: spec.podSpec,
  };
}

function metadataOf(spec: WorkloadSpec): V1ObjectMeta {
  return {
    name: spec.name,
    annotations: { ...spec.annotations },
    ...(spec.labels === undefined ? {} : { labels: { ...spec.labels } }),
  };
}

function ownedBy(uid: string, owners: V1ObjectMeta['ownerReferences']): boolean {
  return owners?.some((owner) => owner.uid === uid && owner.controller === true) === true;
}

async function countControllerRevisions(
  apps: AppsV1Api,
  ref: WorkloadRef,
  uid: string,
): Promise<number> {
  const { items } = await apps.listNamespacedControllerRevision({
    namespace: ref.namespace,
    labelSelector: `app=${ref.name}`,
  });
  return items.filter((r: V1ControllerRevision) => ownedBy(uid, r.metadata?.ownerReferences))
    .length;
}

export const WORKLOAD_KINDS: readonly WorkloadKindRow[] = [
  {
    kind: 'Deployment',
    resource: 'deployments',
    short: 'dep',
    annotationChangeBumpsGeneration: true,
    async create(apps, spec) {
      await apps.createNamespacedDeployment({
        namespace: spec.namespace,
        body: {
          metadata: metadataOf(spec),
          spec: {
            replicas: spec.replicas ?? 0,
            paused: spec.paused ?? false,
            ...(spec.progressDeadlineSeconds === undefined
              ? {}
              : { progressDeadlineSeconds: spec.progressDeadlineSeconds }),
            selector: { matchLabels: { app: spec.name } },
            template: templateOf(spec),
          },
        },
      });
    },
    read: (apps, ref) => apps.readNamespacedDeployment(ref),
    async patch(apps, ref, body) {
      await apps.patchNamespacedDeployment({ ...ref, body }, strategicMerge);
    },
    async countRevisions(apps, ref, uid) {
      const { items } = await apps.listNamespacedReplicaSet({
        namespace: ref.namespace,
        labelSelector: `app=${ref.name}`,
      });
      return items.filter((rs) => ownedBy(uid, rs.metadata?.ownerReferences)).length;
    },
  },
  {
    kind: 'StatefulSet',
    resource: 'statefulsets',
    short: 'sts',
    annotationChangeBumpsGeneration: false,
    async create(apps, spec) {
      await apps.createNamespacedStatefulSet({
        namespace: spec.namespace,
        body: {
          metadata: metadataOf(spec),
          spec: {
            replicas: spec.replicas ?? 0,
            serviceName: spec.name,
            selector: { matchLabels: { app: spec.name } },
            template: templateOf(spec),
          },
        },
      });
    },
    read: (apps, ref) => apps.readNamespacedStatefulSet(ref),
    async patch(apps, ref, body) {
      await apps.patchNamespacedStatefulSet({ ...ref, body }, strategicMerge);
    },
    countRevisions: countControllerRevisions,
  },
  {
    kind: 'DaemonSet',
    resource: 'daemonsets',
    short: 'ds',
    annotationChangeBumpsGeneration: false,
    async create(apps, spec) {
      await apps.createNamespacedDaemonSet({
        namespace: spec.namespace,
        body: {
          metadata: metadataOf(spec),
          spec: { selector: { matchLabels: { app: spec.name } }, template: templateOf(spec) },
        },
      });
    },
    read: (apps, ref) => apps.readNamespacedDaemonSet(ref),
    async patch(apps, ref, body) {
      await apps.patchNamespacedDaemonSet({ ...ref, body }, strategicMerge);
    },
    countRevisions: countControllerRevisions,
  },
];

export function kindRow(kind: WorkloadKindName): WorkloadKindRow {
  const row = WORKLOAD_KINDS.find((candidate) => candidate.kind === kind);
  if (row === undefined) throw new Error(`no workload row for ${kind}`);
  return row;
}

function containerViews(containers: readonly V1Container[] | undefined): ContainerView[] {
  return (containers ?? []).map((container) => ({
    name: container.name,
    env: Object.fromEntries(
      (container.env ?? []).flatMap((variable) =>
        variable.value === undefined ? [] : [[variable.name, variable.value]],
      ),
    ),
  }));
}

/**
 * Annotations Kubernetes itself keeps on workloads (the Deployment revision, the DaemonSet
 * template generation): not kreload's, not the user's, so views leave them out.
 */
const SYSTEM_ANNOTATION =
  /^(deployment\.kubernetes\.io\/|deprecated\.daemonset\.template\.generation$)/;

function userAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(annotations ?? {}).filter(([key]) => !SYSTEM_ANNOTATION.test(key)),
  );
}

export function viewOf(object: WorkloadObject): WorkloadView {
  const template = object.spec?.template;
  return {
    uid: object.metadata?.uid ?? '',
    resourceVersion: object.metadata?.resourceVersion ?? '',
    generation: object.metadata?.generation ?? 0,
    annotations: userAnnotations(object.metadata?.annotations),
    templateAnnotations: { ...template?.metadata?.annotations },
    containers: containerViews(template?.spec?.containers),
    initContainers: containerViews(template?.spec?.initContainers),
    paused: object.spec?.paused === true,
  };
}

/** The view a freshly created workload has before anybody else writes to it. */
export function viewOfSpec(spec: WorkloadSpec): Omit<WorkloadView, 'uid' | 'resourceVersion'> {
  return {
    generation: 1,
    annotations: { ...spec.annotations },
    templateAnnotations: { ...spec.templateAnnotations },
    containers: containerViews(spec.podSpec.containers),
    initContainers: containerViews(spec.podSpec.initContainers),
    paused: spec.paused === true,
  };
}

/** The adapter table bound to one admin client. */
export class WorkloadClient {
  readonly #apps: AppsV1Api;
  /** Where kreload keeps the baselines of workloads it never rolled (docs/adr/0046). */
  readonly baselines: BaselineStoreReader;

  constructor(deps: { kc: KubeConfig }) {
    this.#apps = deps.kc.makeApiClient(AppsV1Api);
    this.baselines = new BaselineStoreReader(deps);
  }

  async create(kind: WorkloadKindName, spec: WorkloadSpec): Promise<WorkloadRef> {
    await kindRow(kind).create(this.#apps, spec);
    return { kind, namespace: spec.namespace, name: spec.name };
  }

  async read(ref: WorkloadRef): Promise<WorkloadView> {
    return viewOf(await kindRow(ref.kind).read(this.#apps, ref));
  }

  patch(ref: WorkloadRef, body: object): Promise<void> {
    return kindRow(ref.kind).patch(this.#apps, ref, body);
  }

  async revisions(ref: WorkloadRef): Promise<RevisionEvidence> {
    const row = kindRow(ref.kind);
    const object = await row.read(this.#apps, ref);
    const uid = object.metadata?.uid ?? '';
    return {
      revisions: await row.countRevisions(this.#apps, ref, uid),
      generation: object.metadata?.generation ?? 0,
      observedGeneration: object.status?.observedGeneration ?? 0,
      ...(object.status?.updateRevision === undefined
        ? {}
        : { updateRevision: object.status.updateRevision }),
    };
  }

  /**
   * Waits until kube-controller-manager observed the current generation and recorded at least
   * `atLeast` revisions (it creates the ReplicaSet or ControllerRevision of a template before it
   * records observedGeneration). Under load the DaemonSet controller can report the new generation a
   * moment before its newest ControllerRevision is listed, so callers pass the count they will
   * assert: fewer still times out and fails, more still fails their exact check. The timeout is
   * generous because a controller that met errors retries with exponential backoff; a timeout names
   * what was last seen.
   */
  async settledRevisions(
    ref: WorkloadRef,
    atLeast = 1,
    timeoutMs = 60_000,
  ): Promise<RevisionEvidence> {
    try {
      return await this.#pollRevisions(ref, atLeast, timeoutMs);
    } catch (error) {
      if (!(error instanceof PollTimeoutError)) throw error;
      throw new PollTimeoutError(`${error.message}\n${await this.#diagnosis(ref)}`, {
        cause: error,
      });
    }
  }

  /** What the workload and its revisions look like: for a timeout message, not for assertions. */
  async #diagnosis(ref: WorkloadRef): Promise<string> {
    try {
      const object = (await kindRow(ref.kind).read(this.#apps, ref)) as unknown as {
        metadata?: V1ObjectMeta;
        spec?: { paused?: boolean; template?: V1PodTemplateSpec };
        status?: unknown;
      };
      const containers = (object.spec?.template?.spec?.containers ?? []).map((c) => ({
        name: c.name,
        env: (c.env ?? []).map((e) => e.name),
      }));
      const owned =
        ref.kind === 'Deployment'
          ? (
              await this.#apps.listNamespacedReplicaSet({
                namespace: ref.namespace,
                labelSelector: `app=${ref.name}`,
              })
            ).items.map((rs) => ({
              name: rs.metadata?.name,
              owners: rs.metadata?.ownerReferences?.map((o) => o.uid),
              revision: rs.metadata?.annotations?.['deployment.kubernetes.io/revision'],
            }))
          : (
              await this.#apps.listNamespacedControllerRevision({
                namespace: ref.namespace,
                labelSelector: `app=${ref.name}`,
              })
            ).items.map((r) => ({
              name: r.metadata?.name,
              owners: r.metadata?.ownerReferences?.map((o) => o.uid),
              revision: r.revision,
            }));
      return `workload: ${JSON.stringify({
        uid: object.metadata?.uid,
        deletionTimestamp: object.metadata?.deletionTimestamp,
        annotations: object.metadata?.annotations,
        paused: object.spec?.paused,
        containers,
        status: object.status,
      })}\nrevisions: ${JSON.stringify(owned)}`;
    } catch (error) {
      return `no diagnosis: ${String(error)}`;
    }
  }

  #pollRevisions(ref: WorkloadRef, atLeast: number, timeoutMs: number): Promise<RevisionEvidence> {
    return pollUntil(
      async () => {
        const evidence = await this.revisions(ref);
        if (evidence.observedGeneration >= evidence.generation && evidence.revisions >= atLeast) {
          return evidence;
        }
        throw new Error(
          `last seen: generation ${String(evidence.generation)}, observedGeneration ` +
            `${String(evidence.observedGeneration)}, ${String(evidence.revisions)} revision(s) ` +
            `(want ≥ ${String(atLeast)})`,
        );
      },
      {
        timeoutMs,
        describe: `kube-controller-manager to observe generation of ${ref.kind} ${ref.namespace}/${ref.name}`,
      },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Pod specs: two regular containers, so container selection (§3.6) is visible in every case.

export const APP = 'app';
export const SIDECAR = 'sidecar';

export function container(
  name: string,
  extra: Omit<V1Container, 'name' | 'image'> = {},
): V1Container {
  return { name, image: TEST_IMAGE, ...extra };
}

/** `app` and `sidecar`, either with the given extras (references), plus optional init/volumes. */
export function podSpec(parts: {
  readonly app?: Omit<V1Container, 'name' | 'image'>;
  readonly sidecar?: Omit<V1Container, 'name' | 'image'>;
  readonly init?: Omit<V1Container, 'name' | 'image'>;
  readonly volumes?: V1PodSpec['volumes'];
}): V1PodSpec {
  return {
    ...(parts.init === undefined ? {} : { initContainers: [container('init', parts.init)] }),
    containers: [container(APP, parts.app), container(SIDECAR, parts.sidecar)],
    ...(parts.volumes === undefined ? {} : { volumes: parts.volumes }),
  };
}
