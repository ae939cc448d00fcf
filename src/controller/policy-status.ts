/**
 * Writes ReloadPolicy status (docs/reload-policy.md#status): after a roll of a bound workload, and
 * whenever what a policy finds may have changed (the policy, a source or a workload appeared or
 * went, leadership, resync). Writes go one at a time on their own queue, never the workload queue,
 * so a slow or refused status write never delays a roll; only the leader writes. A write is skipped
 * when the status already says the same, which also ends the echo of kreload's own writes.
 */
import PQueue from 'p-queue';
import type { ApiError } from '../core/api-error.ts';
import type { JsonObject } from '../core/json.ts';
import {
  desiredStatus,
  recoveredRecord,
  rfc3339,
  statusFields,
  keyedSourceHashes,
  STATUS_LIMITS,
  statusPatchFrom,
  targetId,
} from '../core/reload-policy-status.ts';
import type {
  PolicySourceHash,
  PolicyStatusView,
  PolicyTargetStatus,
  ReloadPolicyView,
} from '../core/reload-policy.ts';
import { reloadPolicyConflictEvent } from '../events/event-messages.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import { reloadPolicyObjectRef } from '../events/object-refs.ts';
import type { SourceKey, WorkloadView } from '../core/types.ts';
import { LAST_RELOADED_FROM } from '../core/types.ts';
import { yieldToEventLoop } from '../time/event-loop.ts';
import type { Logger } from '../log/logger.ts';
import type { ReconcilePlan } from '../reconcile/plan/model.ts';
import type { PolicyEvent, PolicyStore } from '../watch/policy-store.ts';
import { type SourceCacheEvent, sameLabels } from '../watch/source-cache.ts';
import type { WatchHandler } from '../watch/watch-caches.ts';
import type { WorkloadStoreEvent } from '../watch/workload-store.ts';

export interface PolicyStatusPort {
  patchStatus(namespace: string, name: string, status: JsonObject): Promise<void>;
}

export interface PolicyStatusWriterDeps {
  readonly policies: PolicyStore;
  readonly client: PolicyStatusPort;
  readonly isLeading: () => boolean;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly logger: Logger;
  /** A status write was refused or failed (`reloader_errors_total{type="policy_status_error"}`). */
  readonly onWriteFailed: () => void;
  /**
   * A(K) of each key a pass tracks on the workload now (the reconciler's planner, no writes): the
   * first write of each policy recovers a record lost to a crash from it.
   */
  readonly applied: (view: WorkloadView) => ReadonlyMap<SourceKey, string>;
  /** The `ReloadPolicyConflict` Warning Event, once per transition into conflict. */
  readonly events: { record(request: EventRequest): void };
}

function policyId(policy: { readonly namespace: string; readonly name: string }): string {
  return `${policy.namespace}/${policy.name}`;
}

/** Statuses by which the API server refuses a patch for what it is (invalid, too large). */
const REFUSED: ReadonlySet<number> = new Set([400, 413, 422]);

/** Targets recovered per turn of the event loop at a policy's first write. */
const RECOVERY_SLICE = 10;

function storedTargets(policy: ReloadPolicyView): ReadonlyMap<string, PolicyTargetStatus> {
  return new Map(policy.status.targets.map((entry) => [targetId(entry), entry]));
}

function sameRecord(a: PolicyTargetStatus, b: PolicyTargetStatus): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The record of a roll for one policy: the hashes of its sources, the first `STATUS_LIMITS`
 * of them listed (as `boundedRecord` keeps them) and the rest only counted.
 */
function recordOf(
  target: Pick<PolicyTargetStatus, 'kind' | 'name' | 'lastReloadTime'>,
  carried: readonly { readonly key: SourceKey; readonly hash: string }[],
  own: ReadonlySet<SourceKey>,
): PolicyTargetStatus {
  const sourceHashes: PolicySourceHash[] = [];
  let count = 0;
  for (const entry of carried) {
    if (!own.has(entry.key)) continue;
    count += 1;
    if (sourceHashes.length < STATUS_LIMITS.sourceHashes) {
      const [keyed] = keyedSourceHashes([entry]);
      if (keyed === undefined) count -= 1;
      else sourceHashes.push(keyed.hash);
    }
  }
  const unlisted = count - sourceHashes.length;
  return unlisted > 0
    ? { ...target, sourceHashes, unlistedSourceHashes: unlisted }
    : { ...target, sourceHashes };
}

export class PolicyStatusWriter implements WatchHandler {
  readonly #deps: PolicyStatusWriterDeps;
  readonly #queue = new PQueue({ concurrency: 1 });
  readonly #scheduled = new Set<string>();
  /**
   * Policies (by UID) whose transition into conflict has had its Event: a status write that failed
   * and is tried again, or the echo of the write, does not emit it twice.
   */
  readonly #conflictAnnounced = new Set<string>();
  /**
   * Policies (by UID) already checked for records lost to a crash. Checked once per process, at
   * its first write of the policy: later, the watch may lag behind a roll of this process and the
   * workload in the cache would look like the lost state.
   */
  readonly #recoveryDone = new Set<string>();
  /** Reload records not yet seen back from the watch, by policy and target. */
  readonly #pending = new Map<string, Map<string, PolicyTargetStatus>>();
  /** The last patch the API server refused as invalid or too large, by policy. */
  readonly #rejected = new Map<string, string>();
  /**
   * A(K) of a stored workload view (views are replaced, never changed): planned once however many
   * policies bind the workload.
   */
  readonly #applied = new WeakMap<WorkloadView, ReadonlyMap<SourceKey, string>>();
  /** `statusFields` of a stored status (statuses are replaced, never changed). */
  readonly #statusFields = new WeakMap<PolicyStatusView, ReadonlyMap<string, string>>();

  constructor(deps: PolicyStatusWriterDeps) {
    this.#deps = deps;
  }

  /** A bound workload rolled: each binding policy records the time and the hashes it carries. */
  recordRoll(view: WorkloadView, plan: ReconcilePlan): void {
    const { policies } = this.#deps;
    const binding = policies.bindingOf(view);
    if (binding.policies.length === 0) return;
    const at = rfc3339(this.#deps.now());
    // The plan's keys are sorted, which is the kind-and-name order of the records: each policy
    // parses only the hashes it lists (they often bind the same hundreds of keys).
    const carried = plan.keys.flatMap((key) => {
      const hash = key.desired ?? key.applied;
      return hash === undefined ? [] : [{ key: key.key, hash }];
    });
    for (const ref of binding.policies) {
      const policy = policies.get(ref.namespace, ref.name);
      if (policy === undefined) continue;
      const own = policies.boundSourcesOf(policy);
      const target = { kind: view.ref.kind, name: view.ref.name, lastReloadTime: at };
      const record = recordOf(target, carried, own);
      const id = policyId(policy);
      const pending = this.#pending.get(id) ?? new Map<string, PolicyTargetStatus>();
      pending.set(targetId(record), record);
      this.#pending.set(id, pending);
      this.#schedule(id);
    }
  }

  /** Every policy again: leadership acquired, periodic resync. */
  refreshAll(): void {
    for (const policy of this.#deps.policies.all()) this.#schedule(policyId(policy));
  }

  /** Settles once every queued write is done (tests, shutdown). */
  async idle(): Promise<void> {
    await this.#queue.onIdle();
  }

  onPolicyEvent(event: PolicyEvent): void {
    const id = policyId(event.view);
    if (event.kind === 'removed') {
      this.#pending.delete(id);
      this.#rejected.delete(id);
      this.#recoveryDone.delete(event.view.uid);
      this.#conflictAnnounced.delete(event.view.uid);
      return;
    }
    const { view, previous } = event;
    if (view.problems.length > 0 && previous?.generation !== view.generation) {
      this.#deps.logger.warn('ReloadPolicy has entries kreload cannot use; the rest applies', {
        policy: id,
        problems: view.problems.join('; '),
      });
    }
    this.#schedule(id);
  }

  /** What a policy finds changes when a source appears, goes, or its labels change. */
  onSourceEvent(event: SourceCacheEvent): void {
    if (event.kind === 'created' || event.kind === 'deleted' || event.kind === 'labels') {
      this.#refreshNamespace(event.ref.namespace);
    }
  }

  /** Likewise for a workload (target selectors read its labels). */
  onWorkloadEvent(event: WorkloadStoreEvent): void {
    const relabelled =
      event.kind === 'changed' && !sameLabels(event.prev.labels, event.view.labels);
    if (event.kind === 'added' || event.kind === 'removed' || relabelled) {
      this.#refreshNamespace(event.view.ref.namespace);
    }
  }

  onNamespaceEntered(namespace: string): void {
    this.#refreshNamespace(namespace);
  }

  onNamespaceLeft(): void {
    // Nothing is written there any more; its policies keep their last status.
  }

  onScopeJoined(): void {
    this.refreshAll();
  }

  onKindWatched(): void {
    this.refreshAll();
  }

  #refreshNamespace(namespace: string): void {
    for (const policy of this.#deps.policies.inNamespace(namespace)) {
      this.#schedule(policyId(policy));
    }
  }

  #schedule(id: string): void {
    if (!this.#deps.isLeading() || this.#scheduled.has(id)) return;
    this.#scheduled.add(id);
    void this.#queue.add(async () => {
      this.#scheduled.delete(id);
      await this.#write(id);
    });
  }

  /** Drops the records the watch has brought back; returns the ones still to write. */
  #unconfirmed(id: string, policy: ReloadPolicyView): ReadonlyMap<string, PolicyTargetStatus> {
    const pending = this.#pending.get(id);
    if (pending === undefined) return new Map();
    const stored = storedTargets(policy);
    for (const [target, record] of pending) {
      const written = stored.get(target);
      if (written !== undefined && sameRecord(written, record)) pending.delete(target);
    }
    if (pending.size === 0) this.#pending.delete(id);
    return pending;
  }

  async #write(id: string): Promise<void> {
    const [namespace = '', name = ''] = id.split('/');
    const { policies } = this.#deps;
    const policy = policies.get(namespace, name);
    if (policy === undefined || !this.#deps.isLeading()) {
      this.#pending.delete(id);
      return;
    }
    const recovered = await this.#recovered(policy);
    // The recovery may have yielded: read the policy as it is now.
    const current = policies.get(namespace, name);
    if (current === undefined) return;
    const desired = desiredStatus({
      policy: current,
      sources: policies.sourceFacts(current),
      targets: policies.targetFacts(current),
      conflicts: policies.conflictsOf(current),
      currentTargets: new Set(policies.targetIdsOf(current)),
      reloads: new Map([...recovered, ...this.#unconfirmed(id, current)]),
      now: rfc3339(this.#deps.now()),
    });
    this.#announceConflict(current, desired);
    this.#dropUnlisted(id, desired);
    const patch = statusPatchFrom(
      {
        fields: this.#fieldsOf(current.status),
        written: current.status.observedGeneration !== undefined,
      },
      desired,
    );
    if (patch === undefined) return;
    // The API server refused this very patch: sending it again would only be refused again.
    const refused = this.#rejected.get(id);
    if (refused !== undefined && refused === JSON.stringify(patch)) return;
    try {
      await this.#deps.client.patchStatus(namespace, name, patch);
      this.#rejected.delete(id);
    } catch (error) {
      const failure = error as ApiError;
      if (failure.status !== undefined && REFUSED.has(failure.status)) {
        this.#rejected.set(id, JSON.stringify(patch));
      }
      this.#failed(id, failure);
    }
  }

  /** Records the capped list leaves out are never written: they are not waited for. */
  #dropUnlisted(id: string, desired: PolicyStatusView): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    const listed = new Set(desired.targets.map(targetId));
    for (const target of pending.keys()) if (!listed.has(target)) pending.delete(target);
    if (pending.size === 0) this.#pending.delete(id);
  }

  /** Records of the policy's targets whose status write was lost, from the workloads themselves. */
  async #recovered(policy: ReloadPolicyView): Promise<ReadonlyMap<string, PolicyTargetStatus>> {
    if (this.#recoveryDone.has(policy.uid)) return new Map();
    this.#recoveryDone.add(policy.uid);
    const { policies } = this.#deps;
    const own = policies.boundSourcesOf(policy);
    const byId = storedTargets(policy);
    const records = new Map<string, PolicyTargetStatus>();
    let planned = 0;
    for (const view of policies.targetViewsOf(policy)) {
      // Each target is planned (no writes): let the event loop breathe between slices.
      planned += 1;
      if (planned % RECOVERY_SLICE === 0) await yieldToEventLoop();
      const target = { kind: view.ref.kind, name: view.ref.name };
      const stored = byId.get(targetId(target));
      const record = recoveredRecord(
        own,
        {
          target,
          applied: this.#appliedOf(view),
          lastReloadedFrom: view.templateAnnotations[LAST_RELOADED_FROM],
        },
        stored,
      );
      if (record !== undefined) records.set(targetId(record), record);
    }
    return records;
  }

  /** The stored status as JSON fields, once per status the watch delivers (not per write). */
  #fieldsOf(status: PolicyStatusView): ReadonlyMap<string, string> {
    let fields = this.#statusFields.get(status);
    if (fields === undefined) {
      fields = statusFields(status);
      this.#statusFields.set(status, fields);
    }
    return fields;
  }

  #appliedOf(view: WorkloadView): ReadonlyMap<SourceKey, string> {
    let applied = this.#applied.get(view);
    if (applied === undefined) {
      applied = this.#deps.applied(view);
      this.#applied.set(view, applied);
    }
    return applied;
  }

  /**
   * One Warning Event when the policy goes into conflict: the status it carries says no conflict (or
   * none yet) and the new one says conflict. A conflict already recorded before a restart is not
   * announced again; leaving the conflict re-arms it.
   */
  #announceConflict(policy: ReloadPolicyView, desired: PolicyStatusView): void {
    const conflict = desired.conditions.find((condition) => condition.type === 'Conflict');
    if (conflict?.status !== 'True') {
      this.#conflictAnnounced.delete(policy.uid);
      return;
    }
    const recorded = policy.status.conditions.find((condition) => condition.type === 'Conflict');
    if (recorded?.status === 'True' || this.#conflictAnnounced.has(policy.uid)) return;
    this.#conflictAnnounced.add(policy.uid);
    this.#deps.events.record({
      object: reloadPolicyObjectRef(policy),
      ...reloadPolicyConflictEvent(conflict.message),
    });
  }

  #failed(id: string, error: ApiError): void {
    this.#deps.onWriteFailed();
    // A policy deleted meanwhile has no status to write; anything else is tried again at the next
    // trigger or resync, with the records kept.
    if (error.status === 404) this.#pending.delete(id);
    this.#deps.logger.warn('cannot write ReloadPolicy status', {
      policy: id,
      status: error.status ?? 'network',
      error: error.message,
    });
  }
}
