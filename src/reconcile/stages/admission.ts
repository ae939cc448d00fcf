/**
 * Roll admission (docs/adr/0043, docs/safe-rollouts.md) as a reconcile stage, asked after the plan
 * and before the first write of a roll: now, later (a requeue that wakes early when the gate or a
 * slot can move) or held (the change is halted). The decision is rollout/waves.ts's; this stage
 * reads its inputs from the caches (a change's members, their applied hashes, their rollouts'
 * health, the halt markers), so a restarted or newly elected leader decides the same, and writes
 * the halt marker when a wave member fails. What it keeps in memory is a cache plus the slots
 * reserved by writes not yet acknowledged, so two workers never take the last slot together.
 */
import type { ApiError } from '../../core/api-error.ts';
import type { PolicyBinding } from '../../core/reload-policy.ts';
import { NO_BINDING } from '../../core/reload-policy.ts';
import type {
  AnnotationProblem,
  SourceKey,
  SourceRef,
  WorkloadKey,
  WorkloadView,
} from '../../core/types.ts';
import { ROLLOUT_FAILED, ROLLOUT_HALTED, ROLLOUT_PRIORITY } from '../../core/types.ts';
import { parseSourceKey } from '../../core/keys.ts';
import { configRolloutHaltedEvent, configRolloutUndoneEvent } from '../../events/event-messages.ts';
import type { EventRequest } from '../../events/event-recorder.ts';
import { sourceObjectRef, workloadObjectRef } from '../../events/object-refs.ts';
import { judgeRollout, type RolloutHealth } from '../../rollout/health.ts';
import type { KindTable } from '../../rollout/kinds.ts';
import { haltMarkerAnnotations, haltMarkerPatch } from '../../rollout/patch.ts';
import { type WorkloadRollout, workloadRollout } from '../../rollout/workload-settings.ts';
import type { FailedRolloutUndo } from './undo.ts';
import {
  type Admission,
  HALTED_REASON,
  decideAdmission,
  formatHaltMarker,
  haltMarkerSource,
  type HoldReason,
  type Member,
  type MemberFacts,
  memberStatus,
  parseHaltMarker,
  parsePriority,
  resumeCommand,
  rolloutDeadlineMs,
  type RolloutSettings,
} from '../../rollout/waves.ts';
import type { Pass } from '../attempt.ts';
import type { ReconcilePlan } from '../plan/model.ts';
import { asApiError } from '../attempt.ts';
import type { WorkloadLookup, WorkloadWriter } from '../ports.ts';
import type { AdmitAnswer, ReconcileStage } from '../stages.ts';
import type { TrackedHashes } from '../targets.ts';
import type { Target } from '../write-actions.ts';

/** The longest a roll waits for a slot or a gate before it is asked again (deadlines included). */
export const ADMISSION_RECHECK_MS = 30_000;

/**
 * The longest a held roll (its change is halted) waits before it is asked again. It wakes early
 * when a failed member changes (its marker removed) or when the source changes again.
 */
export const HELD_RECHECK_MS = 5 * 60_000;

/** A reserved slot whose write never reported its end (a dropped key) is freed after this. */
export const RESERVATION_TTL_MS = 10 * 60_000;

/** The rollouts kreload follows (controller/rollout-tracker.ts). */
export interface RolloutsInFlight {
  /** Followed rollouts not ended, cluster-wide or in one namespace. */
  inProgress(namespace?: string): number;
  lastRollout(
    key: WorkloadKey,
  ): { readonly uid: string; readonly startedAt: number; readonly ended?: unknown } | undefined;
  onEnded(listener: () => void): () => void;
}

/** What admission reports: metrics, logs and Events (wired in app/pipeline.ts). */
export interface AdmissionReport {
  held(reason: HoldReason): void;
  /** The number of changes halted now changed. */
  haltedChanges(count: number): void;
  /** The halt marker could not be written; the change stays held, the write is tried again. */
  markerFailed(view: WorkloadView, error: ApiError): void;
  /** A failed member is not undone (not opted in to config revisions, no earlier revision…). */
  notUndone(view: WorkloadView, why: string): void;
  /** `kreload.io/rollout-priority` is not an integer: read as 0, reported once per value. */
  priorityProblem(view: WorkloadView, problem: string): void;
}

export interface AdmissionDeps {
  readonly settings: RolloutSettings;
  readonly workloads: WorkloadLookup;
  /** The workload store: a namespace's workloads, and its updates (early wakes). */
  readonly members: {
    keysInNamespace(namespace: string): readonly WorkloadKey[];
    onUpdate(key: WorkloadKey, listener: () => void): () => void;
  };
  /** A(K), D(K) and whether a roll is planned, per source of a cached workload (targets.ts). */
  readonly tracked: (key: WorkloadKey) => ReadonlyMap<SourceKey, TrackedHashes>;
  readonly rollouts: RolloutsInFlight;
  readonly writer: WorkloadWriter;
  readonly kinds: KindTable;
  readonly events: { record(request: EventRequest): void };
  readonly sourceUid: (ref: SourceRef) => string | undefined;
  readonly report: AdmissionReport;
  /** ms since the epoch. */
  readonly now: () => number;
  readonly mayWrite: () => boolean;
  /**
   * The workload as its ReloadPolicy binding makes it (`rollout.priority` and `configRevisions` as
   * the annotations they stand for); absent: policies are off.
   */
  readonly underPolicy?: ((view: WorkloadView) => WorkloadView) | undefined;
  /** The workload's ReloadPolicy binding (its canary and maxConcurrent); absent: policies are off. */
  readonly binding?: ((view: WorkloadView) => PolicyBinding) | undefined;
  /** Bad rollout annotations of a member: InvalidAnnotation on that workload (the plan's path). */
  readonly problems?:
    ((view: WorkloadView, problems: readonly AnnotationProblem[]) => void) | undefined;
  /** The halt PATCH of a member opted in to undo (and to config revisions) undoes it. */
  readonly undo?: FailedRolloutUndo | undefined;
}

/** One change of one source: its hash, and what this process knows of its halt. */
interface ChangeRecord {
  readonly hash: string;
  /**
   * Failed members the watch showed carrying the marker: a later view without it is a user's
   * removal, which resumes them. (Written is not seen: the watch delivers the marker later.)
   */
  readonly marked: Set<WorkloadKey>;
  /** Failed members whose marker this process wrote (acknowledged): never written twice. */
  readonly written: Set<WorkloadKey>;
  /** Failed members a user resumed (removed the marker): their failure no longer halts. */
  readonly resumed: Set<WorkloadKey>;
  /** The halt was announced (Event, gauge); cleared on resume so a new failure is announced. */
  announced: boolean;
  /** The marker writes in flight, shared by the workers that find the halt together. */
  halting: Promise<void> | undefined;
}

interface Reservation {
  readonly namespace: string;
  readonly at: number;
}

/**
 * What a waiting roll needs: a free slot of the cluster-wide budget, of its namespace's budget, or
 * something else (a wave gate, its policy's budget), which members' updates and rollout ends move.
 */
type WaitingFor =
  | { readonly slot: 'cluster' }
  | { readonly slot: 'namespace'; readonly namespace: string }
  | { readonly slot: undefined };

interface Waiter {
  /** When its roll is asked again anyway: the waiter is stale after. */
  readonly until: number;
  readonly waitingFor: WaitingFor;
  readonly wake: () => void;
}

interface Change {
  readonly namespace: string;
  readonly source: SourceKey;
  readonly hash: string;
}

/** The slot a roll held for `reason` waits for. */
function waitingForOf(reason: HoldReason, namespace: string): WaitingFor {
  if (reason === 'budget') return { slot: 'cluster' };
  if (reason === 'namespace_budget') return { slot: 'namespace', namespace };
  return { slot: undefined };
}

const RANK: Readonly<Record<Admission['answer'], number>> = { now: 0, later: 1, held: 2 };

export class RollAdmission implements ReconcileStage {
  readonly #deps: AdmissionDeps;
  /** One record per source (namespace and key): the latest change seen; a new hash replaces it. */
  readonly #changes = new Map<string, ChangeRecord>();
  /** Slots taken by admitted rolls whose write has not ended. */
  readonly #reserved = new Map<WorkloadKey, Reservation>();
  /**
   * Rolls waiting for a slot or a gate, oldest first: woken when one can move, or when they are
   * stale. A freed slot wakes as many slot waiters as there are free slots, not all of them: in a
   * storm thousands wait, and waking all on every slot costs decisions by the square of the storm.
   */
  readonly #waiters = new Set<Waiter>();
  /** Set once a roll first waits: the tracker's rollout ends wake the waiters. */
  #listening = false;
  /** `uid=value` of the priorities already reported. */
  readonly #warnedPriorities = new Set<string>();

  constructor(deps: AdmissionDeps) {
    this.#deps = deps;
  }

  /** The changes halted now, for `/readyz` and explain. */
  halted(): readonly { readonly source: string; readonly hash: string }[] {
    return [...this.#changes.entries()].flatMap(([source, record]) =>
      record.announced ? [{ source, hash: record.hash }] : [],
    );
  }

  async admit(pass: Pass, target: Target): Promise<AdmitAnswer> {
    const { plan, view } = target;
    if (plan.action !== 'roll') return undefined;
    const namespace = view.ref.namespace;
    const worst = this.#worstAdmission(pass.key, namespace, plan);
    const admission = worst?.admission ?? { answer: 'now' };
    if (admission.answer === 'now') {
      this.#reserve(pass.key, namespace);
      return undefined;
    }
    this.#deps.report.held(admission.reason);
    // A slot waiter woken for a free slot that it could not take (another gate holds it) passes
    // the slot on, so it is not left free until the next recheck.
    if (admission.reason !== 'budget') this.#wakeSlotWaiters();
    if (admission.answer === 'held') {
      if (worst) await this.#halt(worst.change, admission.failed, worst.members);
      return {
        wake: {
          afterMs: HELD_RECHECK_MS,
          wakeEarly: this.#wakeOn(admission.failed, HELD_RECHECK_MS),
        },
      };
    }
    return {
      wake: {
        afterMs: ADMISSION_RECHECK_MS,
        wakeEarly: this.#wakeOn(
          admission.waitingOn,
          ADMISSION_RECHECK_MS,
          waitingForOf(admission.reason, namespace),
        ),
      },
    };
  }

  /** The most restrictive answer over the sources the plan rolls for, with its change. */
  #worstAdmission(
    key: WorkloadKey,
    namespace: string,
    plan: Pick<ReconcilePlan, 'rolling' | 'keys'>,
  ): { admission: Admission; change: Change; members: readonly Member[] } | undefined {
    let worst: { admission: Admission; change: Change; members: readonly Member[] } | undefined;
    for (const source of plan.rolling) {
      const hash = plan.keys.find((entry) => entry.key === source)?.desired;
      if (hash === undefined) continue;
      const change = { namespace, source, hash };
      const members = this.#members(change, key);
      const admission = decideAdmission({
        key,
        members,
        settings: this.#deps.settings,
        inFlight: this.#inFlight(namespace),
        reserved: (member) => this.#reserved.has(member) || this.#rolling(member),
      });
      if (worst === undefined || RANK[admission.answer] > RANK[worst.admission.answer]) {
        worst = { admission, change, members };
      }
    }
    return worst;
  }

  /** The reconcile of `key` ended (written, failed or gone): its slot, if any, is free. */
  ended(key: WorkloadKey): void {
    if (this.#reserved.delete(key)) this.#slotFreed();
  }

  /**
   * The change's members still in its order, with their states, from the caches. Without waves
   * only a ReloadPolicy's maxConcurrent looks at the other members: a roll under the flags' budgets
   * alone needs only itself, not a plan of every workload of its namespace at each admission.
   */
  #members(change: Change, asking: WorkloadKey): readonly Member[] {
    const record = this.#record(change);
    const markerSource = haltMarkerSource(change.namespace, change.source);
    if (!this.#deps.settings.waves) {
      const member = this.#member(asking, change, record, markerSource);
      if (member?.maxConcurrent === undefined) return member ? [member] : [];
    }
    return this.#deps.members.keysInNamespace(change.namespace).flatMap((key) => {
      const member = this.#member(key, change, record, markerSource);
      return member ? [member] : [];
    });
  }

  /** One workload as a member of the change; undefined when it does not take part in it. */
  #member(
    key: WorkloadKey,
    change: Change,
    record: ChangeRecord,
    markerSource: string,
  ): Member | undefined {
    const view = this.#deps.workloads.get(key);
    if (view === undefined) return undefined;
    const haltMarked = carriesMarker(view, ROLLOUT_HALTED, markerSource, change.hash);
    const tracked = this.#deps.tracked(key).get(change.source);
    const rolled = tracked?.applied === change.hash;
    const due = tracked?.desired === change.hash && tracked.rolls;
    if (!haltMarked && !rolled && !due) return undefined;
    this.#noteMarker(record, key, haltMarked);
    const last = this.#deps.rollouts.lastRollout(key);
    const facts: MemberFacts = {
      rolled,
      health: healthOf(view),
      rolledAt: last?.uid === view.uid ? last.startedAt : undefined,
      haltMarked,
      resumed: record.resumed.has(key) || resumedInCluster(view, markerSource, change.hash),
    };
    const deadlineMs = this.#deps.settings.deadlineMs ?? rolloutDeadlineMs(view.rolloutStatus);
    const status = memberStatus(facts, deadlineMs, this.#deps.now());
    const rollout = this.#rollout(view);
    return {
      key,
      ref: view.ref,
      priority: this.#priority(view),
      status,
      haltOnFailure: rollout.haltOnFailure,
      canary: rollout.canary,
      maxConcurrent: rollout.maxConcurrent,
    };
  }

  /** Its halting, undo, canary and budget: annotation, else its policy, else the flags. */
  #rollout(view: WorkloadView): WorkloadRollout {
    const binding = this.#deps.binding?.(view) ?? NO_BINDING;
    const { settings, problems } = workloadRollout(
      this.#underPolicy(view),
      binding,
      this.#deps.settings,
    );
    if (problems.length > 0) this.#deps.problems?.(view, problems);
    return settings;
  }

  /** A marker seen is remembered; one that disappeared was removed by a user: resumed. */
  #noteMarker(record: ChangeRecord, key: WorkloadKey, haltMarked: boolean): void {
    if (haltMarked) {
      record.marked.add(key);
      return;
    }
    if (!record.marked.delete(key)) return;
    record.resumed.add(key);
    if (record.announced) {
      record.announced = false;
      this.#publishHalts();
    }
  }

  #record(change: Change): ChangeRecord {
    const id = `${change.namespace}/${change.source}`;
    const current = this.#changes.get(id);
    if (current?.hash === change.hash) return current;
    const record: ChangeRecord = {
      hash: change.hash,
      marked: new Set(),
      written: new Set(),
      resumed: new Set(),
      announced: false,
      halting: undefined,
    };
    this.#changes.set(id, record);
    // A new hash of the source ends the old change's halt.
    if (current?.announced === true) this.#publishHalts();
    return record;
  }

  #priority(view: WorkloadView): number {
    const value = this.#underPolicy(view).annotations[ROLLOUT_PRIORITY];
    const { priority, problem } = parsePriority(value);
    const id = `${view.uid}=${value ?? ''}`;
    if (problem !== undefined && !this.#warnedPriorities.has(id)) {
      this.#warnedPriorities.add(id);
      this.#deps.report.priorityProblem(view, problem);
    }
    return priority;
  }

  /** The workload with the settings its ReloadPolicy stands for (priority, config revisions). */
  #underPolicy(view: WorkloadView): WorkloadView {
    return this.#deps.underPolicy?.(view) ?? view;
  }

  #inFlight(namespace: string): { cluster: number; namespace: number } {
    const { rollouts, now } = this.#deps;
    const expired = now() - RESERVATION_TTL_MS;
    let inNamespace = 0;
    for (const [key, reservation] of this.#reserved) {
      if (reservation.at < expired) this.#reserved.delete(key);
      else if (reservation.namespace === namespace) inNamespace += 1;
    }
    return {
      cluster: rollouts.inProgress() + this.#reserved.size,
      namespace: rollouts.inProgress(namespace) + inNamespace,
    };
  }

  /**
   * kreload's rollout of `key` is followed and not over: written, though the watch may not show the
   * roll yet (the member still reads pending), so it still counts against its policy's budget.
   */
  #rolling(key: WorkloadKey): boolean {
    const last = this.#deps.rollouts.lastRollout(key);
    return last !== undefined && last.ended === undefined;
  }

  /** Synchronous with the decision: no other worker runs between them. */
  #reserve(key: WorkloadKey, namespace: string): void {
    // Also without a budget flag: a ReloadPolicy's maxConcurrent counts the members reserved.
    this.#reserved.set(key, { namespace, at: this.#deps.now() });
  }

  /**
   * Settles when the roll may be asked again sooner than `afterMs`: a member it waits on changed,
   * a slot was freed, or a rollout ended. Waiters past their time are woken (their roll was asked
   * again meanwhile), so none accumulate.
   */
  #wakeOn(
    waitingOn: readonly Member[],
    afterMs: number,
    waitingFor: WaitingFor = { slot: undefined },
  ): Promise<void> {
    if (!this.#listening) {
      this.#listening = true;
      this.#deps.rollouts.onEnded(() => {
        this.#slotFreed();
      });
    }
    const now = this.#deps.now();
    for (const waiter of [...this.#waiters]) {
      if (now >= waiter.until) waiter.wake();
    }
    return new Promise<void>((resolve) => {
      const unsubscribes = waitingOn.map((member) =>
        this.#deps.members.onUpdate(member.key, () => {
          waiter.wake();
        }),
      );
      const waiter: Waiter = {
        until: now + afterMs,
        waitingFor,
        wake: () => {
          this.#waiters.delete(waiter);
          for (const unsubscribe of unsubscribes) unsubscribe();
          resolve();
        },
      };
      this.#waiters.add(waiter);
    });
  }

  /** A slot or a rollout ended: the gates may move, and the free slots go to the oldest waiters. */
  #slotFreed(): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.waitingFor.slot === undefined) waiter.wake();
    }
    this.#wakeSlotWaiters();
  }

  /** Wakes the oldest slot waiters, as many as the cluster-wide and namespace budgets have free. */
  #wakeSlotWaiters(): void {
    const slotWaiters = [...this.#waiters].filter((waiter) => waiter.waitingFor.slot !== undefined);
    if (slotWaiters.length === 0) return;
    const { maxConcurrent, maxPerNamespace } = this.#deps.settings;
    let freeInCluster =
      maxConcurrent > 0 ? maxConcurrent - this.#inFlight('').cluster : Number.POSITIVE_INFINITY;
    const freeInNamespace = new Map<string, number>();
    for (const waiter of slotWaiters) {
      if (freeInCluster <= 0) return;
      const { waitingFor } = waiter;
      if (waitingFor.slot === 'namespace') {
        const { namespace } = waitingFor;
        const free =
          freeInNamespace.get(namespace) ??
          (maxPerNamespace > 0
            ? maxPerNamespace - this.#inFlight(namespace).namespace
            : Number.POSITIVE_INFINITY);
        if (free <= 0) continue;
        freeInNamespace.set(namespace, free - 1);
      }
      freeInCluster -= 1;
      waiter.wake();
    }
  }

  /**
   * The change is halted by `failed`: the marker on each failed member that lacks it, once, and
   * the Events the first time. Workers that find the halt together share the writes.
   */
  async #halt(
    change: Change,
    failed: readonly Member[],
    members: readonly Member[],
  ): Promise<void> {
    const record = this.#record(change);
    record.halting ??= this.#writeHalt(change, record, failed, members).finally(() => {
      record.halting = undefined;
    });
    await record.halting;
  }

  async #writeHalt(
    change: Change,
    record: ChangeRecord,
    failed: readonly Member[],
    members: readonly Member[],
  ): Promise<void> {
    const at = new Date(this.#deps.now()).toISOString();
    const source = haltMarkerSource(change.namespace, change.source);
    for (const member of failed) {
      if (member.status.state !== 'failed' || member.status.reason === HALTED_REASON) continue;
      if (record.written.has(member.key)) continue;
      const view = this.#deps.workloads.get(member.key);
      if (view === undefined || !this.#deps.mayWrite()) continue;
      const marker = formatHaltMarker({
        source,
        hash: change.hash,
        at,
        reason: member.status.reason,
      });
      try {
        await this.#writeMarker(view, marker, change);
        record.written.add(member.key);
      } catch (error) {
        this.#deps.report.markerFailed(view, asApiError(error));
      }
    }
    if (record.announced) return;
    record.announced = true;
    this.#publishHalts();
    this.#announce(change, failed, members);
  }

  /**
   * The halt marker alone, or with --undo-failed-rollouts the undo that carries it: one PATCH, so
   * the marker is never written without the undo it stands for (nor the other way round).
   */
  async #writeMarker(view: WorkloadView, marker: string, change: Change): Promise<void> {
    const { undo } = this.#deps;
    const planned =
      undo && this.#rollout(view).undoOnFailure
        ? await undo.plan(this.#underPolicy(view), change.source, haltMarkerAnnotations(marker))
        : undefined;
    // Written before, its answer lost: the marker and the undo are there already.
    if (planned !== undefined && 'halted' in planned) return;
    if (planned === undefined || 'notUndone' in planned) {
      if (planned) this.#deps.report.notUndone(view, planned.notUndone);
      await this.#deps.writer.patch(
        view.ref,
        haltMarkerPatch(this.#deps.kinds.row(view.ref.kind), marker),
      );
      return;
    }
    await this.#deps.writer.patch(view.ref, planned.patch);
    const parsed = parseSourceKey(change.source);
    if (parsed === undefined) return;
    const content = configRolloutUndoneEvent({
      source: { type: parsed.type, namespace: change.namespace, name: parsed.name },
      hash: change.hash,
      revision: planned.revision,
      snapshots: planned.snapshots,
    });
    this.#deps.events.record({
      object: workloadObjectRef(this.#deps.kinds, view.ref, view.uid),
      ...content,
    });
  }

  #announce(change: Change, failed: readonly Member[], members: readonly Member[]): void {
    const parsed = parseSourceKey(change.source);
    if (parsed === undefined) return;
    const sourceRef: SourceRef = {
      type: parsed.type,
      namespace: change.namespace,
      name: parsed.name,
    };
    const content = configRolloutHaltedEvent({
      source: sourceRef,
      hash: change.hash,
      failed: failed.map((member) => ({
        ref: member.ref,
        reason: member.status.state === 'failed' ? member.status.reason : 'failed',
      })),
      held: members.filter((member) => member.status.state === 'pending').length,
      resume: failed[0] ? resumeCommand(failed[0].ref) : 'remove the halt marker',
    });
    const sourceUid = this.#deps.sourceUid(sourceRef);
    if (sourceUid !== undefined) {
      this.#deps.events.record({ object: sourceObjectRef(sourceRef, sourceUid), ...content });
    }
    for (const member of failed) {
      const view = this.#deps.workloads.get(member.key);
      if (view === undefined) continue;
      this.#deps.events.record({
        object: workloadObjectRef(this.#deps.kinds, view.ref, view.uid),
        ...content,
      });
    }
  }

  #publishHalts(): void {
    let count = 0;
    for (const record of this.#changes.values()) if (record.announced) count += 1;
    this.#deps.report.haltedChanges(count);
  }
}

/** The health of the workload's rollout as its cached status says; undefined without one. */
function healthOf(view: WorkloadView): RolloutHealth | undefined {
  if (view.rolloutStatus === undefined) return undefined;
  return judgeRollout({
    generation: view.generation,
    paused: view.paused,
    status: view.rolloutStatus,
  });
}

/**
 * Its failure halted this change and the marker is gone: a user resumed it, whichever process saw
 * the removal (the failure record stays until the workload's next roll).
 */
function resumedInCluster(view: WorkloadView, source: string, hash: string): boolean {
  return (
    !carriesMarker(view, ROLLOUT_HALTED, source, hash) &&
    carriesMarker(view, ROLLOUT_FAILED, source, hash)
  );
}

/** The workload's halt marker, or its failure record (`key`), names this change (source and hash). */
function carriesMarker(view: WorkloadView, key: string, source: string, hash: string): boolean {
  const marker = parseHaltMarker(view.annotations[key]);
  return marker?.source === source && marker.hash === hash;
}
