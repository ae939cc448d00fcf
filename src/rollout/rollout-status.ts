/**
 * The status a workload's rollout is judged from, as the watch projection keeps it
 * (kube/workload-projection.ts): a few numbers and names per health model, nothing else. Which model
 * a kind uses is the `health` field of its row in rollout/kinds.ts. This module imports nothing, so
 * core/types.ts can take the types from here.
 */

/**
 * How a kind reports a rollout:
 * - `replica-set`: replicas, updated/available counts and a `Progressing` condition with a progress
 *   deadline (Deployment, DeploymentConfig);
 * - `stateful-set`: updated/ready counts, current and update revisions, a partition;
 * - `daemon-set`: per-node scheduled/updated/available counts;
 * - `rollout-phase`: Argo Rollouts' own `status.phase`.
 */
export type HealthModel = 'replica-set' | 'stateful-set' | 'daemon-set' | 'rollout-phase';

/** A condition's status and reason (`Progressing`). */
export interface ConditionView {
  readonly status: string;
  readonly reason: string | undefined;
}

export interface ReplicaSetStatusView {
  readonly model: 'replica-set';
  readonly observedGeneration: number | undefined;
  /** spec.replicas (Kubernetes defaults it to 1). */
  readonly desired: number;
  /** status.replicas: pods of every ReplicaSet, old ones included. */
  readonly replicas: number;
  readonly updated: number;
  readonly available: number;
  readonly unavailable: number;
  readonly progressing: ConditionView | undefined;
  /** spec.progressDeadlineSeconds (Deployment); undefined where the kind has none or it is unset. */
  readonly progressDeadlineSeconds?: number | undefined;
}

export interface StatefulSetStatusView {
  readonly model: 'stateful-set';
  readonly observedGeneration: number | undefined;
  readonly desired: number;
  readonly updated: number;
  readonly ready: number;
  readonly currentRevision: string | undefined;
  readonly updateRevision: string | undefined;
  /** spec.updateStrategy.rollingUpdate.partition: ordinals below it keep the old revision. */
  readonly partition: number;
  /** spec.updateStrategy.type OnDelete: pods change only when someone deletes them. */
  readonly onDelete: boolean;
}

export interface DaemonSetStatusView {
  readonly model: 'daemon-set';
  readonly observedGeneration: number | undefined;
  /** status.desiredNumberScheduled. */
  readonly desired: number;
  /** status.updatedNumberScheduled. */
  readonly updated: number;
  /** status.numberAvailable. */
  readonly available: number;
  /** status.numberUnavailable. */
  readonly unavailable: number;
  readonly onDelete: boolean;
}

export interface RolloutPhaseStatusView {
  readonly model: 'rollout-phase';
  /** Argo Rollouts writes it as a string; a non-numeric value is left out. */
  readonly observedGeneration: number | undefined;
  readonly phase: string | undefined;
  readonly message: string | undefined;
  /** spec.progressDeadlineSeconds of the Argo Rollout; undefined when unset. */
  readonly progressDeadlineSeconds?: number | undefined;
}

export type RolloutStatusView =
  ReplicaSetStatusView | StatefulSetStatusView | DaemonSetStatusView | RolloutPhaseStatusView;
