/**
 * The bench's own view of the workloads of one run (admin identity, label-selected): every pod
 * template it sees, timestamped on arrival, and the ReplicaSets Deployments get (S12's rollouts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeRaw } from './kube-raw.ts';
import { isRecord, ListWatch, type KubeObject, type ListWatchEvent } from './list-watch.ts';
import {
  collectionPath,
  REPLICA_SETS,
  WORKLOAD_KINDS,
  WORKLOAD_RESOURCES,
  workloadKey,
  type WorkloadKind,
} from './resources.ts';
import type { ReplicaSetHistory, ReplicaSetSnapshot } from './rollout-completion.ts';
import { fingerprint } from './signals.ts';

export interface TemplateRecord {
  readonly at: number;
  readonly template: unknown;
}

export interface ObservedWorkload {
  readonly key: string;
  /** First template seen, then one record per template change. */
  readonly templates: readonly TemplateRecord[];
  readonly firstSeenAt: number;
  readonly deletedAt: number | undefined;
}

interface MutableWorkload {
  key: string;
  templates: TemplateRecord[];
  lastFingerprint: string;
  firstSeenAt: number;
  deletedAt: number | undefined;
}

function templateOf(object: KubeObject): unknown {
  return isRecord(object.spec) ? object.spec.template : undefined;
}

/** A ReplicaSet's template is its Deployment's plus the `pod-template-hash` label. */
function withoutTemplateHash(template: unknown): unknown {
  if (!isRecord(template) || !isRecord(template.metadata)) return template;
  const labels = isRecord(template.metadata.labels) ? { ...template.metadata.labels } : undefined;
  if (labels !== undefined) Reflect.deleteProperty(labels, 'pod-template-hash');
  return { ...template, metadata: { ...template.metadata, labels } };
}

/** A ReplicaSet with its template and every status seen, for the rollout-completion figures. */
export interface ObservedReplicaSet extends ReplicaSetHistory {
  readonly template: unknown;
}

interface MutableReplicaSet {
  readonly uid: string;
  readonly firstSeenAt: number;
  readonly template: unknown;
  readonly snapshots: ReplicaSetSnapshot[];
}

function count(status: Record<string, unknown>, field: string): number {
  const value = status[field];
  return typeof value === 'number' ? value : 0;
}

function snapshotOf(object: KubeObject, at: number, deleted: boolean): ReplicaSetSnapshot {
  const status = isRecord(object.status) ? object.status : {};
  if (deleted) return { at, replicas: 0, ready: 0, available: 0 };
  return {
    at,
    replicas: count(status, 'replicas'),
    ready: count(status, 'readyReplicas'),
    available: count(status, 'availableReplicas'),
  };
}

function deploymentOwner(object: KubeObject): string | undefined {
  return object.metadata.ownerReferences?.find((owner) => owner.kind === 'Deployment')?.name;
}

export class TemplateObserver {
  readonly #raw: KubeRaw;
  readonly #kc: KubeConfig;
  readonly #labelSelector: string;
  readonly #clock: () => number;
  readonly #workloads = new Map<string, MutableWorkload>();
  /** `ns/deployment` → creation times of its ReplicaSets (as first seen). */
  readonly #replicaSets = new Map<string, number[]>();
  /** `ns/deployment` → fingerprints of its ReplicaSets' templates. */
  readonly #replicaSetTemplates = new Map<string, Set<string>>();
  /** `ns/deployment` → its ReplicaSets by uid, with every status seen. */
  readonly #replicaSetHistories = new Map<string, Map<string, MutableReplicaSet>>();
  readonly #watches: ListWatch[] = [];
  readonly #listeners = new Set<() => void>();
  readonly #onReplicaSetEvent: ((event: ListWatchEvent) => void) | undefined;
  #errors = 0;

  constructor(deps: {
    raw: KubeRaw;
    kc: KubeConfig;
    labelSelector: string;
    clock: () => number;
    /** Every ReplicaSet event as it arrives (the rollouts-in-flight sampler). */
    onReplicaSetEvent?: (event: ListWatchEvent) => void;
  }) {
    this.#raw = deps.raw;
    this.#kc = deps.kc;
    this.#labelSelector = deps.labelSelector;
    this.#clock = deps.clock;
    this.#onReplicaSetEvent = deps.onReplicaSetEvent;
  }

  /** Resolves once every watched kind has been listed. */
  async start(): Promise<void> {
    const kinds = WORKLOAD_KINDS.map((kind) => ({
      path: collectionPath(WORKLOAD_RESOURCES[kind]),
      onEvent: (event: ListWatchEvent) => {
        this.#onWorkload(kind, event);
      },
    }));
    const replicaSets = {
      path: collectionPath(REPLICA_SETS),
      onEvent: (event: ListWatchEvent) => {
        this.#onReplicaSet(event);
      },
    };
    for (const { path, onEvent } of [...kinds, replicaSets]) {
      this.#watches.push(
        new ListWatch({
          raw: this.#raw,
          kc: this.#kc,
          path,
          labelSelector: this.#labelSelector,
          onEvent,
          onError: () => {
            this.#errors += 1;
          },
        }),
      );
    }
    await Promise.all(this.#watches.map((watch) => watch.start()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#watches.map((watch) => watch.stop()));
    this.#listeners.clear();
  }

  get watchErrors(): number {
    return this.#errors;
  }

  /** Called after every recorded change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  workload(key: string): ObservedWorkload | undefined {
    return this.#workloads.get(key);
  }

  /** Total template changes recorded (initial templates excluded). */
  rollCount(): number {
    let total = 0;
    for (const workload of this.#workloads.values()) total += workload.templates.length - 1;
    return total;
  }

  replicaSetTimes(namespace: string, deployment: string): readonly number[] {
    return this.#replicaSets.get(`${namespace}/${deployment}`) ?? [];
  }

  /** Whether the Deployment has a ReplicaSet for this template: the template was rolled out. */
  hasReplicaSetFor(namespace: string, deployment: string, template: unknown): boolean {
    return (
      this.#replicaSetTemplates
        .get(`${namespace}/${deployment}`)
        ?.has(fingerprint(withoutTemplateHash(template))) ?? false
    );
  }

  /** The Deployment's ReplicaSets with every status the bench saw, oldest first. */
  replicaSets(namespace: string, deployment: string): readonly ObservedReplicaSet[] {
    return [...(this.#replicaSetHistories.get(`${namespace}/${deployment}`)?.values() ?? [])];
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }

  #onWorkload(kind: WorkloadKind, event: ListWatchEvent): void {
    const { metadata } = event.object;
    const key = workloadKey(kind, metadata.namespace ?? '', metadata.name);
    const at = this.#clock();
    const known = this.#workloads.get(key);
    if (event.type === 'DELETED') {
      if (known !== undefined) known.deletedAt ??= at;
      this.#notify();
      return;
    }
    const template = templateOf(event.object);
    const print = fingerprint(template);
    if (known === undefined) {
      this.#workloads.set(key, {
        key,
        templates: [{ at, template }],
        lastFingerprint: print,
        firstSeenAt: at,
        deletedAt: undefined,
      });
    } else if (known.lastFingerprint !== print) {
      known.templates.push({ at, template });
      known.lastFingerprint = print;
    } else {
      return;
    }
    this.#notify();
  }

  #onReplicaSet(event: ListWatchEvent): void {
    this.#onReplicaSetEvent?.(event);
    const owner = deploymentOwner(event.object);
    if (owner === undefined) return;
    const id = `${event.object.metadata.namespace ?? ''}/${owner}`;
    this.#recordStatus(id, event);
    if (event.type !== 'ADDED') return;
    const times = this.#replicaSets.get(id) ?? [];
    times.push(this.#clock());
    this.#replicaSets.set(id, times);
    const templates = this.#replicaSetTemplates.get(id) ?? new Set<string>();
    templates.add(fingerprint(withoutTemplateHash(templateOf(event.object))));
    this.#replicaSetTemplates.set(id, templates);
  }

  #recordStatus(id: string, event: ListWatchEvent): void {
    const uid = event.object.metadata.uid ?? event.object.metadata.name;
    const at = this.#clock();
    const histories = this.#replicaSetHistories.get(id) ?? new Map<string, MutableReplicaSet>();
    this.#replicaSetHistories.set(id, histories);
    let history = histories.get(uid);
    if (history === undefined) {
      history = { uid, firstSeenAt: at, template: templateOf(event.object), snapshots: [] };
      histories.set(uid, history);
    }
    history.snapshots.push(snapshotOf(event.object, at, event.type === 'DELETED'));
    this.#notify();
  }
}
