/**
 * The roll by eviction (docs/adr/0044) as a reconcile stage. The roll's write (write-actions.ts)
 * records the applied state and the W `kreload.io/evict-before` marker; from then on, every
 * reconcile that has nothing else to write runs one round: GET the workload, LIST its pods through
 * the owner chain, evict what the budget allows through the Eviction API, and ask to be reconciled
 * again (a reconcile that writes something else asks for that too). The marker goes once no pod created at or before it is left. A PodDisruptionBudget that
 * refuses (429) holds the roll with its reason, retried on the eviction-hold backoff through the
 * queue's timed trigger. All it keeps in memory is how many holds in a row each key has met.
 */
import { ApiError } from '../../core/api-error.ts';
import type { JsonObject } from '../../core/json.ts';
import { stringAt } from '../../core/json.ts';
import { EVICT_BEFORE } from '../../core/types.ts';
import type { WorkloadKey, WorkloadView } from '../../core/types.ts';
import type { RandomSource } from '../../queue/backoff.ts';
import { BACKOFF_POLICIES, backoffDelay } from '../../queue/backoff.ts';
import type { EvictionProgress, PodFacts } from '../../rollout/evict.ts';
import {
  evictionScopeOf,
  forbiddenHoldReason,
  nextEvictions,
  ownedPods,
  parseEvictBefore,
} from '../../rollout/evict.ts';
import type { PodEvictionFacts } from '../../rollout/kinds.ts';
import { evictDonePatch } from '../../rollout/patch.ts';
import type { Pass } from '../attempt.ts';
import { asApiError, NOT_LEADER } from '../attempt.ts';
import type { PodApi, ReconcileObserver, WorkloadWriter } from '../ports.ts';
import type { IdleAttempt, ReconcileStage, StageAnswer } from '../stages.ts';
import type { Target } from '../write-actions.ts';

/** While pods are evicted and replaced, the workload is looked at again this often. */
export const EVICTION_POLL_MS = 1_000;

export interface PodEvictionDeps {
  readonly pods: PodApi;
  readonly writer: WorkloadWriter;
  readonly observer: ReconcileObserver;
  readonly now: () => number;
  readonly random: RandomSource;
  readonly mayWrite: () => boolean;
  readonly dryRun: boolean;
}

export class PodEviction implements ReconcileStage {
  readonly #deps: PodEvictionDeps;
  /** Consecutive holds per key: the exponent of the next wait. */
  readonly #holds = new Map<WorkloadKey, number>();

  constructor(deps: PodEvictionDeps) {
    this.#deps = deps;
  }

  /**
   * After the roll's write: the first round once the marker's second has passed. After any other
   * write while a roll is under way (a baseline, a held change): its next round. kreload's own
   * writes trigger no reconcile, so without it the roll would wait for the next full reconcile.
   */
  written(_pass: Pass, target: Target): StageAnswer {
    const { plan, view } = target;
    const starts = plan.action === 'roll' && plan.rollAction === 'evict-pods';
    if (!starts && view.annotations[EVICT_BEFORE] === undefined) return undefined;
    return { againAt: this.#deps.now() + EVICTION_POLL_MS };
  }

  /** One round of an owed roll by eviction. */
  async idle(pass: Pass, target: Target, attempt: IdleAttempt): Promise<StageAnswer> {
    const { view } = target;
    const evictBefore = parseEvictBefore(view.annotations[EVICT_BEFORE]);
    const facts = pass.row.podEviction;
    if (evictBefore === undefined || facts === undefined || this.#deps.dryRun) {
      this.#holds.delete(pass.key);
      return undefined;
    }
    if (!this.#deps.mayWrite()) return { finish: { ...NOT_LEADER, attempts: attempt.attempt - 1 } };
    try {
      return await this.#round(pass, view, facts, evictBefore);
    } catch (error) {
      const failure = asApiError(error);
      if (failure.status === 403) return this.#forbidden(pass, view, failure);
      return { failed: failure };
    }
  }

  /**
   * The pods may not be listed or evicted here (the chart's `enableEvictStrategy` is off, or a
   * namespace's RBAC refuses): a hold with the reason, retried on the hold backoff, never a failure
   * that waits for the resync, so the roll goes on by itself once it is granted.
   */
  #forbidden(pass: Pass, view: WorkloadView, error: ApiError): StageAnswer {
    const retryInMs = this.#holdDelay(pass.key);
    const reason = forbiddenHoldReason(error.message);
    this.#deps.observer.onEviction({ view, result: 'blocked', reason, retryInMs });
    return { againAt: this.#deps.now() + retryInMs };
  }

  async #round(
    pass: Pass,
    view: WorkloadView,
    facts: PodEvictionFacts,
    evictBefore: number,
  ): Promise<StageAnswer> {
    const { writer, pods, observer, now } = this.#deps;
    const { namespace } = view.ref;
    const object = await writer.getObject(view.ref);
    if (object === undefined) return undefined;
    const scope = evictionScopeOf(facts, object);
    if ('problem' in scope) {
      const retryInMs = this.#holdDelay(pass.key);
      observer.onEviction({ view, result: 'blocked', reason: scope.problem, retryInMs });
      return { againAt: now() + retryInMs };
    }
    const replicaSets =
      facts.owners === 'replica-sets' ? await pods.listReplicaSets(namespace, scope.selector) : [];
    const owned = ownedPods({
      facts,
      workloadUid: view.uid,
      pods: await pods.listPods(namespace, scope.selector),
      replicaSets,
    });
    const step = nextEvictions({ pods: owned, evictBefore, scope, now: now() });
    if (step.step === 'done') return this.#done(pass, view, object, step.progress);
    if (step.step === 'wait') return { againAt: now() + EVICTION_POLL_MS };
    for (const pod of step.pods) {
      const held = await this.#evict(pass, view, pod, step.progress);
      if (held !== undefined) return held;
    }
    this.#holds.delete(pass.key);
    return { againAt: now() + EVICTION_POLL_MS };
  }

  /** One eviction; a hold answers when to try again, a pod already gone is no error. */
  async #evict(
    pass: Pass,
    view: WorkloadView,
    pod: PodFacts,
    progress: EvictionProgress,
  ): Promise<StageAnswer> {
    const { pods, observer, now } = this.#deps;
    if (!this.#deps.mayWrite()) return { finish: { ...NOT_LEADER, attempts: 0 } };
    try {
      await pods.evict(view.ref.namespace, pod);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 404 || error.status === 409) return undefined;
      if (error.status !== 429) {
        observer.onEviction({ view, result: 'failed', pod: pod.name, progress });
        throw error;
      }
      const retryInMs = this.#holdDelay(pass.key);
      const reason = error.message;
      observer.onEviction({ view, result: 'held', pod: pod.name, reason, retryInMs, progress });
      return { againAt: now() + retryInMs };
    }
    observer.onEviction({ view, result: 'evicted', pod: pod.name, progress });
    return undefined;
  }

  /** No old pod is left: the marker goes, with the version just read as the precondition. */
  async #done(
    pass: Pass,
    view: WorkloadView,
    object: JsonObject,
    progress: EvictionProgress,
  ): Promise<StageAnswer> {
    this.#holds.delete(pass.key);
    if (!this.#deps.mayWrite()) return { finish: { ...NOT_LEADER, attempts: 0 } };
    const served = {
      resourceVersion: stringAt(object, ['metadata', 'resourceVersion']) ?? view.resourceVersion,
    };
    try {
      await this.#deps.writer.patch(view.ref, evictDonePatch(pass.row, served));
    } catch (error) {
      // A newer version (a status update, or a new roll's marker): the next round decides again.
      if (error instanceof ApiError && error.status === 409) {
        return { againAt: this.#deps.now() + EVICTION_POLL_MS };
      }
      throw error;
    }
    this.#deps.observer.onEviction({ view, result: 'done', progress });
    return undefined;
  }

  #holdDelay(key: WorkloadKey): number {
    const holds = this.#holds.get(key) ?? 0;
    this.#holds.set(key, holds + 1);
    return backoffDelay(BACKOFF_POLICIES.evictionHold, holds, this.#deps.random);
  }
}
