/**
 * How many Deployments are rolling out at a moment, read from ReplicaSet state (what
 * kube-controller-manager reports about the pods), never from a controller's own account.
 *
 * A Deployment is **in flight** while
 *   - more than one of its ReplicaSets has pods (`status.replicas` > 0: pods of an older template
 *     are still there; terminating pods are not counted, as in the ReplicaSet's own status), or
 *   - its newest ReplicaSet (highest `deployment.kubernetes.io/revision`) has fewer available pods
 *     than the Deployment wants (`deployment.kubernetes.io/desired-replicas`, which the Deployment
 *     controller stamps on every ReplicaSet it owns; `spec.replicas` when absent).
 * A patched template that has no ReplicaSet yet is not in flight: the count starts when
 * kube-controller-manager starts the rollout, and ends when `kubectl rollout status` would return.
 *
 * The sampler keeps the latest state of every ReplicaSet it is fed (watch events) and counts the
 * Deployments in flight every `intervalMs`; max and p95 are over those samples, which are evenly
 * spaced in time, so the p95 is the count not exceeded during 95 % of the sampled time.
 */
import { percentile } from '../bench/stats.ts';

const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';

/** What counts of one ReplicaSet. */
export interface ReplicaSetState {
  readonly uid: string;
  /** `namespace/name` of the owning Deployment. */
  readonly deployment: string;
  readonly revision: number;
  /** The Deployment's desired replicas. */
  readonly desired: number;
  /** Pods of this ReplicaSet (status.replicas). */
  readonly replicas: number;
  readonly available: number;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function integer(value: unknown): number | undefined {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) ? number : undefined;
}

/** The state of a ReplicaSet (wire JSON) a Deployment owns; undefined for any other object. */
export function replicaSetState(object: unknown): ReplicaSetState | undefined {
  if (!isRecord(object) || !isRecord(object.metadata)) return undefined;
  const { metadata } = object;
  const owners = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [];
  const owner: unknown = owners.find((ref) => isRecord(ref) && ref.kind === 'Deployment');
  if (!isRecord(owner) || typeof owner.name !== 'string') return undefined;
  const annotations = isRecord(metadata.annotations) ? metadata.annotations : {};
  const spec = isRecord(object.spec) ? object.spec : {};
  const status = isRecord(object.status) ? object.status : {};
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  return {
    uid: typeof metadata.uid === 'string' ? metadata.uid : `${namespace}/${name}`,
    deployment: `${namespace}/${owner.name}`,
    revision: integer(annotations[REVISION]) ?? 0,
    desired: integer(annotations[DESIRED]) ?? integer(spec.replicas) ?? 1,
    replicas: integer(status.replicas) ?? 0,
    available: integer(status.availableReplicas) ?? 0,
  };
}

/** Whether the Deployment owning these ReplicaSets is in flight (see the module comment). */
export function isInFlight(replicaSets: readonly ReplicaSetState[]): boolean {
  const newest = replicaSets.reduce<ReplicaSetState | undefined>(
    (best, rs) => (best === undefined || rs.revision > best.revision ? rs : best),
    undefined,
  );
  if (newest === undefined) return false;
  const withPods = replicaSets.filter((rs) => rs.replicas > 0).length;
  return withPods > 1 || newest.available < newest.desired;
}

/** How many Deployments are in flight among these ReplicaSets (any number of Deployments). */
export function countInFlight(replicaSets: Iterable<ReplicaSetState>): number {
  const byDeployment = new Map<string, ReplicaSetState[]>();
  for (const rs of replicaSets) {
    const group = byDeployment.get(rs.deployment);
    if (group === undefined) byDeployment.set(rs.deployment, [rs]);
    else group.push(rs);
  }
  let count = 0;
  for (const group of byDeployment.values()) if (isInFlight(group)) count += 1;
  return count;
}

export interface InFlightSample {
  /** ms from the origin (e.g. the first source write). */
  readonly atMs: number;
  readonly inFlight: number;
}

export interface InFlightSeries {
  readonly intervalMs: number;
  readonly samples: number;
  readonly max: number;
  /** Nearest-rank 95th percentile of the samples. */
  readonly p95: number;
  /** The samples where the count changed (and the last one): a step function. */
  readonly series: readonly InFlightSample[];
}

/** Max, p95 and the step series of evenly spaced samples, times relative to `origin`. */
export function summariseInFlight(
  samples: readonly { readonly at: number; readonly inFlight: number }[],
  options: { readonly intervalMs: number; readonly origin: number },
): InFlightSeries {
  const counts = samples.map((sample) => sample.inFlight).sort((a, b) => a - b);
  const series: InFlightSample[] = [];
  samples.forEach((sample, index) => {
    const changed = series.at(-1)?.inFlight !== sample.inFlight;
    if (changed || index === samples.length - 1) {
      series.push({ atMs: Math.round(sample.at - options.origin), inFlight: sample.inFlight });
    }
  });
  return {
    intervalMs: options.intervalMs,
    samples: samples.length,
    max: counts.at(-1) ?? 0,
    p95: percentile(counts, 95) ?? 0,
    series,
  };
}

export type ReplicaSetEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** Fed with ReplicaSet watch events; samples the count in flight on a timer. */
export class InFlightSampler {
  readonly #clock: () => number;
  readonly #intervalMs: number;
  readonly #replicaSets = new Map<string, ReplicaSetState>();
  readonly #samples: { at: number; inFlight: number }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(deps: { clock: () => number; intervalMs: number }) {
    this.#clock = deps.clock;
    this.#intervalMs = deps.intervalMs;
  }

  /** A watch event of a ReplicaSet (wire JSON); objects no Deployment owns are ignored. */
  apply(type: ReplicaSetEventType, object: unknown): void {
    const state = replicaSetState(object);
    if (state === undefined) return;
    if (type === 'DELETED') this.#replicaSets.delete(state.uid);
    else this.#replicaSets.set(state.uid, state);
  }

  /** Deployments in flight now. */
  current(): number {
    return countInFlight(this.#replicaSets.values());
  }

  sample(): void {
    this.#samples.push({ at: this.#clock(), inFlight: this.current() });
  }

  /** Samples now and every interval until stop(). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.sample();
    this.#timer = setInterval(() => {
      this.sample();
    }, this.#intervalMs);
  }

  /** Stops sampling (one last sample); times in the summary are relative to `origin`. */
  stop(origin: number): InFlightSeries {
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.sample();
    }
    return summariseInFlight(this.#samples, { intervalMs: this.#intervalMs, origin });
  }
}
