/**
 * The in-memory API server that pipeline tests run kreload's real parts against: it records every
 * PATCH, fails the ones a test asks it to, and "watches" — an acknowledged patch reaches the
 * workload store `watchLagMs` later, as the watch event of the new resourceVersion would.
 * `startPipeline` wires createPipeline around it the way src/app.ts does.
 */
import { Registry } from 'prom-client';
import { type PipelineDeps, createPipeline } from '../app/pipeline.ts';
import type { ApiError } from '../core/api-error.ts';
import { workloadKey } from '../core/keys.ts';
import type { SourceType, WorkloadRef, WorkloadView } from '../core/types.ts';
import type { EventRequest } from '../events/event-recorder.ts';
import { createMetrics } from '../metrics/metrics.ts';
import type { PatchResult, WorkloadWriter } from '../reconcile/ports.ts';
import type { Patch } from '../rollout/patch.ts';
import { SYSTEM_TIMERS } from '../time/timers.ts';
import type { WorkloadStore } from '../watch/workload-store.ts';
import { inMemoryWatch, silentLogger } from './in-memory-watch.ts';
import { DEFAULT_RECONCILE_OPTIONS } from './reconcile-options.ts';
import { RecordingWriter } from './recording-writer.ts';

export interface SentPatch {
  /** `Date.now()` when the patch was sent (fake timers make it exact). */
  readonly at: number;
  readonly key: string;
  readonly body: Record<string, unknown>;
  /** The resourceVersion precondition the patch carried. */
  readonly resourceVersion: unknown;
}

export class InMemoryCluster implements WorkloadWriter {
  readonly api = new RecordingWriter();
  readonly sent: SentPatch[] = [];
  watchLagMs = 5;
  /** How long after the watch event the PATCH's answer is read (0: at once). */
  answerLagMs = 0;
  /** The store the watch feeds; a restarted kreload attaches its own. */
  store: WorkloadStore | undefined;
  readonly #failures = new Map<string, ApiError[]>();

  /** The next patches of `key` fail with these errors, in order. */
  failPatchesOf(key: string, ...errors: ApiError[]): void {
    this.#failures.set(key, [...(this.#failures.get(key) ?? []), ...errors]);
  }

  async patch(ref: WorkloadRef, patch: Patch): Promise<PatchResult> {
    const key = workloadKey(ref);
    const resourceVersion = (patch.body.metadata as { resourceVersion?: unknown } | undefined)
      ?.resourceVersion;
    this.sent.push({ at: Date.now(), key, body: patch.body, resourceVersion });
    const failure = this.#failures.get(key)?.shift();
    if (failure) throw failure;
    const result = await this.api.patch(ref, patch);
    this.deliver(ref, this.watchLagMs);
    if (this.answerLagMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.watchLagMs + this.answerLagMs));
    }
    return result;
  }

  /** The watch delivers the server's current version of `ref` after `lagMs`. */
  deliver(ref: WorkloadRef, lagMs = this.watchLagMs): void {
    const view = this.api.server(ref);
    const store = this.store;
    setTimeout(() => {
      if (view) store?.upsert(view);
    }, lagMs);
  }

  /** Someone else writes `ref` (a controller, a user): a new resourceVersion, then its event. */
  update(ref: WorkloadRef, change: (view: WorkloadView) => WorkloadView): void {
    const view = this.api.server(ref);
    if (!view) throw new Error(`no ${workloadKey(ref)} on the server`);
    const resourceVersion = String(Number(view.resourceVersion) + 1);
    this.api.put({ ...change(view), resourceVersion });
    this.deliver(ref);
  }

  get: WorkloadWriter['get'] = (ref) => this.api.get(ref);
  getObject: WorkloadWriter['getObject'] = (ref) => this.api.getObject(ref);
  create: WorkloadWriter['create'] = (row, namespace, body) =>
    this.api.create(row, namespace, body);
  delete: WorkloadWriter['delete'] = (ref, preconditions) => this.api.delete(ref, preconditions);
  instantiate: WorkloadWriter['instantiate'] = (ref, body) => this.api.instantiate(ref, body);
}

/** True when the patch writes the pod template: a roll, not a metadata-only write. */
export const isRoll = (write: SentPatch): boolean =>
  (write.body.spec as { template?: unknown } | undefined)?.template !== undefined;

/** The metadata annotations a patch writes (`null` removes one). */
export function annotationsOf(write: SentPatch): Record<string, string | null> {
  return (
    (write.body.metadata as { annotations?: Record<string, string | null> } | undefined)
      ?.annotations ?? {}
  );
}

type Overrides = Partial<
  Omit<PipelineDeps, 'watch' | 'writes' | 'writer' | 'metrics' | 'notifications'>
>;

/**
 * One kreload process on `cluster`: the watch caches of `sourceTypes` (the test fills them), the
 * pipeline wired by createPipeline with a silent logger (unless given one), real metrics and
 * recorded Events. The workload store is attached to the cluster's watch; nothing is started.
 */
export function startPipeline(
  cluster: InMemoryCluster,
  options: {
    readonly sourceTypes: readonly SourceType[];
    readonly selectorEnabled?: boolean;
    readonly reloadPolicies?: boolean;
  } & Overrides,
) {
  const { sourceTypes, selectorEnabled, reloadPolicies, ...overrides } = options;
  const registry = new Registry();
  const metrics = createMetrics(registry, { countByNamespace: false });
  const events: EventRequest[] = [];
  const { writes, watched, watch } = inMemoryWatch({
    sourceTypes,
    selectorEnabled: selectorEnabled === true,
    reloadPolicies: reloadPolicies === true,
  });
  cluster.store = watched.store;
  const pipeline = createPipeline({
    reconcile: DEFAULT_RECONCILE_OPTIONS,
    concurrency: 3,
    debounce: { syncDelayMs: 1_000, syncMaxDelayMs: 30_000 },
    gate: { leading: true, mayWrite: () => true },
    timers: SYSTEM_TIMERS,
    random: () => 0.5,
    logger: silentLogger(),
    ...overrides,
    watch,
    writes,
    writer: cluster,
    metrics,
    notifications: () => ({
      events: { record: (request) => events.push(request) },
      fanouts: { begin: () => undefined, finish: () => undefined },
    }),
  });

  /** The sum of a metric's samples whose labels include `labels` (histogram parts excluded). */
  const sample = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
    const samples = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return samples
      .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .filter((s) => !('metricName' in s) || s.metricName === undefined)
      .reduce((sum, s) => sum + s.value, 0);
  };

  /** The `_sum` of a histogram, every label set together. */
  const histogramSum = async (name: string): Promise<number> => {
    const samples = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return samples
      .filter((s) => 'metricName' in s && s.metricName === `${name}_sum`)
      .reduce((sum, s) => sum + s.value, 0);
  };

  return { ...pipeline, watched, events, sample, histogramSum };
}
