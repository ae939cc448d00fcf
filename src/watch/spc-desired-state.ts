import type { Annotations, Labels, SourceView } from '../core/types.ts';
import type { PodStatusView, ProviderClassView, ViewSink } from './ports.ts';
import type { SourceCache } from './source-cache.ts';

/** An SPCPS and when its content was last seen to change or appear. */
export interface PodStatusEntry {
  readonly view: PodStatusView;
  /** Order in which kreload saw its content change or appear after the initial list; 0 = never. */
  readonly seenAt: number;
}

/** `<namespace>/<name>` of a SecretProviderClass. */
type ClassId = `${string}/${string}`;

function classId(namespace: string, name: string): ClassId {
  return `${namespace}/${name}`;
}

function podStatusId(view: PodStatusView): string {
  return `${view.namespace}/${view.name}`;
}

/** Newest `creationTimestamp` first; ties to the greatest name (§4.4 item 1). */
function newerThan(a: PodStatusView, b: PodStatusView): boolean {
  const at = Date.parse(a.creationTimestamp ?? '') || 0;
  const bt = Date.parse(b.creationTimestamp ?? '') || 0;
  return at !== bt ? at > bt : a.name > b.name;
}

function preferred(a: PodStatusEntry, b: PodStatusEntry): PodStatusEntry {
  if (a.seenAt !== b.seenAt) return a.seenAt > b.seenAt ? a : b;
  return newerThan(a.view, b.view) ? a : b;
}

/**
 * The SPCPS whose hash is the desired hash of its class (§4.4 item 1): the one whose content was
 * most recently seen to change or appear since this process started; before any such observation,
 * the one with the newest creationTimestamp, ties to the greatest name. Undefined without any.
 */
export function desiredPodStatus(entries: Iterable<PodStatusEntry>): PodStatusView | undefined {
  let best: PodStatusEntry | undefined;
  for (const entry of entries) best = best === undefined ? entry : preferred(best, entry);
  return best?.view;
}

/** The synthetic source view of class `namespace/name`: stable UID while the class is known. */
export function providerClassSourceView(
  chosen: PodStatusView,
  annotations: Annotations,
  labels: Labels | undefined,
): SourceView {
  return {
    ref: { type: 'SECRETPROVIDERCLASS', namespace: chosen.namespace, name: chosen.className },
    uid: `secretproviderclass:${chosen.namespace}/${chosen.className}`,
    resourceVersion: chosen.resourceVersion,
    creationTimestamp: chosen.creationTimestamp,
    hash: chosen.hash,
    annotations,
    ...(labels === undefined ? {} : { labels }),
  };
}

export interface SpcDesiredStateDeps {
  /** The source cache of type SECRETPROVIDERCLASS that receives one view per known class. */
  readonly cache: SourceCache;
}

/**
 * Turns SPCPS objects (one per pod) and SecretProviderClass metadata into one source view per class
 * (§4.4). The cache then records firstObserved (first SPCPS seen), lastChange (desired hash changed
 * from one known value to another; unknown → known is a creation, not a change) and emits events.
 * The cache is seeded once both initial lists have arrived, so startup emits nothing.
 */
export class SpcDesiredState {
  readonly #deps: SpcDesiredStateDeps;
  readonly #byClass = new Map<ClassId, Map<string, PodStatusEntry>>();
  /** SPCPS `<namespace>/<name>` → the class it belongs to. */
  readonly #classOf = new Map<string, ClassId>();
  /** The class's S annotations and (when kept) labels, from its SecretProviderClass object. */
  readonly #classMetadata = new Map<ClassId, Pick<ProviderClassView, 'annotations' | 'labels'>>();
  #podStatusesListed = false;
  #classesListed = false;
  #observations = 0;

  constructor(deps: SpcDesiredStateDeps) {
    this.#deps = deps;
  }

  get isSynced(): boolean {
    return this.#podStatusesListed && this.#classesListed;
  }

  replacePodStatuses(views: readonly PodStatusView[]): void {
    const listed = new Map(views.map((view) => [podStatusId(view), view.uid]));
    for (const id of [...this.#classOf.keys()]) {
      const entry = this.#podStatus(id);
      if (entry !== undefined && listed.get(id) !== entry.view.uid) {
        this.removePodStatus(entry.view);
      }
    }
    for (const view of views) this.upsertPodStatus(view);
    this.#podStatusesListed = true;
    this.#seedWhenListed();
  }

  upsertPodStatus(view: PodStatusView): void {
    const id = podStatusId(view);
    const known = this.#podStatus(id);
    const classKey = classId(view.namespace, view.className);
    if (known !== undefined && known.view.className !== view.className) {
      this.removePodStatus(known.view);
    }
    const sameClass = known?.view.className === view.className ? known : undefined;
    let members = this.#byClass.get(classKey);
    if (members === undefined) {
      members = new Map();
      this.#byClass.set(classKey, members);
    }
    members.set(id, { view, seenAt: this.#seenAt(sameClass, view) });
    this.#classOf.set(id, classKey);
    this.#publish(classKey);
  }

  removePodStatus(view: PodStatusView): void {
    const id = podStatusId(view);
    const classKey = this.#classOf.get(id);
    if (classKey === undefined) return;
    this.#classOf.delete(id);
    const members = this.#byClass.get(classKey);
    members?.delete(id);
    if (members?.size === 0) this.#byClass.delete(classKey);
    this.#publish(classKey);
  }

  replaceClasses(views: readonly ProviderClassView[]): void {
    const listed = new Set(views.map((view) => classId(view.namespace, view.name)));
    for (const id of [...this.#classMetadata.keys()]) {
      if (!listed.has(id)) {
        this.#classMetadata.delete(id);
        this.#publish(id);
      }
    }
    for (const view of views) this.upsertClass(view);
    this.#classesListed = true;
    this.#seedWhenListed();
  }

  upsertClass(view: ProviderClassView): void {
    const id = classId(view.namespace, view.name);
    this.#classMetadata.set(id, { annotations: view.annotations, labels: view.labels });
    this.#publish(id);
  }

  /** Without its SPC object, a class's S is empty (§3.5 notes). */
  removeClass(view: ProviderClassView): void {
    const id = classId(view.namespace, view.name);
    if (this.#classMetadata.delete(id)) this.#publish(id);
  }

  #podStatus(id: string): PodStatusEntry | undefined {
    const classKey = this.#classOf.get(id);
    return classKey === undefined ? undefined : this.#byClass.get(classKey)?.get(id);
  }

  /** A new object or new content after the initial list is an observation (§4.4 item 1). */
  #seenAt(known: PodStatusEntry | undefined, view: PodStatusView): number {
    const contentSeen = known?.view.uid !== view.uid || known.view.hash !== view.hash;
    if (contentSeen && this.#podStatusesListed) {
      this.#observations += 1;
      return this.#observations;
    }
    return known?.seenAt ?? 0;
  }

  #view(classKey: ClassId): SourceView | undefined {
    const chosen = desiredPodStatus(this.#byClass.get(classKey)?.values() ?? []);
    const metadata = this.#classMetadata.get(classKey);
    return chosen && providerClassSourceView(chosen, metadata?.annotations ?? {}, metadata?.labels);
  }

  #publish(classKey: ClassId): void {
    if (!this.isSynced || !this.#deps.cache.isSynced) return;
    const view = this.#view(classKey);
    if (view !== undefined) {
      this.#deps.cache.upsert(view);
      return;
    }
    const slash = classKey.indexOf('/');
    this.#deps.cache.removeNamed(classKey.slice(0, slash), classKey.slice(slash + 1));
  }

  #seedWhenListed(): void {
    if (!this.isSynced || this.#deps.cache.isSynced) return;
    const views: SourceView[] = [];
    for (const classKey of this.#byClass.keys()) {
      const view = this.#view(classKey);
      if (view !== undefined) views.push(view);
    }
    this.#deps.cache.replace(views);
  }
}

/** The aggregator as the target of the SPCPS list-watch. */
export function podStatusSink(state: SpcDesiredState): ViewSink<PodStatusView> {
  return {
    replace: (views) => {
      state.replacePodStatuses(views);
    },
    upsert: (view) => {
      state.upsertPodStatus(view);
    },
    remove: (view) => {
      state.removePodStatus(view);
    },
  };
}

/** The aggregator as the target of the SecretProviderClass list-watch. */
export function providerClassSink(state: SpcDesiredState): ViewSink<ProviderClassView> {
  return {
    replace: (views) => {
      state.replaceClasses(views);
    },
    upsert: (view) => {
      state.upsertClass(view);
    },
    remove: (view) => {
      state.removeClass(view);
    },
  };
}
