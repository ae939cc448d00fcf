// The ideal reactor: the benchmark's floor. `node e2e/bench/ideal-reactor.ts [--namespaces=a,b]
// [--reload-strategy=annotations] [--worker-threads=3]` (KUBECONFIG from the environment; other
// flags are ignored). It list-watches ConfigMaps, Secrets and the apps workloads, and when a
// source's hash changes it patches every auto-annotated workload that references it at once: no
// debounce, no state, no retries, one patch per workload at a time and `--worker-threads` at once.
// At startup it also patches workloads whose STAKATER_* value is stale (a cheap level check).
import { KubeConfig } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import {
  envNameOf,
  hashOfSource,
  parseReactorArgs,
  projectWorkload,
  rollPatch,
  type ReactorOptions,
  type SourceChange,
  type WorkloadProjection,
} from './ideal-reactor-core.ts';
import { isStatus, KubeRaw, STRATEGIC_MERGE_PATCH } from './kube-raw.ts';
import { ListWatch, type ListWatchEvent } from './list-watch.ts';
import {
  collectionPath,
  localSourceKey,
  objectPath,
  SOURCE_RESOURCES,
  sourceKey,
  WORKLOAD_KINDS,
  WORKLOAD_RESOURCES,
  workloadKey,
  type SourceType,
  type WorkloadKind,
} from './resources.ts';

const FIELD_MANAGER = 'ideal-reactor';
const INITIAL_LIST_CONCURRENCY = 4;

/** `configmap/name` in a namespace → `configmap/ns/name`. */
function globalKey(localKey: string, namespace: string): string {
  const slash = localKey.indexOf('/');
  return `${localKey.slice(0, slash)}/${namespace}/${localKey.slice(slash + 1)}`;
}

function log(level: 'info' | 'error', message: string, extra: Record<string, unknown> = {}): void {
  process.stderr.write(
    `${JSON.stringify({ level, time: new Date().toISOString(), msg: message, ...extra })}\n`,
  );
}

class IdealReactor {
  readonly #options: ReactorOptions;
  readonly #raw: KubeRaw;
  readonly #kc: KubeConfig;
  readonly #queue: PQueue;
  /** `configmap/ns/name` → hash. */
  readonly #hashes = new Map<string, string>();
  readonly #workloads = new Map<string, WorkloadProjection>();
  /** `configmap/ns/name` → keys of the workloads that reference it. */
  readonly #index = new Map<string, Set<string>>();
  /** Workload key → changes not yet written, by `configmap/name`. */
  readonly #pending = new Map<string, Map<string, SourceChange>>();
  readonly #queued = new Set<string>();
  readonly #watches: ListWatch[] = [];
  #synced = false;

  constructor(deps: { options: ReactorOptions; kc: KubeConfig }) {
    this.#options = deps.options;
    this.#kc = deps.kc;
    this.#raw = new KubeRaw({ kc: deps.kc });
    this.#queue = new PQueue({ concurrency: deps.options.workers });
  }

  async start(): Promise<void> {
    const scopes = this.#options.namespaces.length > 0 ? this.#options.namespaces : [undefined];
    for (const namespace of scopes) {
      for (const type of ['configmap', 'secret'] as const) {
        this.#watch(collectionPath(SOURCE_RESOURCES[type], namespace), (event) => {
          this.#onSource(type, event);
        });
      }
      for (const kind of WORKLOAD_KINDS) {
        this.#watch(collectionPath(WORKLOAD_RESOURCES[kind], namespace), (event) => {
          this.#onWorkload(kind, event);
        });
      }
    }
    // A few lists at a time: K1's 100 first lists of 5 MB pages at once would inflate the heap.
    const waiting = [...this.#watches];
    const lister = async (): Promise<void> => {
      for (let watch = waiting.shift(); watch !== undefined; watch = waiting.shift()) {
        await watch.start();
      }
    };
    await Promise.all(Array.from({ length: INITIAL_LIST_CONCURRENCY }, lister));
    this.#synced = true;
    this.#levelCheck();
    log('info', 'synced', { watches: this.#watches.length, workloads: this.#workloads.size });
  }

  async stop(): Promise<void> {
    await Promise.all(this.#watches.map((watch) => watch.stop()));
    this.#queue.clear();
    await this.#queue.onIdle();
  }

  #watch(path: string, onEvent: (event: ListWatchEvent) => void): void {
    this.#watches.push(
      new ListWatch({
        raw: this.#raw,
        kc: this.#kc,
        path,
        onEvent,
        onError: (error: unknown) => {
          log('error', 'watch failed', { path, error: String(error) });
        },
      }),
    );
  }

  #onSource(type: SourceType, event: ListWatchEvent): void {
    const { metadata } = event.object;
    const key = sourceKey(type, metadata.namespace ?? '', metadata.name);
    if (event.type === 'DELETED') {
      this.#hashes.delete(key);
      return;
    }
    const hash = hashOfSource(type, event.object);
    const previous = this.#hashes.get(key);
    this.#hashes.set(key, hash);
    // Like Reloader: creations are not changes; only an update with new content rolls.
    if (!this.#synced || previous === undefined || previous === hash) return;
    for (const workload of this.#index.get(key) ?? []) {
      this.#enqueue(workload, { type, name: metadata.name, hash });
    }
  }

  #onWorkload(kind: WorkloadKind, event: ListWatchEvent): void {
    const { metadata } = event.object;
    const namespace = metadata.namespace ?? '';
    const key = workloadKey(kind, namespace, metadata.name);
    const previous = this.#workloads.get(key);
    for (const ref of previous?.targets.keys() ?? []) {
      this.#index.get(globalKey(ref, namespace))?.delete(key);
    }
    if (event.type === 'DELETED') {
      this.#workloads.delete(key);
      this.#pending.delete(key);
      return;
    }
    const projection = projectWorkload(kind, event.object);
    this.#workloads.set(key, projection);
    if (!projection.auto) return;
    for (const ref of projection.targets.keys()) {
      const global = globalKey(ref, namespace);
      const dependents = this.#index.get(global) ?? new Set<string>();
      dependents.add(key);
      this.#index.set(global, dependents);
    }
  }

  /** After the first lists: workloads whose STAKATER_* value differs from the current hash. */
  #levelCheck(): void {
    for (const [key, workload] of this.#workloads) {
      if (!workload.auto) continue;
      for (const ref of workload.targets.keys()) {
        const [type, name = ''] = ref.split('/');
        if (type !== 'configmap' && type !== 'secret') continue;
        const hash = this.#hashes.get(sourceKey(type, workload.namespace, name));
        const current = workload.stakaterEnv.get(envNameOf({ type, name }));
        if (hash !== undefined && current !== undefined && current !== hash) {
          this.#enqueue(key, { type, name, hash });
        }
      }
    }
  }

  #enqueue(key: string, change: SourceChange): void {
    const changes = this.#pending.get(key) ?? new Map<string, SourceChange>();
    changes.delete(localSourceKey(change.type, change.name));
    changes.set(localSourceKey(change.type, change.name), change);
    this.#pending.set(key, changes);
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    void this.#queue.add(() => this.#roll(key));
  }

  /** One patch per workload at a time: changes that arrive meanwhile wait for the next one. */
  async #roll(key: string): Promise<void> {
    const changes = this.#pending.get(key);
    this.#pending.delete(key);
    const workload = this.#workloads.get(key);
    try {
      if (changes === undefined || workload === undefined) return;
      await this.#raw.patch({
        path: objectPath(WORKLOAD_RESOURCES[workload.kind], workload.namespace, workload.name),
        body: rollPatch({
          strategy: this.#options.strategy,
          workload,
          changes: [...changes.values()],
          nowSeconds: Math.floor(Date.now() / 1000),
        }),
        contentType: STRATEGIC_MERGE_PATCH,
        fieldManager: FIELD_MANAGER,
      });
    } catch (error) {
      if (!isStatus(error, 404))
        log('error', 'patch failed', { workload: key, error: String(error) });
    } finally {
      if (this.#pending.has(key)) void this.#queue.add(() => this.#roll(key));
      else this.#queued.delete(key);
    }
  }
}

async function main(): Promise<void> {
  const options = parseReactorArgs(process.argv.slice(2));
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const reactor = new IdealReactor({ options, kc });
  const stopped = Promise.withResolvers<undefined>();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopped.resolve(undefined);
    });
  }
  await reactor.start();
  await stopped.promise;
  await reactor.stop();
}

main().then(
  () => {
    process.exit(0);
  },
  (error: unknown) => {
    log('error', 'ideal reactor failed', { error: String(error) });
    process.exit(1);
  },
);
