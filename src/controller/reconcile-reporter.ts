/**
 * The reconciler's observer (reconcile/ports.ts): every outcome becomes exactly one metric
 * recording, one log line at the level §13.9 gives it, and the Events and alerts of §13.3/§13.6.
 * Diagnostics (invalid annotations, env-var collisions) are reported once per distinct value.
 */
import type { AlertSource, RollAlert } from '../alerts/alert-format.ts';
import { parseSourceKey, sourceKeyOf, workloadKey } from '../core/keys.ts';
import type {
  AnnotationProblem,
  SourceKey,
  SourceRef,
  SourceType,
  WorkloadRef,
  WorkloadView,
} from '../core/types.ts';
import type { EventContent } from '../events/event-messages.ts';
import {
  dryRunReloadEvent,
  envVarCollisionEvent,
  evictionCompleteEvent,
  evictionHeldEvent,
  podEvictedEvent,
  invalidAnnotationEvent,
  reloadedEvent,
  reloadFailEvent,
} from '../events/event-messages.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import { sourceObjectRef, workloadObjectRef } from '../events/object-refs.ts';
import type { KindTable } from '../rollout/kinds.ts';
import type { Logger } from '../log/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { ReconcilePlan } from '../reconcile/plan/model.ts';
import { rolledBy } from '../reconcile/plan/rolled-by.ts';
import type { PauseNotice } from '../rollout/pause.ts';
import type {
  EvictionEvent,
  FailedEvent,
  RecreationRetryEvent,
  ReconcileObserver,
  RetryEvent,
  RolledEvent,
  SnapshotsEvent,
} from '../reconcile/ports.ts';

export interface ReconcileReporterDeps {
  readonly logger: Logger;
  /** The effective kind table: the apiVersion of the workloads Events are written on. */
  readonly kinds: KindTable;
  readonly metrics: Metrics;
  readonly events: { record(request: EventRequest): void };
  readonly alerts?: { send(alert: RollAlert): void } | undefined;
  /** Bound on remembered diagnostics; the oldest is forgotten first. */
  readonly maxRemembered?: number;
  /** UID of a cached source, to address Events to it; undefined when it is not cached. */
  readonly sourceUid?: (ref: SourceRef) => string | undefined;
  /** The configured pause-period key, for its warning. */
  readonly pausePeriodKey?: string;
  /** Also told of each roll: the ReloadPolicy status writer (docs/reload-policy.md). */
  readonly rolled?: ((event: RolledEvent) => void) | undefined;
  /** Also told of each step of a roll by eviction: the eviction tracker (explain, metrics). */
  readonly evicting?: ((event: EvictionEvent) => void) | undefined;
}

const DEFAULT_MAX_REMEMBERED = 10_000;

/** The log fields that name a workload. */
function workloadFields(ref: WorkloadRef): Record<string, string> {
  return { namespace: ref.namespace, kind: ref.kind, workload: ref.name };
}

function changedSources(plan: ReconcilePlan): AlertSource[] {
  return plan.rolling.flatMap((key) => {
    const parsed = parseSourceKey(key);
    return parsed ? [{ type: parsed.type, name: parsed.name }] : [];
  });
}

function describeSources(plan: ReconcilePlan): string {
  return changedSources(plan)
    .map((s) => `'${s.name}' of type '${s.type}'`)
    .join(', ');
}

function desiredHashes(plan: ReconcilePlan): Map<SourceKey, string> {
  const hashes = new Map<SourceKey, string>();
  for (const key of plan.keys) {
    if (key.outcome === 'roll' && key.desired !== undefined) hashes.set(key.key, key.desired);
  }
  return hashes;
}

export class ReconcileReporter implements ReconcileObserver {
  readonly #deps: ReconcileReporterDeps;
  readonly #reported = new Set<string>();

  constructor(deps: ReconcileReporterDeps) {
    this.#deps = deps;
  }

  onRolled(event: RolledEvent): void {
    const { view, plan } = event;
    const strategy = rolledBy(plan);
    const { ref } = view;
    this.#deps.rolled?.(event);
    this.#deps.metrics.recordRoll({
      kind: ref.kind,
      namespace: ref.namespace,
      success: true,
      latencySeconds: event.durationMs / 1000,
    });
    this.#deps.logger.info(
      `Changes detected in ${describeSources(plan)} in namespace '${ref.namespace}'; ` +
        `updated '${ref.name}' of type '${ref.kind}' in namespace '${ref.namespace}'`,
      {
        namespace: ref.namespace,
        kind: ref.kind,
        workload: ref.name,
        source: plan.rolling.join(','),
        strategy,
      },
    );
    this.#deps.events.record({
      object: workloadObjectRef(this.#deps.kinds, ref, view.uid),
      ...reloadedEvent({ sources: changedSources(plan), workload: ref, strategy }),
    });
    this.#deps.alerts?.send({ sources: changedSources(plan), workload: ref });
  }

  onBaselined(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void {
    const { ref } = event.view;
    this.#deps.logger.debug('baseline recorded', {
      namespace: ref.namespace,
      kind: ref.kind,
      workload: ref.name,
      source: event.plan.keys
        .filter((k) => k.outcome === 'baseline')
        .map((k) => k.key)
        .join(','),
    });
  }

  onResumed(event: { readonly view: WorkloadView; readonly attempts: number }): void {
    const { ref } = event.view;
    this.#deps.logger.info('paused Deployment resumed', {
      namespace: ref.namespace,
      kind: ref.kind,
      workload: ref.name,
    });
  }

  onSnapshots(event: SnapshotsEvent): void {
    const { ref } = event.view;
    const fields = { namespace: ref.namespace, kind: ref.kind, workload: ref.name };
    if ('error' in event) {
      this.#deps.logger.warn('config snapshots not handed to their revisions; retried later', {
        ...fields,
        status: event.error.status,
        error: event.error.message,
      });
      return;
    }
    this.#deps.logger.info('config snapshots handed to their revisions', {
      ...fields,
      adopted: event.adopted.join(','),
      swept: event.swept.join(','),
    });
  }

  /** Each step of a roll by eviction: an info line and an Event on the workload; a hold warns. */
  onEviction(event: EvictionEvent): void {
    const { view } = event;
    const fields = { ...workloadFields(view.ref), strategy: 'evict' };
    const workload = view.ref;
    this.#deps.evicting?.(event);
    switch (event.result) {
      case 'evicted':
        this.#deps.logger.info('pod evicted to reload its config', { ...fields, pod: event.pod });
        this.#recordOn(view, podEvictedEvent({ workload, ...event }));
        return;
      case 'held':
      case 'blocked': {
        const pod = event.result === 'held' ? event.pod : undefined;
        this.#deps.logger.warn('roll by eviction held; retried with backoff', {
          ...fields,
          ...(pod === undefined ? {} : { pod }),
          reason: event.reason,
          retryInMs: Math.round(event.retryInMs),
        });
        this.#recordOn(view, evictionHeldEvent({ workload, pod, reason: event.reason }));
        return;
      }
      case 'failed':
        // The error itself is reported where the reconcile handles it (a hold, or ReloadFail).
        return;
      case 'done':
        this.#deps.logger.info('roll by eviction complete', fields);
        this.#recordOn(view, evictionCompleteEvent({ workload, progress: event.progress }));
        return;
    }
  }

  onPauseNotice(event: { readonly view: WorkloadView; readonly notice: PauseNotice }): void {
    const { ref } = event.view;
    const fields = { namespace: ref.namespace, kind: ref.kind, workload: ref.name };
    if (event.notice === 'paused-by-other') {
      this.#deps.logger.info(
        'Deployment was paused by someone else; template updated, not resumed',
        fields,
      );
    } else {
      this.#deps.logger.warn(
        `${this.#deps.pausePeriodKey ?? 'pause-period'} applies to Deployments only; ignored`,
        fields,
      );
    }
  }

  onRecreationRetried(event: RecreationRetryEvent): void {
    if (event.result === 'failed') {
      this.#deps.logger.error('Job re-creation still pending; retried at the next resync', {
        workload: event.key,
        error: event.error.message,
      });
      return;
    }
    if (event.result === 'handed-over') {
      this.#deps.logger.warn('lease lost after deleting a Job; the next leader re-creates it', {
        workload: event.key,
      });
      return;
    }
    if (event.result === 'withdrawn') {
      this.#deps.logger.warn(
        'Job re-creation withdrawn: the recreation journal no longer holds a valid entry for it, ' +
          'so the Job is not created',
        { workload: event.key },
      );
      return;
    }
    this.#deps.logger.info(`Job re-creation ${event.result}`, { workload: event.key });
  }

  onSkipped(event: Parameters<ReconcileObserver['onSkipped']>[0]): void {
    this.#deps.metrics.recordSkip(event.reason);
    if (event.reason === 'no_container') {
      this.#once(`no_container\0${event.key}`, () => {
        this.#deps.logger.info('workload has no regular container; not rolled', {
          namespace: event.view.ref.namespace,
          kind: event.view.ref.kind,
          workload: event.view.ref.name,
        });
      });
    }
  }

  /** Only roll decisions are reported; a suppressed baseline is silent (§13.8). */
  onDryRun(event: { readonly view: WorkloadView; readonly plan: ReconcilePlan }): void {
    const { view, plan } = event;
    if (plan.action !== 'roll') return;
    const hashes = desiredHashes(plan);
    const signature = `dry-run\0${workloadKey(view.ref)}\0${JSON.stringify([...hashes])}`;
    this.#once(signature, () => {
      const content = dryRunReloadEvent({ workload: view.ref, hashes });
      this.#deps.logger.info(content.message, workloadFields(view.ref));
      this.#recordOn(view, content);
      for (const key of hashes.keys()) {
        const parsed = parseSourceKey(key);
        if (!parsed) continue;
        const ref = { type: parsed.type, namespace: view.ref.namespace, name: parsed.name };
        const uid = this.#deps.sourceUid?.(ref);
        if (uid !== undefined)
          this.#deps.events.record({ object: sourceObjectRef(ref, uid), ...content });
      }
    });
  }

  onFailed(event: FailedEvent): void {
    const { ref } = event.view;
    this.#deps.metrics.recordRoll({
      kind: ref.kind,
      namespace: ref.namespace,
      success: false,
      latencySeconds: 0,
    });
    if (event.gaveUp) this.#deps.metrics.recordError('write_gave_up');
    this.#deps.logger.error(
      event.recreationPending
        ? 'Job deleted but not re-created; kept for retry'
        : 'workload write failed',
      {
        namespace: ref.namespace,
        kind: ref.kind,
        workload: ref.name,
        status: event.error.status,
        attempts: event.attempts,
        error: event.error.message,
      },
    );
    this.#deps.events.record({
      object: workloadObjectRef(this.#deps.kinds, ref, event.view.uid),
      ...reloadFailEvent({ workload: ref, error: event.error.message }),
    });
  }

  onRetry(event: RetryEvent): void {
    this.#deps.metrics.recordRetry();
    this.#deps.logger.warn('workload write will be retried', {
      workload: event.key,
      status: event.error.status,
      attempt: event.attempt,
      delayMs: Math.round(event.delayMs),
      error: event.error.message,
    });
  }

  onGone(event: { readonly key: string }): void {
    this.#deps.logger.debug('workload gone before its write', { workload: event.key });
  }

  onProblems(event: Parameters<ReconcileObserver['onProblems']>[0]): void {
    const { view } = event;
    for (const problem of event.problems) {
      if (problem.source) this.#sourceProblem(view.ref.namespace, problem, problem.source);
      else this.#workloadProblem(view, problem);
    }
  }

  #workloadProblem(view: WorkloadView, problem: AnnotationProblem): void {
    const id = `${workloadKey(view.ref)}\0${problem.key}\0${problem.value}`;
    this.#once(id, () => {
      const message = `${problem.key}: ${problem.problem}; ${problem.consequence}`;
      this.#deps.logger.warn(message, workloadFields(view.ref));
      this.#recordOn(view, invalidAnnotationEvent(problem));
    });
  }

  /** Once per source, key and value, on the object that carries the value (§3.3). */
  #sourceProblem(
    namespace: string,
    problem: AnnotationProblem,
    source: { readonly type: SourceType; readonly name: string },
  ): void {
    const ref = { type: source.type, namespace, name: source.name };
    const id = `${namespace}\0${sourceKeyOf(ref)}\0${problem.key}\0${problem.value}`;
    this.#once(id, () => {
      this.#deps.logger.warn(`${problem.key}: ${problem.problem}; ${problem.consequence}`, {
        namespace,
        source: sourceKeyOf(ref),
      });
      const uid = this.#deps.sourceUid?.(ref);
      if (uid !== undefined) {
        this.#deps.events.record({
          object: sourceObjectRef(ref, uid),
          ...invalidAnnotationEvent(problem),
        });
      }
    });
  }

  onCollision(event: Parameters<ReconcileObserver['onCollision']>[0]): void {
    const { view } = event;
    for (const collision of event.collisions) {
      const id = `collision\0${workloadKey(view.ref)}\0${collision.envVar}\0${collision.keys.join(',')}`;
      this.#once(id, () => {
        const content = envVarCollisionEvent({ envVar: collision.envVar, sources: collision.keys });
        this.#deps.logger.warn(content.message, workloadFields(view.ref));
        this.#recordOn(view, content);
      });
    }
  }

  /** An Event on the workload itself. */
  #recordOn(view: WorkloadView, content: EventContent): void {
    this.#deps.events.record({
      object: workloadObjectRef(this.#deps.kinds, view.ref, view.uid),
      ...content,
    });
  }

  #once(id: string, report: () => void): void {
    if (this.#reported.has(id)) return;
    if (this.#reported.size >= (this.#deps.maxRemembered ?? DEFAULT_MAX_REMEMBERED)) {
      const oldest = this.#reported.values().next();
      if (oldest.done !== true) this.#reported.delete(oldest.value);
    }
    this.#reported.add(id);
    report();
  }
}
