/**
 * Gathering: reads what one explanation needs through the ExplainReader, then hands it to the pure
 * explainers. Reads are shared across the workloads of one run (a source query reads each source
 * once).
 */
import { parseSourceKey, sourceKey, workloadKey } from '../../core/keys.ts';
import type { SourceKey, SourceType, WorkloadKey, WorkloadKindName } from '../../core/types.ts';
import type { Options } from '../../config/parse-options.ts';
import type { JsonObject } from '../../core/json.ts';
import { objectAt } from '../../core/json.ts';
import { projectWorkload } from '../../kube/workload-projection.ts';
import { projectionSettings } from '../../kube/projections.ts';
import type { KindTable, WorkloadKindRow } from '../../rollout/kinds.ts';
import type {
  HaltSeen,
  SourceRead,
  StoredBaselineFact,
  WorkloadInput,
} from '../../explain/explain-workload.ts';
import {
  explainWorkload,
  haltsAmong,
  keysToRead,
  listedTypes,
} from '../../explain/explain-workload.ts';
import { explainSource } from '../../explain/explain-source.ts';
import { EVICT_BEFORE } from '../../core/types.ts';
import {
  evictionScopeOf,
  nextEvictions,
  ownedPods,
  parseEvictBefore,
} from '../../rollout/evict.ts';
import { referenceSites } from './reference-sites.ts';
import type { SourceQueryExplanation, WorkloadExplanation } from '../../explain/model.ts';
import type { ExplainReader, PolicyList } from './reader.ts';
import type { NamedObject } from '../../core/reload-policy.ts';
import { bindingOfWorkload } from '../../core/reload-policy.ts';
import type { WorkloadView } from '../../core/types.ts';
import type { PolicyKnowledge } from '../../explain/explain-workload.ts';

/** The object cannot be explained: it does not exist, or explain may not read it. */
export class ExplainTargetError extends Error {
  readonly reason: 'not-found' | 'forbidden' | 'malformed';
  constructor(message: string, reason: ExplainTargetError['reason'], options?: ErrorOptions) {
    super(message, options);
    this.name = 'ExplainTargetError';
    this.reason = reason;
  }
}

/** A Job recreation the journal holds (ADR 0019): the Job kreload deleted and when. */
export interface JournalledRecreation {
  readonly deletedUid: string;
  readonly since: number;
}

export interface GatherContext {
  readonly reader: ExplainReader;
  readonly options: Options;
  /** The controller's effective kind table: the built-in kinds and those it is configured with. */
  readonly kinds: KindTable;
  readonly now: number;
  /** The recreation journal's entries by Job key; empty when it could not be read. */
  readonly recreations: ReadonlyMap<WorkloadKey, JournalledRecreation>;
  /** The baseline store's record of a workload, when the store is in use and was read. */
  readonly storedBaseline?: ((view: WorkloadView) => StoredBaselineFact) | undefined;
}

class RunCache {
  readonly #sources = new Map<SourceKey, Promise<SourceRead>>();
  readonly #names = new Map<SourceType, Promise<readonly string[] | 'forbidden'>>();
  readonly #selected = new Map<string, Promise<boolean | undefined>>();
  #policies: Promise<PolicyList> | undefined;
  #halts: Promise<readonly HaltSeen[]> | undefined;
  readonly #catalogs = new Map<
    SourceType,
    Promise<readonly NamedObject<SourceType>[] | 'forbidden'>
  >();
  readonly #context: GatherContext;

  constructor(context: GatherContext) {
    this.#context = context;
  }

  source(namespace: string, key: SourceKey): Promise<SourceRead> {
    const known = this.#sources.get(key);
    if (known !== undefined) return known;
    const parsed = parseSourceKey(key);
    const read: Promise<SourceRead> =
      parsed === undefined
        ? Promise.resolve({ state: 'unreadable' })
        : this.#context.reader.readSource(
            namespace,
            parsed.type,
            parsed.name,
            this.#context.options,
          );
    this.#sources.set(key, read);
    return read;
  }

  names(namespace: string, type: SourceType): Promise<readonly string[] | 'forbidden'> {
    const known = this.#names.get(type);
    if (known !== undefined) return known;
    const read = this.#context.reader.sourceNames(namespace, type, this.#context.options);
    this.#names.set(type, read);
    return read;
  }

  policies(namespace: string): Promise<PolicyList> {
    this.#policies ??= this.#context.reader.reloadPolicies(namespace);
    return this.#policies;
  }

  /** The halt markers on the namespace's workloads (docs/safe-rollouts.md). */
  halts(namespace: string): Promise<readonly HaltSeen[]> {
    this.#halts ??= this.#listHalts(namespace);
    return this.#halts;
  }

  async #listHalts(namespace: string): Promise<readonly HaltSeen[]> {
    const settings = projectionSettings(this.#context.options);
    const views: WorkloadView[] = [];
    for (const row of this.#context.kinds.rows) {
      for (const object of await this.#context.reader.listWorkloads(row, namespace)) {
        const view = projectWorkload(row, object, settings);
        if (view !== undefined) views.push(view);
      }
    }
    return haltsAmong(views);
  }

  catalog(namespace: string, type: SourceType) {
    const known = this.#catalogs.get(type);
    if (known !== undefined) return known;
    const read = this.#context.reader.sourceCatalog(namespace, type, this.#context.options);
    this.#catalogs.set(type, read);
    return read;
  }

  namespaceSelected(namespace: string): Promise<boolean | undefined> {
    const { scope } = this.#context.options;
    if (scope.mode !== 'global' || scope.namespaceSelector === '')
      return Promise.resolve(undefined);
    const known = this.#selected.get(namespace);
    if (known !== undefined) return known;
    const read = this.#context.reader
      .namespaceSelected(namespace, scope.namespaceSelector)
      .then((answer) => (answer === 'forbidden' ? undefined : answer));
    this.#selected.set(namespace, read);
    return read;
  }
}

/** Pending while the Job the entry deleted is still there, or gone (not yet created again). */
function pendingSince(
  context: GatherContext,
  ref: { kind: WorkloadKindName; namespace: string; name: string },
  uid: string | undefined,
): number | undefined {
  const entry = context.recreations.get(workloadKey(ref));
  if (entry === undefined || (uid !== undefined && uid !== entry.deletedUid)) return undefined;
  return entry.since;
}

/**
 * The binding the controller computes (core/reload-policy.ts), from the policies and the sources
 * their selectors name as the user may read them; what cannot be read is "cannot tell".
 */
async function policyKnowledge(
  context: GatherContext,
  cache: RunCache,
  view: WorkloadView,
): Promise<PolicyKnowledge | undefined> {
  if (!context.options.enableReloadPolicies) return undefined;
  const namespace = view.ref.namespace;
  const list = await cache.policies(namespace);
  if (list.state === 'unlisted') return { state: 'unknown', why: list.why };
  const selected = new Set(
    list.policies.flatMap((policy) =>
      policy.sources.flatMap((member) => (member.selector === undefined ? [] : [member.kind])),
    ),
  );
  const catalogs = new Map<SourceType, readonly NamedObject<SourceType>[]>();
  for (const type of selected) {
    const catalog = await cache.catalog(namespace, type);
    if (catalog === 'forbidden') {
      return { state: 'unknown', why: `may not list the ${type} a policy selector names` };
    }
    catalogs.set(type, catalog);
  }
  const binding = bindingOfWorkload(
    view,
    list.policies,
    (type) => catalogs.get(type) ?? [],
    context.options.annotationKeys,
  );
  return { state: 'known', binding };
}

/**
 * A roll by eviction under way (W `kreload.io/evict-before`): its pods counted as the controller's
 * next round would count them. Undefined without a roll under way, or when the pods may not be read.
 */
async function evictionProgress(
  context: GatherContext,
  view: WorkloadView,
  object: JsonObject,
): Promise<WorkloadInput['podsProgress']> {
  const facts = context.kinds.find(view.ref.kind)?.podEviction;
  const evictBefore = parseEvictBefore(view.annotations[EVICT_BEFORE]);
  if (facts === undefined || evictBefore === undefined) return undefined;
  const scope = evictionScopeOf(facts, object);
  if ('problem' in scope) return undefined;
  const listed = await context.reader.listPodsOf(
    view.ref.namespace,
    scope.selector,
    facts.owners === 'replica-sets',
  );
  if (listed === undefined) return undefined;
  const pods = ownedPods({ facts, workloadUid: view.uid, ...listed });
  return nextEvictions({ pods, evictBefore, scope, now: context.now }).progress;
}

async function explainObject(
  context: GatherContext,
  cache: RunCache,
  row: WorkloadKindRow,
  object: JsonObject,
): Promise<WorkloadExplanation> {
  // The controller's own settings: policy selectors read the labels it keeps.
  const view = projectWorkload(row, object, projectionSettings(context.options));
  if (view === undefined) {
    throw new ExplainTargetError(`the ${row.kind} has no name, namespace or uid`, 'malformed');
  }
  const namespace = view.ref.namespace;
  const sources = new Map<SourceKey, SourceRead>();
  const candidates: Partial<Record<SourceType, readonly string[]>> = {};
  for (const type of listedTypes(view, context.options)) {
    const names = await cache.names(namespace, type);
    if (names === 'forbidden') continue;
    candidates[type] = names;
  }
  const policies = await policyKnowledge(context, cache, view);
  const keys = [
    ...keysToRead(view, context.options),
    ...(policies?.state === 'known' ? policies.binding.sources : []),
    ...Object.entries(candidates).flatMap(([type, names]) =>
      names.map((name) => sourceKey(type as SourceType, name)),
    ),
  ];
  for (const key of new Set(keys)) sources.set(key, await cache.source(namespace, key));
  const input: WorkloadInput = {
    view,
    row,
    kinds: context.kinds,
    sites: referenceSites(row.templatePath && objectAt(object, row.templatePath)),
    options: context.options,
    namespaceSelected: await cache.namespaceSelected(namespace),
    sources,
    candidates,
    now: context.now,
    recreationPendingSince: pendingSince(context, view.ref, view.uid),
    policies,
    halts: context.options.rollouts.waves ? await cache.halts(namespace) : undefined,
    podsProgress: await evictionProgress(context, view, object),
    storedBaseline: context.storedBaseline?.(view),
  };
  return explainWorkload(input);
}

export async function gatherWorkload(
  context: GatherContext,
  ref: { kind: WorkloadKindName; namespace: string; name: string },
): Promise<WorkloadExplanation> {
  const row = context.kinds.row(ref.kind);
  const read = await context.reader.readWorkload(row, ref.namespace, ref.name);
  const what = `${ref.kind} ${ref.namespace}/${ref.name}`;
  if (read.state === 'not-found') {
    const since = pendingSince(context, ref, undefined);
    const pending =
      since === undefined
        ? ''
        : `: kreload deleted it to roll it and its recreation is pending since ${new Date(since).toISOString()}`;
    throw new ExplainTargetError(`${what} not found${pending}`, 'not-found');
  }
  if (read.state === 'forbidden') {
    throw new ExplainTargetError(`${what}: forbidden (${read.message})`, 'forbidden');
  }
  return explainObject(context, new RunCache(context), row, read.object);
}

/** Every workload of the namespace that references or lists the source. */
export async function gatherSource(
  context: GatherContext,
  ref: { type: SourceType; namespace: string; name: string },
): Promise<SourceQueryExplanation> {
  const cache = new RunCache(context);
  const key = sourceKey(ref.type, ref.name);
  const explanations: WorkloadExplanation[] = [];
  for (const row of context.kinds.rows) {
    for (const object of await context.reader.listWorkloads(row, ref.namespace)) {
      explanations.push(await explainObject(context, cache, row, object));
    }
  }
  return explainSource(key, ref.namespace, explanations);
}
