/**
 * A minimal, robust list+watch on wire JSON, shared by the bench's observer and the ideal reactor:
 * paginated list, then a watch from the list's resourceVersion with bookmarks; a clean close or
 * client-node's 30 s inactivity abort re-watches, 410 relists, anything else backs off and relists.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeRaw } from './kube-raw.ts';

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly { readonly kind?: string; readonly name?: string }[];
}

/** Any API object as JSON; fields beyond metadata are read with type guards where needed. */
export interface KubeObject {
  readonly metadata: ObjectMeta;
  readonly [field: string]: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListWatchEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** True for objects of the first list: the state before this list-watch started. */
  readonly initial: boolean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isKubeObject(value: unknown): value is KubeObject {
  return isRecord(value) && isRecord(value.metadata) && typeof value.metadata.name === 'string';
}

interface ListPage {
  readonly items: readonly KubeObject[];
  readonly resourceVersion: string;
  readonly continueToken: string | undefined;
}

function parseListPage(body: unknown): ListPage {
  if (!isRecord(body) || !Array.isArray(body.items) || !isRecord(body.metadata)) {
    throw new Error('list response without items or metadata');
  }
  const { resourceVersion } = body.metadata;
  const continueToken = body.metadata.continue;
  return {
    items: body.items.filter(isKubeObject),
    resourceVersion: typeof resourceVersion === 'string' ? resourceVersion : '',
    continueToken:
      typeof continueToken === 'string' && continueToken !== '' ? continueToken : undefined,
  };
}

function objectId(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

type WatchOutcome = 'rewatch' | 'relist' | 'backoff';

function outcomeOf(error: unknown): WatchOutcome {
  if (error === null || error === undefined) return 'rewatch';
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'rewatch';
  if (isRecord(error) && error.statusCode === 410) return 'relist';
  return 'backoff';
}

const PAGE_LIMIT = 500;
const BACKOFF_MS = 1000;

export class ListWatch {
  readonly #raw: KubeRaw;
  readonly #watch: Watch;
  readonly #path: string;
  readonly #labelSelector: string | undefined;
  readonly #onEvent: (event: ListWatchEvent) => void;
  readonly #onError: (error: unknown) => void;
  /** Known objects by namespace/name → resourceVersion, to diff a relist against. */
  readonly #known = new Map<string, string>();
  #resourceVersion: string | undefined;
  #abort: AbortController | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;

  constructor(deps: {
    raw: KubeRaw;
    kc: KubeConfig;
    path: string;
    labelSelector?: string;
    onEvent: (event: ListWatchEvent) => void;
    onError?: (error: unknown) => void;
  }) {
    this.#raw = deps.raw;
    this.#watch = new Watch(deps.kc);
    this.#path = deps.path;
    this.#labelSelector = deps.labelSelector;
    this.#onEvent = deps.onEvent;
    this.#onError = deps.onError ?? (() => undefined);
  }

  /** Resolves once the first list has been delivered (as `initial` ADDED events). */
  async start(): Promise<void> {
    this.#resourceVersion = await this.#relist(true);
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort?.abort();
    await this.#loop;
  }

  /** A method, not the field: TypeScript would narrow the field across the awaits below. */
  #isStopped(): boolean {
    return this.#stopped;
  }

  async #run(): Promise<void> {
    while (!this.#isStopped()) {
      try {
        this.#resourceVersion ??= await this.#relist(false);
        if (this.#isStopped()) return;
        const outcome = await this.#watchOnce(this.#resourceVersion);
        if (this.#isStopped()) return;
        if (outcome === 'relist') this.#resourceVersion = undefined;
        if (outcome === 'backoff') {
          this.#resourceVersion = undefined;
          await sleep(BACKOFF_MS);
        }
      } catch (error) {
        if (this.#isStopped()) return;
        this.#onError(error);
        this.#resourceVersion = undefined;
        await sleep(BACKOFF_MS);
      }
    }
  }

  /** Lists page by page, handing each page over before fetching the next (K1: 5 MB pages). */
  async #relist(initial: boolean): Promise<string> {
    const seen = new Set<string>();
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = parseListPage(
        await this.#raw.get(this.#path, {
          limit: PAGE_LIMIT,
          continue: continueToken,
          labelSelector: this.#labelSelector,
        }),
      );
      if (resourceVersion === '') resourceVersion = page.resourceVersion;
      continueToken = page.continueToken;
      for (const object of page.items) this.#deliverListed(object, { initial, seen });
    } while (continueToken !== undefined);
    for (const id of [...this.#known.keys()]) {
      if (seen.has(id)) continue;
      this.#known.delete(id);
      const [namespace = '', name = ''] = id.split('/');
      this.#onEvent({
        type: 'DELETED',
        object: { metadata: { name, ...(namespace === '' ? {} : { namespace }) } },
        initial: false,
      });
    }
    return resourceVersion;
  }

  #deliverListed(object: KubeObject, details: { initial: boolean; seen: Set<string> }): void {
    const id = objectId(object);
    details.seen.add(id);
    const previous = this.#known.get(id);
    const version = object.metadata.resourceVersion ?? '';
    this.#known.set(id, version);
    if (previous === undefined) this.#onEvent({ type: 'ADDED', object, initial: details.initial });
    else if (previous !== version) this.#onEvent({ type: 'MODIFIED', object, initial: false });
  }

  #handle(type: unknown, object: unknown): WatchOutcome | undefined {
    if (type === 'ERROR') {
      return isRecord(object) && object.code === 410 ? 'relist' : 'backoff';
    }
    if (!isKubeObject(object)) return undefined;
    const version = object.metadata.resourceVersion;
    if (version !== undefined) this.#resourceVersion = version;
    if (type === 'BOOKMARK') return undefined;
    const id = objectId(object);
    if (type === 'DELETED') this.#known.delete(id);
    else this.#known.set(id, version ?? '');
    if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
      this.#onEvent({ type, object, initial: false });
    }
    return undefined;
  }

  async #watchOnce(resourceVersion: string): Promise<WatchOutcome> {
    const finished = Promise.withResolvers<WatchOutcome>();
    let verdict: WatchOutcome | undefined;
    this.#abort = await this.#watch.watch(
      this.#path,
      {
        resourceVersion,
        allowWatchBookmarks: true,
        // Jittered so that many watches do not all reopen at once.
        timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        labelSelector: this.#labelSelector,
      },
      (type: string, object: unknown) => {
        const outcome = this.#handle(type, object);
        if (outcome !== undefined && verdict === undefined) {
          verdict = outcome;
          this.#abort?.abort();
        }
      },
      (error: unknown) => {
        finished.resolve(verdict ?? outcomeOf(error));
      },
    );
    // An ERROR event can arrive before watch() has handed over its AbortController.
    if (this.#stopped || verdict !== undefined) this.#abort.abort();
    return finished.promise;
  }
}
