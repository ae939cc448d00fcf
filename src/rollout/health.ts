/**
 * The health of a workload's rollout, from the status its watch delivers (rollout/rollout-status.ts):
 * one judge per health model, the model chosen by the kind's row (rollout/kinds.ts). Pure: the same
 * view always gives the same answer, so the rules read like `kubectl rollout status`, plus the two
 * states it has no word for: `paused` and `failed`.
 */
import type {
  DaemonSetStatusView,
  HealthModel,
  ReplicaSetStatusView,
  RolloutPhaseStatusView,
  RolloutStatusView,
  StatefulSetStatusView,
} from './rollout-status.ts';

export type RolloutState = 'progressing' | 'complete' | 'failed' | 'paused' | 'unknown';

/** A judgement: the state, plus words for `explain` (and for `failed`, the reason as reported). */
export type RolloutHealth =
  | { readonly state: 'progressing' | 'complete' | 'paused' | 'unknown'; readonly detail: string }
  | { readonly state: 'failed'; readonly reason: string; readonly detail: string };

/** What the judge needs beside the status: the object's generation and `spec.paused`. */
export interface HealthInput {
  readonly generation: number | undefined;
  readonly paused: boolean;
  readonly status: RolloutStatusView;
}

/** The terminal states: a rollout in one of them is over. */
export function isRolloutOver(health: RolloutHealth): boolean {
  return health.state === 'complete' || health.state === 'failed';
}

const of = (state: 'progressing' | 'complete' | 'paused' | 'unknown', detail: string) =>
  ({ state, detail }) as const;

/** The controller has not looked at the newest spec yet: the status describes an older one. */
function notObserved(input: HealthInput): RolloutHealth | undefined {
  const { generation } = input;
  const observed = input.status.observedGeneration;
  if (generation === undefined || observed === undefined || observed >= generation)
    return undefined;
  return of(
    'progressing',
    `waiting for the controller to observe generation ${String(generation)} (observed ${String(observed)})`,
  );
}

const PROGRESS_DEADLINE_EXCEEDED = 'ProgressDeadlineExceeded';

function replicaSet(input: HealthInput, s: ReplicaSetStatusView): RolloutHealth {
  if (input.paused) return of('paused', 'spec.paused is true');
  const behind = notObserved(input);
  if (behind) return behind;
  if (s.progressing?.status === 'False' && s.progressing.reason === PROGRESS_DEADLINE_EXCEEDED) {
    return {
      state: 'failed',
      reason: PROGRESS_DEADLINE_EXCEEDED,
      detail: `progress deadline passed with ${String(s.updated)} of ${String(s.desired)} replicas updated, ${String(s.available)} available`,
    };
  }
  if (s.updated < s.desired) {
    return of('progressing', `${String(s.updated)} of ${String(s.desired)} replicas updated`);
  }
  if (s.replicas > s.updated) {
    return of('progressing', `${String(s.replicas - s.updated)} old replicas pending termination`);
  }
  if (s.available < s.updated) {
    return of(
      'progressing',
      `${String(s.available)} of ${String(s.updated)} updated replicas available`,
    );
  }
  return of(
    'complete',
    `${String(s.updated)} of ${String(s.desired)} replicas updated and available`,
  );
}

function statefulSet(input: HealthInput, s: StatefulSetStatusView): RolloutHealth {
  if (s.onDelete) return of('unknown', 'updateStrategy OnDelete: pods change only when deleted');
  const behind = notObserved(input);
  if (behind) return behind;
  const target = Math.max(s.desired - s.partition, 0);
  if (s.partition > 0 && target < s.desired) {
    if (s.updated < target) {
      return of(
        'progressing',
        `${String(s.updated)} of ${String(target)} replicas above the partition updated`,
      );
    }
    return of(
      'paused',
      `partition ${String(s.partition)} keeps ${String(s.desired - target)} replicas at the old revision`,
    );
  }
  if (s.updated < s.desired) {
    return of('progressing', `${String(s.updated)} of ${String(s.desired)} replicas updated`);
  }
  if (s.ready < s.desired) {
    return of('progressing', `${String(s.ready)} of ${String(s.desired)} replicas ready`);
  }
  if (s.currentRevision !== s.updateRevision) {
    return of('progressing', 'waiting for the current revision to become the update revision');
  }
  return of('complete', `${String(s.desired)} replicas at revision ${s.updateRevision ?? '?'}`);
}

function daemonSet(input: HealthInput, s: DaemonSetStatusView): RolloutHealth {
  if (s.onDelete) return of('unknown', 'updateStrategy OnDelete: pods change only when deleted');
  const behind = notObserved(input);
  if (behind) return behind;
  if (s.updated < s.desired) {
    return of('progressing', `${String(s.updated)} of ${String(s.desired)} nodes updated`);
  }
  if (s.available < s.desired || s.unavailable > 0) {
    return of('progressing', `${String(s.available)} of ${String(s.desired)} nodes available`);
  }
  return of('complete', `${String(s.desired)} nodes updated and available`);
}

/** Argo Rollouts' phases (rollouts' `RolloutPhase`). */
function rolloutPhase(input: HealthInput, s: RolloutPhaseStatusView): RolloutHealth {
  const behind = notObserved(input);
  if (behind) return behind;
  const said = s.message === undefined || s.message === '' ? '' : `: ${s.message}`;
  switch (s.phase) {
    case 'Healthy':
      return of('complete', `phase Healthy${said}`);
    case 'Progressing':
      return of('progressing', `phase Progressing${said}`);
    case 'Paused':
      return of('paused', `phase Paused${said}`);
    case 'Degraded':
      return { state: 'failed', reason: 'Degraded', detail: `phase Degraded${said}` };
    case undefined:
      return of('unknown', 'no status.phase yet');
    default:
      return of('unknown', `phase ${s.phase}`);
  }
}

type Judge<M extends HealthModel> = (
  input: HealthInput,
  status: Extract<RolloutStatusView, { model: M }>,
) => RolloutHealth;

/** One judge per health model. */
const JUDGES: { readonly [M in HealthModel]: Judge<M> } = {
  'replica-set': replicaSet,
  'stateful-set': statefulSet,
  'daemon-set': daemonSet,
  'rollout-phase': rolloutPhase,
};

export function judgeRollout(input: HealthInput): RolloutHealth {
  const judge = JUDGES[input.status.model] as Judge<HealthModel>;
  return judge(input, input.status);
}

/**
 * The rollout kreload started with a PATCH that produced `generation`. A view from before that
 * PATCH (the watch is behind) cannot speak for it: the status must have observed at least that
 * generation. A later generation still carries kreload's template (a Deployment's generation also
 * moves with its annotations, and anyone's later template change rolls kreload's change with it),
 * so its status is judged as it stands.
 */
export function judgeStartedRollout(
  started: { readonly generation: number },
  input: HealthInput,
): RolloutHealth {
  const generation = Math.max(input.generation ?? started.generation, started.generation);
  return judgeRollout({ ...input, generation });
}
