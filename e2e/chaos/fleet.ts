// The fixed fleet of the fault suite: every kind kreload rolls, all tracking one ConfigMap through
// envFrom and `reloader.stakater.com/auto`, in one namespace, read back with one LIST per resource
// however large the fleet is. A snapshot records what a roll leaves behind per workload: the hash
// in the rolled state, ReplicaSets/ControllerRevisions (apps kinds), the Job (Jobs) and the Jobs a
// CronJob owns (CronJobs). checks.ts turns two snapshots into missed and duplicated rollouts.
import {
  AppsV1Api,
  BatchV1Api,
  type KubeConfig,
  type V1ObjectMeta,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { AUTO, SOURCE_HASHES } from '../harness/annotations.ts';
import { crashOnConfig, runnable } from '../harness/pod-lifecycle.ts';
import { envVarName, sourceKey, SourceClient, type SourceRef } from '../harness/sources.ts';
import { podSpec, WorkloadClient, type WorkloadKindName } from '../harness/workloads.ts';

export type ChaosKind = WorkloadKindName | 'CronJob' | 'Job';

/** How many workloads of each kind; the fleet is FULL_FLEET. */
export type FleetShape = Readonly<Record<ChaosKind, number>>;

export const FULL_FLEET: FleetShape = {
  Deployment: 40,
  StatefulSet: 5,
  DaemonSet: 5,
  CronJob: 10,
  Job: 5,
};

/** The smoke subset's fleet: every kind, small enough for 2 shared cores. */
export const SMALL_FLEET: FleetShape = {
  Deployment: 4,
  StatefulSet: 1,
  DaemonSet: 1,
  CronJob: 2,
  Job: 2,
};

const KIND_SHORT: Readonly<Record<ChaosKind, string>> = {
  Deployment: 'dep',
  StatefulSet: 'sts',
  DaemonSet: 'ds',
  CronJob: 'cj',
  Job: 'job',
};

/** Never fires (31 February): every Job a CronJob owns was created by kreload. */
const NEVER = '0 0 31 2 *';
const MANUAL_INSTANTIATE = 'cronjob.kubernetes.io/instantiate';
const CREATE_BATCH = 10;
/** The crashing canary's progress deadline: its failure shows 5 s after its roll. */
const CANARY_PROGRESS_DEADLINE_S = 5;

export interface WorkloadState {
  readonly kind: ChaosKind;
  readonly name: string;
  /** Apps kinds and Jobs: the ConfigMap hash in the rolled state (env var or source-hashes). */
  readonly applied: string | undefined;
  /** Apps kinds: ReplicaSets or ControllerRevisions the workload owns. */
  readonly revisions: number;
  /** Apps kinds: kube-controller-manager observed the current generation. */
  readonly settled: boolean;
  /** Jobs: the Job exists (a recreation that deleted it and never created it again: lost). */
  readonly present: boolean;
  /** Jobs: uid of the current object. */
  readonly uid: string;
  /** CronJobs: the applied hash of every Job it owns, one entry per Job (a run). */
  readonly runs: readonly string[];
}

export type FleetSnapshot = ReadonlyMap<string, WorkloadState>;

export interface ChaosFleetDeps {
  readonly kc: KubeConfig;
  readonly namespace: string;
  readonly shape: FleetShape;
  readonly configMap: string;
  /**
   * The first Deployment (every change's canary) gets one pod on the kwok nodes that crash-loops
   * when the ConfigMap's hash is this one, and a 5 s progress deadline: a change to that value
   * fails its canary (e2e/harness/pod-lifecycle.ts). The others keep 0 replicas.
   */
  readonly crashingCanaryOn?: string | undefined;
}

function ownerUid(metadata: V1ObjectMeta | undefined): string | undefined {
  return metadata?.ownerReferences?.find((ref) => ref.controller === true)?.uid;
}

/** Where a roll left the source's hash: an env var of any container, else a source-hashes map. */
export function appliedHash(
  source: SourceRef,
  template: V1PodTemplateSpec | undefined,
  metadata: V1ObjectMeta | undefined,
): string | undefined {
  const envVar = envVarName(source);
  for (const container of template?.spec?.containers ?? []) {
    const value = container.env?.find((variable) => variable.name === envVar)?.value;
    if (value !== undefined) return value;
  }
  for (const annotations of [template?.metadata?.annotations, metadata?.annotations]) {
    const raw = annotations?.[SOURCE_HASHES];
    if (raw === undefined) continue;
    const parsed: unknown = JSON.parse(raw);
    const value: unknown =
      typeof parsed === 'object' && parsed !== null
        ? Reflect.get(parsed, sourceKey(source))
        : undefined;
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function countByOwner(items: readonly { metadata?: V1ObjectMeta }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const owner = ownerUid(item.metadata);
    if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  return counts;
}

const NO_JOB = { present: false, uid: '', runs: [] as readonly string[] };

export class ChaosFleet {
  readonly #deps: ChaosFleetDeps;
  readonly #apps: AppsV1Api;
  readonly #batch: BatchV1Api;

  constructor(deps: ChaosFleetDeps) {
    this.#deps = deps;
    this.#apps = deps.kc.makeApiClient(AppsV1Api);
    this.#batch = deps.kc.makeApiClient(BatchV1Api);
  }

  get source(): SourceRef {
    return { type: 'CONFIGMAP', name: this.#deps.configMap };
  }

  get size(): number {
    return Object.values(this.#deps.shape).reduce((sum, count) => sum + count, 0);
  }

  /** `<short>-<index>` per kind, e.g. dep-00, cj-03. */
  names(kind: ChaosKind): string[] {
    return Array.from(
      { length: this.#deps.shape[kind] },
      (_unused, index) => `${KIND_SHORT[kind]}-${String(index).padStart(2, '0')}`,
    );
  }

  /** Every workload's name, all kinds. */
  allNames(): string[] {
    return (Object.keys(KIND_SHORT) as ChaosKind[]).flatMap((kind) => this.names(kind));
  }

  /** The ConfigMap with `data`, then every workload (batches of 10). */
  async create(data: Readonly<Record<string, string>>): Promise<void> {
    const { namespace } = this.#deps;
    await new SourceClient({ kc: this.#deps.kc }).create(namespace, {
      type: 'CONFIGMAP',
      name: this.#deps.configMap,
      data: { ...data },
    });
    const creations: (() => Promise<unknown>)[] = [];
    for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet'] as const) {
      for (const name of this.names(kind)) creations.push(() => this.#createApps(kind, name));
    }
    for (const name of this.names('CronJob')) creations.push(() => this.#createCronJob(name));
    for (const name of this.names('Job')) creations.push(() => this.#createJob(name));
    for (let start = 0; start < creations.length; start += CREATE_BATCH) {
      await Promise.all(creations.slice(start, start + CREATE_BATCH).map((create) => create()));
    }
  }

  #podSpec(restartPolicy?: 'Never'): ReturnType<typeof podSpec> {
    const spec = podSpec({
      app: { envFrom: [{ configMapRef: { name: this.#deps.configMap } }] },
    });
    if (restartPolicy !== undefined) spec.restartPolicy = restartPolicy;
    return spec;
  }

  async #createApps(kind: WorkloadKindName, name: string): Promise<void> {
    const crashOn = this.#deps.crashingCanaryOn;
    const canary = kind === 'Deployment' && name === this.names('Deployment')[0];
    await new WorkloadClient({ kc: this.#deps.kc }).create(kind, {
      namespace: this.#deps.namespace,
      name,
      annotations: { [AUTO]: 'true' },
      ...(crashOn !== undefined && canary
        ? {
            replicas: 1,
            progressDeadlineSeconds: CANARY_PROGRESS_DEADLINE_S,
            templateAnnotations: crashOnConfig(crashOn),
            podSpec: runnable(this.#podSpec()),
          }
        : { podSpec: this.#podSpec() }),
    });
  }

  async #createCronJob(name: string): Promise<void> {
    await this.#batch.createNamespacedCronJob({
      namespace: this.#deps.namespace,
      body: {
        metadata: { name, annotations: { [AUTO]: 'true' } },
        spec: {
          schedule: NEVER,
          jobTemplate: {
            spec: {
              template: { metadata: { labels: { app: name } }, spec: this.#podSpec('Never') },
            },
          },
        },
      },
    });
  }

  async #createJob(name: string): Promise<void> {
    await this.#batch.createNamespacedJob({
      namespace: this.#deps.namespace,
      body: {
        metadata: { name, annotations: { [AUTO]: 'true' } },
        spec: {
          // Pods never start (no kubelet): the Job stays active, as a long-running batch would.
          backoffLimit: 0,
          template: { metadata: { labels: { app: name } }, spec: this.#podSpec('Never') },
        },
      },
    });
  }

  /** Every workload's state, keyed `Kind/name`; seven LIST calls. */
  async snapshot(): Promise<FleetSnapshot> {
    const { namespace } = this.#deps;
    const [deployments, statefulSets, daemonSets, replicaSets, revisions, cronJobs, jobs] =
      await Promise.all([
        this.#apps.listNamespacedDeployment({ namespace }),
        this.#apps.listNamespacedStatefulSet({ namespace }),
        this.#apps.listNamespacedDaemonSet({ namespace }),
        this.#apps.listNamespacedReplicaSet({ namespace }),
        this.#apps.listNamespacedControllerRevision({ namespace }),
        this.#batch.listNamespacedCronJob({ namespace }),
        this.#batch.listNamespacedJob({ namespace }),
      ]);
    const revisionsByOwner = countByOwner([...replicaSets.items, ...revisions.items]);
    const states = new Map<string, WorkloadState>();
    const put = (state: WorkloadState): void => {
      states.set(`${state.kind}/${state.name}`, state);
    };
    const appsItems = [
      ...deployments.items.map((item) => ({ kind: 'Deployment' as const, item })),
      ...statefulSets.items.map((item) => ({ kind: 'StatefulSet' as const, item })),
      ...daemonSets.items.map((item) => ({ kind: 'DaemonSet' as const, item })),
    ];
    for (const { kind, item } of appsItems) {
      put({
        kind,
        name: item.metadata?.name ?? '',
        applied: appliedHash(this.source, item.spec?.template, undefined),
        revisions: revisionsByOwner.get(item.metadata?.uid ?? '') ?? 0,
        settled: (item.status?.observedGeneration ?? 0) >= (item.metadata?.generation ?? 0),
        ...NO_JOB,
      });
    }
    const runsByCronJob = new Map<string, string[]>();
    for (const job of jobs.items) {
      const owner = ownerUid(job.metadata);
      if (owner === undefined) {
        put({
          kind: 'Job',
          name: job.metadata?.name ?? '',
          applied: appliedHash(this.source, job.spec?.template, undefined),
          revisions: 0,
          settled: true,
          present: true,
          uid: job.metadata?.uid ?? '',
          runs: [],
        });
      } else if (job.metadata?.annotations?.[MANUAL_INSTANTIATE] === 'manual') {
        const runs = runsByCronJob.get(owner) ?? [];
        runs.push(appliedHash(this.source, job.spec?.template, job.metadata) ?? '');
        runsByCronJob.set(owner, runs);
      }
    }
    for (const cronJob of cronJobs.items) {
      put({
        kind: 'CronJob',
        name: cronJob.metadata?.name ?? '',
        applied: undefined,
        revisions: 0,
        settled: true,
        present: true,
        uid: cronJob.metadata?.uid ?? '',
        runs: runsByCronJob.get(cronJob.metadata?.uid ?? '') ?? [],
      });
    }
    for (const name of this.names('Job')) {
      if (!states.has(`Job/${name}`)) {
        put({ kind: 'Job', name, applied: undefined, revisions: 0, settled: true, ...NO_JOB });
      }
    }
    return states;
  }
}
