/**
 * The roll by eviction (docs/adr/0044), pure: which of a workload's pods still run an older config,
 * which to evict next, and when the roll is done. A pod runs an older config when it was created at
 * or before the workload's W `kreload.io/evict-before` time; the API server's creationTimestamp is
 * the durable record, so a restarted kreload resumes where the last one stopped and never evicts a
 * pod created after the change.
 */
import type { JsonObject } from '../core/json.ts';
import { numberAt, objectAt, objectsAt, stringAt } from '../core/json.ts';
import type { PodEvictionFacts } from './kinds.ts';

/** One pod as the eviction rules read it. */
export interface PodFacts {
  readonly name: string;
  readonly uid: string;
  /** `metadata.creationTimestamp`, ms since the epoch (the API gives whole seconds). */
  readonly createdAt: number;
  /** The `Ready` condition is True. */
  readonly ready: boolean;
  /** `metadata.deletionTimestamp` is set: evicted or deleted already. */
  readonly terminating: boolean;
}

/** What the workload object says about its pods. */
export interface EvictionScope {
  /** `spec.selector` as a label selector string for a LIST. */
  readonly selector: string;
  readonly desired: number;
  /** At least 1, so a roll always makes progress. */
  readonly maxUnavailable: number;
}

export interface EvictionProgress {
  /** Pods that still run an older config (not evicted yet). */
  readonly old: number;
  /** Pods created after the change that are not terminating. */
  readonly current: number;
  readonly desired: number;
}

/**
 * - `evict`: evict these pods now, in this order;
 * - `wait`: nothing may be evicted yet (`reason` says why); look again later;
 * - `done`: no pod created at or before the marker is left.
 */
export type EvictionStep =
  | {
      readonly step: 'evict';
      readonly pods: readonly PodFacts[];
      readonly progress: EvictionProgress;
    }
  | { readonly step: 'wait'; readonly reason: string; readonly progress: EvictionProgress }
  | { readonly step: 'done'; readonly progress: EvictionProgress };

/**
 * The API's timestamps have whole seconds, and the pods of the marker's second may be older or
 * newer than it. No pod is evicted until this long after the marker's second began, so every
 * replacement is created in a later second than every pod the marker covers (1 s, plus 1 s for
 * the skew between kreload's clock and the API server's).
 */
export const MARKER_SETTLE_MS = 2_000;

/** A pod of the LIST, or undefined when it lacks a name, UID or a valid creationTimestamp. */
export function podFactsOf(pod: JsonObject): PodFacts | undefined {
  const name = stringAt(pod, ['metadata', 'name']);
  const uid = stringAt(pod, ['metadata', 'uid']);
  const createdAt = Date.parse(stringAt(pod, ['metadata', 'creationTimestamp']) ?? '');
  if (name === undefined || uid === undefined || Number.isNaN(createdAt)) return undefined;
  const ready = objectsAt(pod, ['status', 'conditions']).some(
    (condition) => condition.type === 'Ready' && condition.status === 'True',
  );
  const terminating = stringAt(pod, ['metadata', 'deletionTimestamp']) !== undefined;
  return { name, uid, createdAt, ready, terminating };
}

/** The UID of an object's controller ownerReference, if it has one. */
export function controllerUidOf(object: JsonObject): string | undefined {
  const owner = objectsAt(object, ['metadata', 'ownerReferences']).find(
    (reference) => reference.controller === true,
  );
  return typeof owner?.uid === 'string' ? owner.uid : undefined;
}

/**
 * The pods the workload owns, through the owner chain of its kind: controlled by the workload, or
 * by one of `replicaSets` that the workload controls. Pods a selector shares with another owner
 * are never the workload's.
 */
export function ownedPods(input: {
  readonly facts: PodEvictionFacts;
  readonly workloadUid: string;
  readonly pods: readonly JsonObject[];
  readonly replicaSets: readonly JsonObject[];
}): PodFacts[] {
  const owners = new Set<string>();
  if (input.facts.owners === 'selector') return input.pods.flatMap((pod) => podFactsOf(pod) ?? []);
  if (input.facts.owners === 'direct') owners.add(input.workloadUid);
  else {
    for (const replicaSet of input.replicaSets) {
      const uid = stringAt(replicaSet, ['metadata', 'uid']);
      if (uid !== undefined && controllerUidOf(replicaSet) === input.workloadUid) owners.add(uid);
    }
  }
  return input.pods.flatMap((pod) => {
    const controller = controllerUidOf(pod);
    const facts = controller !== undefined && owners.has(controller) ? podFactsOf(pod) : undefined;
    return facts ? [facts] : [];
  });
}

const LABEL_OPERATORS: Readonly<Record<string, (key: string, values: string) => string>> = {
  In: (key, values) => `${key} in (${values})`,
  NotIn: (key, values) => `${key} notin (${values})`,
  Exists: (key) => key,
  DoesNotExist: (key) => `!${key}`,
};

/**
 * `spec.selector` (a LabelSelector) as the `labelSelector` query parameter. Undefined for a
 * missing or empty selector, or one with an operator this does not know: a selector that matched
 * everything would find other workloads' pods.
 */
export function labelSelectorOf(selector: JsonObject | undefined): string | undefined {
  if (selector === undefined) return undefined;
  const terms: string[] = [];
  const labels = objectAt(selector, ['matchLabels']) ?? {};
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value !== 'string') return undefined;
    terms.push(`${key}=${value}`);
  }
  for (const expression of objectsAt(selector, ['matchExpressions'])) {
    const key = expression.key;
    const operator = typeof expression.operator === 'string' ? expression.operator : '';
    const render = LABEL_OPERATORS[operator];
    const values = Array.isArray(expression.values) ? expression.values : [];
    if (typeof key !== 'string' || render === undefined) return undefined;
    terms.push(render(key, values.filter((value) => typeof value === 'string').join(',')));
  }
  return terms.length > 0 ? terms.join(',') : undefined;
}

/** An IntOrString budget against `desired`: percentages round down, as Kubernetes rounds them. */
function budgetOf(value: unknown, desired: number): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const percent = typeof value === 'string' ? /^(\d{1,3})%$/.exec(value) : null;
  return percent ? Math.floor((desired * Number(percent[1])) / 100) : undefined;
}

/** The scope of a roll from the workload as served; a problem in words when it has none. */
export function evictionScopeOf(
  facts: PodEvictionFacts,
  object: JsonObject,
): EvictionScope | { readonly problem: string } {
  const selector = labelSelectorOf(objectAt(object, facts.selectorPath));
  if (selector === undefined) {
    return { problem: `${facts.selectorPath.join('.')} is empty or not understood` };
  }
  const desired = Math.max(0, numberAt(object, facts.desiredPath) ?? 1);
  const path = facts.maxUnavailablePath;
  const raw = objectAt(object, path.slice(0, -1))?.[path.at(-1) ?? ''];
  const maxUnavailable = Math.max(1, budgetOf(raw, desired) ?? 1);
  return { selector, desired, maxUnavailable };
}

/** The marker for pods listed now: the newest pod's creation second, or now without pods. */
export function evictBeforeOf(pods: readonly PodFacts[], now: number): number {
  const newest = Math.max(...pods.map((pod) => pod.createdAt));
  return Number.isFinite(newest) ? newest : Math.floor(now / 1000) * 1000;
}

function byAge(a: PodFacts, b: PodFacts): number {
  return a.createdAt - b.createdAt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * The next step of a roll by eviction. Pods created at or before `evictBefore` and not terminating
 * are old; the oldest go first. As many are evicted as the budget allows: `maxUnavailable` less the
 * pods the workload lacks Ready now, so with the default budget of one the next eviction waits for
 * the replacement of the last one to be Ready.
 */
export function nextEvictions(input: {
  readonly pods: readonly PodFacts[];
  readonly evictBefore: number;
  readonly scope: Pick<EvictionScope, 'desired' | 'maxUnavailable'>;
  readonly now: number;
}): EvictionStep {
  const { pods, evictBefore, scope, now } = input;
  const live = pods.filter((pod) => !pod.terminating);
  const old = live.filter((pod) => pod.createdAt <= evictBefore).sort(byAge);
  const progress = {
    old: old.length,
    current: live.length - old.length,
    desired: scope.desired,
  };
  if (old.length === 0) return { step: 'done', progress };
  if (now < evictBefore + MARKER_SETTLE_MS) {
    return { step: 'wait', reason: 'waiting for the change to settle', progress };
  }
  const ready = live.filter((pod) => pod.ready).length;
  const unavailable = Math.max(0, scope.desired - ready);
  const budget = scope.maxUnavailable - unavailable;
  if (budget <= 0) {
    return {
      step: 'wait',
      reason: `waiting for pods to be Ready (${String(ready)} of ${String(scope.desired)})`,
      progress,
    };
  }
  return { step: 'evict', pods: old.slice(0, budget), progress };
}

/** The body of a POST to `pods/<name>/eviction`: policy/v1, only if still the same pod. */
export function evictionBody(namespace: string, pod: Pick<PodFacts, 'name' | 'uid'>): JsonObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name: pod.name, namespace },
    deleteOptions: { preconditions: { uid: pod.uid } },
  };
}

/** Whether a value is a usable marker; a marker someone broke is read as absent. */
export function parseEvictBefore(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at;
}

/** The chart value that grants what a roll by eviction needs (docs/evict-strategy.md). */
export const EVICTION_RBAC_VALUE = 'reloader.enableEvictStrategy';

/**
 * Why a roll by eviction is held when the API refused a request of it (403): the server's message,
 * and how to grant it. Holding, not failing: the roll goes on by itself once the grant is there.
 */
export function forbiddenHoldReason(message: string): string {
  return `${message}; the chart grants it with ${EVICTION_RBAC_VALUE}=true`;
}
