/**
 * In-memory PodApi: the pods and ReplicaSets of one namespace, with a stand-in ReplicaSet
 * controller. It records every request in order, answers LISTs by the `app=<name>` label, and
 * evicts as the API server would: the pod gets a deletionTimestamp (404 when it is gone, 409 when
 * another UID holds the name, 429 while a scripted PodDisruptionBudget refuses). `tick` plays the
 * controllers: terminating pods go, and each evicted pod gets a replacement that is Ready one tick
 * after it was created.
 */
import { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import type { PodApi } from '../reconcile/ports.ts';

export type PodRequest =
  | { readonly verb: 'list-pods' | 'list-replicasets'; readonly selector: string }
  | { readonly verb: 'evict'; readonly name: string; readonly uid: string };

interface SimulatedPod {
  readonly name: string;
  readonly uid: string;
  readonly createdAt: number;
  readonly owner: string;
  ready: boolean;
  deletedAt: number | undefined;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export class InMemoryPods implements PodApi {
  readonly requests: PodRequest[] = [];
  readonly #pods = new Map<string, SimulatedPod>();
  readonly #replicaSets: JsonObject[] = [];
  readonly #holds: string[] = [];
  #forbidden = new Set<PodRequest['verb']>();
  readonly #app: string;
  #created = 0;

  constructor(app: string) {
    this.#app = app;
  }

  addReplicaSet(uid: string, ownerUid: string): void {
    this.#replicaSets.push({
      metadata: {
        name: `${this.#app}-${uid}`,
        uid,
        labels: { app: this.#app },
        ownerReferences: [{ kind: 'Deployment', name: this.#app, uid: ownerUid, controller: true }],
      },
    });
  }

  addPod(name: string, owner: string, createdAt: number): void {
    this.#pods.set(name, {
      name,
      uid: `uid-${name}`,
      createdAt,
      owner,
      ready: true,
      deletedAt: undefined,
    });
  }

  /** Requests of these verbs answer 403, as without the chart's eviction RBAC; [] grants again. */
  forbid(...verbs: PodRequest['verb'][]): void {
    this.#forbidden = new Set(verbs);
  }

  #refused(verb: PodRequest['verb'], resource: string): Promise<never> | undefined {
    if (!this.#forbidden.has(verb)) return undefined;
    const action = verb === 'evict' ? 'create' : 'list';
    return Promise.reject(
      new ApiError(
        `${resource} is forbidden: User "system:serviceaccount:kreload-system:kreload" cannot ${action} resource "${resource}"`,
        { status: 403, retryable: false },
      ),
    );
  }

  /** The next evictions answer 429 with these reasons. */
  holdNext(...reasons: string[]): void {
    this.#holds.push(...reasons);
  }

  /** The controllers' move at `now`: terminating pods go, replacements created earlier get Ready. */
  tick(now: number): void {
    for (const pod of [...this.#pods.values()]) {
      if (pod.deletedAt !== undefined) {
        this.#pods.delete(pod.name);
        this.#created += 1;
        const name = `${this.#app}-r${String(this.#created)}`;
        this.#pods.set(name, {
          name,
          uid: `uid-${name}`,
          createdAt: now,
          owner: pod.owner,
          ready: false,
          deletedAt: undefined,
        });
      } else if (!pod.ready && pod.createdAt < now) {
        pod.ready = true;
      }
    }
  }

  names(): string[] {
    return [...this.#pods.values()]
      .filter((pod) => pod.deletedAt === undefined)
      .map((pod) => pod.name)
      .sort();
  }

  evictions(): string[] {
    return this.requests.flatMap((request) => (request.verb === 'evict' ? [request.name] : []));
  }

  listPods(_namespace: string, labelSelector: string): Promise<readonly JsonObject[]> {
    this.requests.push({ verb: 'list-pods', selector: labelSelector });
    const refused = this.#refused('list-pods', 'pods');
    if (refused) return refused;
    if (labelSelector !== `app=${this.#app}`) return Promise.resolve([]);
    return Promise.resolve([...this.#pods.values()].map((pod) => wirePod(this.#app, pod)));
  }

  listReplicaSets(_namespace: string, labelSelector: string): Promise<readonly JsonObject[]> {
    this.requests.push({ verb: 'list-replicasets', selector: labelSelector });
    const refused = this.#refused('list-replicasets', 'replicasets');
    if (refused) return refused;
    if (labelSelector !== `app=${this.#app}`) return Promise.resolve([]);
    return Promise.resolve(structuredClone(this.#replicaSets));
  }

  evict(_namespace: string, pod: { readonly name: string; readonly uid: string }): Promise<void> {
    this.requests.push({ verb: 'evict', name: pod.name, uid: pod.uid });
    const refused = this.#refused('evict', 'pods/eviction');
    if (refused) return refused;
    const hold = this.#holds.shift();
    if (hold !== undefined) {
      return Promise.reject(new ApiError(hold, { status: 429, retryable: true }));
    }
    const current = this.#pods.get(pod.name);
    if (current === undefined) {
      return Promise.reject(
        new ApiError(`pod ${pod.name} not found`, { status: 404, retryable: false }),
      );
    }
    if (current.uid !== pod.uid) {
      return Promise.reject(
        new ApiError('uid precondition failed', { status: 409, retryable: true }),
      );
    }
    current.deletedAt ??= current.createdAt;
    return Promise.resolve();
  }
}

function wirePod(app: string, pod: SimulatedPod): JsonObject {
  const metadata: JsonObject = {
    name: pod.name,
    uid: pod.uid,
    creationTimestamp: rfc3339(pod.createdAt),
    labels: { app },
    ownerReferences: [{ kind: 'ReplicaSet', name: pod.owner, uid: pod.owner, controller: true }],
  };
  if (pod.deletedAt !== undefined) metadata.deletionTimestamp = rfc3339(pod.deletedAt);
  return {
    metadata,
    status: { conditions: [{ type: 'Ready', status: pod.ready ? 'True' : 'False' }] },
  };
}
