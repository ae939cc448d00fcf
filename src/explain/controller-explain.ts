/**
 * Explain from the running controller (GET /debug/explain): the same pure explainers as the CLI,
 * fed from the controller's own caches, marks, recreation journal and queue instead of GETs, so
 * the answer also shows what only the controller knows (ADR 0031). Nothing here does I/O; the
 * caches hold hashes and kept annotations only, never Secret data.
 */
import type { FlapLimits, FlapStatus } from '../core/flap-breaker.ts';
import { withPolicySettings } from '../core/reload-policy.ts';
import { workloadFlapLimits } from '../rollout/workload-settings.ts';
import { parseSourceKey, sourceKey, workloadKey } from '../core/keys.ts';
import { referencedSources } from '../core/references.ts';
import type {
  SourceKey,
  SourceType,
  WorkloadKey,
  WorkloadKindName,
  WorkloadView,
} from '../core/types.ts';
import { BASELINE, LAST_RELOADED_FROM, SOURCE_HASHES } from '../core/types.ts';
import type { Options } from '../config/parse-options.ts';
import type { MarkLedger, PolicyLookup, SourceLookup, WorkloadLookup } from '../reconcile/ports.ts';
import { cachedSourceFacts } from '../reconcile/source-facts.ts';
import type { KindTable } from '../rollout/kinds.ts';
import type {
  RunningEviction,
  SourceRead,
  StartedRollout,
  WorkloadInput,
} from './explain-workload.ts';
import {
  type ControllerKnowledge,
  explainWorkload,
  haltsAmong,
  keysToRead,
  listedTypes,
} from './explain-workload.ts';
import { explainSource } from './explain-source.ts';
import type {
  ExplainReport,
  QueueState,
  ShardFacts,
  SourceQueryExplanation,
  WorkloadExplanation,
} from './model.ts';
import type { ExplainTarget } from './targets.ts';
import { viewReferenceSites } from './view-sites.ts';
import { yieldToEventLoop } from '../time/event-loop.ts';
import { plannedKinds } from '../watch/watch-plan.ts';

/** The controller's read ports, as app.ts wires them. */
export interface ControllerExplainPorts {
  readonly options: Options;
  /** The effective kind table (built-in and configured kinds). */
  readonly kinds: KindTable;
  readonly sources: SourceLookup;
  readonly workloads: Pick<WorkloadLookup, 'get' | 'relevantSince'> & {
    keysInNamespace(namespace: string): readonly WorkloadKey[];
    isSynced(kind: WorkloadKindName): boolean;
  };
  /** Whether the Namespace watch of --namespace-selector holds the namespace. */
  readonly namespaceSelected: (namespace: string) => boolean;
  readonly marks: Pick<MarkLedger, 'marksOf'>;
  /** The reconciler's ReloadPolicy port (`--enable-reload-policies`); undefined without it. */
  readonly policies: PolicyLookup | undefined;
  readonly recreationPendingSince: (key: WorkloadKey) => number | undefined;
  readonly queue: (key: WorkloadKey) => QueueState;
  /** The cached workloads of a namespace (halt markers, with `--rollout-waves`). */
  readonly workloadsInNamespace: (namespace: string) => readonly WorkloadView[];
  /** The last rollout this kreload started on the workload (controller/rollout-tracker.ts). */
  readonly rollout: (key: WorkloadKey) => StartedRollout | undefined;
  /** The roll by eviction under way on the workload (controller/eviction-tracker.ts). */
  readonly eviction?: ((key: WorkloadKey) => RunningEviction | undefined) | undefined;
  readonly leading: () => boolean;
  /** Active-active mode: the bucket of a namespace and who writes it; undefined otherwise. */
  readonly shard?: ((namespace: string) => ShardFacts) | undefined;
  /** The flapping-source breakers (docs/windows-and-breaker.md); undefined when off. */
  readonly breakers?:
    { status(namespace: string, source: SourceKey, limits?: FlapLimits): FlapStatus } | undefined;
  /** ms since the epoch. */
  readonly now: () => number;
  /** `POD_NAME`, named in the answer. */
  readonly pod: string | undefined;
  /** The baseline store (docs/adr/0046); undefined with `--baseline-store=workload`. */
  readonly baselines?:
    | {
        inUse(): boolean;
        recordOf(view: WorkloadView): string | undefined;
        objectOf(view: WorkloadView): string | undefined;
      }
    | undefined;
}

export type ControllerAnswer =
  | { readonly outcome: 'explained'; readonly report: ExplainReport }
  | { readonly outcome: 'not-found'; readonly message: string }
  | { readonly outcome: 'not-synced'; readonly message: string };

export type ControllerQuery = ExplainTarget & { readonly namespace: string; readonly name: string };

function cachedRead(ports: ControllerExplainPorts, namespace: string, key: SourceKey): SourceRead {
  const parsed = parseSourceKey(key);
  if (parsed === undefined) return { state: 'unreadable' };
  if (!ports.sources.isHealthy(parsed.type, namespace)) return { state: 'unhealthy' };
  const view = ports.sources.get(namespace, parsed.type, parsed.name);
  return view === undefined ? { state: 'absent' } : { state: 'present', view };
}

function namespaceSelected(ports: ControllerExplainPorts, namespace: string) {
  const { scope } = ports.options;
  if (scope.mode !== 'global' || scope.namespaceSelector === '') return undefined;
  return ports.namespaceSelected(namespace);
}

/** The store's record and its ConfigMap, as the reconciler reads them (docs/adr/0046). */
function storedBaseline(ports: ControllerExplainPorts, view: WorkloadView) {
  const { baselines } = ports;
  if (baselines === undefined) return undefined;
  return {
    raw: baselines.recordOf(view),
    object: baselines.objectOf(view),
    readOnly: !baselines.inUse(),
  };
}

/** What the running controller knows of the workload `key` in `namespace`. */
function controllerKnowledge(
  ports: ControllerExplainPorts,
  key: WorkloadKey,
  view: WorkloadView,
): ControllerKnowledge {
  const namespace = view.ref.namespace;
  return {
    marks: ports.marks.marksOf(key),
    facts: (source) => cachedSourceFacts(ports, { key, namespace }, source),
    leading: ports.leading(),
    queue: ports.queue(key),
    rollout: ports.rollout(key),
    eviction: ports.eviction?.(key),
    shard: ports.shard?.(namespace),
  };
}

function explainCached(
  ports: ControllerExplainPorts,
  key: WorkloadKey,
): WorkloadExplanation | undefined {
  const view = ports.workloads.get(key);
  const row = view && ports.kinds.find(view.ref.kind);
  if (view === undefined || row === undefined) return undefined;
  const { options } = ports;
  const { namespace } = view.ref;
  const candidates: Partial<Record<SourceType, readonly string[]>> = {};
  for (const type of listedTypes(view, options)) {
    candidates[type] = ports.sources.namesInNamespace(namespace, type);
  }
  const binding = ports.policies?.bindingOf(view);
  const keys = new Set([
    ...keysToRead(view, options),
    ...(binding?.sources ?? []),
    ...Object.entries(candidates).flatMap(([type, names]) =>
      names.map((name) => sourceKey(type as SourceType, name)),
    ),
  ]);
  const sources = new Map([...keys].map((k) => [k, cachedRead(ports, namespace, k)] as const));
  // The limits the roll holds apply: the workload's own or its policy's, then the flags'.
  const under =
    binding === undefined ? view : withPolicySettings(view, binding, options.annotationKeys);
  const limits = workloadFlapLimits(under, options.flapBreaker).settings;
  const input: WorkloadInput = {
    view,
    row,
    kinds: ports.kinds,
    sites: viewReferenceSites(view.podSpec),
    options,
    namespaceSelected: namespaceSelected(ports, namespace),
    sources,
    candidates,
    now: ports.now(),
    recreationPendingSince: ports.recreationPendingSince(key),
    halts: options.rollouts.waves ? haltsAmong(ports.workloadsInNamespace(namespace)) : undefined,
    flapping: (source) => ports.breakers?.status(namespace, source, limits) ?? { open: false },
    // The binding the reconciler's next pass reads, from the same store.
    policies: binding === undefined ? undefined : { state: 'known', binding },
    controller: controllerKnowledge(ports, key, view),
    storedBaseline: storedBaseline(ports, view),
  };
  return explainWorkload(input);
}

function notFound(ports: ControllerExplainPorts, query: ControllerQuery & { what: 'workload' }) {
  const key = workloadKey({ kind: query.kind, namespace: query.namespace, name: query.name });
  const what = `${query.kind} ${query.namespace}/${query.name}`;
  const since = ports.recreationPendingSince(key);
  if (since !== undefined) {
    return `${what} is not in the controller's cache: kreload deleted it to roll it and its recreation is pending since ${new Date(since).toISOString()}`;
  }
  return `${what} is not in the controller's cache: it does not exist, or this kreload does not watch it (its kind, namespace or scope; kreload explain names the rule)`;
}

/** At most this many workloads are explained for one source query; the rest are counted. */
export const MAX_SOURCE_QUERY_WORKLOADS = 200;
/** Workloads explained per turn of the event loop, so probes and watches go on meanwhile. */
const EXPLAIN_SLICE = 20;

/**
 * Whether the workload may use the source at all, from cheap facts (its references, reload lists,
 * policy binding and the raw text of its state annotations): only these are explained in full.
 */
function mayUse(
  ports: ControllerExplainPorts,
  view: WorkloadView,
  type: SourceType,
  name: string,
): boolean {
  const key = sourceKey(type, name);
  if (referencedSources(view.podSpec).includes(key)) return true;
  if (listedTypes(view, ports.options).includes(type)) return true;
  if (ports.policies?.bindingOf(view).sources.has(key) === true) return true;
  const quoted = JSON.stringify(key);
  const state = [
    view.templateAnnotations[SOURCE_HASHES],
    view.annotations[SOURCE_HASHES],
    view.annotations[BASELINE],
  ];
  if (state.some((raw) => raw?.includes(quoted) === true)) return true;
  return view.templateAnnotations[LAST_RELOADED_FROM]?.includes(name) === true;
}

async function explainSourceQuery(
  ports: ControllerExplainPorts,
  query: ControllerQuery & { what: 'source' },
): Promise<SourceQueryExplanation> {
  const candidates = ports.workloads.keysInNamespace(query.namespace).filter((candidate) => {
    const view = ports.workloads.get(candidate);
    return view !== undefined && mayUse(ports, view, query.type, query.name);
  });
  const explained: WorkloadExplanation[] = [];
  for (const [index, candidate] of candidates.slice(0, MAX_SOURCE_QUERY_WORKLOADS).entries()) {
    if (index > 0 && index % EXPLAIN_SLICE === 0) await yieldToEventLoop();
    const explanation = explainCached(ports, candidate);
    if (explanation !== undefined) explained.push(explanation);
  }
  const source = explainSource(sourceKey(query.type, query.name), query.namespace, explained);
  const unexplained = Math.max(0, candidates.length - MAX_SOURCE_QUERY_WORKLOADS);
  return unexplained > 0 ? { ...source, unexplained } : source;
}

/** The controller's answer to one query; never throws on a query that names nothing. */
export async function explainFromController(
  ports: ControllerExplainPorts,
  query: ControllerQuery,
): Promise<ControllerAnswer> {
  const config = { kind: 'controller', pod: ports.pod } as const;
  if (query.what === 'source') {
    const source = await explainSourceQuery(ports, query);
    return { outcome: 'explained', report: { config, assumptions: [], source } };
  }
  const planned = plannedKinds(ports.options, ports.kinds);
  if (![...planned.always, ...planned.ifServed].includes(query.kind)) {
    return {
      outcome: 'not-found',
      message: `this kreload does not watch ${query.kind} (--ignored-workload-types, --is-Argo-Rollouts)`,
    };
  }
  if (!ports.workloads.isSynced(query.kind)) {
    return {
      outcome: 'not-synced',
      message: `the controller's ${query.kind} cache is not synced (not watched, or still listing)`,
    };
  }
  const key = workloadKey({ kind: query.kind, namespace: query.namespace, name: query.name });
  const workload = explainCached(ports, key);
  if (workload === undefined) return { outcome: 'not-found', message: notFound(ports, query) };
  return { outcome: 'explained', report: { config, assumptions: [], workload } };
}

/** The work queue as the answer reads it. */
export interface QueueView {
  readonly inFlight: readonly WorkloadKey[];
  pendingEntry(key: WorkloadKey): { readonly dueAt: number } | undefined;
}

export function queueStateOf(queue: QueueView, key: WorkloadKey): QueueState {
  if (queue.inFlight.includes(key)) return { state: 'in-flight' };
  const entry = queue.pendingEntry(key);
  if (entry === undefined) return { state: 'idle' };
  return { state: 'queued', dueAt: new Date(entry.dueAt).toISOString() };
}
