/**
 * Roll admission (docs/adr/0043): for one workload due to roll for a change of a source, whether it
 * may roll now, later (a slot or a wave gate it waits on) or is held (the change is halted). Pure:
 * the members of the change, their states and the budget counts come from the caller, who reads
 * them from the cluster's caches, so a restarted or newly elected leader decides the same.
 */
import type { WorkloadKey, WorkloadRef } from '../core/types.ts';
import type { RolloutHealth } from './health.ts';
import type { RolloutStatusView } from './rollout-status.ts';

/** `--canary`: a count of workloads, or a percentage of the change's members. */
export type CountOrPercent = { readonly count: number } | { readonly percent: number };

export interface RolloutSettings {
  /** `--max-concurrent-rollouts`; 0: no limit. */
  readonly maxConcurrent: number;
  /** `--max-concurrent-rollouts-per-namespace`; 0: no limit. */
  readonly maxPerNamespace: number;
  /** `--rollout-waves`. */
  readonly waves: boolean;
  readonly canary: CountOrPercent;
  /** `--rollout-deadline` in ms; undefined: each workload's own progress deadline + margin. */
  readonly deadlineMs: number | undefined;
  /** `--halt-on-failed-rollout`. */
  readonly haltOnFailure: boolean;
  /** `--undo-failed-rollouts`: a halting member opted in to config revisions is also undone. */
  readonly undoOnFailure: boolean;
}

/** Reloader's behaviour: every roll now, nothing counted. */
export const UNLIMITED_ROLLOUTS: RolloutSettings = {
  maxConcurrent: 0,
  maxPerNamespace: 0,
  waves: false,
  canary: { count: 1 },
  deadlineMs: undefined,
  haltOnFailure: true,
  undoOnFailure: false,
};

/** No flag asks for admission: the stage is not even built. */
export function admitsEverything(settings: RolloutSettings): boolean {
  return !settings.waves && settings.maxConcurrent === 0 && settings.maxPerNamespace === 0;
}

/**
 * Where a member of a change stands, from the cluster:
 * - `pending`: not rolled for the change yet (its applied hash is another);
 * - `progressing`: rolled, its rollout not complete yet, within its deadline;
 * - `complete`: rolled and complete (or of a kind without a health model);
 * - `failed`: rolled and failed (`reason`), or past its deadline.
 */
export type MemberState =
  | { readonly state: 'pending' | 'progressing' | 'complete' }
  | { readonly state: 'failed'; readonly reason: string; readonly detail: string };

/** A group of members sized by one ReloadPolicy: its canary share or its in-flight budget. */
export interface GroupSize<T> {
  /** `namespace/name` of the policy whose targets form the group. */
  readonly group: string;
  readonly size: T;
}

export interface Member {
  readonly key: WorkloadKey;
  readonly ref: WorkloadRef;
  /** `kreload.io/rollout-priority`; lower rolls first. */
  readonly priority: number;
  readonly status: MemberState;
  /** Its failure halts the change; undefined: `--halt-on-failed-rollout`. */
  readonly haltOnFailure?: boolean | undefined;
  /** Its policy's canary share of the policy's members; undefined: the change's `--canary`. */
  readonly canary?: GroupSize<CountOrPercent> | undefined;
  /** The most members of its policy in flight for the change at once; undefined: no such limit. */
  readonly maxConcurrent?: GroupSize<number> | undefined;
}

/** Why a roll waits: the `reason` label of `kreload_rollouts_held_total`. */
export type HoldReason = 'budget' | 'namespace_budget' | 'policy_budget' | 'wave' | 'halted';

export type Admission =
  | { readonly answer: 'now' }
  | {
      readonly answer: 'later';
      readonly reason: Exclude<HoldReason, 'halted'>;
      /** Members whose progress can move the gate (wave), or none (a slot frees anywhere). */
      readonly waitingOn: readonly Member[];
      /** The member's wave, from 0 (the canary wave); undefined without waves. */
      readonly wave: number | undefined;
    }
  | { readonly answer: 'held'; readonly reason: 'halted'; readonly failed: readonly Member[] };

/** Rollouts in flight now: kreload's followed rollouts plus reserved slots. */
export interface BudgetCounts {
  readonly cluster: number;
  readonly namespace: number;
}

/** The rollout order: priority, then namespace, kind and name, so ties are stable. */
export function orderMembers(members: readonly Member[]): readonly Member[] {
  return [...members].sort(
    (a, b) =>
      a.priority - b.priority ||
      compare(a.ref.namespace, b.ref.namespace) ||
      compare(a.ref.kind, b.ref.kind) ||
      compare(a.ref.name, b.ref.name),
  );
}

function compare(a: string, b: string): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** The canary wave's size for `total` members: a percentage rounds up, and is at least 1. */
export function canarySize(canary: CountOrPercent, total: number): number {
  const size = 'count' in canary ? canary.count : Math.ceil((total * canary.percent) / 100);
  return Math.min(total, Math.max(1, size));
}

/** The wave of the member at `index` of the order: the canary wave 0, then waves of the budget. */
export function waveOf(index: number, total: number, settings: RolloutSettings): number {
  const canary = canarySize(settings.canary, total);
  if (index < canary) return 0;
  const size = settings.maxConcurrent > 0 ? settings.maxConcurrent : Math.max(1, total - canary);
  return 1 + Math.floor((index - canary) / size);
}

/**
 * The wave of each member of `order` (the rollout order): wave 0 holds the canaries — the first
 * `--canary` of the members without a policy canary, and the first of each policy's targets by
 * that policy's canary — and the rest follow in order, in waves of `--max-concurrent-rollouts`
 * (one wave when it is 0). With no policy canary this is `waveOf` for every index.
 */
export function wavesOf(order: readonly Member[], settings: RolloutSettings): readonly number[] {
  const groups = new Map<
    string,
    { readonly canary: CountOrPercent; total: number; taken: number }
  >();
  const groupOf = (member: Member): string => member.canary?.group ?? '';
  for (const member of order) {
    const id = groupOf(member);
    const group = groups.get(id);
    if (group) group.total += 1;
    else groups.set(id, { canary: member.canary?.size ?? settings.canary, total: 1, taken: 0 });
  }
  const isCanary = order.map((member) => {
    const group = groups.get(groupOf(member));
    if (group === undefined || group.taken >= canarySize(group.canary, group.total)) return false;
    group.taken += 1;
    return true;
  });
  const canaries = isCanary.filter(Boolean).length;
  const rest = order.length - canaries;
  const size = settings.maxConcurrent > 0 ? settings.maxConcurrent : Math.max(1, rest);
  let later = 0;
  return isCanary.map((canary) => {
    if (canary) return 0;
    const wave = 1 + Math.floor(later / size);
    later += 1;
    return wave;
  });
}

/** The failed members that halt the change: with waves on, each whose halting is on. */
export function haltingMembers(
  members: readonly Member[],
  settings: RolloutSettings,
): readonly Member[] {
  if (!settings.waves) return [];
  const order = orderMembers(members);
  const waves = wavesOf(order, settings);
  // A member rolled for the change in a later wave than a failure means that failure was accepted
  // (resumed) before: the later wave could not have started otherwise. A restarted or new leader,
  // which never saw the marker removed, reads the resume from here.
  const furthest = Math.max(
    -1,
    ...order.flatMap((member, i) => (member.status.state === 'pending' ? [] : [waves[i] ?? 0])),
  );
  return order.filter(
    (member, i) =>
      member.status.state === 'failed' &&
      (member.haltOnFailure ?? settings.haltOnFailure) &&
      (member.status.reason === HALTED_REASON || (waves[i] ?? 0) >= furthest),
  );
}

export interface AdmissionQuestion {
  /** The member due to roll. */
  readonly key: WorkloadKey;
  /** Every member of the change still in the order, the asking one included, in any order. */
  readonly members: readonly Member[];
  readonly settings: RolloutSettings;
  readonly inFlight: BudgetCounts;
  /**
   * Members admitted and not seen rolled yet (their write has not ended, or the watch has not shown
   * it): they count against their policy's budget.
   */
  readonly reserved?: ((key: WorkloadKey) => boolean) | undefined;
}

/**
 * Answers for one member: held when the change is halted, later while an earlier wave is not
 * complete or no slot is free, else now.
 */
export function decideAdmission(question: AdmissionQuestion): Admission {
  const { settings, inFlight } = question;
  if (settings.waves) {
    const gate = waveGate(question);
    if (gate) return gate;
  }
  if (settings.maxConcurrent > 0 && inFlight.cluster >= settings.maxConcurrent) {
    return { answer: 'later', reason: 'budget', waitingOn: [], wave: undefined };
  }
  if (settings.maxPerNamespace > 0 && inFlight.namespace >= settings.maxPerNamespace) {
    return { answer: 'later', reason: 'namespace_budget', waitingOn: [], wave: undefined };
  }
  return policyBudget(question) ?? { answer: 'now' };
}

/**
 * A policy's `rollout.maxConcurrent`: the change's members of that policy in flight (rolled and
 * not complete, or admitted and not written yet) leave no room. It only ever adds a limit: the
 * cluster-wide and namespace budgets above still apply.
 */
function policyBudget(question: AdmissionQuestion): Admission | undefined {
  const asking = question.members.find((member) => member.key === question.key);
  const budget = asking?.maxConcurrent;
  if (budget === undefined) return undefined;
  const reserved = question.reserved ?? (() => false);
  const inFlight = question.members.filter(
    (member) =>
      member.key !== question.key &&
      member.maxConcurrent?.group === budget.group &&
      (member.status.state === 'progressing' ||
        (member.status.state === 'pending' && reserved(member.key))),
  );
  if (inFlight.length < budget.size) return undefined;
  return { answer: 'later', reason: 'policy_budget', waitingOn: inFlight, wave: undefined };
}

function waveGate(question: AdmissionQuestion): Admission | undefined {
  const { settings } = question;
  const failed = haltingMembers(question.members, settings);
  if (failed.length > 0) return { answer: 'held', reason: 'halted', failed };
  const order = orderMembers(question.members);
  const index = order.findIndex((member) => member.key === question.key);
  // Not a member (it dropped out of the order): nothing to gate it on.
  if (index < 0) return undefined;
  const waves = wavesOf(order, settings);
  const wave = waves[index] ?? 0;
  const earlier = order.filter((_, i) => (waves[i] ?? 0) < wave);
  // Without halting, a failed member's rollout is over too: the gate does not wait on it.
  const waitingOn = earlier.filter(
    (member) => member.status.state === 'pending' || member.status.state === 'progressing',
  );
  if (waitingOn.length > 0) return { answer: 'later', reason: 'wave', waitingOn, wave };
  return undefined;
}

/** Kubernetes' default `progressDeadlineSeconds`, for kinds without one of their own. */
const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;

/** Past the workload's own progress deadline: its controller reports the failure first. */
const ROLLOUT_DEADLINE_MARGIN_MS = 30_000;

/** The longest a timer can wait (2^31-1 ms), as for `--rollout-deadline`. */
const MAX_ROLLOUT_DEADLINE_MS = 2 ** 31 - 1;

/**
 * The deadline of a member when `--rollout-deadline` is not set: its own `progressDeadlineSeconds`
 * (a Deployment's, an Argo Rollout's; 600 s for kinds without one, or when unset or not positive)
 * plus a margin, so its controller's own `ProgressDeadlineExceeded` comes first. Bounded by the
 * longest timer: Kubernetes' "no deadline" (2^31-1 s) waits 2^31-1 ms.
 */
export function rolloutDeadlineMs(status: RolloutStatusView | undefined): number {
  const own =
    status?.model === 'replica-set' || status?.model === 'rollout-phase'
      ? status.progressDeadlineSeconds
      : undefined;
  const seconds =
    own !== undefined && Number.isFinite(own) && own > 0
      ? Math.ceil(own)
      : DEFAULT_PROGRESS_DEADLINE_SECONDS;
  return Math.min(seconds * 1000 + ROLLOUT_DEADLINE_MARGIN_MS, MAX_ROLLOUT_DEADLINE_MS);
}

/** The reason of a member failed because it carries the halt marker. */
export const HALTED_REASON = 'Halted';

/** What the caches say about one member, for memberStatus. */
export interface MemberFacts {
  /** Its applied hash for the source is the change's hash. */
  readonly rolled: boolean;
  /** Its rollout's health; undefined for a kind without a health model, or no status yet. */
  readonly health: RolloutHealth | undefined;
  /** When its roll for this change started (ms), if this process knows. */
  readonly rolledAt: number | undefined;
  /** It carries the halt marker of this change. */
  readonly haltMarked: boolean;
  /** A user resumed this change after it failed (removed the marker): its failure is accepted. */
  readonly resumed: boolean;
}

/**
 * A member's state: its halt marker or a failed rollout make it failed, as does a rollout still not
 * complete `deadlineMs` after its roll; a kind whose rollouts cannot be judged counts as complete.
 */
export function memberStatus(facts: MemberFacts, deadlineMs: number, now: number): MemberState {
  if (facts.haltMarked) {
    return {
      state: 'failed',
      reason: HALTED_REASON,
      detail: 'carries the halt marker of this change',
    };
  }
  if (!facts.rolled) return { state: 'pending' };
  const { health } = facts;
  if (health === undefined || health.state === 'complete' || health.state === 'unknown') {
    return { state: 'complete' };
  }
  if (facts.resumed) return { state: 'complete' };
  if (health.state === 'failed') {
    return { state: 'failed', reason: health.reason, detail: health.detail };
  }
  if (facts.rolledAt !== undefined && now - facts.rolledAt > deadlineMs) {
    return {
      state: 'failed',
      reason: 'RolloutDeadlineExceeded',
      detail: `not complete ${String(Math.round(deadlineMs / 1000))}s after its roll: ${health.detail}`,
    };
  }
  return { state: 'progressing' };
}

/** `kreload.io/rollout-priority`: an integer; anything else is 0 with a problem to report. */
export function parsePriority(value: string | undefined): {
  readonly priority: number;
  readonly problem?: string;
} {
  if (value === undefined) return { priority: 0 };
  const trimmed = value.trim();
  if (/^[+-]?\d{1,9}$/.test(trimmed)) return { priority: Number(trimmed) };
  return {
    priority: 0,
    problem: `invalid rollout priority "${value.slice(0, 64)}": expected an integer of at most 9 digits; read as 0`,
  };
}

/** The halted change a workload's `kreload.io/rollout-halted` names. */
export interface HaltMarker {
  /** `<type>/<namespace>/<name>` of the source, e.g. `secret/team-a/db`. */
  readonly source: string;
  readonly hash: string;
  /** RFC 3339. */
  readonly at: string;
  readonly reason: string;
}

/** The marker's source field for a source of `namespace` with key `configmap/app`. */
export function haltMarkerSource(namespace: string, sourceKey: string): string {
  const slash = sourceKey.indexOf('/');
  return `${sourceKey.slice(0, slash)}/${namespace}/${sourceKey.slice(slash + 1)}`;
}

export function formatHaltMarker(marker: HaltMarker): string {
  return JSON.stringify({
    source: marker.source,
    hash: marker.hash,
    at: marker.at,
    reason: marker.reason,
  });
}

/** The marker as written; undefined when absent or not one (edited by hand): it then halts nothing. */
export function parseHaltMarker(value: string | undefined): HaltMarker | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { source, hash, at, reason } = parsed as Record<string, unknown>;
  if (typeof source !== 'string' || typeof hash !== 'string') return undefined;
  return {
    source,
    hash,
    at: typeof at === 'string' ? at : '',
    reason: typeof reason === 'string' ? reason : '',
  };
}

/** The command that resumes a change halted by the marker on `ref`. */
export function resumeCommand(ref: WorkloadRef): string {
  return `kubectl annotate -n ${ref.namespace} ${ref.kind.toLowerCase()}/${ref.name} kreload.io/rollout-halted-`;
}
